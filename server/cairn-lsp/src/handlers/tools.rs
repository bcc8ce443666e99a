//! `cairn/tools`: the tool catalog, with each tool's policy and whether the session's last turn
//! offered it.

use std::time::Duration;

use serde_json::Value;
use tower_lsp_server::jsonrpc::Result;

use super::internal_error;
use crate::protocol::{ToolEntry, ToolsParams, ToolsResult};
use crate::state::State;

pub(crate) async fn handle(state: &State, params: Option<ToolsParams>) -> Result<ToolsResult> {
    let params = params.unwrap_or_default();
    let agent = state.agent().map_err(internal_error)?;
    if let Some(mcp) = state.factory.mcp() {
        let limit = Duration::from_secs(state.config().mcp.handshake_timeout_secs);
        mcp.hub.settled(limit).await;
    }
    let selected = params
        .session_id
        .map(|id| state.session(&id).last_offered)
        .unwrap_or_default();
    let tools = agent
        .tools
        .list()
        .into_iter()
        .map(|t| ToolEntry {
            name: t.tool.name.to_string(),
            description: t
                .tool
                .description
                .as_deref()
                .unwrap_or_default()
                .to_string(),
            category: t.category.clone(),
            effect: t.effect,
            agent_only: t.agent_only,
            policy: agent.policy.decide(&t).decision,
            selected: selected.iter().any(|s| s == t.tool.name.as_ref()),
            input_schema: Value::Object((*t.tool.input_schema).clone()),
        })
        .collect();
    Ok(ToolsResult { tools })
}
