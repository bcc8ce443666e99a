//! `docker_start`: start a stopped container.

use cairn_toolkit::reply::from_text;
use cairn_toolkit::{CallContext, Category, Effect, JsonSchema, Paths, Tool};
use rmcp::model::CallToolResult;
use serde::Deserialize;

use super::lifecycle::{Action, act};
use crate::DevOps;

/// The `docker_start` tool.
pub struct DockerStart;

/// Arguments of `docker_start`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// The container's name or id.
    container: String,
}

impl Tool for DockerStart {
    type Host = DevOps;
    type Args = Args;
    const NAME: &'static str = "docker_start";
    const TITLE: &'static str = "Start a Docker container";
    const DESCRIPTION: &'static str =
        "Start a stopped Docker container by name or id, and say the state it is in afterwards.";
    const CATEGORY: Category = Category::Devops;
    const EFFECT: Effect = Effect::Write;
    const AGENT_ONLY: bool = true;

    fn paths(_: &Args) -> Paths {
        Paths::none()
    }

    async fn call(host: &DevOps, args: Args, cx: CallContext) -> CallToolResult {
        from_text(act(host, &cx, &args.container, Action::Start).await)
    }
}
