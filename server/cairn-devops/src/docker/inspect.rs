//! `docker_inspect`: the useful parts of one container, image, network or volume, never its
//! environment's values.

use std::collections::HashMap;
use std::fmt::Write as _;

use bollard::Docker;
use bollard::models::{ContainerInspectResponse, MountPoint};
use cairn_toolkit::reply::{error, text};
use cairn_toolkit::table::cut;
use cairn_toolkit::{CallContext, Category, Effect, JsonSchema, Paths, Tool};
use rmcp::model::CallToolResult;
use serde::Deserialize;

use super::{
    CALL_TIMEOUT, cap_text, check_name, docker, engine_error, find_container, human_bytes,
    is_cairns, is_not_found, short_id, timed,
};
use crate::DevOps;

/// What one answer may hold.
const MAX_BYTES: usize = 16 * 1024;
/// Entries of one list (mounts, labels, env names) shown.
const MAX_ITEMS: usize = 40;

/// The `docker_inspect` tool.
pub struct DockerInspect;

/// What kind of object to look up.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    /// A container.
    Container,
    /// An image.
    Image,
    /// A network.
    Network,
    /// A volume.
    Volume,
}

/// Arguments of `docker_inspect`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// The object's name or id (a unique id prefix works).
    name: String,
    /// What it is; by default a container, else an image, a network or a volume of that name.
    #[serde(default)]
    kind: Option<Kind>,
}

impl Tool for DockerInspect {
    type Host = DevOps;
    type Args = Args;
    const NAME: &'static str = "docker_inspect";
    const TITLE: &'static str = "Inspect a Docker object";
    const DESCRIPTION: &'static str = "Describe one Docker container, image, network or volume by name or id: for a container its state, exit code, health, restarts, image, command, environment variable names (values are hidden), mounts, ports, networks and labels. A summary, not the raw JSON.";
    const CATEGORY: Category = Category::Devops;
    const EFFECT: Effect = Effect::Read;
    const AGENT_ONLY: bool = false;

    fn paths(_: &Args) -> Paths {
        Paths::none()
    }

    async fn call(host: &DevOps, args: Args, cx: CallContext) -> CallToolResult {
        match inspect(host, &args, &cx).await {
            Ok(t) => text(cap_text(t, MAX_BYTES, "inspect a narrower object")),
            Err(e) => error(e),
        }
    }
}

async fn inspect(host: &DevOps, args: &Args, cx: &CallContext) -> Result<String, String> {
    let docker = docker(host).await?;
    let name = args.name.trim();
    let kind = match args.kind {
        Some(Kind::Image) => "image",
        Some(Kind::Network) => "network",
        Some(Kind::Volume) => "volume",
        // Without a kind it may be an image reference too; the stricter checks come per kind.
        Some(Kind::Container) | None => "image",
    };
    let name = check_name(kind, name)?;
    match args.kind {
        Some(Kind::Container) => Ok(container(&find_container(&docker, cx, name).await?)),
        Some(Kind::Image) => image(&docker, cx, name)
            .await?
            .ok_or_else(|| format!("no image named {name}; `docker_images` lists them")),
        Some(Kind::Network) => network(&docker, cx, name)
            .await?
            .ok_or_else(|| format!("no network named {name}; `docker_networks` lists them")),
        Some(Kind::Volume) => volume(&docker, cx, name)
            .await?
            .ok_or_else(|| format!("no volume named {name}; `docker_volumes` lists them")),
        None => {
            // A container first, as that is what people mostly mean; its error names close
            // containers, which is the most useful miss.
            let missed = match find_container(&docker, cx, name).await {
                Ok(c) => return Ok(container(&c)),
                Err(e) => e,
            };
            if let Some(t) = image(&docker, cx, name).await? {
                return Ok(t);
            }
            if check_name("network", name).is_err() {
                return Err(format!("{missed}; no image has that name either"));
            }
            if let Some(t) = network(&docker, cx, name).await? {
                return Ok(t);
            }
            if let Some(t) = volume(&docker, cx, name).await? {
                return Ok(t);
            }
            Err(format!(
                "{missed}; no image, network or volume has that name either"
            ))
        }
    }
}

/// A found object's text, `None` when the engine has none of that name.
async fn found<T>(
    cx: &CallContext,
    what: &str,
    request: impl Future<Output = Result<T, bollard::errors::Error>>,
) -> Result<Option<T>, String> {
    tokio::select! {
        () = cx.cancel.cancelled() => Err("cancelled".into()),
        r = tokio::time::timeout(CALL_TIMEOUT, request) => match r {
            Ok(Ok(v)) => Ok(Some(v)),
            Ok(Err(e)) if is_not_found(&e) => Ok(None),
            Ok(Err(e)) => Err(format!("{what}: {}", engine_error(&e))),
            Err(_) => Err(format!("{what}: the engine gave no answer in time")),
        },
    }
}

/// A container in sections, the environment's values left out.
pub(crate) fn container(c: &ContainerInspectResponse) -> String {
    let mut out = String::new();
    let name = c
        .name
        .as_deref()
        .unwrap_or_default()
        .trim_start_matches('/');
    let id = c.id.as_deref().unwrap_or_default();
    let config = c.config.as_ref();
    let labels = config.and_then(|c| c.labels.as_ref());
    let _ = writeln!(out, "container {name} ({})", short_id(id));
    if is_cairns(labels) {
        out.push_str("created by cairn\n");
    }
    if let Some(s) = &c.state {
        let status = s.status.map(|s| s.to_string()).unwrap_or_default();
        let _ = write!(out, "state: {status}");
        if let Some(code) = s.exit_code
            && s.running != Some(true)
        {
            let _ = write!(out, ", exit code {code}");
        }
        if s.oom_killed == Some(true) {
            out.push_str(", killed: out of memory");
        }
        if let Some(e) = s.error.as_deref().filter(|e| !e.is_empty()) {
            let _ = write!(out, ", error: {e}");
        }
        out.push('\n');
        if let Some(t) = s.started_at.as_deref().filter(|t| !t.starts_with("0001")) {
            let _ = writeln!(out, "started: {t}");
        }
        if let Some(t) = s.finished_at.as_deref().filter(|t| !t.starts_with("0001")) {
            let _ = writeln!(out, "finished: {t}");
        }
        if let Some(h) = &s.health {
            let _ = writeln!(
                out,
                "health: {} (failing streak {})",
                h.status.map(|s| s.to_string()).unwrap_or_default(),
                h.failing_streak.unwrap_or(0)
            );
            if let Some(last) = h.log.as_ref().and_then(|l| l.last()) {
                let _ = writeln!(
                    out,
                    "last health check: exit {}, {}",
                    last.exit_code.unwrap_or_default(),
                    cut(last.output.as_deref().unwrap_or_default().trim(), 300)
                );
            }
        }
    }
    let _ = writeln!(out, "restart count: {}", c.restart_count.unwrap_or(0));
    if let Some(policy) = c
        .host_config
        .as_ref()
        .and_then(|h| h.restart_policy.as_ref())
        .and_then(|p| p.name)
        .map(|p| p.to_string())
        .filter(|p| !p.is_empty() && p != "no")
    {
        let _ = writeln!(out, "restart policy: {policy}");
    }
    let image = config.and_then(|c| c.image.as_deref()).unwrap_or_default();
    let _ = writeln!(
        out,
        "image: {image} ({})",
        short_id(c.image.as_deref().unwrap_or_default())
    );
    let mut command: Vec<String> = Vec::new();
    if let Some(p) = &c.path {
        command.push(p.clone());
    }
    command.extend(c.args.iter().flatten().cloned());
    let _ = writeln!(out, "command: {}", cut(&command.join(" "), 500));
    if let Some(dir) = config
        .and_then(|c| c.working_dir.as_deref())
        .filter(|d| !d.is_empty())
    {
        let _ = writeln!(out, "working directory: {dir}");
    }
    if let Some(user) = config
        .and_then(|c| c.user.as_deref())
        .filter(|u| !u.is_empty())
    {
        let _ = writeln!(out, "user: {user}");
    }
    let env_names: Vec<&str> = config
        .and_then(|c| c.env.as_ref())
        .map(|env| {
            env.iter()
                .map(|e| e.split_once('=').map_or(e.as_str(), |(n, _)| n))
                .collect()
        })
        .unwrap_or_default();
    if !env_names.is_empty() {
        let _ = writeln!(
            out,
            "environment (names only; values are hidden, they can hold secrets): {}",
            list(env_names.iter().copied())
        );
    }
    let mounts = c.mounts.as_deref().unwrap_or_default();
    if !mounts.is_empty() {
        out.push_str("mounts:\n");
        for m in mounts.iter().take(MAX_ITEMS) {
            let _ = writeln!(out, "  {}", mount(m));
        }
        if mounts.len() > MAX_ITEMS {
            let _ = writeln!(out, "  … and {} more", mounts.len() - MAX_ITEMS);
        }
    }
    let ports = c
        .network_settings
        .as_ref()
        .and_then(|n| n.ports.as_ref())
        .map(|map| {
            let mut shown: Vec<String> = map
                .iter()
                .map(|(port, bindings)| {
                    let to: Vec<String> = bindings
                        .iter()
                        .flatten()
                        .map(|b| {
                            format!(
                                "{}:{}",
                                b.host_ip.as_deref().unwrap_or_default(),
                                b.host_port.as_deref().unwrap_or_default()
                            )
                        })
                        .collect();
                    if to.is_empty() {
                        port.clone()
                    } else {
                        format!("{} -> {port}", to.join(", "))
                    }
                })
                .collect();
            shown.sort();
            shown
        })
        .unwrap_or_default();
    if !ports.is_empty() {
        let _ = writeln!(out, "ports: {}", ports.join("; "));
    }
    if let Some(networks) = c
        .network_settings
        .as_ref()
        .and_then(|n| n.networks.as_ref())
    {
        let mut shown: Vec<String> = networks
            .iter()
            .map(
                |(name, e)| match e.ip_address.as_deref().filter(|i| !i.is_empty()) {
                    Some(ip) => format!("{name} ({ip})"),
                    None => name.clone(),
                },
            )
            .collect();
        shown.sort();
        if !shown.is_empty() {
            let _ = writeln!(out, "networks: {}", shown.join(", "));
        }
    }
    if let Some(mode) = c
        .host_config
        .as_ref()
        .and_then(|h| h.network_mode.as_deref())
    {
        let _ = writeln!(out, "network mode: {mode}");
    }
    if let Some(h) = &c.host_config {
        let mut limits = Vec::new();
        if let Some(m) = h.memory.filter(|m| *m > 0) {
            limits.push(format!("memory {}", human_bytes(m.unsigned_abs())));
        }
        if let Some(n) = h.nano_cpus.filter(|n| *n > 0) {
            limits.push(format!("{:.2} CPUs", n as f64 / 1e9));
        }
        if let Some(p) = h.pids_limit.filter(|p| *p > 0) {
            limits.push(format!("{p} processes"));
        }
        if !limits.is_empty() {
            let _ = writeln!(out, "limits: {}", limits.join(", "));
        }
    }
    labels_section(&mut out, labels);
    out
}

fn mount(m: &MountPoint) -> String {
    let kind = m.typ.as_ref().map(ToString::to_string).unwrap_or_default();
    let source = m
        .name
        .as_deref()
        .filter(|n| !n.is_empty())
        .or(m.source.as_deref())
        .unwrap_or_default();
    format!(
        "{kind} {source} -> {}{}",
        m.destination.as_deref().unwrap_or_default(),
        if m.rw == Some(false) {
            " (read-only)"
        } else {
            ""
        }
    )
}

fn labels_section(out: &mut String, labels: Option<&HashMap<String, String>>) {
    let Some(labels) = labels.filter(|l| !l.is_empty()) else {
        return;
    };
    let mut sorted: Vec<_> = labels.iter().collect();
    sorted.sort();
    out.push_str("labels:\n");
    for (k, v) in sorted.iter().take(MAX_ITEMS) {
        let _ = writeln!(out, "  {k}={}", cut(v, 200));
    }
    if sorted.len() > MAX_ITEMS {
        let _ = writeln!(out, "  … and {} more", sorted.len() - MAX_ITEMS);
    }
}

/// Up to [`MAX_ITEMS`] items, comma-separated, with how many were left out.
fn list<'a>(items: impl Iterator<Item = &'a str>) -> String {
    let items: Vec<&str> = items.collect();
    let mut shown = items
        .iter()
        .take(MAX_ITEMS)
        .copied()
        .collect::<Vec<_>>()
        .join(", ");
    if items.len() > MAX_ITEMS {
        let _ = write!(shown, " … and {} more", items.len() - MAX_ITEMS);
    }
    shown
}

async fn image(docker: &Docker, cx: &CallContext, name: &str) -> Result<Option<String>, String> {
    let Some(i) = found(cx, "inspecting an image", docker.inspect_image(name)).await? else {
        return Ok(None);
    };
    let mut out = String::new();
    let _ = writeln!(
        out,
        "image {} ({})",
        i.repo_tags
            .as_ref()
            .filter(|t| !t.is_empty())
            .map_or_else(|| "<untagged>".to_owned(), |t| t.join(", ")),
        short_id(i.id.as_deref().unwrap_or_default())
    );
    let config = i.config.as_ref();
    let labels = config.and_then(|c| c.labels.as_ref());
    if is_cairns(labels) {
        out.push_str("built by cairn\n");
    }
    if let Some(c) = &i.created {
        let _ = writeln!(out, "created: {c}");
    }
    if let Some(s) = i.size {
        let _ = writeln!(out, "size: {}", human_bytes(s.unsigned_abs()));
    }
    let _ = writeln!(
        out,
        "platform: {}/{}",
        i.os.as_deref().unwrap_or_default(),
        i.architecture.as_deref().unwrap_or_default()
    );
    if let Some(c) = config {
        if let Some(e) = c.entrypoint.as_ref().filter(|e| !e.is_empty()) {
            let _ = writeln!(out, "entrypoint: {}", cut(&e.join(" "), 300));
        }
        if let Some(cmd) = c.cmd.as_ref().filter(|e| !e.is_empty()) {
            let _ = writeln!(out, "command: {}", cut(&cmd.join(" "), 300));
        }
        if let Some(dir) = c.working_dir.as_deref().filter(|d| !d.is_empty()) {
            let _ = writeln!(out, "working directory: {dir}");
        }
        if let Some(user) = c.user.as_deref().filter(|u| !u.is_empty()) {
            let _ = writeln!(out, "user: {user}");
        }
        if let Some(ports) = c.exposed_ports.as_ref().filter(|p| !p.is_empty()) {
            let _ = writeln!(out, "exposed ports: {}", ports.join(", "));
        }
        if let Some(env) = c.env.as_ref().filter(|e| !e.is_empty()) {
            let _ = writeln!(
                out,
                "environment (names only; values are hidden): {}",
                list(
                    env.iter()
                        .map(|e| e.split_once('=').map_or(e.as_str(), |(n, _)| n))
                )
            );
        }
    }
    if let Some(layers) = i.root_fs.as_ref().and_then(|r| r.layers.as_ref()) {
        let _ = writeln!(out, "layers: {}", layers.len());
    }
    labels_section(&mut out, labels);
    Ok(Some(out))
}

async fn network(docker: &Docker, cx: &CallContext, name: &str) -> Result<Option<String>, String> {
    let Some(n) = found(
        cx,
        "inspecting a network",
        docker.inspect_network(name, None),
    )
    .await?
    else {
        return Ok(None);
    };
    let mut out = String::new();
    let _ = writeln!(
        out,
        "network {} ({})",
        n.name.as_deref().unwrap_or_default(),
        short_id(n.id.as_deref().unwrap_or_default())
    );
    let _ = writeln!(
        out,
        "driver: {}, scope: {}{}{}",
        n.driver.as_deref().unwrap_or_default(),
        n.scope.as_deref().unwrap_or_default(),
        if n.internal == Some(true) {
            ", internal"
        } else {
            ""
        },
        if n.attachable == Some(true) {
            ", attachable"
        } else {
            ""
        },
    );
    if let Some(configs) = n.ipam.as_ref().and_then(|i| i.config.as_ref()) {
        for c in configs {
            let _ = writeln!(
                out,
                "subnet: {} gateway: {}",
                c.subnet.as_deref().unwrap_or("-"),
                c.gateway.as_deref().unwrap_or("-")
            );
        }
    }
    if let Some(containers) = n.containers.as_ref().filter(|c| !c.is_empty()) {
        let mut shown: Vec<String> = containers
            .values()
            .map(|e| {
                format!(
                    "{} ({})",
                    e.name.as_deref().unwrap_or_default(),
                    e.ipv4_address.as_deref().unwrap_or_default()
                )
            })
            .collect();
        shown.sort();
        let _ = writeln!(
            out,
            "containers ({}): {}",
            shown.len(),
            list(shown.iter().map(String::as_str))
        );
    } else {
        out.push_str("containers: none\n");
    }
    labels_section(&mut out, n.labels.as_ref());
    Ok(Some(out))
}

async fn volume(docker: &Docker, cx: &CallContext, name: &str) -> Result<Option<String>, String> {
    let Some(v) = found(cx, "inspecting a volume", docker.inspect_volume(name)).await? else {
        return Ok(None);
    };
    let mut out = String::new();
    let _ = writeln!(out, "volume {}", v.name);
    if is_cairns(Some(&v.labels)) {
        out.push_str("created by cairn\n");
    }
    let _ = writeln!(out, "driver: {}", v.driver);
    let _ = writeln!(out, "mountpoint: {}", v.mountpoint);
    if let Some(c) = &v.created_at {
        let _ = writeln!(out, "created: {c}");
    }
    // Who uses it: containers that mount it.
    let filters = HashMap::from([("volume".to_owned(), vec![v.name.clone()])]);
    let options = bollard::query_parameters::ListContainersOptions {
        all: true,
        filters: Some(filters),
        ..Default::default()
    };
    let users = timed(
        cx,
        "listing containers",
        docker.list_containers(Some(options)),
    )
    .await?;
    let names: Vec<String> = users.iter().filter_map(super::container_name).collect();
    if names.is_empty() {
        out.push_str("in use by: no container\n");
    } else {
        let _ = writeln!(out, "in use by: {}", list(names.iter().map(String::as_str)));
    }
    labels_section(&mut out, Some(&v.labels));
    Ok(Some(out))
}
