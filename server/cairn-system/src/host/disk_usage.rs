//! `disk_usage`: the mounted file systems and how full they are.

use std::time::Duration;

use cairn_toolkit::reply::error;
use cairn_toolkit::{CallContext, Category, Effect, JsonSchema, Paths, Tool};
use rmcp::model::CallToolResult;
use serde::Deserialize;

use super::{blocking, human, table};
use crate::system::System;

/// The `disk_usage` tool.
pub struct DiskUsage;

/// Arguments of `disk_usage`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// Also list pseudo file systems (proc, sysfs, tmpfs, cgroup, overlay layers...); by default
    /// only those that hold data.
    #[serde(default)]
    all: bool,
}

/// File system types that hold no user data.
const PSEUDO: &[&str] = &[
    "proc",
    "sysfs",
    "devtmpfs",
    "devpts",
    "tmpfs",
    "cgroup",
    "cgroup2",
    "securityfs",
    "pstore",
    "bpf",
    "debugfs",
    "tracefs",
    "configfs",
    "fusectl",
    "mqueue",
    "hugetlbfs",
    "autofs",
    "binfmt_misc",
    "nsfs",
    "rpc_pipefs",
    "efivarfs",
    "ramfs",
    "squashfs",
    "selinuxfs",
];

/// A file system that does not answer (a dead network mount) must not hang the call.
const TIME_LIMIT: Duration = Duration::from_secs(10);

impl Tool for DiskUsage {
    type Host = System;
    type Args = Args;
    const NAME: &'static str = "disk_usage";
    const TITLE: &'static str = "Disk usage";
    const DESCRIPTION: &'static str = "List the mounted file systems with size, used, available space and use% (fullest first); pseudo file systems are skipped unless `all`. For the sizes of workspace folders use folder_sizes.";
    const CATEGORY: Category = Category::System;
    const EFFECT: Effect = Effect::Read;
    const AGENT_ONLY: bool = false;

    fn paths(_: &Args) -> Paths {
        Paths::none()
    }

    async fn call(_: &System, args: Args, _: CallContext) -> CallToolResult {
        let work = blocking(move || rows(args.all));
        match tokio::time::timeout(TIME_LIMIT, work).await {
            Err(_) => error(
                "a file system did not answer within 10 s (a dead network mount?); nothing to show",
            ),
            Ok(Err(e)) => error(e),
            Ok(Ok(rows)) => table(
                "Mounted file systems",
                &[
                    "filesystem",
                    "type",
                    "size",
                    "used",
                    "avail",
                    "use%",
                    "mount",
                ],
                rows,
                false,
                "",
            ),
        }
    }
}

/// `/proc/self/mounts` escapes spaces and the like as octal (`\040`).
fn unescape(field: &str) -> String {
    let mut out = String::new();
    let mut rest = field;
    while let Some(i) = rest.find('\\') {
        out.push_str(&rest[..i]);
        let code = rest.get(i + 1..i + 4);
        match code.and_then(|c| u8::from_str_radix(c, 8).ok()) {
            Some(b) => {
                out.push(b as char);
                rest = &rest[i + 4..];
            }
            None => {
                out.push('\\');
                rest = &rest[i + 1..];
            }
        }
    }
    out.push_str(rest);
    out
}

fn rows(all: bool) -> Vec<Vec<String>> {
    let mounts = std::fs::read_to_string("/proc/self/mounts").unwrap_or_default();
    let mut seen = std::collections::HashSet::new();
    let mut found: Vec<(f64, Vec<String>)> = Vec::new();
    for line in mounts.lines() {
        let f: Vec<&str> = line.split_whitespace().collect();
        let [device, mount, kind, ..] = f[..] else {
            continue;
        };
        if !all && PSEUDO.contains(&kind) {
            continue;
        }
        let mount = unescape(mount);
        let Ok(st) = nix::sys::statvfs::statvfs(mount.as_str()) else {
            continue;
        };
        let block = st.fragment_size();
        let size = st.blocks() * block;
        if size == 0 && !all {
            continue;
        }
        // The same file system bind-mounted again (Docker's /etc/hosts...) is listed once.
        if !all && !seen.insert((device.to_owned(), size)) {
            continue;
        }
        let free = st.blocks_free() * block;
        let avail = st.blocks_available() * block;
        let used = size.saturating_sub(free);
        // As df: used against what non-root users can have.
        let pct = if used + avail == 0 {
            0.0
        } else {
            used as f64 * 100.0 / (used + avail) as f64
        };
        found.push((
            pct,
            vec![
                unescape(device),
                kind.to_owned(),
                human(size),
                human(used),
                human(avail),
                format!("{pct:.0}%"),
                mount,
            ],
        ));
    }
    found.sort_by(|a, b| b.0.total_cmp(&a.0));
    found.into_iter().map(|(_, r)| r).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mount_fields_are_unescaped() {
        assert_eq!(unescape("/mnt/my\\040disk"), "/mnt/my disk");
        assert_eq!(unescape("/plain"), "/plain");
        assert_eq!(unescape("/odd\\"), "/odd\\");
    }
}
