//! The tools over the host cairn runs on: OS, CPU, memory, disks, processes, ports, interfaces,
//! DNS, environment names, programs on `PATH` and log files.
//!
//! Shared here: the user's settings for them ([`HostSettings`]), the redaction every shown
//! command line, environment or log line passes, and the table output. `/proc` parsing lives
//! in `procfs.rs`, the log file access (workspace scope or an allowed directory) in `logs.rs`.

pub(crate) mod disk_usage;
pub(crate) mod dns_lookup;
pub(crate) mod env_vars;
pub(crate) mod folder_sizes;
pub(crate) mod listening_ports;
pub(crate) mod log_search;
pub(crate) mod log_tail;
mod logs;
pub(crate) mod network_interfaces;
pub(crate) mod process_details;
pub(crate) mod process_list;
pub(crate) mod process_signal;
pub(crate) mod process_top;
pub(crate) mod process_tree;
mod procfs;
mod sockets;
pub(crate) mod system_info;
pub(crate) mod which_program;

use cairn_toolkit::table::{Cell, Limits, Table};
use rmcp::model::CallToolResult;

use crate::system::System;

/// What the user allows the host tools to show or read beyond the defaults: the user's
/// `[system]` settings, one definition with their defaults. User configuration only: a
/// repository must not grant itself reads of `/var/log` or environment values.
pub use cairn_config::SystemConfig as HostSettings;

impl System {
    /// `text` as the model may see it: through the redactor when there is one.
    pub(crate) fn shown(&self, text: &str) -> String {
        match &self.redactor {
            Some(r) => r.redact(text),
            None => text.to_owned(),
        }
    }
}

/// Rows as a table result, `more` saying whether rows were left out before these.
pub(crate) fn table(
    heading: &str,
    columns: &[&str],
    rows: Vec<Vec<String>>,
    more: bool,
    hint: &str,
) -> CallToolResult {
    Table {
        columns: columns.iter().map(|c| (*c).to_owned()).collect(),
        rows: rows
            .into_iter()
            .map(|r| r.into_iter().map(Cell::Text).collect())
            .collect(),
        more,
    }
    .result_hinting(heading, &Limits::default(), hint)
}

/// `bytes` for people: `1.5 GiB`.
pub(crate) fn human(bytes: u64) -> String {
    const UNITS: &[&str] = &["B", "KiB", "MiB", "GiB", "TiB", "PiB"];
    let mut value = bytes as f64;
    let mut unit = 0;
    while value >= 1024.0 && unit + 1 < UNITS.len() {
        value /= 1024.0;
        unit += 1;
    }
    if unit == 0 {
        format!("{bytes} B")
    } else {
        format!("{value:.1} {}", UNITS[unit])
    }
}

/// A duration in seconds for people: `3d 4h`, `2h 05m`, `42s`.
pub(crate) fn duration(secs: u64) -> String {
    let (d, h, m, s) = (secs / 86400, secs / 3600 % 24, secs / 60 % 60, secs % 60);
    if d > 0 {
        format!("{d}d {h}h")
    } else if h > 0 {
        format!("{h}h {m:02}m")
    } else if m > 0 {
        format!("{m}m {s:02}s")
    } else {
        format!("{s}s")
    }
}

/// Runs blocking work (file and `/proc` reads) off the async threads; a panic there becomes
/// an error text rather than taking the server down.
pub(crate) async fn blocking<T: Send + 'static>(
    work: impl FnOnce() -> T + Send + 'static,
) -> Result<T, String> {
    tokio::task::spawn_blocking(work)
        .await
        .map_err(|e| format!("the work failed: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_and_durations_read_as_people_write_them() {
        assert_eq!(human(512), "512 B");
        assert_eq!(human(1536), "1.5 KiB");
        assert_eq!(human(10 * 1024 * 1024 * 1024), "10.0 GiB");
        assert_eq!(duration(42), "42s");
        assert_eq!(duration(3 * 3600 + 5 * 60), "3h 05m");
        assert_eq!(duration(2 * 86400 + 3600), "2d 1h");
    }
}
