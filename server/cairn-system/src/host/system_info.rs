//! `system_info`: the OS, kernel, CPU, memory, load and uptime of the host cairn runs on.

use std::fs;
use std::path::Path;

use cairn_toolkit::reply::{error, text};
use cairn_toolkit::{CallContext, Category, Effect, JsonSchema, Paths, Tool};
use rmcp::model::CallToolResult;
use serde::Deserialize;

use super::{blocking, duration, human};
use crate::system::System;

/// The `system_info` tool.
pub struct SystemInfo;

/// Arguments of `system_info` (none).
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {}

impl Tool for SystemInfo {
    type Host = System;
    type Args = Args;
    const NAME: &'static str = "system_info";
    const TITLE: &'static str = "System info";
    const DESCRIPTION: &'static str = "Describe the machine cairn runs on: OS and version, kernel, architecture, hostname, CPU model and cores, memory and swap, load averages, uptime, and whether it is a container.";
    const CATEGORY: Category = Category::System;
    const EFFECT: Effect = Effect::Read;
    const AGENT_ONLY: bool = false;

    fn paths(_: &Args) -> Paths {
        Paths::none()
    }

    async fn call(_: &System, _: Args, _: CallContext) -> CallToolResult {
        match blocking(report).await {
            Ok(t) => text(t),
            Err(e) => error(e),
        }
    }
}

fn read(path: &str) -> String {
    fs::read_to_string(path)
        .map(|t| t.trim().to_owned())
        .unwrap_or_default()
}

fn or_unknown(value: String) -> String {
    if value.is_empty() {
        "unknown".to_owned()
    } else {
        value
    }
}

fn report() -> String {
    let os_release = read("/etc/os-release");
    let os = os_release
        .lines()
        .find_map(|l| l.strip_prefix("PRETTY_NAME="))
        .map(|v| v.trim_matches('"').to_owned())
        .unwrap_or_default();
    let cpuinfo = read("/proc/cpuinfo");
    let model = cpuinfo
        .lines()
        .find_map(|l| {
            let (k, v) = l.split_once(':')?;
            matches!(k.trim(), "model name" | "Model" | "cpu model").then(|| v.trim().to_owned())
        })
        .unwrap_or_default();
    let logical = cpuinfo
        .lines()
        .filter(|l| l.starts_with("processor"))
        .count();
    let usable = std::thread::available_parallelism().map_or(0, std::num::NonZero::get);
    let meminfo = read("/proc/meminfo");
    let kb = |key: &str| -> u64 {
        meminfo
            .lines()
            .find_map(|l| l.strip_prefix(key)?.split_whitespace().next()?.parse().ok())
            .unwrap_or(0)
            * 1024
    };
    let (total, avail) = (kb("MemTotal:"), kb("MemAvailable:"));
    let (swap_total, swap_free) = (kb("SwapTotal:"), kb("SwapFree:"));
    let load: Vec<String> = read("/proc/loadavg")
        .split_whitespace()
        .take(3)
        .map(str::to_owned)
        .collect();
    let uptime = super::procfs::uptime() as u64;
    let mut out = String::new();
    let mut line = |k: &str, v: String| out.push_str(&format!("{k}: {v}\n"));
    line("os", or_unknown(os));
    line("kernel", or_unknown(read("/proc/sys/kernel/osrelease")));
    line("architecture", std::env::consts::ARCH.to_owned());
    line("hostname", or_unknown(read("/proc/sys/kernel/hostname")));
    line("cpu", or_unknown(model));
    line(
        "cores",
        format!("{logical} logical, {usable} usable by cairn"),
    );
    line(
        "memory",
        format!(
            "{} total, {} used, {} available",
            human(total),
            human(total.saturating_sub(avail)),
            human(avail)
        ),
    );
    line(
        "swap",
        if swap_total == 0 {
            "none".to_owned()
        } else {
            format!(
                "{} total, {} used",
                human(swap_total),
                human(swap_total.saturating_sub(swap_free))
            )
        },
    );
    line("load average (1, 5, 15 min)", load.join(" "));
    line("uptime", duration(uptime));
    line("container", container());
    out
}

/// Whether this runs in a container, and the evidence.
fn container() -> String {
    if Path::new("/.dockerenv").exists() {
        return "yes (Docker: /.dockerenv)".to_owned();
    }
    if Path::new("/run/.containerenv").exists() {
        return "yes (Podman: /run/.containerenv)".to_owned();
    }
    if let Ok(kind) = std::env::var("container")
        && !kind.is_empty()
    {
        return format!("yes ({kind})");
    }
    let cgroup = read("/proc/1/cgroup");
    for hint in ["docker", "kubepods", "containerd", "lxc", "libpod"] {
        if cgroup.contains(hint) {
            return format!("yes ({hint} in /proc/1/cgroup)");
        }
    }
    "no sign of one".to_owned()
}
