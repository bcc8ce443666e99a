//! `initialized`: configuration problems found before the client could be told, the agent
//! built (which starts the MCP servers), and the MCP and tool-selection watchers.

use std::sync::Arc;

use tower_lsp_server::ls_types::MessageType;

use crate::state::State;

pub(crate) async fn handle(state: &Arc<State>) {
    let warnings = state
        .startup_warnings
        .lock()
        .map(|mut w| std::mem::take(&mut *w))
        .unwrap_or_default();
    for w in warnings {
        state
            .client
            .show_message(MessageType::ERROR, state.redact(w))
            .await;
    }
    // Building the agent starts the MCP servers in the background.
    if let Err(e) = state.agent() {
        state
            .client
            .show_message(MessageType::ERROR, state.redact(format!("cairn: {e}")))
            .await;
    }
    if let Some(handle) = state.factory.mcp() {
        let delegate = crate::mcp::EditorDelegate {
            state: Arc::downgrade(state),
        };
        handle.hub.set_delegate(Arc::new(delegate));
    }
    crate::mcp::watch(state.client.clone(), state.factory.clone());
    crate::selection::watch(state.client.clone(), state.factory.clone());
    crate::local_model::watch(state.client.clone(), state.factory.clone());
}
