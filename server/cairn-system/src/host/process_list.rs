//! `process_list`: the processes on the host, filtered by name or user.

use cairn_toolkit::reply::error;
use cairn_toolkit::table::cut;
use cairn_toolkit::{CallContext, Category, Effect, JsonSchema, Paths, Tool};
use rmcp::model::CallToolResult;
use serde::Deserialize;

use super::procfs::{self, Users};
use super::{blocking, duration, human, table};
use crate::system::System;

/// The `process_list` tool.
pub struct ProcessList;

/// Arguments of `process_list`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// Only processes whose name or command line contains this text (case-insensitive).
    #[serde(default)]
    name: Option<String>,
    /// Only processes of this user (name or uid).
    #[serde(default)]
    user: Option<String>,
    /// Rows to show at most (default 100).
    #[serde(default)]
    #[schemars(range(min = 1, max = 1000))]
    limit: Option<usize>,
}

impl Tool for ProcessList {
    type Host = System;
    type Args = Args;
    const NAME: &'static str = "process_list";
    const TITLE: &'static str = "Processes";
    const DESCRIPTION: &'static str = "List the host's processes (pid, parent, user, state, CPU% over its life, memory, running time, command line), filtered by name or user; command lines are redacted. For the busiest now use process_top; for one process, process_details.";
    const CATEGORY: Category = Category::System;
    const EFFECT: Effect = Effect::Read;
    const AGENT_ONLY: bool = false;

    fn paths(_: &Args) -> Paths {
        Paths::none()
    }

    async fn call(system: &System, args: Args, _: CallContext) -> CallToolResult {
        let limit = args.limit.unwrap_or(100).clamp(1, 1000);
        let found = blocking(move || {
            let users = Users::load();
            let uid = match &args.user {
                Some(u) => Some(users.uid(u).ok_or_else(|| {
                    format!(
                        "no user {u:?} on this host; give a user name from /etc/passwd or a uid"
                    )
                })?),
                None => None,
            };
            let needle = args.name.as_deref().map(str::to_lowercase);
            let uptime = procfs::uptime();
            let mut rows = Vec::new();
            let mut more = false;
            for p in procfs::all() {
                if uid.is_some_and(|u| u != p.uid) {
                    continue;
                }
                let cmd = procfs::cmdline(&p);
                if let Some(n) = &needle
                    && !p.name.to_lowercase().contains(n)
                    && !cmd.to_lowercase().contains(n)
                {
                    continue;
                }
                if rows.len() == limit {
                    more = true;
                    break;
                }
                rows.push((p.clone(), users.name(p.uid), cmd, uptime));
            }
            Ok::<_, String>((rows, more))
        })
        .await;
        let (rows, more) = match found {
            Ok(Ok(r)) => r,
            Ok(Err(e)) | Err(e) => return error(e),
        };
        let rows = rows
            .into_iter()
            .map(|(p, user, cmd, uptime)| {
                vec![
                    p.pid.to_string(),
                    p.ppid.to_string(),
                    user,
                    p.state.to_string(),
                    format!("{:.1}", p.cpu_percent(uptime)),
                    human(p.rss_kb * 1024),
                    duration(p.elapsed(uptime)),
                    cut(&system.shown(&cmd), 300),
                ]
            })
            .collect();
        table(
            "Processes",
            &[
                "pid", "ppid", "user", "state", "cpu%", "rss", "running", "command",
            ],
            rows,
            more,
            "filter by `name` or `user`, or raise `limit`",
        )
    }
}
