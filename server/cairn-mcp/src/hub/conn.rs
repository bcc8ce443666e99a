//! A live connection to one server ([`Conn`]): its peer, the task that serves it and, for a
//! child process, the child; and, when it ends, why (the child's exit status and last line of
//! stderr, an oversized line, a closed pipe).
//!
//! Apart from supervision, so `connect` builds one and `supervise` waits on it without the two
//! importing each other.

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use rmcp::RoleClient;
use rmcp::service::{Peer, QuitReason, RunningService, RunningServiceCancellationToken};
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use super::client::HubClient;
use crate::error::McpError;
use crate::stdio::StdioChild;

/// A live connection.
pub(super) struct Conn {
    pub(super) peer: Peer<RoleClient>,
    /// What the server answered `initialize` with.
    pub(super) protocol_version: Option<rmcp::model::ProtocolVersion>,
    quit: JoinHandle<Result<QuitReason, tokio::task::JoinError>>,
    /// A finished `JoinHandle` panics when polled again, so its end is remembered.
    quit_done: bool,
    cancel: Option<RunningServiceCancellationToken>,
    child: Option<StdioChild>,
    max_line_bytes: usize,
    /// The OAuth authorization of an HTTP server, whose sign-ins do not count against the
    /// handshake limit.
    pub(super) auth: Option<Arc<crate::oauth::Authorizer>>,
}

impl Conn {
    pub(super) fn new(
        service: RunningService<RoleClient, HubClient>,
        child: Option<StdioChild>,
        max_line_bytes: usize,
    ) -> Conn {
        let peer = service.peer().clone();
        let protocol_version = service
            .peer_info()
            .map(|info| info.protocol_version.clone());
        let cancel = Some(service.cancellation_token());
        let quit = tokio::spawn(service.waiting());
        Conn {
            peer,
            protocol_version,
            quit,
            quit_done: false,
            cancel,
            child,
            max_line_bytes,
            auth: None,
        }
    }

    /// Waits until the connection ends (the reason) or `stop` fires (`None`).
    pub(super) async fn wait_end(&mut self, stop: &CancellationToken) -> Option<String> {
        enum End {
            Quit,
            Exit(std::io::Result<std::process::ExitStatus>),
            Stop,
        }
        let end = match self.child.as_mut() {
            Some(child) => tokio::select! {
                _ = &mut self.quit => End::Quit,
                status = child.child.wait() => End::Exit(status),
                _ = stop.cancelled() => End::Stop,
            },
            None => tokio::select! {
                _ = &mut self.quit => End::Quit,
                _ = stop.cancelled() => End::Stop,
            },
        };
        if matches!(end, End::Quit) {
            self.quit_done = true;
        }
        match end {
            End::Stop => None,
            // An oversized line makes the child fail its writes and exit: that line is the cause.
            End::Exit(_)
                if self
                    .child
                    .as_ref()
                    .is_some_and(|c| c.oversized.load(Ordering::Relaxed)) =>
            {
                Some(oversized_reason(self.max_line_bytes))
            }
            End::Exit(status) => Some(self.exit_reason(status, "while running").await),
            End::Quit => {
                let Some(child) = self.child.as_mut() else {
                    return Some("the connection closed".to_owned());
                };
                if child.oversized.load(Ordering::Relaxed) {
                    return Some(oversized_reason(self.max_line_bytes));
                }
                // The pipe usually closes because the child exited; give it a moment to say how.
                match tokio::time::timeout(Duration::from_secs(1), child.child.wait()).await {
                    Ok(status) => Some(self.exit_reason(status, "while running").await),
                    Err(_) => Some("closed its stdout".to_owned()),
                }
            }
        }
    }

    async fn exit_reason(
        &mut self,
        status: std::io::Result<std::process::ExitStatus>,
        during: &'static str,
    ) -> String {
        let stderr = match self.child.as_mut() {
            Some(child) => child.stderr.last_line().await,
            None => None,
        };
        McpError::Exited {
            status: status_text(status),
            during,
            stderr,
        }
        .to_string()
    }

    /// Closes the connection and ends the child, bounded.
    pub(super) async fn close(mut self) {
        if let Some(cancel) = self.cancel.take() {
            cancel.cancel();
        }
        if !self.quit_done {
            let _ = tokio::time::timeout(Duration::from_secs(1), &mut self.quit).await;
        }
        self.quit.abort();
        if let Some(mut child) = self.child.take() {
            child.kill(Duration::from_secs(2)).await;
        }
    }
}

pub(super) fn oversized_reason(max: usize) -> String {
    format!("sent a line longer than the {max}-byte limit (mcp.max_line_bytes)")
}

pub(super) fn status_text(status: std::io::Result<std::process::ExitStatus>) -> String {
    use std::os::unix::process::ExitStatusExt;
    match status {
        Ok(s) => match (s.code(), s.signal()) {
            (Some(code), _) => format!("status {code}"),
            (None, Some(sig)) => format!("signal {sig}"),
            _ => "an unknown status".to_owned(),
        },
        Err(e) => format!("an unknown status ({e})"),
    }
}
