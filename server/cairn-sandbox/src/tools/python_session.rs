//! `python_session`: code run in the chat's persistent Python session.

use cairn_toolkit::reply::{error, text};
use cairn_toolkit::{CallContext, Category, Effect, JsonSchema, Paths, Tool};
use rmcp::model::CallToolResult;
use serde::Deserialize;

use super::{Code, session};

/// The `python_session` tool.
pub struct PythonSession;

/// Arguments of `python_session`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// Python code to run in the session.
    code: String,
}

impl Tool for PythonSession {
    type Host = Code;
    type Args = Args;
    const NAME: &'static str = "python_session";
    const TITLE: &'static str = "Python session";
    const DESCRIPTION: &'static str = "Run Python code in this chat's persistent Python session: variables, imports and files in /tmp last between calls (same limits as a run; a timeout resets it). The value of a last expression is printed. Use it for step-by-step analysis.";
    const CATEGORY: Category = Category::Code;
    const EFFECT: Effect = Effect::Execute;
    const AGENT_ONLY: bool = false;
    const DESTRUCTIVE: bool = false;

    /// The session's container has no workspace mount.
    fn paths(_: &Args) -> Paths {
        Paths::none()
    }

    async fn call(host: &Code, args: Args, cx: CallContext) -> CallToolResult {
        let sb = &host.sandbox;
        let (report, fresh) = match sb
            .python_session(session(&cx), &args.code, &cx.cancel)
            .await
        {
            Ok(done) => done,
            Err(e) => return error(e.to_string()),
        };
        let mut body = report.to_text(sb.limits());
        if fresh {
            body.insert_str(0, "(a new Python session was started)\n");
        }
        if report.failed() {
            body.push_str("(the session was reset: its state is gone)\n");
            return error(body);
        }
        text(body)
    }
}
