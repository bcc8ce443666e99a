//! `run_python`: a Python 3 program in a fresh sandbox container.

use cairn_toolkit::{CallContext, Category, Effect, Paths, Tool};
use rmcp::model::CallToolResult;

use super::Code;
use super::runner::{self, CodeArgs, describe};
use crate::runtimes::PYTHON;

/// The `run_python` tool.
pub struct RunPython;

impl Tool for RunPython {
    type Host = Code;
    type Args = CodeArgs;
    const NAME: &'static str = "run_python";
    const TITLE: &'static str = "Run Python";
    const DESCRIPTION: &'static str = describe!("Python 3");
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
        runner::run(host, &PYTHON, args, &cx).await
    }
}
