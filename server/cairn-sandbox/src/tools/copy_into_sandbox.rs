//! `copy_into_sandbox`: a workspace file copied into the chat's Python session.

use cairn_toolkit::reply::text;
use cairn_toolkit::{CallContext, Category, Effect, JsonSchema, Paths, Tool};
use rmcp::model::CallToolResult;
use serde::Deserialize;

use super::{Code, outcome, report_result, session};

/// The `copy_into_sandbox` tool.
pub struct CopyIntoSandbox;

/// Arguments of `copy_into_sandbox`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// The workspace file.
    path: String,
    /// Where in the sandbox, under /tmp (default: /tmp/<file name>).
    to: Option<String>,
}

impl Tool for CopyIntoSandbox {
    type Host = Code;
    type Args = Args;
    const NAME: &'static str = "copy_into_sandbox";
    const TITLE: &'static str = "Copy into sandbox";
    const DESCRIPTION: &'static str = "Copy a workspace file into this chat's Python session, under /tmp, so session code can read it.";
    const CATEGORY: Category = Category::Code;
    const EFFECT: Effect = Effect::Execute;
    const AGENT_ONLY: bool = false;
    const DESTRUCTIVE: bool = false;

    fn paths(args: &Args) -> Paths {
        Paths::read(&args.path)
    }

    async fn call(host: &Code, args: Args, cx: CallContext) -> CallToolResult {
        outcome(copy(host, args, &cx).await)
    }
}

async fn copy(host: &Code, args: Args, cx: &CallContext) -> Result<CallToolResult, String> {
    let sb = &host.sandbox;
    let ws = host.open_workspace()?;
    let path = ws.resolve(&args.path).map_err(|e| e.to_string())?;
    let (content, _) = ws.read_text(&path).map_err(|e| e.to_string())?;
    let file_name = path
        .as_path()
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "file".into());
    let to = args.to.unwrap_or_else(|| format!("/tmp/{file_name}"));
    let size = content.len();
    let report = sb
        .copy_into_session(session(cx), &to, content.into_bytes(), &cx.cancel)
        .await
        .map_err(|e| e.to_string())?;
    if report.failed() {
        return Ok(report_result(&report, sb));
    }
    Ok(text(format!(
        "copied {} ({size} bytes) to {to} in this chat's Python session",
        path.display_path(),
    )))
}
