//! `docker_containers`: the engine's containers, filtered, with cairn's own marked.

use std::collections::HashMap;

use bollard::models::{ContainerSummary, PortSummary};
use bollard::query_parameters::ListContainersOptions;
use cairn_toolkit::reply::error;
use cairn_toolkit::table::{Cell, Limits, Table};
use cairn_toolkit::{CallContext, Category, Effect, JsonSchema, Paths, Tool};
use rmcp::model::CallToolResult;
use serde::Deserialize;

use super::{ago, container_name, docker, is_cairns, now_unix, short_id, timed};
use crate::DevOps;

/// The `docker_containers` tool.
pub struct DockerContainers;

/// Arguments of `docker_containers`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// Include stopped containers too (default: only running ones).
    #[serde(default)]
    all: bool,
    /// Only containers whose name contains this text.
    #[serde(default)]
    name: Option<String>,
    /// Only containers with this label: `key` or `key=value`.
    #[serde(default)]
    label: Option<String>,
    /// Only containers in this state: created, running, paused, restarting, exited or dead.
    #[serde(default)]
    status: Option<String>,
}

impl Tool for DockerContainers {
    type Host = DevOps;
    type Args = Args;
    const NAME: &'static str = "docker_containers";
    const TITLE: &'static str = "Docker containers";
    const DESCRIPTION: &'static str = "List the Docker engine's containers (running ones, or all with `all`), filtered by name, label or status: id, name, image, state, status, ports, age, and whether cairn created it (a sandbox). At most 200 rows.";
    const CATEGORY: Category = Category::Devops;
    const EFFECT: Effect = Effect::Read;
    const AGENT_ONLY: bool = false;

    fn paths(_: &Args) -> Paths {
        Paths::none()
    }

    async fn call(host: &DevOps, args: Args, cx: CallContext) -> CallToolResult {
        match list(host, &args, &cx).await {
            Ok(result) => result,
            Err(e) => error(e),
        }
    }
}

async fn list(host: &DevOps, args: &Args, cx: &CallContext) -> Result<CallToolResult, String> {
    let docker = docker(host).await?;
    let mut filters: HashMap<String, Vec<String>> = HashMap::new();
    if let Some(name) = args.name.as_deref().filter(|n| !n.is_empty()) {
        filters.insert("name".into(), vec![name.to_owned()]);
    }
    if let Some(label) = args.label.as_deref().filter(|l| !l.is_empty()) {
        filters.insert("label".into(), vec![label.to_owned()]);
    }
    if let Some(status) = args.status.as_deref().filter(|s| !s.is_empty()) {
        const STATES: [&str; 7] = [
            "created",
            "running",
            "paused",
            "restarting",
            "removing",
            "exited",
            "dead",
        ];
        if !STATES.contains(&status) {
            return Err(format!(
                "unknown status `{status}`; use one of {}",
                STATES.join(", ")
            ));
        }
        filters.insert("status".into(), vec![status.to_owned()]);
    }
    // A status filter other than running only makes sense over all containers.
    let all = args.all || args.status.as_deref().is_some_and(|s| s != "running");
    let options = ListContainersOptions {
        all,
        filters: Some(filters),
        ..Default::default()
    };
    let list = timed(
        cx,
        "listing containers",
        docker.list_containers(Some(options)),
    )
    .await?;
    let now = now_unix();
    let limits = Limits::default();
    let table = Table {
        columns: [
            "id", "name", "image", "state", "status", "ports", "created", "cairn",
        ]
        .iter()
        .map(|c| (*c).to_owned())
        .collect(),
        more: list.len() > limits.max_rows,
        rows: list
            .iter()
            .take(limits.max_rows)
            .map(|c| row(c, now))
            .collect(),
    };
    let heading = format!(
        "{} container{}{}",
        list.len(),
        if list.len() == 1 { "" } else { "s" },
        if all { "" } else { " running" }
    );
    Ok(table.result_hinting(&heading, &limits, "filter by name, label or status"))
}

fn row(c: &ContainerSummary, now: i64) -> Vec<Cell> {
    let text = |s: String| Cell::Text(s);
    vec![
        text(short_id(c.id.as_deref().unwrap_or_default())),
        text(container_name(c).unwrap_or_default()),
        text(c.image.clone().unwrap_or_default()),
        text(c.state.map(|s| s.to_string()).unwrap_or_default()),
        text(c.status.clone().unwrap_or_default()),
        text(ports(c.ports.as_deref().unwrap_or_default())),
        text(c.created.map(|t| ago(t, now)).unwrap_or_default()),
        text(if is_cairns(c.labels.as_ref()) {
            "yes".into()
        } else {
            String::new()
        }),
    ]
}

/// Ports as `docker ps` shows them: `0.0.0.0:8080->80/tcp, 443/tcp`.
pub(crate) fn ports(ports: &[PortSummary]) -> String {
    let mut shown: Vec<String> = ports
        .iter()
        .map(|p| {
            let proto = p.typ.map(|t| t.to_string()).unwrap_or_else(|| "tcp".into());
            match p.public_port {
                Some(public) => format!(
                    "{}:{public}->{}/{proto}",
                    p.ip.as_deref().unwrap_or("0.0.0.0"),
                    p.private_port
                ),
                None => format!("{}/{proto}", p.private_port),
            }
        })
        .collect();
    shown.sort();
    shown.dedup();
    shown.join(", ")
}
