//! `docker_stats`: one snapshot of running containers' CPU, memory, network and block I/O.

use bollard::Docker;
use bollard::models::ContainerStatsResponse;
use bollard::query_parameters::{ListContainersOptions, StatsOptions};
use cairn_toolkit::reply::error;
use cairn_toolkit::table::{Cell, Limits, Table};
use cairn_toolkit::{CallContext, Category, Effect, JsonSchema, Paths, Tool};
use futures::StreamExt;
use rmcp::model::CallToolResult;
use serde::Deserialize;

use super::{container_name, docker, find_container, human_bytes, short_id, timed};
use crate::DevOps;

/// Containers sampled in one call at most (each sample takes the engine about a second).
const MAX_CONTAINERS: usize = 50;

/// The `docker_stats` tool.
pub struct DockerStats;

/// Arguments of `docker_stats`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// One container's name or id; without it, every running container (at most 50).
    #[serde(default)]
    container: Option<String>,
}

impl Tool for DockerStats {
    type Host = DevOps;
    type Args = Args;
    const NAME: &'static str = "docker_stats";
    const TITLE: &'static str = "Docker container stats";
    const DESCRIPTION: &'static str = "One snapshot of resource use of one running Docker container or all of them: CPU %, memory used and limit, network and block I/O, process count.";
    const CATEGORY: Category = Category::Devops;
    const EFFECT: Effect = Effect::Read;
    const AGENT_ONLY: bool = false;

    fn paths(_: &Args) -> Paths {
        Paths::none()
    }

    async fn call(host: &DevOps, args: Args, cx: CallContext) -> CallToolResult {
        match stats(host, &args, &cx).await {
            Ok(r) => r,
            Err(e) => error(e),
        }
    }
}

async fn stats(host: &DevOps, args: &Args, cx: &CallContext) -> Result<CallToolResult, String> {
    let docker = docker(host).await?;
    let targets: Vec<(String, String)> = match args.container.as_deref() {
        Some(name) => {
            let c = find_container(&docker, cx, name).await?;
            if c.state.as_ref().and_then(|s| s.running) != Some(true) {
                return Err(format!(
                    "container {} is not running; stats are only for running containers",
                    name.trim()
                ));
            }
            vec![(
                c.id.unwrap_or_default(),
                c.name
                    .unwrap_or_default()
                    .trim_start_matches('/')
                    .to_owned(),
            )]
        }
        None => {
            let list = timed(
                cx,
                "listing containers",
                docker.list_containers(None::<ListContainersOptions>),
            )
            .await?;
            list.iter()
                .map(|c| {
                    (
                        c.id.clone().unwrap_or_default(),
                        container_name(c).unwrap_or_default(),
                    )
                })
                .collect()
        }
    };
    let more = targets.len() > MAX_CONTAINERS;
    let samples = futures::future::join_all(
        targets
            .iter()
            .take(MAX_CONTAINERS)
            .map(|(id, _)| sample(&docker, cx, id)),
    )
    .await;
    let table = Table {
        columns: [
            "id",
            "name",
            "cpu %",
            "memory",
            "memory %",
            "net in/out",
            "block read/write",
            "pids",
        ]
        .iter()
        .map(|c| (*c).to_owned())
        .collect(),
        rows: targets
            .iter()
            .zip(samples)
            .map(|((id, name), s)| match s {
                Ok(s) => row(id, name, &s),
                Err(e) => {
                    let mut r = vec![Cell::Text(short_id(id)), Cell::Text(name.clone())];
                    r.push(Cell::Text(e));
                    r.extend(std::iter::repeat_n(Cell::Null, 5));
                    r
                }
            })
            .collect(),
        more,
    };
    Ok(table.result_hinting(
        &format!("resource use of {} running container(s)", targets.len()),
        &Limits::default(),
        "name one container",
    ))
}

async fn sample(
    docker: &Docker,
    cx: &CallContext,
    id: &str,
) -> Result<ContainerStatsResponse, String> {
    // Not one-shot: the engine then waits for a second reading, which CPU % needs.
    let options = StatsOptions {
        stream: false,
        one_shot: false,
    };
    let next = async {
        match docker.stats(id, Some(options)).next().await {
            Some(r) => r,
            None => Err(bollard::errors::Error::DockerStreamError {
                error: "no stats".into(),
            }),
        }
    };
    timed(cx, "reading stats", next).await
}

fn row(id: &str, name: &str, s: &ContainerStatsResponse) -> Vec<Cell> {
    let t = |s: String| Cell::Text(s);
    let (used, limit) = memory(s);
    let mem_pct = if limit > 0 {
        format!("{:.1}", used as f64 * 100.0 / limit as f64)
    } else {
        "-".into()
    };
    let (rx, tx) = s.networks.as_ref().map_or((0, 0), |n| {
        n.values().fold((0, 0), |(rx, tx), e| {
            (rx + e.rx_bytes.unwrap_or(0), tx + e.tx_bytes.unwrap_or(0))
        })
    });
    let (read, write) = s
        .blkio_stats
        .as_ref()
        .and_then(|b| b.io_service_bytes_recursive.as_ref())
        .map_or((0, 0), |entries| {
            entries.iter().fold((0, 0), |(r, w), e| {
                match e.op.as_deref().map(str::to_lowercase).as_deref() {
                    Some("read") => (r + e.value.unwrap_or(0), w),
                    Some("write") => (r, w + e.value.unwrap_or(0)),
                    _ => (r, w),
                }
            })
        });
    vec![
        t(short_id(id)),
        t(name.to_owned()),
        t(format!("{:.1}", cpu_percent(s))),
        t(format!("{} / {}", human_bytes(used), human_bytes(limit))),
        t(mem_pct),
        t(format!("{} / {}", human_bytes(rx), human_bytes(tx))),
        t(format!("{} / {}", human_bytes(read), human_bytes(write))),
        t(s.pids_stats
            .as_ref()
            .and_then(|p| p.current)
            .map_or_else(|| "-".into(), |p| p.to_string())),
    ]
}

/// CPU % as `docker stats` computes it: the container's share of the host's CPU time between
/// the two readings, times the CPUs online.
pub(crate) fn cpu_percent(s: &ContainerStatsResponse) -> f64 {
    let total = |c: Option<&bollard::models::ContainerCpuStats>| {
        c.and_then(|c| c.cpu_usage.as_ref())
            .and_then(|u| u.total_usage)
            .unwrap_or(0)
    };
    let system = |c: Option<&bollard::models::ContainerCpuStats>| {
        c.and_then(|c| c.system_cpu_usage).unwrap_or(0)
    };
    let cpu = s.cpu_stats.as_ref();
    let pre = s.precpu_stats.as_ref();
    let cpu_delta = total(cpu).saturating_sub(total(pre)) as f64;
    let system_delta = system(cpu).saturating_sub(system(pre)) as f64;
    let cpus = cpu.and_then(|c| c.online_cpus).unwrap_or(1).max(1) as f64;
    if system_delta > 0.0 {
        cpu_delta / system_delta * cpus * 100.0
    } else {
        0.0
    }
}

/// Memory used (less the page cache, as `docker stats` shows it) and the limit.
pub(crate) fn memory(s: &ContainerStatsResponse) -> (u64, u64) {
    let Some(m) = &s.memory_stats else {
        return (0, 0);
    };
    let usage = m.usage.unwrap_or(0);
    let cache = m
        .stats
        .as_ref()
        .and_then(|st| {
            st.get("inactive_file")
                .or_else(|| st.get("total_inactive_file"))
        })
        .copied()
        .unwrap_or(0);
    (usage.saturating_sub(cache), m.limit.unwrap_or(0))
}
