//! `docker_volumes`: the engine's volumes and the containers that use them.

use std::collections::HashMap;

use bollard::query_parameters::{ListContainersOptions, ListVolumesOptions};
use cairn_toolkit::reply::error;
use cairn_toolkit::table::{Cell, Limits, Table, cut};
use cairn_toolkit::{CallContext, Category, Effect, JsonSchema, Paths, Tool};
use rmcp::model::CallToolResult;
use serde::Deserialize;

use super::{container_name, docker, is_cairns, timed};
use crate::DevOps;

/// The `docker_volumes` tool.
pub struct DockerVolumes;

/// Arguments of `docker_volumes`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// Only volumes whose name contains this text.
    #[serde(default)]
    name: Option<String>,
}

impl Tool for DockerVolumes {
    type Host = DevOps;
    type Args = Args;
    const NAME: &'static str = "docker_volumes";
    const TITLE: &'static str = "Docker volumes";
    const DESCRIPTION: &'static str = "List the Docker engine's volumes: name, driver, mountpoint, labels, the containers that use each (unused ones are what a prune would remove), and whether cairn created it.";
    const CATEGORY: Category = Category::Devops;
    const EFFECT: Effect = Effect::Read;
    const AGENT_ONLY: bool = false;

    fn paths(_: &Args) -> Paths {
        Paths::none()
    }

    async fn call(host: &DevOps, args: Args, cx: CallContext) -> CallToolResult {
        match list(host, &args, &cx).await {
            Ok(r) => r,
            Err(e) => error(e),
        }
    }
}

async fn list(host: &DevOps, args: &Args, cx: &CallContext) -> Result<CallToolResult, String> {
    let docker = docker(host).await?;
    let response = timed(
        cx,
        "listing volumes",
        docker.list_volumes(None::<ListVolumesOptions>),
    )
    .await?;
    let mut volumes = response.volumes.unwrap_or_default();
    if let Some(name) = args.name.as_deref().filter(|n| !n.is_empty()) {
        volumes.retain(|v| v.name.contains(name));
    }
    volumes.sort_by(|a, b| a.name.cmp(&b.name));
    let containers = timed(
        cx,
        "listing containers",
        docker.list_containers(Some(ListContainersOptions {
            all: true,
            ..Default::default()
        })),
    )
    .await?;
    let mut users: HashMap<String, Vec<String>> = HashMap::new();
    for c in &containers {
        for m in c.mounts.iter().flatten() {
            if let Some(volume) = m.name.as_ref().filter(|n| !n.is_empty()) {
                users
                    .entry(volume.clone())
                    .or_default()
                    .push(container_name(c).unwrap_or_default());
            }
        }
    }
    let limits = Limits::default();
    let t = |s: String| Cell::Text(s);
    let rows = volumes
        .iter()
        .take(limits.max_rows)
        .map(|v| {
            let mut labels: Vec<String> =
                v.labels.iter().map(|(k, v)| format!("{k}={v}")).collect();
            labels.sort();
            vec![
                t(v.name.clone()),
                t(v.driver.clone()),
                t(v.mountpoint.clone()),
                t(cut(&labels.join(", "), 200)),
                t(users
                    .get(&v.name)
                    .map_or_else(|| "(unused)".to_owned(), |u| u.join(", "))),
                t(if is_cairns(Some(&v.labels)) {
                    "yes"
                } else {
                    ""
                }
                .into()),
            ]
        })
        .collect();
    let table = Table {
        columns: [
            "name",
            "driver",
            "mountpoint",
            "labels",
            "in use by",
            "cairn",
        ]
        .iter()
        .map(|c| (*c).to_owned())
        .collect(),
        rows,
        more: volumes.len() > limits.max_rows,
    };
    Ok(table.result_hinting(
        &format!("{} volume(s)", volumes.len()),
        &limits,
        "filter by name",
    ))
}
