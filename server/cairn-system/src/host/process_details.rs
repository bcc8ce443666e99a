//! `process_details`: everything about one process: executable, directory, command line,
//! state, threads, memory, open files, listening sockets, environment names and children.

use std::fs;

use cairn_toolkit::reply::{error, text};
use cairn_toolkit::{CallContext, Category, Effect, JsonSchema, Paths, Tool};
use rmcp::model::CallToolResult;
use serde::Deserialize;

use super::procfs::{self, Users};
use super::{blocking, duration, human, sockets};
use crate::system::System;

/// The `process_details` tool.
pub struct ProcessDetails;

/// Arguments of `process_details`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// The process id.
    pid: i32,
}

/// Environment names listed at most.
const MAX_ENV_NAMES: usize = 200;
/// Open files counted at most.
const MAX_FDS: usize = 100_000;

impl Tool for ProcessDetails {
    type Host = System;
    type Args = Args;
    const NAME: &'static str = "process_details";
    const TITLE: &'static str = "Process details";
    const DESCRIPTION: &'static str = "Details of one process: executable, working directory, command line (redacted), user, state, threads, memory, open file count, listening sockets, children, and the NAMES of its environment variables (never their values).";
    const CATEGORY: Category = Category::System;
    const EFFECT: Effect = Effect::Read;
    const AGENT_ONLY: bool = false;

    fn paths(_: &Args) -> Paths {
        Paths::none()
    }

    async fn call(system: &System, args: Args, _: CallContext) -> CallToolResult {
        let pid = args.pid;
        let report = match blocking(move || details(pid)).await {
            Ok(Some(r)) => r,
            Ok(None) => {
                return error(format!(
                    "no process {pid}: it does not exist (or has exited); see process_list"
                ));
            }
            Err(e) => return error(e),
        };
        text(system.shown(&report))
    }
}

fn link(pid: i32, what: &str) -> String {
    fs::read_link(format!("/proc/{pid}/{what}")).map_or_else(
        |e| format!("(not readable: {e})"),
        |p| p.display().to_string(),
    )
}

fn details(pid: i32) -> Option<String> {
    let p = procfs::read(pid)?;
    let users = Users::load();
    let uptime = procfs::uptime();
    let status = fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    let vm_size = status
        .lines()
        .find_map(|l| l.strip_prefix("VmSize:"))
        .and_then(|v| v.split_whitespace().next()?.parse::<u64>().ok());
    let fds = fs::read_dir(format!("/proc/{pid}/fd"))
        .map(|d| d.take(MAX_FDS).count().to_string())
        .unwrap_or_else(|e| format!("(not readable: {e})"));
    let inodes = sockets::socket_inodes(pid);
    let listening: Vec<String> = sockets::listeners()
        .into_iter()
        .filter(|l| inodes.contains(&l.inode))
        .map(|l| {
            format!(
                "{} {}",
                l.protocol,
                std::net::SocketAddr::new(l.address, l.port)
            )
        })
        .collect();
    let environ = fs::read(format!("/proc/{pid}/environ"));
    let env_names = match &environ {
        Ok(bytes) => {
            let mut names: Vec<String> = bytes
                .split(|b| *b == 0)
                .filter_map(|kv| {
                    let name = kv.split(|b| *b == b'=').next()?;
                    (!name.is_empty()).then(|| String::from_utf8_lossy(name).into_owned())
                })
                .collect();
            names.sort();
            names.dedup();
            let total = names.len();
            names.truncate(MAX_ENV_NAMES);
            let mut shown = names.join(", ");
            if total > MAX_ENV_NAMES {
                shown.push_str(&format!(" … ({total} in all)"));
            }
            if shown.is_empty() {
                "(none)".to_owned()
            } else {
                shown
            }
        }
        Err(e) => format!("(not readable: {e})"),
    };
    let children: Vec<String> = procfs::all()
        .into_iter()
        .filter(|c| c.ppid == pid && c.pid != pid)
        .map(|c| format!("{} {}", c.pid, c.name))
        .collect();
    let mut out = String::new();
    let mut line = |k: &str, v: String| out.push_str(&format!("{k}: {v}\n"));
    line("pid", p.pid.to_string());
    line("parent", p.ppid.to_string());
    line("name", p.name.clone());
    line("user", format!("{} (uid {})", users.name(p.uid), p.uid));
    line("state", state_name(p.state));
    line("executable", link(pid, "exe"));
    line("working directory", link(pid, "cwd"));
    line("command line", procfs::cmdline(&p));
    line("running for", duration(p.elapsed(uptime)));
    line(
        "cpu% (over its life)",
        format!("{:.1}", p.cpu_percent(uptime)),
    );
    line("threads", p.threads.to_string());
    line(
        "memory",
        format!(
            "{} resident, {} virtual",
            human(p.rss_kb * 1024),
            vm_size.map_or("?".to_owned(), |v| human(v * 1024))
        ),
    );
    line("open files", fds);
    line(
        "listening",
        if listening.is_empty() {
            "(nothing)".to_owned()
        } else {
            listening.join(", ")
        },
    );
    line(
        "children",
        if children.is_empty() {
            "(none)".to_owned()
        } else {
            children.join(", ")
        },
    );
    line("environment names", env_names);
    Some(out)
}

/// The state letter with its meaning.
pub(crate) fn state_name(state: char) -> String {
    let what = match state {
        'R' => "running",
        'S' => "sleeping",
        'D' => "waiting on I/O (uninterruptible)",
        'Z' => "zombie (exited, not yet reaped by its parent)",
        'T' => "stopped",
        't' => "stopped by a debugger",
        'I' => "idle",
        'X' => "dead",
        _ => "other",
    };
    format!("{state} ({what})")
}
