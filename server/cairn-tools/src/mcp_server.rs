//! The built-in tools as an MCP server. The hub serves it in-process over an in-memory
//! transport, so built-in and external tools share one path, one policy and one catalog.
//!
//! The session, run and call ids travel in the request's `_meta` (`cairn/sessionId`,
//! `cairn/runId`, `cairn/callId`), and a
//! `notifications/cancelled` from the hub cancels the call through the request's token.

use cairn_agent::tools::{CallContext, ToolHost, ToolInfo};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, ErrorData, Implementation, ListToolsResult,
    PaginatedRequestParams, ServerCapabilities, ServerConfig,
};
use rmcp::service::RequestContext;
use rmcp::{RoleServer, ServerHandler};

/// `_meta` key carrying the agent's run id into a built-in call.
pub const RUN_ID_META: &str = "cairn/runId";
/// `_meta` key carrying the chat session id into a built-in call.
pub const SESSION_ID_META: &str = "cairn/sessionId";
/// `_meta` key carrying the agent's call id into a built-in call.
pub const CALL_ID_META: &str = "cairn/callId";

/// Any [`ToolHost`] of built-in tools, served over MCP.
#[derive(Debug, Clone)]
pub struct ToolServer<H> {
    name: &'static str,
    host: H,
}

impl<H: ToolHost> ToolServer<H> {
    /// Serves `host` under the server name `name` (for example `cairn-files`).
    pub fn new(name: &'static str, host: H) -> Self {
        Self { name, host }
    }

    /// The tools with what the agent needs beyond MCP (effect, category), which the hub trusts
    /// for built-ins only.
    pub fn infos(&self) -> Vec<ToolInfo> {
        self.host.list()
    }
}

impl<H: ToolHost + Send + Sync + 'static> ServerHandler for ToolServer<H> {
    fn get_info(&self) -> ServerConfig {
        let mut info = ServerConfig::new(ServerCapabilities::builder().enable_tools().build());
        info.server_info = Implementation::new(self.name, env!("CARGO_PKG_VERSION"));
        info
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let tools = self.host.list().into_iter().map(|t| t.tool).collect();
        Ok(ListToolsResult::with_all_items(tools))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let meta_str = |key: &str| {
            request
                .meta
                .as_ref()
                .and_then(|m| m.get(key))
                .and_then(|v| v.as_str())
                .unwrap_or_default()
                .to_string()
        };
        let ctx = CallContext {
            session_id: meta_str(SESSION_ID_META),
            run_id: meta_str(RUN_ID_META),
            call_id: meta_str(CALL_ID_META),
            cancel: context.ct.clone(),
        };
        let arguments = request.arguments.clone().unwrap_or_default();
        Ok(self.host.call(&request.name, arguments, ctx).await.into())
    }
}
