//! `run_rust`: a Rust (a main.rs) program in a fresh sandbox container.

use cairn_toolkit::{CallContext, Category, Effect, Paths, Tool};
use rmcp::model::CallToolResult;

use super::Code;
use super::runner::{self, CodeArgs, describe};
use crate::runtimes::RUST;

/// The `run_rust` tool.
pub struct RunRust;

impl Tool for RunRust {
    type Host = Code;
    type Args = CodeArgs;
    const NAME: &'static str = "run_rust";
    const TITLE: &'static str = "Run Rust";
    const DESCRIPTION: &'static str = describe!("Rust (a main.rs)");
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
        runner::run(host, &RUST, args, &cx).await
    }
}
