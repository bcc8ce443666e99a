//! Processes as `/proc` shows them: one snapshot per process, the user names of uids, and the
//! clock the times are counted in.

use std::collections::HashMap;
use std::fs;

/// The kernel's clock ticks per second for `/proc` times (`USER_HZ`): 100 on every Linux
/// architecture cairn runs on (reading `sysconf` would need unsafe code for a constant).
pub(crate) const TICKS: u64 = 100;

/// The `PF_KTHREAD` flag in `/proc/PID/stat`: a kernel thread.
const PF_KTHREAD: u64 = 0x0020_0000;

/// Bytes of a command line read at most.
const MAX_CMDLINE: usize = 8192;

/// One process at the moment it was read.
#[derive(Debug, Clone)]
pub(crate) struct Proc {
    pub pid: i32,
    pub ppid: i32,
    pub state: char,
    /// The kernel's short name (`comm`).
    pub name: String,
    /// The real uid.
    pub uid: u32,
    /// User plus system CPU time, in ticks.
    pub cpu_ticks: u64,
    /// Start, in ticks after boot.
    pub start_ticks: u64,
    pub rss_kb: u64,
    pub threads: u64,
    pub kernel_thread: bool,
}

impl Proc {
    /// Seconds since the process started, given the uptime in seconds.
    pub fn elapsed(&self, uptime: f64) -> u64 {
        (uptime - self.start_ticks as f64 / TICKS as f64).max(0.0) as u64
    }

    /// Average CPU use over its life, in percent of one core.
    pub fn cpu_percent(&self, uptime: f64) -> f64 {
        let alive = uptime - self.start_ticks as f64 / TICKS as f64;
        if alive <= 0.0 {
            return 0.0;
        }
        self.cpu_ticks as f64 / TICKS as f64 / alive * 100.0
    }
}

/// The process `pid`, or `None` when it does not exist (or vanished while being read).
pub(crate) fn read(pid: i32) -> Option<Proc> {
    let stat = fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let status = fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    parse(pid, &stat, &status)
}

fn parse(pid: i32, stat: &str, status: &str) -> Option<Proc> {
    // The name is in parentheses and may itself contain spaces and parentheses: the fields
    // start after the last `)`.
    let open = stat.find('(')?;
    let close = stat.rfind(')')?;
    let name = stat.get(open + 1..close)?.to_owned();
    let fields: Vec<&str> = stat.get(close + 1..)?.split_whitespace().collect();
    let num = |i: usize| fields.get(i).and_then(|f| f.parse::<u64>().ok());
    let state = fields.first()?.chars().next()?;
    let ppid = fields.get(1)?.parse().ok()?;
    let flags = num(6)?;
    let cpu_ticks = num(11)? + num(12)?;
    let threads = num(17)?;
    let start_ticks = num(19)?;
    let field = |key: &str| {
        status
            .lines()
            .find_map(|l| l.strip_prefix(key))
            .map(str::trim)
    };
    let uid = field("Uid:")?.split_whitespace().next()?.parse().ok()?;
    let rss_kb = field("VmRSS:")
        .and_then(|v| v.split_whitespace().next())
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    Some(Proc {
        pid,
        ppid,
        state,
        name,
        uid,
        cpu_ticks,
        start_ticks,
        rss_kb,
        threads,
        kernel_thread: flags & PF_KTHREAD != 0,
    })
}

/// Every process's id, ascending.
pub(crate) fn pids() -> Vec<i32> {
    let mut pids: Vec<i32> = fs::read_dir("/proc")
        .map(|dir| {
            dir.filter_map(|e| e.ok()?.file_name().to_str()?.parse().ok())
                .collect()
        })
        .unwrap_or_default();
    pids.sort_unstable();
    pids
}

/// Every process that could be read, ascending by pid.
pub(crate) fn all() -> Vec<Proc> {
    pids().into_iter().filter_map(read).collect()
}

/// The command line of `pid`, arguments joined by spaces (capped); the `[name]` of a kernel
/// thread, which has none.
pub(crate) fn cmdline(p: &Proc) -> String {
    let bytes = fs::read(format!("/proc/{}/cmdline", p.pid)).unwrap_or_default();
    if bytes.is_empty() {
        return format!("[{}]", p.name);
    }
    let cut = &bytes[..bytes.len().min(MAX_CMDLINE)];
    let text = String::from_utf8_lossy(cut);
    let mut line = text.trim_end_matches('\0').replace('\0', " ");
    if bytes.len() > MAX_CMDLINE {
        line.push_str(" …");
    }
    line
}

/// Seconds since boot.
pub(crate) fn uptime() -> f64 {
    fs::read_to_string("/proc/uptime")
        .ok()
        .and_then(|t| t.split_whitespace().next()?.parse().ok())
        .unwrap_or(0.0)
}

/// User names by uid, from `/etc/passwd` (a uid without a name shows as its number).
pub(crate) struct Users(HashMap<u32, String>);

impl Users {
    /// The names this host knows.
    pub fn load() -> Users {
        let text = fs::read_to_string("/etc/passwd").unwrap_or_default();
        Users(
            text.lines()
                .filter_map(|l| {
                    let mut f = l.split(':');
                    let name = f.next()?;
                    let uid = f.nth(1)?.parse().ok()?;
                    Some((uid, name.to_owned()))
                })
                .collect(),
        )
    }

    /// The name of `uid`, or the number.
    pub fn name(&self, uid: u32) -> String {
        self.0.get(&uid).cloned().unwrap_or_else(|| uid.to_string())
    }

    /// The uid of `name` (a number is taken as one).
    pub fn uid(&self, name: &str) -> Option<u32> {
        name.parse().ok().or_else(|| {
            self.0
                .iter()
                .find_map(|(uid, n)| (n == name).then_some(*uid))
        })
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn a_name_with_parentheses_and_spaces_does_not_shift_the_fields() {
        let stat = "42 (a) b (c) S 7 42 42 0 -1 4194560 1 0 0 0 30 12 0 0 20 0 3 0 500 1000 50";
        let status = "Name:\ta\nUid:\t1000\t1000\t1000\t1000\nVmRSS:\t  2048 kB\n";
        let p = parse(42, stat, status).unwrap();
        assert_eq!(p.name, "a) b (c");
        assert_eq!((p.state, p.ppid, p.uid), ('S', 7, 1000));
        assert_eq!((p.cpu_ticks, p.threads, p.start_ticks), (42, 3, 500));
        assert_eq!(p.rss_kb, 2048);
        assert!(!p.kernel_thread);
    }

    #[test]
    fn this_process_reads_as_itself() {
        let me = read(std::process::id() as i32).unwrap();
        assert_eq!(me.ppid, std::os::unix::process::parent_id() as i32);
        assert!(me.threads >= 1);
        assert!(!me.kernel_thread);
    }
}
