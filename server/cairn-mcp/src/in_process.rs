//! Any tool set as an MCP server: [`ToolServer`] serves a [`ToolHost`] over rmcp, and the hub
//! runs it in-process over an in-memory transport ([`crate::Hub::add_in_process`]), so built-in
//! and external tools share one path, one policy and one catalog.
//!
//! The session, run and call ids arrive in the request's `_meta` ([`crate::meta::CallMeta`]),
//! and a `notifications/cancelled` from the hub cancels the call through the request's token.

use cairn_agent::tools::{ToolHost, ToolInfo};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, ErrorData, Implementation, ListToolsResult,
    PaginatedRequestParams, ServerCapabilities, ServerConfig,
};
use rmcp::service::RequestContext;
use rmcp::{RoleServer, ServerHandler};

use crate::meta::CallMeta;

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
        // rmcp moves the request's `_meta` into the context when it reads the request;
        // `request.meta` is always empty here.
        let ctx = CallMeta::from_meta(&context.meta).into_context(context.ct.clone());
        let arguments = request.arguments.clone().unwrap_or_default();
        Ok(self.host.call(&request.name, arguments, ctx).await.into())
    }
}
