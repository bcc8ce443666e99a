//! MCP servers as the editor sees them: `cairn/mcpStatus` notifications whenever a server's
//! state or the catalog changes, and `$/progress` while servers start.

use std::sync::Arc;
use std::time::Duration;

use cairn_mcp::ServerState;
use serde_json::{Value, json};
use tower_lsp_server::ls_types::ProgressToken;
use tower_lsp_server::ls_types::notification::Notification;

use crate::McpHandle;
use crate::protocol;
use crate::server::State;

enum McpStatusNotification {}

impl Notification for McpStatusNotification {
    type Params = Value;
    const METHOD: &'static str = protocol::MCP_STATUS;
}

/// The status of every server, what waits for trust, what could not start, and the tools
/// waiting for review.
pub(crate) fn status_json(handle: &McpHandle) -> Value {
    json!({
        "servers": handle.hub.status(),
        "waitingForTrust": handle.waiting_for_trust,
        "problems": handle
            .problems
            .iter()
            .map(|(server, message)| json!({ "server": server, "message": message }))
            .collect::<Vec<_>>(),
        "reviews": handle.reviewer.pending(),
    })
}

/// Sends `cairn/mcpStatus` on every change, and `$/progress` while servers start. Runs for the
/// life of the server.
pub(crate) fn watch(state: Arc<State>) {
    let Some(handle) = state.factory.mcp() else {
        return;
    };
    let mut events = handle.hub.subscribe();
    tokio::spawn(async move {
        let token = ProgressToken::String(format!("cairn-mcp-{}", uuid::Uuid::new_v4().simple()));
        let mut progress = None;
        loop {
            let Some(handle) = state.factory.mcp() else {
                return;
            };
            let statuses = handle.hub.status();
            let starting = statuses
                .iter()
                .filter(|s| matches!(s.state, ServerState::Starting))
                .count();
            match (&progress, starting) {
                (None, n) if n > 0 => {
                    if state
                        .client
                        .create_work_done_progress(token.clone())
                        .await
                        .is_ok()
                    {
                        let title = "cairn: starting MCP servers";
                        let message = format!("{n} of {} starting", statuses.len());
                        progress = Some(
                            state
                                .client
                                .progress(token.clone(), title)
                                .with_message(message)
                                .begin()
                                .await,
                        );
                    }
                }
                (Some(p), n) if n > 0 => {
                    p.report(format!("{n} of {} starting", statuses.len()))
                        .await
                }
                (Some(_), _) => {
                    if let Some(p) = progress.take() {
                        p.finish().await;
                    }
                }
                (None, _) => {}
            }
            state
                .client
                .send_notification::<McpStatusNotification>(status_json(&handle))
                .await;
            // Several changes in a row make one notification.
            match events.recv().await {
                Err(tokio::sync::broadcast::error::RecvError::Closed) => return,
                _ => tokio::time::sleep(Duration::from_millis(50)).await,
            }
            while events.try_recv().is_ok() {}
        }
    });
}
