//! `process_top`: the processes using the most CPU right now (sampled) or the most memory.

use std::collections::HashMap;
use std::time::Duration;

use cairn_toolkit::reply::error;
use cairn_toolkit::table::cut;
use cairn_toolkit::{CallContext, Category, Effect, JsonSchema, Paths, Tool};
use rmcp::model::CallToolResult;
use serde::Deserialize;

use super::procfs::{self, TICKS, Users};
use super::{blocking, human, table};
use crate::system::System;

/// The `process_top` tool.
pub struct ProcessTop;

/// What to rank by.
#[derive(Debug, Clone, Copy, Default, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum By {
    /// CPU use over a half-second sample.
    #[default]
    Cpu,
    /// Resident memory.
    Memory,
}

/// Arguments of `process_top`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// `cpu` (sampled over half a second, the default) or `memory`.
    #[serde(default)]
    by: By,
    /// How many processes (default 10).
    #[serde(default)]
    #[schemars(range(min = 1, max = 50))]
    count: Option<usize>,
}

/// The CPU sample.
const SAMPLE: Duration = Duration::from_millis(500);

impl Tool for ProcessTop {
    type Host = System;
    type Args = Args;
    const NAME: &'static str = "process_top";
    const TITLE: &'static str = "Top processes";
    const DESCRIPTION: &'static str = "The processes using the most CPU now (measured over half a second; 100% is one core) or the most memory, with pid, user, CPU%, memory and command line (redacted).";
    const CATEGORY: Category = Category::System;
    const EFFECT: Effect = Effect::Read;
    const AGENT_ONLY: bool = false;

    fn paths(_: &Args) -> Paths {
        Paths::none()
    }

    async fn call(system: &System, args: Args, cx: CallContext) -> CallToolResult {
        let count = args.count.unwrap_or(10).clamp(1, 50);
        let before = match blocking(procfs::all).await {
            Ok(p) => p,
            Err(e) => return error(e),
        };
        let mut cpu: HashMap<i32, f64> = HashMap::new();
        if matches!(args.by, By::Cpu) {
            tokio::select! {
                () = cx.cancel.cancelled() => return error("cancelled"),
                () = tokio::time::sleep(SAMPLE) => {}
            }
        }
        let after = match blocking(procfs::all).await {
            Ok(p) => p,
            Err(e) => return error(e),
        };
        let was: HashMap<(i32, u64), u64> = before
            .iter()
            .map(|p| ((p.pid, p.start_ticks), p.cpu_ticks))
            .collect();
        for p in &after {
            // A pid reused during the sample is a new process: no delta for it.
            let delta = was
                .get(&(p.pid, p.start_ticks))
                .map_or(0, |b| p.cpu_ticks.saturating_sub(*b));
            cpu.insert(
                p.pid,
                delta as f64 / TICKS as f64 / SAMPLE.as_secs_f64() * 100.0,
            );
        }
        let mut ranked = after;
        ranked.retain(|p| !p.kernel_thread);
        match args.by {
            By::Cpu => ranked.sort_by(|a, b| {
                let (x, y) = (cpu.get(&a.pid), cpu.get(&b.pid));
                y.unwrap_or(&0.0).total_cmp(x.unwrap_or(&0.0))
            }),
            By::Memory => ranked.sort_by_key(|p| std::cmp::Reverse(p.rss_kb)),
        }
        ranked.truncate(count);
        let rows = match blocking(move || {
            let users = Users::load();
            ranked
                .into_iter()
                .map(|p| {
                    let cmd = procfs::cmdline(&p);
                    (p.pid, users.name(p.uid), p.rss_kb, cmd)
                })
                .collect::<Vec<_>>()
        })
        .await
        {
            Ok(r) => r,
            Err(e) => return error(e),
        };
        let rows = rows
            .into_iter()
            .map(|(pid, user, rss, cmd)| {
                vec![
                    pid.to_string(),
                    user,
                    format!("{:.1}", cpu.get(&pid).copied().unwrap_or(0.0)),
                    human(rss * 1024),
                    cut(&system.shown(&cmd), 200),
                ]
            })
            .collect();
        let heading = match args.by {
            By::Cpu => "Top processes by CPU (over 0.5 s)",
            By::Memory => "Top processes by memory (resident)",
        };
        table(
            heading,
            &["pid", "user", "cpu%", "rss", "command"],
            rows,
            false,
            "",
        )
    }
}
