//! Connecting: reaching a server over its transport (stdio, streamable HTTP with the legacy SSE
//! fallback, or an in-memory pipe to a built-in server), the handshake and its time limits, what
//! a failed `initialize` means, and the glue that lets an HTTP server's OAuth sign-in ask the
//! user (through the delegate or the hub's prompt).

use std::collections::HashMap;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Weak};
use std::time::Duration;

use cairn_config::{McpConfig, McpServerConfig, McpTransport};
use futures::future::BoxFuture;
use rmcp::ServiceExt;
use rmcp::service::ClientInitializeError;

use super::client::HubClient;
use super::conn::{Conn, oversized_reason, status_text};
use super::shared::{Shared, with_slot};
use super::slot::Kind;
use super::types::TransportKind;
use crate::error::McpError;

pub(super) fn transport_of(cfg: &McpServerConfig) -> TransportKind {
    match (cfg.transport, cfg.command.is_some()) {
        (Some(McpTransport::Stdio), _) => TransportKind::Stdio,
        (Some(McpTransport::Http), _) => TransportKind::Http,
        (Some(McpTransport::Sse), _) => TransportKind::Sse,
        (None, true) => TransportKind::Stdio,
        (None, false) => TransportKind::Http,
    }
}

/// Runs `fut` with `limit`, extended for as long as an OAuth flow of `auth` runs (the user is
/// signing in) or ended less than `limit` ago; `None` when the time ran out.
pub(super) async fn within_limit<F: std::future::Future>(
    limit: Duration,
    auth: Option<&Arc<crate::oauth::Authorizer>>,
    fut: F,
) -> Option<F::Output> {
    tokio::pin!(fut);
    loop {
        match tokio::time::timeout(limit, &mut fut).await {
            Ok(out) => return Some(out),
            Err(_) if auth.is_some_and(|a| a.busy(limit)) => continue,
            Err(_) => return None,
        }
    }
}

fn init_error(e: ClientInitializeError) -> McpError {
    match e {
        ClientInitializeError::NoCompatibleProtocolVersion {
            server_supported, ..
        } => McpError::Protocol(format!(
            "unsupported protocol version {}",
            server_supported
                .iter()
                .map(|v| v.to_string())
                .collect::<Vec<_>>()
                .join(", ")
        )),
        ClientInitializeError::TransportError { error, .. } => {
            crate::error::auth_failure(&*error.error).unwrap_or_else(|| {
                McpError::Transport(format!(
                    "during initialize: {}",
                    crate::error::chain(&*error.error)
                ))
            })
        }
        other => McpError::Protocol(format!(
            "initialize failed: {}",
            crate::error::chain(&other)
        )),
    }
}

/// Whether a failed streamable-HTTP initialize means "this is a legacy SSE server": the MCP
/// spec's backwards-compatibility rule is an HTTP 4xx to the initialize POST (old servers answer
/// 404 or 405, having no POST route there). 401, 403 and 429 are not: they mean auth or rate
/// limits, which SSE would not fix.
fn wants_sse_fallback(e: &ClientInitializeError) -> bool {
    match crate::http::status_in_error(e) {
        Some(code) => (400..500).contains(&code) && !matches!(code, 401 | 403 | 429),
        None => false,
    }
}

/// Connects, then refuses a server that answered with a protocol version cairn does not know:
/// its messages could mean something else.
pub(super) async fn connect_checked(
    shared: &Arc<Shared>,
    name: &str,
    generation: u64,
    kind: &Kind,
    config: &McpConfig,
) -> Result<Conn, McpError> {
    let conn = connect(shared, name, generation, kind, config).await?;
    if let Some(version) = conn.protocol_version.clone() {
        let known = rmcp::model::ProtocolVersion::KNOWN_VERSIONS.contains(&version);
        if !known {
            conn.close().await;
            return Err(McpError::Protocol(format!(
                "unsupported protocol version {version}"
            )));
        }
    }
    Ok(conn)
}

/// How long a server has to answer `initialize` and its first `tools/list`. A built-in server
/// is this process's own code and cannot hang on a peer, but on a machine busy with other work
/// (embedding a catalog, a build) it can take longer than an external server is allowed; failing
/// it would leave the turn without its file, git or code tools.
pub(super) fn handshake_limit(config: &McpConfig, builtin: bool) -> Duration {
    let limit = Duration::from_secs(config.handshake_timeout_secs.max(1));
    if builtin {
        limit.max(Duration::from_secs(60))
    } else {
        limit
    }
}

async fn connect(
    shared: &Arc<Shared>,
    name: &str,
    generation: u64,
    kind: &Kind,
    config: &McpConfig,
) -> Result<Conn, McpError> {
    let handshake = handshake_limit(config, matches!(kind, Kind::InProcess { .. }));
    let client = HubClient {
        shared: Arc::downgrade(shared),
        server: name.to_owned(),
        generation,
    };
    let max_line = config.max_line_bytes.max(1024);
    let cfg = match kind {
        Kind::InProcess { serve, .. } => {
            let (ours, theirs) = tokio::io::duplex(64 * 1024);
            tokio::spawn(serve(theirs));
            let service = tokio::time::timeout(handshake, client.serve(ours))
                .await
                .map_err(|_| McpError::HandshakeTimeout(handshake))?
                .map_err(init_error)?;
            return Ok(Conn::new(service, None, max_line));
        }
        Kind::External(cfg) => cfg,
    };
    match transport_of(cfg) {
        TransportKind::Stdio | TransportKind::InProcess => {
            connect_stdio(name, cfg, client, handshake, max_line).await
        }
        TransportKind::Sse => connect_sse(shared, name, cfg, client, handshake, max_line).await,
        TransportKind::Http => {
            let url = cfg
                .url
                .as_deref()
                .ok_or_else(|| McpError::Config("an HTTP server needs `url`".to_owned()))?;
            let headers = headers_for(shared, name, cfg).await?;
            let auth = authorizer(shared, name, url, cfg);
            let transport = crate::http::streamable(
                url,
                headers,
                max_line,
                auth.clone(),
                shared.options.oauth.max_step_ups,
            )?;
            match within_limit(handshake, auth.as_ref(), client.clone().serve(transport)).await {
                None => Err(McpError::HandshakeTimeout(handshake)),
                Some(Ok(service)) => {
                    let mut conn = Conn::new(service, None, max_line);
                    conn.auth = auth;
                    Ok(conn)
                }
                Some(Err(e)) if cfg.transport.is_none() && wants_sse_fallback(&e) => {
                    tracing::info!(server = %name, "streamable HTTP refused ({e}); trying legacy SSE");
                    with_slot(shared, name, generation, |slot| {
                        slot.transport = TransportKind::Sse
                    });
                    connect_sse(shared, name, cfg, client, handshake, max_line).await
                }
                Some(Err(e)) => Err(init_error(e)),
            }
        }
    }
}

/// OAuth for an HTTP server, unless its configuration sends an `Authorization` header itself
/// (a static token the user chose; a 401 then means that token is wrong).
fn authorizer(
    shared: &Arc<Shared>,
    name: &str,
    url: &str,
    cfg: &McpServerConfig,
) -> Option<Arc<crate::oauth::Authorizer>> {
    if cfg
        .headers
        .keys()
        .any(|k| k.eq_ignore_ascii_case("authorization"))
    {
        return None;
    }
    let mut options = shared.options.oauth.clone();
    options.prompt = Arc::new(HubPrompt {
        shared: Arc::downgrade(shared),
    });
    Some(crate::oauth::Authorizer::new(
        name,
        url,
        cfg.oauth.clone(),
        options,
    ))
}

/// Asks the delegate (the editor, or the conformance client's headless browser) to show an
/// authorization page; without one, the prompt of the hub's options (the terminal).
struct HubPrompt {
    shared: Weak<Shared>,
}

impl crate::oauth::AuthorizationPrompt for HubPrompt {
    fn open<'a>(&'a self, server: &'a str, url: &'a str) -> BoxFuture<'a, Result<(), String>> {
        Box::pin(async move {
            let shared = self
                .shared
                .upgrade()
                .ok_or_else(|| "the hub is gone".to_owned())?;
            let delegate = shared
                .delegate
                .read()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .clone();
            if let Some(shown) = delegate
                .as_ref()
                .and_then(|d| d.open_authorization(server, url))
            {
                return shown.await;
            }
            shared.options.oauth.prompt.open(server, url).await
        })
    }
}

async fn headers_for(
    shared: &Shared,
    name: &str,
    cfg: &McpServerConfig,
) -> Result<HashMap<reqwest13::header::HeaderName, reqwest13::header::HeaderValue>, McpError> {
    let headers = shared
        .options
        .header_source
        .headers(name, &cfg.headers)
        .await
        .map_err(|e| McpError::Config(format!("headers: {e}")))?;
    crate::http::header_map(&headers)
}

async fn connect_sse(
    shared: &Shared,
    name: &str,
    cfg: &McpServerConfig,
    client: HubClient,
    handshake: Duration,
    max_line: usize,
) -> Result<Conn, McpError> {
    let url = cfg
        .url
        .as_deref()
        .ok_or_else(|| McpError::Config("an SSE server needs `url`".to_owned()))?;
    let headers = headers_for(shared, name, cfg).await?;
    let http = crate::http::client()?;
    let service = tokio::time::timeout(handshake, async {
        let transport = crate::sse::connect(http, url, headers, max_line).await?;
        client.serve(transport).await.map_err(init_error)
    })
    .await
    .map_err(|_| McpError::HandshakeTimeout(handshake))??;
    Ok(Conn::new(service, None, max_line))
}

async fn connect_stdio(
    name: &str,
    cfg: &McpServerConfig,
    client: HubClient,
    handshake: Duration,
    max_line: usize,
) -> Result<Conn, McpError> {
    let (transport, mut child) = crate::stdio::spawn(name, cfg, max_line)?;
    let transport = crate::ids::KnownIds::new(transport);
    enum Outcome<T> {
        Served(T),
        Exited(std::io::Result<std::process::ExitStatus>),
    }
    let outcome = {
        let serve = tokio::time::timeout(handshake, client.serve(transport));
        tokio::select! {
            r = serve => Outcome::Served(r),
            s = child.child.wait() => Outcome::Exited(s),
        }
    };
    let err = match outcome {
        Outcome::Served(Ok(Ok(service))) => return Ok(Conn::new(service, Some(child), max_line)),
        Outcome::Served(Err(_)) => McpError::HandshakeTimeout(handshake),
        Outcome::Served(Ok(Err(e))) => {
            if child.oversized.load(Ordering::Relaxed) {
                McpError::Protocol(oversized_reason(max_line))
            } else {
                match tokio::time::timeout(Duration::from_millis(500), child.child.wait()).await {
                    Ok(status) => McpError::Exited {
                        status: status_text(status),
                        during: "during initialize",
                        stderr: child.stderr.last_line().await,
                    },
                    Err(_) => init_error(e),
                }
            }
        }
        Outcome::Exited(status) => McpError::Exited {
            status: status_text(status),
            during: "during initialize",
            stderr: child.stderr.last_line().await,
        },
    };
    child.kill(Duration::from_secs(2)).await;
    Err(err)
}
