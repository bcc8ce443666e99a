//! `run_node`: a JavaScript (Node.js) program in a fresh sandbox container.

use cairn_toolkit::{CallContext, Category, Effect, Paths, Tool};
use rmcp::model::CallToolResult;

use super::Code;
use super::runner::{self, CodeArgs, describe};
use crate::runtimes::NODE;

/// The `run_node` tool.
pub struct RunNode;

impl Tool for RunNode {
    type Host = Code;
    type Args = CodeArgs;
    const NAME: &'static str = "run_node";
    const TITLE: &'static str = "Run JavaScript";
    const DESCRIPTION: &'static str = describe!("JavaScript (Node.js)");
    const CATEGORY: Category = Category::Code;
    const EFFECT: Effect = Effect::Execute;
    const AGENT_ONLY: bool = false;
    const DESTRUCTIVE: bool = false;

    /// The code reads no workspace file through the workspace: the mount hides what the user
    /// protects (`Workspace::masks`).
    fn paths(_: &CodeArgs) -> Paths {
        Paths::none()
    }

    async fn call(host: &Code, args: CodeArgs, cx: CallContext) -> CallToolResult {
        runner::run(host, &NODE, args, &cx).await
    }
}
