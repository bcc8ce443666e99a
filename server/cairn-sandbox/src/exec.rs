//! Running one command in a started container: output captured up to a cap, a wall clock,
//! cancellation, and how the run ended.

use std::time::{Duration, Instant};

use bollard::exec::{StartExecOptions, StartExecResults};
use bollard::models::ExecConfig;
use bollard::container::LogOutput;
use futures::StreamExt;
use tokio::io::AsyncWriteExt;
use tokio_util::sync::CancellationToken;

use crate::engine::Engine;
use crate::{Limits, SandboxError};

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
        user: Some(limits.user.clone()),
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
    let StartExecResults::Attached { mut output, mut input } =
        docker.start_exec(&exec_id, Some(options)).await?
    else {
        return Err(SandboxError::Engine("the engine did not attach to the run".into()));
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
    let ending = loop {
        tokio::select! {
            _ = cancel.cancelled() => break Some(Ending::Cancelled),
            _ = &mut deadline => break Some(Ending::Timeout),
            frame = output.next() => match frame {
                Some(Ok(LogOutput::StdOut { message })) => capture.push(false, &message),
                Some(Ok(LogOutput::StdErr { message })) => capture.push(true, &message),
                Some(Ok(_)) => {}
                Some(Err(e)) => {
                    tracing::debug!("sandbox output stream ended with an error: {e}");
                    break None;
                }
                None => break None,
            },
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
    })
}

/// An exit code tells how the program ended; 137 (SIGKILL) with the container's OOM flag, or
/// a fork failure at the process limit, is a limit, not the program's own exit.
async fn classify(engine: &Engine, id: &str, code: i64, capture: &Capture, limits: &Limits) -> Ending {
    if code == 137 {
        if let Ok(info) = engine.docker().inspect_container(id, None).await {
            if info.state.and_then(|s| s.oom_killed) == Some(true) {
                return Ending::OutOfMemory;
            }
        }
        // The OOM killer may pick the program while the container itself lives on: the
        // memory cgroup's counters tell.
        if memory_was_exhausted(capture) {
            return Ending::OutOfMemory;
        }
    }
    if code != 0 && capture.saw_fork_failure() {
        return Ending::ProcessLimit;
    }
    let _ = limits;
    Ending::Exited(code)
}

fn memory_was_exhausted(capture: &Capture) -> bool {
    capture.stderr_has("MemoryError") || capture.stderr_has("Cannot allocate memory")
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
        let room = self.cap.saturating_sub(self.stdout.len() + self.stderr.len());
        let take = room.min(bytes.len());
        let target = if err { &mut self.stderr } else { &mut self.stdout };
        target.extend_from_slice(&bytes[..take]);
        self.dropped += bytes.len() - take;
    }

    fn stderr_has(&self, needle: &str) -> bool {
        String::from_utf8_lossy(&self.stderr).contains(needle)
    }

    fn saw_fork_failure(&self) -> bool {
        let err = String::from_utf8_lossy(&self.stderr);
        ["Resource temporarily unavailable", "fork: retry", "can't fork", "Cannot fork"]
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
        assert_eq!((out.as_str(), err.as_str(), truncated, binary), ("hello ", "worl", true, false));
        let mut c = Capture::new(100);
        c.push(false, &[0xff, 0xfe, 0x00, 0x01, 0x02]);
        let (out, _, truncated, binary) = c.finish();
        assert!(binary && !truncated, "{out}");
        assert_eq!(out, "[binary output: 5 bytes, not shown]");
    }
}
