//! `docker_networks`: the engine's networks and how many containers each has.

use std::collections::HashMap;

use bollard::query_parameters::{ListContainersOptions, ListNetworksOptions};
use cairn_toolkit::reply::error;
use cairn_toolkit::table::{Cell, Limits, Table};
use cairn_toolkit::{CallContext, Category, Effect, JsonSchema, Paths, Tool};
use rmcp::model::CallToolResult;
use serde::Deserialize;

use super::{docker, short_id, timed};
use crate::DevOps;

/// The `docker_networks` tool.
pub struct DockerNetworks;

/// Arguments of `docker_networks`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// Only networks whose name contains this text.
    #[serde(default)]
    name: Option<String>,
}

impl Tool for DockerNetworks {
    type Host = DevOps;
    type Args = Args;
    const NAME: &'static str = "docker_networks";
    const TITLE: &'static str = "Docker networks";
    const DESCRIPTION: &'static str = "List the Docker engine's networks: name, id, driver, scope, internal or not, and how many containers are attached; `docker_inspect` shows one in detail.";
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
    let mut networks = timed(
        cx,
        "listing networks",
        docker.list_networks(None::<ListNetworksOptions>),
    )
    .await?;
    if let Some(name) = args.name.as_deref().filter(|n| !n.is_empty()) {
        networks.retain(|n| n.name.as_deref().is_some_and(|n| n.contains(name)));
    }
    networks.sort_by(|a, b| a.name.cmp(&b.name));
    // The list does not say who is attached; the containers' own settings do.
    let containers = timed(
        cx,
        "listing containers",
        docker.list_containers(Some(ListContainersOptions {
            all: true,
            ..Default::default()
        })),
    )
    .await?;
    let mut attached: HashMap<String, usize> = HashMap::new();
    for c in &containers {
        for (net, endpoint) in c
            .network_settings
            .as_ref()
            .and_then(|s| s.networks.as_ref())
            .into_iter()
            .flatten()
        {
            let key = endpoint.network_id.clone().filter(|i| !i.is_empty());
            *attached
                .entry(key.unwrap_or_else(|| net.clone()))
                .or_default() += 1;
        }
    }
    let limits = Limits::default();
    let t = |s: String| Cell::Text(s);
    let rows = networks
        .iter()
        .take(limits.max_rows)
        .map(|n| {
            let id = n.id.clone().unwrap_or_default();
            let name = n.name.clone().unwrap_or_default();
            let count = attached.get(&id).or_else(|| attached.get(&name)).copied();
            vec![
                t(name),
                t(short_id(&id)),
                t(n.driver.clone().unwrap_or_default()),
                t(n.scope.clone().unwrap_or_default()),
                t(if n.internal == Some(true) { "yes" } else { "" }.into()),
                t(count.unwrap_or(0).to_string()),
            ]
        })
        .collect();
    let table = Table {
        columns: ["name", "id", "driver", "scope", "internal", "containers"]
            .iter()
            .map(|c| (*c).to_owned())
            .collect(),
        rows,
        more: networks.len() > limits.max_rows,
    };
    Ok(table.result_hinting(
        &format!("{} network(s)", networks.len()),
        &limits,
        "filter by name",
    ))
}
