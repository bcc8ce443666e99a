//! `copy_out_of_sandbox`: a text file of the chat's Python session copied into the workspace.

use cairn_toolkit::reply::text;
use cairn_toolkit::{CallContext, Category, Effect, JsonSchema, Paths, Tool};
use rmcp::model::CallToolResult;
use serde::Deserialize;

use super::{Code, outcome, report_result, session};

/// The `copy_out_of_sandbox` tool.
pub struct CopyOutOfSandbox;

/// Arguments of `copy_out_of_sandbox`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// The file in the sandbox, under /tmp.
    from: String,
    /// The workspace file to write (it must not exist).
    path: String,
}

impl Tool for CopyOutOfSandbox {
    type Host = Code;
    type Args = Args;
    const NAME: &'static str = "copy_out_of_sandbox";
    const TITLE: &'static str = "Copy out of sandbox";
    const DESCRIPTION: &'static str = "Copy a text file out of this chat's Python session (under /tmp) into the workspace, for example a result the session wrote.";
    const CATEGORY: Category = Category::Code;
    const EFFECT: Effect = Effect::Write;
    const AGENT_ONLY: bool = false;
    const DESTRUCTIVE: bool = false;

    fn paths(args: &Args) -> Paths {
        Paths::write(&args.path)
    }

    async fn call(host: &Code, args: Args, cx: CallContext) -> CallToolResult {
        outcome(copy(host, args, &cx).await)
    }
}

async fn copy(host: &Code, args: Args, cx: &CallContext) -> Result<CallToolResult, String> {
    let sb = &host.sandbox;
    let ws = host.open_workspace()?;
    let path = ws.resolve(&args.path).map_err(|e| e.to_string())?;
    let report = sb
        .copy_out_of_session(session(cx), &args.from, &cx.cancel)
        .await
        .map_err(|e| e.to_string())?;
    if report.failed() {
        return Ok(report_result(&report, sb));
    }
    if report.truncated || report.binary {
        return Err(format!(
            "`{}` is binary or over the {}-byte output limit; only text files up to the limit are copied",
            args.from,
            sb.limits().output_max_bytes
        ));
    }
    ws.create_text_exclusive(&path, &report.stdout)
        .map_err(|e| e.to_string())?;
    Ok(text(format!(
        "copied {} to {} ({} bytes)",
        args.from,
        path.display_path(),
        report.stdout.len()
    )))
}
