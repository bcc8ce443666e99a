//! Built-in tools, served in-process as a [`ToolHost`].
//!
//! The first category is `file`: `read_file`, `list_directory`, `grep` and `edit_file`. They act
//! on workspace files only through [`cairn_workspace::Workspace`], so every path the model names
//! is resolved inside a root, and reads see (and edits go through) the editor's open buffers.
//!
//! Every failure is an `is_error` result the model can read and act on, never a panic:
//! arguments are deserialised into `deny_unknown_fields` structs and a bad one is named, scope
//! denials say what was refused and why, and an unknown tool name is reported as such.

#![deny(missing_docs)]

mod edit_file;
mod grep;
mod list_directory;
pub mod mcp_server;
mod read_file;
mod util;

use std::sync::Arc;

use cairn_agent::tools::{CallContext, Effect, ToolHost, ToolInfo};
use cairn_workspace::Workspace;
use futures::future::BoxFuture;
use rmcp::model::CallToolResult;

use crate::util::error_result;

/// The tool names this host serves, in the order listed.
pub const TOOL_NAMES: [&str; 4] = ["read_file", "list_directory", "grep", "edit_file"];

/// The built-in file tools over one workspace.
///
/// Plug the editor's buffers into the workspace before building this:
/// `BuiltinTools::new(Arc::new(Workspace::new(roots)?.with_overlay(overlay)))`.
#[derive(Debug, Clone)]
pub struct BuiltinTools {
    workspace: Arc<Workspace>,
}

impl BuiltinTools {
    /// Tools acting on `workspace`.
    pub fn new(workspace: Arc<Workspace>) -> BuiltinTools {
        BuiltinTools { workspace }
    }

    /// The workspace the tools act on.
    pub fn workspace(&self) -> &Arc<Workspace> {
        &self.workspace
    }
}

impl ToolHost for BuiltinTools {
    fn list(&self) -> Vec<ToolInfo> {
        let file = |tool, effect, agent_only| ToolInfo {
            tool,
            effect,
            category: "file".to_owned(),
            agent_only,
        };
        vec![
            file(read_file::definition(), Effect::Read, false),
            file(list_directory::definition(), Effect::Read, false),
            file(grep::definition(), Effect::Read, false),
            file(edit_file::definition(), Effect::Write, true),
        ]
    }

    fn call(
        &self,
        name: &str,
        arguments: serde_json::Map<String, serde_json::Value>,
        ctx: CallContext,
    ) -> BoxFuture<'_, CallToolResult> {
        let name = name.to_owned();
        let ws = self.workspace.clone();
        Box::pin(async move {
            tracing::debug!(tool = %name, call_id = %ctx.call_id, "built-in tool call");
            match name.as_str() {
                "read_file" => read_file::call(ws, arguments).await,
                "list_directory" => list_directory::call(ws, arguments).await,
                "grep" => grep::call(ws, arguments, ctx).await,
                "edit_file" => edit_file::call(ws, arguments).await,
                other => error_result(format!(
                    "unknown tool `{other}`; the built-in file tools are {}",
                    TOOL_NAMES.join(", ")
                )),
            }
        })
    }
}

#[cfg(test)]
mod tests;
