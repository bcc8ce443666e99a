//! `compose_logs`: a Compose project's logs, each line prefixed by its container as
//! `docker compose logs` does.

use bollard::query_parameters::LogsOptions;
use cairn_toolkit::reply::{error, text};
use cairn_toolkit::{CallContext, Category, Effect, JsonSchema, Paths, Tool};
use rmcp::model::CallToolResult;
use serde::Deserialize;

use super::compose_status::project_containers;
use super::logs::{MAX_BYTES, read_logs};
use super::{container_name, docker, now_unix, parse_since};
use crate::DevOps;

/// Lines per container by default, and the most one call may ask for.
const DEFAULT_TAIL: u32 = 100;
const MAX_TAIL: u32 = 2000;

/// The `compose_logs` tool.
pub struct ComposeLogs;

/// Arguments of `compose_logs`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// The Compose project's name (`compose_status` lists them).
    project: String,
    /// Only these services (default: all).
    #[serde(default)]
    services: Vec<String>,
    /// Last lines per container (default 100, at most 2000).
    #[serde(default)]
    tail: Option<u32>,
    /// Only lines since this time: RFC 3339, or a duration before now (`10m`, `2h`).
    #[serde(default)]
    since: Option<String>,
    /// Prefix each line with the engine's timestamp (to compare services' lines in time).
    #[serde(default)]
    timestamps: bool,
}

impl Tool for ComposeLogs {
    type Host = DevOps;
    type Args = Args;
    const NAME: &'static str = "compose_logs";
    const TITLE: &'static str = "Docker Compose logs";
    const DESCRIPTION: &'static str = "Show a Docker Compose project's logs, all services or some: the last `tail` lines of each container (default 100), each line prefixed by its container like `docker compose logs`, grouped by container, stderr marked `err|`. 256 KiB at most.";
    const CATEGORY: Category = Category::Devops;
    const EFFECT: Effect = Effect::Read;
    const AGENT_ONLY: bool = false;

    fn paths(_: &Args) -> Paths {
        Paths::none()
    }

    async fn call(host: &DevOps, args: Args, cx: CallContext) -> CallToolResult {
        match logs(host, &args, &cx).await {
            Ok(t) => text(t),
            Err(e) => error(e),
        }
    }
}

async fn logs(host: &DevOps, args: &Args, cx: &CallContext) -> Result<String, String> {
    let since = args
        .since
        .as_deref()
        .map(|s| parse_since(s, now_unix()))
        .transpose()?;
    let tail = args.tail.unwrap_or(DEFAULT_TAIL).min(MAX_TAIL);
    let docker = docker(host).await?;
    let project = args.project.trim();
    let mut containers = project_containers(&docker, cx, project).await?;
    if !args.services.is_empty() {
        let known: Vec<String> = containers.iter().map(|(s, _, _)| s.clone()).collect();
        for wanted in &args.services {
            if !known.contains(wanted) {
                let mut services = known.clone();
                services.dedup();
                return Err(format!(
                    "project {project} has no service {wanted}; its services are {}",
                    services.join(", ")
                ));
            }
        }
        containers.retain(|(s, _, _)| args.services.contains(s));
    }
    let width = containers
        .iter()
        .map(|(_, _, c)| container_name(c).unwrap_or_default().len())
        .max()
        .unwrap_or(0);
    let mut out = format!(
        "logs of Compose project {project}, last {tail} lines per container{}:\n",
        args.since
            .as_deref()
            .map(|s| format!(" since {s}"))
            .unwrap_or_default()
    );
    let mut budget = MAX_BYTES;
    for (_, _, c) in &containers {
        let name = container_name(c).unwrap_or_default();
        if budget == 0 {
            out.push_str(&format!("({name} and later containers left out: the 256 KiB cap was reached; ask for fewer services or lines)\n"));
            break;
        }
        let options = LogsOptions {
            stdout: true,
            stderr: true,
            since: since.map_or(0, |s| i32::try_from(s.max(0)).unwrap_or(i32::MAX)),
            timestamps: args.timestamps,
            tail: tail.to_string(),
            ..Default::default()
        };
        let prefix = format!("{name:width$} | ");
        let read = read_logs(
            &docker,
            cx,
            c.id.as_deref().unwrap_or_default(),
            options,
            &prefix,
            budget,
        )
        .await?;
        budget = budget.saturating_sub(read.text.len());
        if read.text.is_empty() {
            out.push_str(&format!("{prefix}(no output)\n"));
        }
        out.push_str(&read.text);
        if let Some(why) = read.stopped {
            out.push_str(&format!("({name}: {why})\n"));
            if why.starts_with("cancelled") {
                break;
            }
            budget = 0;
        }
    }
    Ok(out)
}
