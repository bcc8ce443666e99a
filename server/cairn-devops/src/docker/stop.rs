//! `docker_stop`: stop a running container, killing it after a grace period.

use cairn_toolkit::reply::from_text;
use cairn_toolkit::{CallContext, Category, Effect, JsonSchema, Paths, Tool};
use rmcp::model::CallToolResult;
use serde::Deserialize;

use super::lifecycle::{Action, act};
use crate::DevOps;

/// The `docker_stop` tool.
pub struct DockerStop;

/// Arguments of `docker_stop`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// The container's name or id.
    container: String,
    /// Seconds to wait after SIGTERM before killing it (default 10, at most 300).
    #[serde(default)]
    timeout: Option<u32>,
}

impl Tool for DockerStop {
    type Host = DevOps;
    type Args = Args;
    const NAME: &'static str = "docker_stop";
    const TITLE: &'static str = "Stop a Docker container";
    const DESCRIPTION: &'static str = "Stop a running Docker container by name or id (SIGTERM, then a kill after `timeout` seconds, default 10), and say its exit code.";
    const CATEGORY: Category = Category::Devops;
    const EFFECT: Effect = Effect::Write;
    const AGENT_ONLY: bool = true;

    fn paths(_: &Args) -> Paths {
        Paths::none()
    }

    async fn call(host: &DevOps, args: Args, cx: CallContext) -> CallToolResult {
        let action = Action::Stop(args.timeout.unwrap_or(10));
        from_text(act(host, &cx, &args.container, action).await)
    }
}
