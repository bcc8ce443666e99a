//! `cairn/mcpPrompts`: the prompts the MCP servers offer, for slash commands.

use tower_lsp_server::jsonrpc::Result;

use crate::factory::AgentFactory;
use crate::protocol::McpPromptsResult;

pub(crate) async fn handle(
    factory: &dyn AgentFactory,
    _params: Option<serde_json::Value>,
) -> Result<McpPromptsResult> {
    let prompts = match factory.mcp() {
        Some(h) => h.hub.prompts().await,
        None => Vec::new(),
    };
    Ok(McpPromptsResult { prompts })
}
