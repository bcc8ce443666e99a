//! `process_signal`: sends a signal to one of the user's own processes, refusing those whose
//! loss would take down the machine, cairn itself or someone else's work.

use std::time::Duration;

use cairn_toolkit::reply::{error, text};
use cairn_toolkit::{CallContext, Category, Effect, JsonSchema, Paths, Tool};
use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;
use rmcp::model::CallToolResult;
use serde::Deserialize;

use super::procfs::{self, Proc, Users};
use crate::system::System;

/// The `process_signal` tool.
pub struct ProcessSignal;

/// The signals that may be sent.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "UPPERCASE")]
pub enum Sig {
    /// Ask it to end (the default).
    #[default]
    Term,
    /// Interrupt, as Ctrl-C.
    Int,
    /// Hang up; many daemons reload their configuration.
    Hup,
    /// End it at once; it cannot clean up.
    Kill,
    /// Pause it.
    Stop,
    /// Resume a paused process.
    Cont,
    /// User-defined 1.
    Usr1,
    /// User-defined 2.
    Usr2,
}

impl Sig {
    fn signal(self) -> Signal {
        match self {
            Sig::Term => Signal::SIGTERM,
            Sig::Int => Signal::SIGINT,
            Sig::Hup => Signal::SIGHUP,
            Sig::Kill => Signal::SIGKILL,
            Sig::Stop => Signal::SIGSTOP,
            Sig::Cont => Signal::SIGCONT,
            Sig::Usr1 => Signal::SIGUSR1,
            Sig::Usr2 => Signal::SIGUSR2,
        }
    }
}

/// Arguments of `process_signal`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// The process id.
    pid: i64,
    /// TERM (default), INT, HUP, KILL, STOP, CONT, USR1 or USR2.
    #[serde(default)]
    signal: Sig,
}

/// How long to watch for the process to end after a signal that ends processes.
const WATCH: Duration = Duration::from_secs(3);

impl Tool for ProcessSignal {
    type Host = System;
    type Args = Args;
    const NAME: &'static str = "process_signal";
    const TITLE: &'static str = "Signal a process";
    const DESCRIPTION: &'static str = "Send TERM, INT, HUP, KILL, STOP, CONT, USR1 or USR2 to one of your own processes on the host and report whether it ended. Refused for pid 1, cairn and its parents, kernel threads and other users' processes.";
    const CATEGORY: Category = Category::System;
    const EFFECT: Effect = Effect::Write;
    const AGENT_ONLY: bool = true;

    fn paths(_: &Args) -> Paths {
        Paths::none()
    }

    async fn call(_: &System, args: Args, cx: CallContext) -> CallToolResult {
        let me = Me::current();
        let pid = match i32::try_from(args.pid) {
            Ok(p) => p,
            Err(_) => return error(format!("refused: {} is not a process id", args.pid)),
        };
        let target = procfs::read(pid);
        if let Some(reason) = refusal(pid, target.as_ref(), &me) {
            return error(format!("refused: {reason}; nothing was sent"));
        }
        let Some(target) = target else {
            return error(format!("no process {pid}"));
        };
        let sig = args.signal;
        if let Err(e) = kill(Pid::from_raw(pid), sig.signal()) {
            return error(format!("the signal could not be sent to {pid}: {e}"));
        }
        let name = format!("{} ({})", pid, target.name);
        if !matches!(sig, Sig::Term | Sig::Int | Sig::Hup | Sig::Kill) {
            return text(format!("sent {} to {name}", label(sig)));
        }
        // Watch for the end: gone, or a zombie (ended, waiting for its parent to reap it).
        let deadline = tokio::time::Instant::now() + WATCH;
        loop {
            match procfs::read(pid) {
                None => return text(format!("sent {} to {name}: it exited", label(sig))),
                Some(p) if p.start_ticks != target.start_ticks => {
                    return text(format!("sent {} to {name}: it exited", label(sig)));
                }
                Some(p) if p.state == 'Z' => {
                    return text(format!(
                        "sent {} to {name}: it exited (a zombie until its parent reaps it)",
                        label(sig)
                    ));
                }
                Some(_) => {}
            }
            if tokio::time::Instant::now() >= deadline {
                return text(format!(
                    "sent {} to {name}: it is still running after {} s (it may be cleaning up or ignoring the signal; KILL ends it at once)",
                    label(sig),
                    WATCH.as_secs()
                ));
            }
            tokio::select! {
                () = cx.cancel.cancelled() => {
                    return text(format!("sent {} to {name}; stopped watching (cancelled)", label(sig)));
                }
                () = tokio::time::sleep(Duration::from_millis(50)) => {}
            }
        }
    }
}

fn label(sig: Sig) -> &'static str {
    match sig {
        Sig::Term => "TERM",
        Sig::Int => "INT",
        Sig::Hup => "HUP",
        Sig::Kill => "KILL",
        Sig::Stop => "STOP",
        Sig::Cont => "CONT",
        Sig::Usr1 => "USR1",
        Sig::Usr2 => "USR2",
    }
}

/// Who cairn is: its pid, its ancestors and its real uid.
#[derive(Debug, Clone)]
pub(crate) struct Me {
    pub pid: i32,
    pub ancestors: Vec<i32>,
    pub uid: u32,
}

impl Me {
    pub fn current() -> Me {
        let pid = std::process::id() as i32;
        let mut ancestors = Vec::new();
        let mut at = std::os::unix::process::parent_id() as i32;
        // A bounded climb: a parent cycle cannot exist, but a bound costs nothing.
        while at > 0 && ancestors.len() < 64 {
            ancestors.push(at);
            at = procfs::read(at).map_or(0, |p| p.ppid);
        }
        Me {
            pid,
            ancestors,
            uid: nix::unistd::getuid().as_raw(),
        }
    }
}

/// Why a signal to `pid` (read as `target`, `None` when there is no such process) is refused,
/// or `None` when it may be sent.
pub(crate) fn refusal(pid: i32, target: Option<&Proc>, me: &Me) -> Option<String> {
    if pid <= 0 {
        return Some(format!(
            "pid {pid} would signal a whole process group or every process; give one process's pid"
        ));
    }
    if pid == 1 {
        return Some(
            "pid 1 is the init process; signalling it can stop the whole machine or container"
                .to_owned(),
        );
    }
    if pid == me.pid {
        return Some(format!("pid {pid} is cairn itself"));
    }
    if me.ancestors.contains(&pid) {
        return Some(format!(
            "pid {pid} is a parent of cairn (the editor or shell that runs it); ending it ends cairn"
        ));
    }
    let Some(p) = target else {
        return Some(format!(
            "no process {pid} exists (it may have exited already); see process_list"
        ));
    };
    if p.kernel_thread {
        return Some(format!("pid {pid} ({}) is a kernel thread", p.name));
    }
    if p.uid != me.uid {
        return Some(format!(
            "pid {pid} ({}) belongs to user {} (uid {}), not to cairn's user (uid {}); only your own processes may be signalled",
            p.name,
            Users::load().name(p.uid),
            p.uid,
            me.uid
        ));
    }
    None
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn proc_of(pid: i32, uid: u32, kernel_thread: bool) -> Proc {
        Proc {
            pid,
            ppid: 1,
            state: 'S',
            name: "sleep".into(),
            uid,
            cpu_ticks: 0,
            start_ticks: 0,
            rss_kb: 0,
            threads: 1,
            kernel_thread,
        }
    }

    #[test]
    fn the_decision_refuses_what_it_must_and_allows_the_users_own() {
        let me = Me {
            pid: 500,
            ancestors: vec![400, 1],
            uid: 1000,
        };
        let mine = proc_of(600, 1000, false);
        assert_eq!(refusal(600, Some(&mine), &me), None);
        for (pid, words) in [
            (0, "process group"),
            (-1, "every process"),
            (1, "init"),
            (500, "cairn itself"),
            (400, "parent of cairn"),
        ] {
            let r = refusal(pid, Some(&proc_of(pid, 1000, false)), &me).unwrap();
            assert!(r.contains(words), "{pid}: {r}");
        }
        let other = refusal(700, Some(&proc_of(700, 0, false)), &me).unwrap();
        assert!(
            other.contains("uid 0") && other.contains("only your own"),
            "{other}"
        );
        let kthread = refusal(2, Some(&proc_of(2, 1000, true)), &me).unwrap();
        assert!(kthread.contains("kernel thread"), "{kthread}");
        let gone = refusal(99999, None, &me).unwrap();
        assert!(gone.contains("no process 99999"), "{gone}");
    }
}
