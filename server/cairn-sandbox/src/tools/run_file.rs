//! `run_file`: a program file of the workspace, run in a sandbox from its directory.

use cairn_toolkit::{CallContext, Category, Effect, JsonSchema, Paths, Tool};
use rmcp::model::CallToolResult;
use serde::Deserialize;

use super::{Code, outcome, report_result};
use crate::engine::WORKSPACE_DIR;
use crate::runtimes::runtime_for_extension;

/// The `run_file` tool.
pub struct RunFile;

/// Arguments of `run_file`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// The file, relative to the workspace root.
    path: String,
    /// Ask the user for network access for this run (default: no network).
    #[serde(default)]
    network: bool,
    /// Ask the user to mount the workspace writable (default: read-only at /workspace).
    #[serde(default)]
    workspace_write: bool,
}

impl Tool for RunFile {
    type Host = Code;
    type Args = Args;
    const NAME: &'static str = "run_file";
    const TITLE: &'static str = "Run a file";
    const DESCRIPTION: &'static str = "Run a program file of the workspace (.py, .js, .sh, .rb, .go, .rs, .pl) in a sandbox, from its directory under /workspace; use it to run a project's script.";
    const CATEGORY: Category = Category::Code;
    const EFFECT: Effect = Effect::Execute;
    const AGENT_ONLY: bool = false;
    const DESTRUCTIVE: bool = false;

    /// The program is read from the workspace and given to the container as its code; the
    /// rest of the mount hides what the user protects (`Workspace::masks`).
    fn paths(args: &Args) -> Paths {
        Paths::read(&args.path)
    }

    async fn call(host: &Code, args: Args, cx: CallContext) -> CallToolResult {
        outcome(run(host, args, &cx).await)
    }
}

async fn run(host: &Code, args: Args, cx: &CallContext) -> Result<CallToolResult, String> {
    let ws = host.open_workspace()?;
    let path = ws.resolve(&args.path).map_err(|e| e.to_string())?;
    let ext = path
        .as_path()
        .extension()
        .and_then(|e| e.to_str())
        .unwrap_or_default();
    let rt = runtime_for_extension(ext).ok_or_else(|| {
        format!(
            "no runtime runs `.{ext}` files; run_file knows .py, .js, .sh, .rb, .go, .rs and .pl"
        )
    })?;
    let (code, _) = ws.read_text(&path).map_err(|e| e.to_string())?;
    let dir = path
        .relative()
        .parent()
        .map(|p| format!("{WORKSPACE_DIR}/{}", p.display()))
        .unwrap_or_else(|| WORKSPACE_DIR.to_owned());
    let options = host
        .options(args.network, args.workspace_write, Some(dir))
        .await?;
    let run = host.sandbox.run_code(rt, &code, options, &cx.cancel);
    let report = host
        .checkpointed(args.workspace_write, run)
        .await
        .map_err(|e| e.to_string())?;
    Ok(report_result(&report, &host.sandbox))
}
