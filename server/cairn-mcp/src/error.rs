//! Errors of the hub. Each variant says what happened in words a user can act on, because the
//! text ends up in `cairn mcp status`, in `cairn/mcpStatus` and in tool results the model reads.

use std::time::Duration;

/// Why a server could not be started, or why a call to it failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum McpError {
    /// The configuration entry cannot be used as it is (no `command` or `url`, a bad URL, ...).
    #[error("bad configuration: {0}")]
    Config(String),
    /// The program could not be started.
    #[error("could not start `{command}`: {source}")]
    Spawn {
        command: String,
        #[source]
        source: std::io::Error,
    },
    /// The server did not answer `initialize` in time.
    #[error("did not answer initialize within {}", fmt_duration(*.0))]
    HandshakeTimeout(Duration),
    /// The child process ended; `during` says in which phase.
    #[error("exited with {status} {during}{}", stderr_suffix(.stderr))]
    Exited {
        status: String,
        during: &'static str,
        /// The last line the child wrote to stderr, which usually says why.
        stderr: Option<String>,
    },
    /// The server broke the protocol (bad handshake, unsupported version, oversized line, ...).
    #[error("{0}")]
    Protocol(String),
    /// A transport-level failure (HTTP error, connection refused, ...).
    #[error("{0}")]
    Transport(String),
    /// A call took longer than its timeout; the server was sent `notifications/cancelled`.
    #[error("timed out after {}", fmt_duration(*.0))]
    CallTimeout(Duration),
    /// The connection ended while a call was in flight.
    #[error("the server crashed or closed the connection during the call{}", reason_suffix(.0))]
    Crashed(Option<String>),
    /// The server is not running (starting, restarting, failed or disabled).
    #[error("the server is not running: {0}")]
    NotRunning(String),
    /// No tool has this public name.
    #[error("unknown tool `{0}`")]
    UnknownTool(String),
    /// Two tools could carry this public name, so neither runs; the text names both and the fix.
    #[error("{0}")]
    NameCollision(String),
    /// The name now belongs to another tool than the one the call was approved for.
    #[error(
        "not run: `{name}` was approved as {decided_for}, but the name now belongs to another tool (the configuration changed); ask again"
    )]
    ToolMoved { name: String, decided_for: String },
    /// The tool exists but is disabled (for example until the user approves a changed definition).
    #[error("tool `{0}` is disabled")]
    ToolDisabled(String),
    /// The run was cancelled; the server was sent `notifications/cancelled`.
    #[error("the call was cancelled")]
    Cancelled,
    /// The server answered a call with a JSON-RPC error.
    #[error("the server answered with an error: {0}")]
    Rpc(String),
    /// OAuth authorization to the server failed; `permanent` when trying again would only ask
    /// the user to sign in again for the same outcome.
    #[error("authorization failed: {reason}")]
    Auth { reason: String, permanent: bool },
}

impl McpError {
    /// Failures that starting again will not fix: restarting them would only be a retry storm.
    pub(crate) fn is_permanent(&self) -> bool {
        match self {
            McpError::Config(_) => true,
            McpError::Spawn { source, .. } => matches!(
                source.kind(),
                std::io::ErrorKind::NotFound | std::io::ErrorKind::PermissionDenied
            ),
            McpError::Protocol(msg) => msg.starts_with("unsupported protocol version"),
            McpError::Auth { permanent, .. } => *permanent,
            _ => false,
        }
    }
}

/// An error and its sources as one line, each cause once (rmcp and reqwest often repeat the
/// inner message in the outer one).
pub(crate) fn chain(e: &(dyn std::error::Error + 'static)) -> String {
    let mut text = e.to_string();
    let mut cur = e.source();
    while let Some(s) = cur {
        let next = s.to_string();
        if !text.contains(&next) {
            text.push_str(": ");
            text.push_str(&next);
        }
        cur = s.source();
    }
    text
}

pub(crate) fn fmt_duration(d: Duration) -> String {
    if d.subsec_millis() == 0 {
        format!("{} s", d.as_secs())
    } else {
        format!("{:.1} s", d.as_secs_f64())
    }
}

fn stderr_suffix(stderr: &Option<String>) -> String {
    match stderr {
        Some(line) => format!(": {line}"),
        None => String::new(),
    }
}

fn reason_suffix(reason: &Option<String>) -> String {
    match reason {
        Some(r) => format!(" ({r})"),
        None => String::new(),
    }
}

/// The OAuth failure in an error's source chain, as a hub error: the OAuth client reports it
/// through rmcp's transport as an `io::Error` wrapping the typed [`crate::OAuthError`].
pub(crate) fn auth_failure(err: &(dyn std::error::Error + 'static)) -> Option<McpError> {
    let mut cur: Option<&(dyn std::error::Error + 'static)> = Some(err);
    while let Some(e) = cur {
        let oauth = e.downcast_ref::<crate::OAuthError>().or_else(|| {
            e.downcast_ref::<std::io::Error>()
                .and_then(|io| io.get_ref())
                .and_then(|inner| inner.downcast_ref::<crate::OAuthError>())
        });
        if let Some(oauth) = oauth {
            // A network hiccup may pass; a refusal, a mismatch or a sign-in nobody completed
            // will not, and retrying would open the sign-in page again and again.
            let permanent = !matches!(
                oauth,
                crate::OAuthError::Http(_) | crate::OAuthError::Store(_)
            );
            return Some(McpError::Auth {
                reason: oauth.to_string(),
                permanent,
            });
        }
        cur = e.source();
    }
    None
}
