//! OAuth against a loopback server of our own (hyper) that is both an MCP server demanding a
//! bearer token and its authorization server: the whole PKCE flow (S256 challenge of the
//! verifier, state, resource), the token stored and reused without a second sign-in, refresh of
//! an expired token, a forged `state` refused, the SSRF refusal of a metadata URL on an internal
//! address (SECURITY.md C7), and no token in the hub's status, `Debug` or log.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeMap;
use std::convert::Infallible;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use base64::Engine as _;
use bytes::Bytes;
use cairn_agent::tools::{CallContext, ToolHost};
use cairn_config::{McpConfig, McpServerConfig, McpTransport};
use cairn_mcp::{
    AuthorizationPrompt, Hub, HubOptions, MemoryTokenStore, OAuthOptions, ServerState, TokenStore,
};
use futures::future::BoxFuture;
use http_body_util::{BodyExt, Full};
use hyper::{Request, Response};
use serde_json::{Value, json};
use sha2::Digest;
use tokio_util::sync::CancellationToken;

/// How the fake authorization server behaves.
#[derive(Default)]
struct Behaviour {
    /// `expires_in` of issued tokens.
    expires_in: u64,
    /// Redirect with this state instead of the one sent.
    forged_state: Option<String>,
    /// The `resource_metadata` URL in the challenge, instead of our own.
    metadata_url: Option<String>,
}

/// One request as the fake server saw it.
#[derive(Debug, Clone)]
struct Seen {
    method: String,
    path: String,
    query: BTreeMap<String, String>,
    form: BTreeMap<String, String>,
    authorization: Option<String>,
}

#[derive(Default)]
struct Fake {
    behaviour: Behaviour,
    base: Mutex<String>,
    seen: Mutex<Vec<Seen>>,
    /// Access tokens issued and still valid.
    valid: Mutex<Vec<String>>,
    issued: AtomicUsize,
    challenge: Mutex<Option<String>>,
}

impl Fake {
    fn seen(&self, path: &str) -> Vec<Seen> {
        self.seen
            .lock()
            .unwrap()
            .iter()
            .filter(|s| s.path == path)
            .cloned()
            .collect()
    }

    fn token(&self) -> (String, String) {
        let n = self.issued.fetch_add(1, Ordering::SeqCst);
        let access = format!("at-secret-{n}-xyzzy");
        self.valid.lock().unwrap().push(access.clone());
        (access, format!("rt-secret-{n}-plugh"))
    }

    fn answer(&self, seen: &Seen, body: &[u8]) -> Response<Full<Bytes>> {
        let base = self.base.lock().unwrap().clone();
        let json_reply = |status: u16, v: Value| {
            Response::builder()
                .status(status)
                .header("content-type", "application/json")
                .body(Full::new(Bytes::from(v.to_string())))
                .unwrap()
        };
        match (seen.method.as_str(), seen.path.as_str()) {
            ("GET", "/.well-known/oauth-protected-resource/mcp") => json_reply(
                200,
                json!({"resource": format!("{base}/mcp"), "authorization_servers": [base]}),
            ),
            ("GET", "/.well-known/oauth-authorization-server") => json_reply(
                200,
                json!({
                    "issuer": base,
                    "authorization_endpoint": format!("{base}/authorize"),
                    "token_endpoint": format!("{base}/token"),
                    "registration_endpoint": format!("{base}/register"),
                    "response_types_supported": ["code"],
                    "grant_types_supported": ["authorization_code", "refresh_token"],
                    "code_challenge_methods_supported": ["S256"],
                    "token_endpoint_auth_methods_supported": ["none"],
                }),
            ),
            ("POST", "/register") => json_reply(201, json!({"client_id": "client-1"})),
            ("GET", "/authorize") => {
                *self.challenge.lock().unwrap() = seen.query.get("code_challenge").cloned();
                let state = self
                    .behaviour
                    .forged_state
                    .clone()
                    .or_else(|| seen.query.get("state").cloned())
                    .unwrap_or_default();
                let mut location = url::Url::parse(&seen.query["redirect_uri"]).unwrap();
                location
                    .query_pairs_mut()
                    .append_pair("code", "the-code")
                    .append_pair("state", &state);
                Response::builder()
                    .status(302)
                    .header("location", location.as_str())
                    .body(Full::new(Bytes::new()))
                    .unwrap()
            }
            ("POST", "/token") => {
                let ok = match seen.form.get("grant_type").map(String::as_str) {
                    Some("authorization_code") => {
                        let verifier = seen.form.get("code_verifier").cloned().unwrap_or_default();
                        let computed = base64::engine::general_purpose::URL_SAFE_NO_PAD
                            .encode(sha2::Sha256::digest(verifier.as_bytes()));
                        seen.form.get("code").map(String::as_str) == Some("the-code")
                            && self.challenge.lock().unwrap().as_deref() == Some(&computed)
                    }
                    Some("refresh_token") => seen
                        .form
                        .get("refresh_token")
                        .is_some_and(|t| t.starts_with("rt-secret-")),
                    _ => false,
                };
                if !ok {
                    return json_reply(400, json!({"error": "invalid_grant"}));
                }
                let (access, refresh) = self.token();
                json_reply(
                    200,
                    json!({
                        "access_token": access,
                        "refresh_token": refresh,
                        "token_type": "Bearer",
                        "expires_in": self.behaviour.expires_in,
                    }),
                )
            }
            ("POST", "/mcp") => {
                let token = seen
                    .authorization
                    .as_deref()
                    .and_then(|a| a.strip_prefix("Bearer "));
                let valid =
                    token.is_some_and(|t| self.valid.lock().unwrap().iter().any(|v| v == t));
                if !valid {
                    let metadata = self.behaviour.metadata_url.clone().unwrap_or_else(|| {
                        format!("{base}/.well-known/oauth-protected-resource/mcp")
                    });
                    return Response::builder()
                        .status(401)
                        .header(
                            "www-authenticate",
                            format!(r#"Bearer resource_metadata="{metadata}""#),
                        )
                        .body(Full::new(Bytes::new()))
                        .unwrap();
                }
                mcp_answer(body)
            }
            _ => Response::builder()
                .status(405)
                .body(Full::new(Bytes::new()))
                .unwrap(),
        }
    }
}

/// A minimal MCP server: initialize, tools/list with one tool, tools/call.
fn mcp_answer(body: &[u8]) -> Response<Full<Bytes>> {
    let request: Value = serde_json::from_slice(body).unwrap_or(Value::Null);
    let Some(id) = request.get("id").cloned() else {
        return Response::builder()
            .status(202)
            .body(Full::new(Bytes::new()))
            .unwrap();
    };
    let result = match request.get("method").and_then(Value::as_str) {
        Some("initialize") => json!({
            "protocolVersion": "2025-06-18",
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "fake", "version": "1"},
        }),
        Some("tools/list") => json!({"tools": [
            {"name": "echo", "description": "Echo.", "inputSchema": {"type": "object"}}
        ]}),
        Some("tools/call") => json!({"content": [{"type": "text", "text": "echoed"}]}),
        _ => json!({}),
    };
    Response::builder()
        .status(200)
        .header("content-type", "application/json")
        .body(Full::new(Bytes::from(
            json!({"jsonrpc": "2.0", "id": id, "result": result}).to_string(),
        )))
        .unwrap()
}

/// Starts the fake on `localhost`; returns its base URL.
async fn start(fake: Arc<Fake>) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let base = format!("http://localhost:{port}");
    *fake.base.lock().unwrap() = base.clone();
    tokio::spawn(async move {
        loop {
            let Ok((stream, _)) = listener.accept().await else {
                return;
            };
            let fake = fake.clone();
            tokio::spawn(async move {
                let service =
                    hyper::service::service_fn(move |req: Request<hyper::body::Incoming>| {
                        let fake = fake.clone();
                        async move {
                            let (parts, body) = req.into_parts();
                            let body = body
                                .collect()
                                .await
                                .map(|b| b.to_bytes())
                                .unwrap_or_default();
                            let pairs = |s: &[u8]| -> BTreeMap<String, String> {
                                url::form_urlencoded::parse(s).into_owned().collect()
                            };
                            let seen = Seen {
                                method: parts.method.to_string(),
                                path: parts.uri.path().to_owned(),
                                query: pairs(parts.uri.query().unwrap_or_default().as_bytes()),
                                form: if parts.headers.get("content-type").is_some_and(|v| {
                                    v.as_bytes()
                                        .starts_with(b"application/x-www-form-urlencoded")
                                }) {
                                    pairs(&body)
                                } else {
                                    BTreeMap::new()
                                },
                                authorization: parts
                                    .headers
                                    .get("authorization")
                                    .and_then(|v| v.to_str().ok())
                                    .map(str::to_owned),
                            };
                            fake.seen.lock().unwrap().push(seen.clone());
                            Ok::<_, Infallible>(fake.answer(&seen, &body))
                        }
                    });
                let _ = hyper::server::conn::http1::Builder::new()
                    .serve_connection(hyper_util::rt::TokioIo::new(stream), service)
                    .await;
            });
        }
    });
    base
}

/// A headless browser that counts the sign-ins it was asked for; `slow` is how long the user
/// takes.
#[derive(Default)]
struct Browser {
    opened: AtomicUsize,
    slow: Duration,
}

impl AuthorizationPrompt for Browser {
    fn open<'a>(&'a self, _server: &'a str, url: &'a str) -> BoxFuture<'a, Result<(), String>> {
        self.opened.fetch_add(1, Ordering::SeqCst);
        Box::pin(async move {
            tokio::time::sleep(self.slow).await;
            cairn_mcp::oauth::headless_authorize(url).await
        })
    }
}

fn hub(url: &str, store: Arc<dyn TokenStore>, browser: Arc<Browser>) -> Hub {
    hub_with(url, store, browser, 0, 10)
}

fn hub_with(
    url: &str,
    store: Arc<dyn TokenStore>,
    browser: Arc<Browser>,
    max_restarts: u32,
    handshake_timeout_secs: u64,
) -> Hub {
    let mut servers = BTreeMap::new();
    servers.insert(
        "remote".to_owned(),
        McpServerConfig {
            url: Some(url.to_owned()),
            transport: Some(McpTransport::Http),
            ..McpServerConfig::default()
        },
    );
    let config = McpConfig {
        servers,
        handshake_timeout_secs,
        max_restarts,
        ..McpConfig::default()
    };
    let options = HubOptions {
        oauth: OAuthOptions {
            store,
            prompt: browser,
            callback_timeout: Duration::from_secs(5),
            ..OAuthOptions::default()
        },
        ..HubOptions::default()
    };
    Hub::new(config, options)
}

async fn settled_state(hub: &Hub) -> ServerState {
    hub.settled(Duration::from_secs(15)).await;
    hub.status()
        .into_iter()
        .find(|s| s.name == "remote")
        .map(|s| s.state)
        .unwrap()
}

async fn call(hub: &Hub) -> String {
    let ctx = CallContext {
        session_id: String::new(),
        run_id: "r".to_owned(),
        call_id: "c".to_owned(),
        cancel: CancellationToken::new(),
    };
    let result = hub.call("remote__echo", serde_json::Map::new(), ctx).await;
    assert_ne!(result.is_error, Some(true), "{result:?}");
    result.content[0].as_text().unwrap().text.clone()
}

/// A log writer the test can read.
#[derive(Clone, Default)]
struct LogBuffer(Arc<Mutex<Vec<u8>>>);

impl std::io::Write for LogBuffer {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pkce_flow_stores_the_token_and_the_next_connect_reuses_it() {
    let log = LogBuffer::default();
    let writer = log.clone();
    let subscriber = tracing_subscriber::fmt()
        .with_max_level(tracing::Level::TRACE)
        .with_writer(move || writer.clone())
        .finish();
    // Global: the hub's tasks log from the runtime's worker threads. The other tests of this
    // file log into it too, and their tokens must not show either.
    tracing::subscriber::set_global_default(subscriber).unwrap();

    let fake = Arc::new(Fake {
        behaviour: Behaviour {
            expires_in: 3600,
            ..Behaviour::default()
        },
        ..Fake::default()
    });
    let base = start(fake.clone()).await;
    let url = format!("{base}/mcp");
    let store: Arc<dyn TokenStore> = Arc::new(MemoryTokenStore::default());
    let browser = Arc::new(Browser::default());

    let first = hub(&url, store.clone(), browser.clone());
    assert!(
        matches!(
            settled_state(&first).await,
            ServerState::Running { tools: 1 }
        ),
        "{:?}",
        first.status()
    );
    assert_eq!(call(&first).await, "echoed");

    // The authorization request: PKCE S256, a state, the resource.
    let authorize = fake.seen("/authorize");
    assert_eq!(authorize.len(), 1);
    let q = &authorize[0].query;
    assert_eq!(q["response_type"], "code");
    assert_eq!(q["client_id"], "client-1");
    assert_eq!(q["code_challenge_method"], "S256");
    assert_eq!(q["resource"], url);
    assert!(q["state"].len() >= 16, "state {:?}", q["state"]);
    assert!(q["redirect_uri"].starts_with("http://127.0.0.1:"));
    // The token request: the verifier whose S256 is the challenge, the same resource.
    let token = fake.seen("/token");
    assert_eq!(token.len(), 1);
    let form = &token[0].form;
    assert_eq!(form["grant_type"], "authorization_code");
    let computed = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .encode(sha2::Sha256::digest(form["code_verifier"].as_bytes()));
    assert_eq!(computed, q["code_challenge"]);
    assert_eq!(
        computed,
        cairn_mcp::oauth::pkce_challenge(&form["code_verifier"])
    );
    assert_eq!(form["resource"], url);
    assert_eq!(form["redirect_uri"], q["redirect_uri"]);
    let stored = store.load("remote", &url).await.unwrap().unwrap();
    assert_eq!(stored.access_token, "at-secret-0-xyzzy");
    first.shutdown().await;

    // A second hub with the same store: no sign-in, the stored token is sent.
    let second = hub(&url, store.clone(), browser.clone());
    assert!(matches!(
        settled_state(&second).await,
        ServerState::Running { tools: 1 }
    ));
    assert_eq!(call(&second).await, "echoed");
    assert_eq!(browser.opened.load(Ordering::SeqCst), 1);
    assert_eq!(fake.seen("/authorize").len(), 1);
    assert_eq!(fake.seen("/token").len(), 1);
    let last = fake.seen("/mcp").last().cloned().unwrap();
    assert_eq!(
        last.authorization.as_deref(),
        Some("Bearer at-secret-0-xyzzy")
    );

    // No token or refresh token in status, Debug output or the log.
    let status = serde_json::to_string(&second.status()).unwrap();
    let debug = format!("{second:?} {stored:?}");
    let logged = String::from_utf8_lossy(&log.0.lock().unwrap()).into_owned();
    assert!(!logged.is_empty());
    for text in [&status, &debug, &logged] {
        assert!(!text.contains("xyzzy"), "access token leaked: {text}");
        assert!(!text.contains("plugh"), "refresh token leaked: {text}");
        assert!(!text.contains("the-code"), "code leaked: {text}");
    }
    second.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_expired_token_is_refreshed_without_a_sign_in() {
    // Every token expires at once (inside the 30 s margin), so each use refreshes it.
    let fake = Arc::new(Fake {
        behaviour: Behaviour {
            expires_in: 1,
            ..Behaviour::default()
        },
        ..Fake::default()
    });
    let base = start(fake.clone()).await;
    let url = format!("{base}/mcp");
    let store: Arc<dyn TokenStore> = Arc::new(MemoryTokenStore::default());
    let browser = Arc::new(Browser::default());
    let first = hub(&url, store.clone(), browser.clone());
    assert!(matches!(
        settled_state(&first).await,
        ServerState::Running { .. }
    ));
    first.shutdown().await;
    let before = fake.seen("/token").len();

    let second = hub(&url, store.clone(), browser.clone());
    assert!(matches!(
        settled_state(&second).await,
        ServerState::Running { .. }
    ));
    assert_eq!(call(&second).await, "echoed");
    assert_eq!(browser.opened.load(Ordering::SeqCst), 1, "signed in again");
    let refreshes: Vec<Seen> = fake.seen("/token")[before..]
        .iter()
        .filter(|s| s.form.get("grant_type").map(String::as_str) == Some("refresh_token"))
        .cloned()
        .collect();
    assert!(!refreshes.is_empty());
    assert_eq!(refreshes[0].form["resource"], url);
    let stored = store.load("remote", &url).await.unwrap().unwrap();
    assert_ne!(stored.access_token, "at-secret-0-xyzzy");
    second.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_callback_with_a_wrong_state_is_refused() {
    let fake = Arc::new(Fake {
        behaviour: Behaviour {
            expires_in: 3600,
            forged_state: Some("forged".to_owned()),
            ..Behaviour::default()
        },
        ..Fake::default()
    });
    let base = start(fake.clone()).await;
    let url = format!("{base}/mcp");
    // Restarts allowed: a refused sign-in must still fail at once, not open the page again.
    let browser = Arc::new(Browser::default());
    let hub = hub_with(
        &url,
        Arc::new(MemoryTokenStore::default()),
        browser.clone(),
        3,
        10,
    );
    match settled_state(&hub).await {
        ServerState::Failed { reason } => {
            assert!(reason.contains("wrong state"), "{reason}")
        }
        other => panic!("expected a failure, got {other:?}"),
    }
    tokio::time::sleep(Duration::from_millis(1500)).await;
    assert_eq!(browser.opened.load(Ordering::SeqCst), 1);
    assert!(fake.seen("/token").is_empty(), "the code was exchanged");
    hub.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn metadata_on_an_internal_address_is_not_fetched() {
    // A listener on another loopback address that counts connections.
    let internal = tokio::net::TcpListener::bind("127.0.0.2:0").await.unwrap();
    let port = internal.local_addr().unwrap().port();
    let hits = Arc::new(AtomicUsize::new(0));
    let counter = hits.clone();
    tokio::spawn(async move {
        while internal.accept().await.is_ok() {
            counter.fetch_add(1, Ordering::SeqCst);
        }
    });
    let fake = Arc::new(Fake {
        behaviour: Behaviour {
            expires_in: 3600,
            metadata_url: Some(format!(
                "http://127.0.0.2:{port}/.well-known/oauth-protected-resource"
            )),
            ..Behaviour::default()
        },
        ..Fake::default()
    });
    let base = start(fake.clone()).await;
    let hub = hub(
        &format!("{base}/mcp"),
        Arc::new(MemoryTokenStore::default()),
        Arc::new(Browser::default()),
    );
    match settled_state(&hub).await {
        ServerState::Failed { reason } => {
            assert!(reason.contains("refused to fetch"), "{reason}");
            assert!(reason.contains("loopback"), "{reason}");
        }
        other => panic!("expected a failure, got {other:?}"),
    }
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert_eq!(hits.load(Ordering::SeqCst), 0);
    assert!(fake.seen("/authorize").is_empty());
    hub.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn signing_in_may_take_longer_than_the_handshake_limit() {
    let fake = Arc::new(Fake {
        behaviour: Behaviour {
            expires_in: 3600,
            ..Behaviour::default()
        },
        ..Fake::default()
    });
    let base = start(fake.clone()).await;
    let browser = Arc::new(Browser {
        slow: Duration::from_millis(2500),
        ..Browser::default()
    });
    let hub = hub_with(
        &format!("{base}/mcp"),
        Arc::new(MemoryTokenStore::default()),
        browser,
        0,
        1,
    );
    assert!(
        matches!(settled_state(&hub).await, ServerState::Running { .. }),
        "{:?}",
        hub.status()
    );
    hub.shutdown().await;
}
