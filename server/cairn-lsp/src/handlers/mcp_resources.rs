//! `cairn/mcpResources`: the resources and resource templates the MCP servers offer.

use tower_lsp_server::jsonrpc::Result;

use crate::factory::AgentFactory;
use crate::protocol::McpResourcesResult;

pub(crate) async fn handle(
    factory: &dyn AgentFactory,
    _params: Option<serde_json::Value>,
) -> Result<McpResourcesResult> {
    let resources = match factory.mcp() {
        Some(h) => h.hub.resources().await,
        None => Vec::new(),
    };
    Ok(McpResourcesResult { resources })
}
