//! `process_tree`: the processes below one (by default all, from pid 1), indented.

use std::collections::HashMap;

use cairn_toolkit::reply::{error, text};
use cairn_toolkit::table::cut;
use cairn_toolkit::{CallContext, Category, Effect, JsonSchema, Paths, Tool};
use rmcp::model::CallToolResult;
use serde::Deserialize;

use super::blocking;
use super::procfs::{self, Proc};
use crate::system::System;

/// The `process_tree` tool.
pub struct ProcessTree;

/// Arguments of `process_tree`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// The process at the top of the tree (default 1, the whole tree).
    #[serde(default)]
    pid: Option<i32>,
    /// Levels below the top to show (default 10).
    #[serde(default)]
    #[schemars(range(min = 1, max = 64))]
    depth: Option<usize>,
}

/// Lines shown at most.
const MAX_LINES: usize = 500;

impl Tool for ProcessTree {
    type Host = System;
    type Args = Args;
    const NAME: &'static str = "process_tree";
    const TITLE: &'static str = "Process tree";
    const DESCRIPTION: &'static str = "Show the process tree from a pid (default 1, everything) down, indented, each line `pid name: command line` (redacted); kernel threads are left out. At most 500 lines.";
    const CATEGORY: Category = Category::System;
    const EFFECT: Effect = Effect::Read;
    const AGENT_ONLY: bool = false;

    fn paths(_: &Args) -> Paths {
        Paths::none()
    }

    async fn call(system: &System, args: Args, _: CallContext) -> CallToolResult {
        let top = args.pid.unwrap_or(1);
        let depth = args.depth.unwrap_or(10).clamp(1, 64);
        let procs = match blocking(procfs::all).await {
            Ok(p) => p,
            Err(e) => return error(e),
        };
        let Some(root) = procs.iter().find(|p| p.pid == top) else {
            return error(format!(
                "no process {top}: it does not exist (or has exited); see process_list"
            ));
        };
        let mut children: HashMap<i32, Vec<&Proc>> = HashMap::new();
        for p in procs.iter().filter(|p| !p.kernel_thread && p.pid != top) {
            children.entry(p.ppid).or_default().push(p);
        }
        let mut lines = Vec::new();
        let mut left_out = 0usize;
        // Depth-first, children in pid order; an explicit stack so a deep tree cannot
        // overflow ours.
        let mut stack = vec![(root, 0usize)];
        while let Some((p, level)) = stack.pop() {
            if lines.len() >= MAX_LINES {
                left_out += 1;
                continue;
            }
            let cmd = cut(&system.shown(&procfs::cmdline(p)), 160);
            lines.push(format!(
                "{}{} {}: {}",
                "  ".repeat(level),
                p.pid,
                p.name,
                cmd
            ));
            if level < depth
                && let Some(kids) = children.get(&p.pid)
            {
                for kid in kids.iter().rev() {
                    stack.push((kid, level + 1));
                }
            }
        }
        let mut out = lines.join("\n");
        if left_out > 0 {
            out.push_str(&format!(
                "\n({left_out} more processes left out; start lower with `pid` or lower `depth`)"
            ));
        }
        text(out)
    }
}
