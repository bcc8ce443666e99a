//! `list_sandboxes`: the sandbox containers of this cairn.

use cairn_toolkit::reply::text;
use cairn_toolkit::{CallContext, Category, Effect, JsonSchema, Paths, Tool};
use rmcp::model::CallToolResult;
use serde::Deserialize;

use super::{Code, outcome, session};
use crate::engine::KIND_LABEL;

/// The `list_sandboxes` tool.
pub struct ListSandboxes;

/// `list_sandboxes` takes no arguments.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {}

impl Tool for ListSandboxes {
    type Host = Code;
    type Args = Args;
    const NAME: &'static str = "list_sandboxes";
    const TITLE: &'static str = "List sandboxes";
    const DESCRIPTION: &'static str = "List the sandbox containers of this cairn: the chat sessions' Python sessions and any run in progress, with image and age.";
    const CATEGORY: Category = Category::Code;
    const EFFECT: Effect = Effect::Read;
    const AGENT_ONLY: bool = false;

    fn paths(_: &Args) -> Paths {
        Paths::none()
    }

    async fn call(host: &Code, _: Args, cx: CallContext) -> CallToolResult {
        outcome(list(host, session(&cx)).await)
    }
}

async fn list(host: &Code, session: &str) -> Result<CallToolResult, String> {
    let sb = &host.sandbox;
    let engine = sb.engine().await.map_err(|e| e.to_string())?;
    let containers = engine.list(true).await.map_err(|e| e.to_string())?;
    let sessions = sb.sessions().await;
    if containers.is_empty() {
        return Ok(text(
            "no sandboxes are running (a run's container lives only as long as the run)",
        ));
    }
    let mut out = String::from("id            kind                        image\n");
    for c in containers {
        let id = c.id.unwrap_or_default();
        let kind = c
            .labels
            .as_ref()
            .and_then(|l| l.get(KIND_LABEL))
            .cloned()
            .unwrap_or_default();
        let kind = match sessions.iter().find(|(_, cid, _, _)| *cid == id) {
            Some((chat, _, _, age)) if chat == session => {
                format!("python session (this chat, {} s)", age.as_secs())
            }
            Some(_) => "python session".to_owned(),
            None if kind == "pool" => "warm (idle)".to_owned(),
            None => kind,
        };
        out.push_str(&format!(
            "{:<13} {kind:<27} {}\n",
            id.chars().take(12).collect::<String>(),
            c.image.unwrap_or_default()
        ));
    }
    Ok(text(out))
}
