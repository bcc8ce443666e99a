//! `stop_sandbox`: stops and removes a chat's Python session.

use cairn_toolkit::reply::{error, text};
use cairn_toolkit::{CallContext, Category, Effect, JsonSchema, Paths, Tool};
use rmcp::model::CallToolResult;
use serde::Deserialize;

use super::{Code, session};
use crate::error::SandboxError;

/// The `stop_sandbox` tool.
pub struct StopSandbox;

/// Arguments of `stop_sandbox`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// A container id from list_sandboxes; default this chat's Python session.
    id: Option<String>,
}

impl Tool for StopSandbox {
    type Host = Code;
    type Args = Args;
    const NAME: &'static str = "stop_sandbox";
    const TITLE: &'static str = "Stop sandbox";
    const DESCRIPTION: &'static str = "Stop and remove a sandbox: this chat's Python session by default, or one `list_sandboxes` shows by id. Its state is lost.";
    const CATEGORY: Category = Category::Code;
    const EFFECT: Effect = Effect::Write;
    const AGENT_ONLY: bool = false;
    const DESTRUCTIVE: bool = false;

    fn paths(_: &Args) -> Paths {
        Paths::none()
    }

    async fn call(host: &Code, args: Args, cx: CallContext) -> CallToolResult {
        let sb = &host.sandbox;
        let target = match &args.id {
            None => session(&cx).to_owned(),
            // A prefix names a session only when it is long enough to be meant.
            Some(id) => match sb
                .sessions()
                .await
                .into_iter()
                .find(|(_, c, _, _)| c.starts_with(id.as_str()) && id.len() >= 6)
            {
                Some((chat, _, _, _)) => chat,
                None => return error(SandboxError::NoSuchSandbox(id.clone()).to_string()),
            },
        };
        if sb.stop_session(&target).await {
            text("stopped and removed the sandbox; its state is gone")
        } else {
            error(SandboxError::NoSuchSandbox("this chat's Python session".into()).to_string())
        }
    }
}
