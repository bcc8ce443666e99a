//! Running one command in a started container: output captured up to a cap, a wall clock,
//! cancellation, and how the run ended.

use std::time::{Duration, Instant};

use bollard::container::LogOutput;
use bollard::exec::{StartExecOptions, StartExecResults};
use bollard::models::ExecConfig;
use futures::StreamExt;
use tokio::io::AsyncWriteExt;
use tokio_util::sync::CancellationToken;

use crate::engine::{Engine, Limits};
use crate::error::SandboxError;

/// How a run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ending {
    /// The program exited by itself with this code.
    Exited(i64),
    /// Stopped at the wall-clock limit.
    Timeout,
    /// Killed for using more memory than the limit.
    OutOfMemory,
    /// Reached the process limit (a fork bomb, or too many threads).
    ProcessLimit,
    /// The user cancelled the run.
    Cancelled,
}

/// What a run produced.
#[derive(Debug, Clone, PartialEq)]
pub struct RunReport {
    pub ending: Ending,
    pub stdout: String,
    pub stderr: String,
    /// Output beyond the cap was dropped.
    pub truncated: bool,
    /// Output that was not text, summarised instead of shown.
    pub binary: bool,
    pub elapsed: Duration,
    /// A writable run on a copy of the workspace: what came back and what became of it.
    pub applied: Option<cairn_workspace::archive::Applied>,
    /// A writable run on a copy whose changes could not be brought back: why.
    pub not_applied: Option<String>,
}

impl RunReport {
    /// The report as the model reads it: how it ended, then the output.
    pub fn to_text(&self, limits: &Limits) -> String {
        let head = match self.ending {
            Ending::Exited(0) => "exit code 0".to_owned(),
            Ending::Exited(code) => format!("exit code {code}"),
            Ending::Timeout => format!(
                "stopped: the run passed the {} s time limit (sandbox.timeout_secs) and was killed",
                limits.timeout.as_secs()
            ),
            Ending::OutOfMemory => format!(
                "stopped: out of memory, the run used more than the {} MiB limit (sandbox.memory_mib) and was killed",
                limits.memory_bytes / (1024 * 1024)
            ),
            Ending::ProcessLimit => format!(
                "stopped: the run reached the limit of {} processes (sandbox.pids_limit)",
                limits.pids_limit
            ),
            Ending::Cancelled => "cancelled by the user".to_owned(),
        };
        let mut out = format!("{head} ({:.1} s)\n", self.elapsed.as_secs_f64());
        if !self.stdout.is_empty() {
            out.push_str("--- stdout\n");
            out.push_str(&self.stdout);
            if !self.stdout.ends_with('\n') {
                out.push('\n');
            }
        }
        if !self.stderr.is_empty() {
            out.push_str("--- stderr\n");
            out.push_str(&self.stderr);
            if !self.stderr.ends_with('\n') {
                out.push('\n');
            }
        }
        if self.truncated {
            out.push_str(&format!(
                "[truncated: output past {} bytes was dropped (sandbox.output_max_bytes)]\n",
                limits.output_max_bytes
            ));
        }
        if let Some(applied) = &self.applied {
            out.push_str("--- workspace (the run had a copy; its changes were applied through your permissions)\n");
            out.push_str(&applied.to_text());
            out.push('\n');
        }
        if let Some(why) = &self.not_applied {
            out.push_str("--- workspace\n");
            out.push_str(why);
            out.push('\n');
        }
        out
    }

    /// True when the run did not end by exiting with 0.
    pub fn failed(&self) -> bool {
        self.ending != Ending::Exited(0)
    }
}

/// One command to run in a container.
#[derive(Debug, Clone, Default)]
pub struct Command {
    pub argv: Vec<String>,
    pub env: Vec<String>,
    pub working_dir: Option<String>,
    /// Bytes written to the command's stdin, which is then closed.
    pub stdin: Option<Vec<u8>>,
    /// `uid:gid` to run as instead of the container's user.
    pub user: Option<String>,
}

/// Runs `argv` as `user` in the container for its bytes, not as a user's program: `stdin`
/// written in, standard output kept whole up to `cap` bytes (more is an error), within
/// `timeout`. How the workspace's archive goes in and a writable copy comes back out.
pub(crate) async fn exec_bytes(
    engine: &Engine,
    id: &str,
    argv: &[&str],
    stdin: Option<Vec<u8>>,
    cap: u64,
    timeout: Duration,
) -> Result<Vec<u8>, SandboxError> {
    let docker = engine.docker();
    let config = ExecConfig {
        attach_stdin: Some(stdin.is_some()),
        attach_stdout: Some(true),
        attach_stderr: Some(true),
        cmd: Some(argv.iter().map(|a| (*a).to_owned()).collect()),
        // Root of the container, with every capability dropped: it owns the copy's top.
        user: Some("0:0".to_owned()),
        ..Default::default()
    };
    let work = async {
        let exec_id = docker.create_exec(id, config).await?.id;
        let options = StartExecOptions {
            detach: false,
            tty: false,
            output_capacity: Some(1024 * 1024),
        };
        let StartExecResults::Attached {
            mut output,
            mut input,
        } = docker.start_exec(&exec_id, Some(options)).await?
        else {
            return Err(SandboxError::Engine("the engine did not attach".into()));
        };
        let writer = stdin.map(|bytes| {
            tokio::spawn(async move {
                let _ = input.write_all(&bytes).await;
                let _ = input.shutdown().await;
            })
        });
        let mut out = Vec::new();
        let mut err = Vec::new();
        while let Some(frame) = output.next().await {
            match frame? {
                LogOutput::StdOut { message } => {
                    out.extend_from_slice(&message);
                    if out.len() as u64 > cap {
                        return Err(SandboxError::Archive(
                            cairn_workspace::archive::ArchiveError::TooMuchBack {
                                what: format!(
                                    "the run left more than {} in the workspace",
                                    mib(cap)
                                ),
                                limit: mib(cap),
                                key: "workspace_max_mib",
                            },
                        ));
                    }
                }
                LogOutput::StdErr { message } if err.len() < 4096 => {
                    err.extend_from_slice(&message);
                }
                _ => {}
            }
        }
        if let Some(w) = writer {
            let _ = w.await;
        }
        let code = docker.inspect_exec(&exec_id).await?.exit_code.unwrap_or(-1);
        if code != 0 {
            return Err(SandboxError::Engine(format!(
                "`{}` in the sandbox failed with exit code {code}: {}",
                argv.join(" "),
                String::from_utf8_lossy(&err).trim()
            )));
        }
        Ok(out)
    };
    match tokio::time::timeout(timeout, work).await {
        Ok(r) => r,
        Err(_) => Err(SandboxError::Engine(format!(
            "`{}` in the sandbox took more than {} s",
            argv.join(" "),
            timeout.as_secs()
        ))),
    }
}

fn mib(bytes: u64) -> String {
    format!("{} MiB", bytes / (1024 * 1024))
}

/// Runs `command` in container `id` and waits for it, the time limit, or `cancel`.
pub async fn exec(
    engine: &Engine,
    id: &str,
    command: &Command,
    limits: &Limits,
    cancel: &CancellationToken,
) -> Result<RunReport, SandboxError> {
    let started = Instant::now();
    let config = ExecConfig {
        attach_stdin: Some(command.stdin.is_some()),
        attach_stdout: Some(true),
        attach_stderr: Some(true),
        cmd: Some(command.argv.clone()),
        env: Some(command.env.clone()),
        working_dir: command.working_dir.clone(),
        // The container's own user unless this command names one (the volume setup).
        user: command.user.clone(),
        ..Default::default()
    };
    let docker = engine.docker();
    let exec_id = docker.create_exec(id, config).await?.id;
    let options = StartExecOptions {
        detach: false,
        tty: false,
        // Frames are cut at this size, so a line of 10 MB never sits whole in memory.
        output_capacity: Some(64 * 1024),
    };
    let StartExecResults::Attached {
        mut output,
        mut input,
    } = docker.start_exec(&exec_id, Some(options)).await?
    else {
        return Err(SandboxError::Engine(
            "the engine did not attach to the run".into(),
        ));
    };
    if let Some(bytes) = &command.stdin {
        // A program that never reads its stdin must not stall the run: write in the background.
        let bytes = bytes.clone();
        tokio::spawn(async move {
            let _ = input.write_all(&bytes).await;
            let _ = input.shutdown().await;
        });
    } else {
        drop(input);
    }
    let mut capture = Capture::new(limits.output_max_bytes);
    let deadline = tokio::time::sleep(limits.timeout);
    tokio::pin!(deadline);
    // The program's own end is judged by the engine, not by its output closing: a background
    // child can hold the output open after the program exited, and a program can close its
    // output and keep running.
    let mut poll = tokio::time::interval(std::time::Duration::from_millis(100));
    let mut stream_open = true;
    let mut unanswered = 0u32;
    let ending = loop {
        tokio::select! {
            _ = cancel.cancelled() => break Some(Ending::Cancelled),
            _ = &mut deadline => break Some(Ending::Timeout),
            frame = output.next(), if stream_open => match frame {
                Some(Ok(LogOutput::StdOut { message })) => capture.push(false, &message),
                Some(Ok(LogOutput::StdErr { message })) => {
                    capture.push(true, &message);
                    // A fork bomb never ends by itself: stop it at the first fork refused.
                    if capture.saw_fork_failure() {
                        break Some(Ending::ProcessLimit);
                    }
                }
                Some(Ok(_)) => {}
                Some(Err(e)) => {
                    tracing::debug!("sandbox output stream ended with an error: {e}");
                    stream_open = false;
                }
                None => {
                    stream_open = false;
                    // Usually the program has just exited: look now rather than at the tick.
                    poll.reset_immediately();
                }
            },
            _ = poll.tick() => {
                // Not running is not yet ended: just after the start the engine may report an
                // exec that has not begun (no exit code yet), which read as ended gave exit -1.
                // Ended is an exit code, or not running once the output has closed (a container
                // that died leaves no exit code).
                let inspected = tokio::time::timeout(
                    std::time::Duration::from_secs(10),
                    docker.inspect_exec(&exec_id),
                )
                .await;
                let ended = match inspected {
                    Ok(Ok(i)) => {
                        unanswered = 0;
                        !i.running.unwrap_or(false) && (i.exit_code.is_some() || !stream_open)
                    }
                    // The engine stopped answering: a few misses in a row end the run as an
                    // engine failure, not at its time limit as if it were still running.
                    Ok(Err(e)) => {
                        unanswered += 1;
                        if unanswered >= 3 {
                            return Err(e.into());
                        }
                        false
                    }
                    Err(_) => {
                        return Err(SandboxError::Engine(
                            "the engine did not answer within 10 s".to_owned(),
                        ));
                    }
                };
                if ended {
                    // Output written just before the end may still be in flight.
                    let drain = tokio::time::sleep(std::time::Duration::from_millis(50));
                    tokio::pin!(drain);
                    while stream_open {
                        tokio::select! {
                            _ = &mut drain => break,
                            frame = output.next() => match frame {
                                Some(Ok(LogOutput::StdOut { message })) => capture.push(false, &message),
                                Some(Ok(LogOutput::StdErr { message })) => capture.push(true, &message),
                                Some(Ok(_)) => {}
                                _ => stream_open = false,
                            },
                        }
                    }
                    break None;
                }
            }
        }
    };
    let ending = match ending {
        Some(e) => e,
        None => {
            let inspect = docker.inspect_exec(&exec_id).await?;
            let code = inspect.exit_code.unwrap_or(-1);
            classify(engine, id, code, &capture, limits).await
        }
    };
    let (stdout, stderr, truncated, binary) = capture.finish();
    Ok(RunReport {
        ending,
        stdout,
        stderr,
        truncated,
        binary,
        elapsed: started.elapsed(),
        applied: None,
        not_applied: None,
    })
}

/// An exit code tells how the program ended; 137 (SIGKILL) after the memory cgroup killed a
/// process, or a fork failure at the process limit, is a limit, not the program's own exit.
async fn classify(
    engine: &Engine,
    id: &str,
    code: i64,
    capture: &Capture,
    limits: &Limits,
) -> Ending {
    if code == 137 && oom_killed(engine, id, limits).await {
        return Ending::OutOfMemory;
    }
    // Hitting the limit is reported even when the first process exited 0: its children
    // were refused, and the rest of the bomb dies with the container.
    if capture.saw_fork_failure() {
        return Ending::ProcessLimit;
    }
    Ending::Exited(code)
}

/// Whether the kernel's OOM killer acted in the container. The engine's `OOMKilled` flag is
/// only set when the container's first process dies, so the memory cgroup's own counter (v2
/// `memory.events`, v1 `memory.oom_control`) is read from inside; each run has a fresh
/// container, so any kill counted there was this run's.
async fn oom_killed(engine: &Engine, id: &str, limits: &Limits) -> bool {
    if let Ok(info) = engine.docker().inspect_container(id, None).await
        && info.state.and_then(|s| s.oom_killed) == Some(true)
    {
        return true;
    }
    let probe = Command {
        argv: vec![
            "sh".into(),
            "-c".into(),
            "cat /sys/fs/cgroup/memory.events /sys/fs/cgroup/memory/memory.oom_control 2>/dev/null"
                .into(),
        ],
        ..Default::default()
    };
    let quick = Limits {
        timeout: std::time::Duration::from_secs(5),
        ..limits.clone()
    };
    let cancel = CancellationToken::new();
    match Box::pin(exec(engine, id, &probe, &quick, &cancel)).await {
        Ok(report) => report.stdout.lines().any(|l| {
            l.strip_prefix("oom_kill ")
                .and_then(|n| n.trim().parse::<u64>().ok())
                .is_some_and(|n| n > 0)
        }),
        Err(_) => false,
    }
}

/// Output kept up to a cap shared by both streams; the rest is counted and dropped.
struct Capture {
    cap: usize,
    stdout: Vec<u8>,
    stderr: Vec<u8>,
    dropped: usize,
}

impl Capture {
    fn new(cap: usize) -> Capture {
        Capture {
            cap,
            stdout: Vec::new(),
            stderr: Vec::new(),
            dropped: 0,
        }
    }

    fn push(&mut self, err: bool, bytes: &[u8]) {
        let room = self
            .cap
            .saturating_sub(self.stdout.len() + self.stderr.len());
        let take = room.min(bytes.len());
        let target = if err {
            &mut self.stderr
        } else {
            &mut self.stdout
        };
        target.extend_from_slice(&bytes[..take]);
        self.dropped += bytes.len() - take;
    }

    fn saw_fork_failure(&self) -> bool {
        let err = String::from_utf8_lossy(&self.stderr);
        [
            "Resource temporarily unavailable",
            "fork: retry",
            "can't fork",
            "Cannot fork",
        ]
        .iter()
        .any(|n| err.contains(n))
    }

    fn finish(self) -> (String, String, bool, bool) {
        let mut binary = false;
        let mut text = |bytes: Vec<u8>| match String::from_utf8(bytes) {
            Ok(s) if !s.contains('\0') => s,
            Ok(s) => {
                binary = true;
                format!("[binary output: {} bytes, not shown]", s.len())
            }
            Err(e) => {
                let bytes = e.into_bytes();
                // Mostly text with a few bad bytes (a cut at the cap) is shown lossily.
                let bad = String::from_utf8_lossy(&bytes).matches('\u{FFFD}').count();
                if bad * 20 > bytes.len() || bytes.contains(&0) {
                    binary = true;
                    format!("[binary output: {} bytes, not shown]", bytes.len())
                } else {
                    String::from_utf8_lossy(&bytes).into_owned()
                }
            }
        };
        let stdout = text(self.stdout);
        let stderr = text(self.stderr);
        (stdout, stderr, self.dropped > 0, binary)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn capture_keeps_the_cap_across_both_streams_and_marks_binary() {
        let mut c = Capture::new(10);
        c.push(false, b"hello ");
        c.push(true, b"world!!!");
        let (out, err, truncated, binary) = c.finish();
        assert_eq!(
            (out.as_str(), err.as_str(), truncated, binary),
            ("hello ", "worl", true, false)
        );
        let mut c = Capture::new(100);
        c.push(false, &[0xff, 0xfe, 0x00, 0x01, 0x02]);
        let (out, _, truncated, binary) = c.finish();
        assert!(binary && !truncated, "{out}");
        assert_eq!(out, "[binary output: 5 bytes, not shown]");
    }
}
