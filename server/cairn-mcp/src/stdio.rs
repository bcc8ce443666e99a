//! The stdio transport: a child process speaking JSON-RPC lines.
//!
//! rmcp's `TokioChildProcess` inherits stderr (our stdout is the LSP channel, and stderr is the
//! user's terminal or log) and keeps cairn's whole environment, so the child is built here:
//! the environment is cleared and gets only the entry's `env` plus `PATH` and `HOME` (never
//! `OPENAI_API_KEY` and friends), stderr is piped to `tracing` line by line, the child leads its
//! own process group so a kill also ends its helpers, and stdout goes through [`LineCapReader`]
//! so a line without an end cannot grow without bound.

use std::pin::Pin;
use std::process::Stdio;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;

use cairn_config::McpServerConfig;
use process_wrap::tokio::{ChildWrapper, CommandWrap, KillOnDrop, ProcessGroup};
use rmcp::RoleClient;
use rmcp::transport::async_rw::AsyncRwTransport;
use tokio::io::{AsyncBufReadExt, AsyncRead, BufReader, ReadBuf};
use tokio::process::{ChildStderr, ChildStdin, ChildStdout};
use tokio::task::JoinHandle;

use crate::error::McpError;

/// Longest stderr line kept for the log and for failure reasons; the rest is cut.
const MAX_STDERR_LINE: usize = 2048;

/// The transport over a child's pipes.
pub(crate) type StdioTransport =
    AsyncRwTransport<RoleClient, LineCapReader<ChildStdout>, ChildStdin>;

/// A started child and what the supervisor needs to watch it.
pub(crate) struct StdioChild {
    pub(crate) child: Box<dyn ChildWrapper>,
    pub(crate) stderr: StderrTail,
    /// Set when stdout sent a line over the cap, so the end of the connection can say why.
    pub(crate) oversized: Arc<AtomicBool>,
}

/// The last line a child wrote to stderr, and the task that reads it.
pub(crate) struct StderrTail {
    last: Arc<Mutex<Option<String>>>,
    task: Option<JoinHandle<()>>,
}

impl StderrTail {
    /// The last non-empty stderr line, after giving the reader a moment to drain what the child
    /// wrote just before it exited (the exit is often seen before the last line is read).
    pub(crate) async fn last_line(&mut self) -> Option<String> {
        if let Some(task) = self.task.as_mut() {
            let _ = tokio::time::timeout(Duration::from_millis(300), task).await;
            self.task = None;
        }
        self.last.lock().ok().and_then(|l| l.clone())
    }
}

impl Drop for StderrTail {
    fn drop(&mut self) {
        if let Some(task) = self.task.take() {
            task.abort();
        }
    }
}

impl StdioChild {
    /// Kills the child's whole process group and waits for it, at most `limit`.
    pub(crate) async fn kill(&mut self, limit: Duration) {
        let _ = tokio::time::timeout(limit, async {
            if let Err(e) = Box::into_pin(self.child.kill()).await {
                tracing::debug!("killing MCP child: {e}");
            }
        })
        .await;
    }
}

/// Starts `cfg.command` for server `name`.
#[allow(clippy::disallowed_methods)] // the one place MCP children are started
pub(crate) fn spawn(
    name: &str,
    cfg: &McpServerConfig,
    max_line_bytes: usize,
) -> Result<(StdioTransport, StdioChild), McpError> {
    let command = cfg
        .command
        .as_deref()
        .ok_or_else(|| McpError::Config("a stdio server needs `command`".to_owned()))?;
    let mut cmd = tokio::process::Command::new(command);
    cmd.args(&cfg.args)
        .env_clear()
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    for key in ["PATH", "HOME"] {
        if let Some(value) = std::env::var_os(key) {
            cmd.env(key, value);
        }
    }
    cmd.envs(&cfg.env);
    if let Some(cwd) = &cfg.cwd {
        cmd.current_dir(cwd);
    }
    let mut wrap = CommandWrap::from(cmd);
    wrap.wrap(ProcessGroup::leader()).wrap(KillOnDrop);
    let spawn_err = |source| McpError::Spawn {
        command: command.to_owned(),
        source,
    };
    let mut child = wrap.spawn().map_err(spawn_err)?;
    let inner = child.inner_mut();
    let (Some(stdin), Some(stdout)) = (inner.stdin().take(), inner.stdout().take()) else {
        return Err(spawn_err(std::io::Error::other(
            "the child's pipes are missing",
        )));
    };
    let stderr = inner.stderr().take();
    let oversized = Arc::new(AtomicBool::new(false));
    let reader = LineCapReader::new(stdout, max_line_bytes, oversized.clone());
    // rmcp's own cap would drop the line and keep reading; ours ends the connection first, so
    // its cap sits just above ours as a second guard.
    let transport = AsyncRwTransport::new(reader, stdin)
        .with_max_line_length(max_line_bytes.saturating_add(1024));
    let stderr = forward_stderr(name, stderr);
    Ok((
        transport,
        StdioChild {
            child,
            stderr,
            oversized,
        },
    ))
}

/// Forwards the child's stderr to the log, one line at a time, and keeps the last line.
fn forward_stderr(name: &str, stderr: Option<ChildStderr>) -> StderrTail {
    let last = Arc::new(Mutex::new(None));
    let Some(stderr) = stderr else {
        return StderrTail { last, task: None };
    };
    let server = name.to_owned();
    let keep = last.clone();
    let task = tokio::spawn(async move {
        let mut reader = BufReader::new(stderr);
        let mut buf = Vec::new();
        loop {
            buf.clear();
            // Read at most a bounded amount per line: a child writing an endless stderr line
            // must not grow our memory either.
            match read_bounded_line(&mut reader, &mut buf, MAX_STDERR_LINE).await {
                Ok(0) => break,
                Ok(_) => {
                    let line = String::from_utf8_lossy(&buf);
                    let line = line.trim_end();
                    if line.is_empty() {
                        continue;
                    }
                    tracing::info!(target: "cairn_mcp::stderr", server = %server, "{line}");
                    if let Ok(mut slot) = keep.lock() {
                        *slot = Some(line.to_owned());
                    }
                }
                Err(e) => {
                    tracing::debug!(server = %server, "reading stderr: {e}");
                    break;
                }
            }
        }
    });
    StderrTail {
        last,
        task: Some(task),
    }
}

/// Reads up to a newline, keeping at most `max` bytes of it and discarding the rest.
async fn read_bounded_line<R: AsyncBufReadExt + Unpin>(
    reader: &mut R,
    buf: &mut Vec<u8>,
    max: usize,
) -> std::io::Result<usize> {
    let mut total = 0;
    loop {
        let chunk = reader.fill_buf().await?;
        if chunk.is_empty() {
            return Ok(total);
        }
        let (used, done) = match chunk.iter().position(|b| *b == b'\n') {
            Some(i) => (i + 1, true),
            None => (chunk.len(), false),
        };
        let room = max.saturating_sub(buf.len());
        buf.extend_from_slice(&chunk[..used.min(room)]);
        reader.consume(used);
        total += used;
        if done {
            return Ok(total);
        }
    }
}

/// Passes a server's stdout on line by line. A line that is not UTF-8 is dropped (and logged)
/// instead of ending rmcp's read loop; lines that are not JSON-RPC rmcp skips itself. A line
/// that grows past `max` bytes without a newline fails the read, which ends the connection, and
/// `oversized` records why. Memory stays bounded by `max`.
pub(crate) struct LineCapReader<R> {
    inner: R,
    max: usize,
    /// The line being read.
    partial: Vec<u8>,
    /// Whole lines ready for rmcp, and how much of them it has taken.
    ready: Vec<u8>,
    taken: usize,
    eof: bool,
    oversized: Arc<AtomicBool>,
}

impl<R> LineCapReader<R> {
    pub(crate) fn new(inner: R, max: usize, oversized: Arc<AtomicBool>) -> Self {
        Self {
            inner,
            max,
            partial: Vec::new(),
            ready: Vec::new(),
            taken: 0,
            eof: false,
            oversized,
        }
    }

    /// Moves whole lines of `bytes` to `ready`; false when a line is over the cap.
    fn take_bytes(&mut self, bytes: &[u8]) -> bool {
        for &b in bytes {
            if b == b'\n' {
                if std::str::from_utf8(&self.partial).is_ok() {
                    self.ready.extend_from_slice(&self.partial);
                    self.ready.push(b'\n');
                } else {
                    tracing::warn!(
                        bytes = self.partial.len(),
                        "dropped a line from an MCP server that is not UTF-8"
                    );
                }
                self.partial.clear();
            } else {
                if self.partial.len() >= self.max {
                    return false;
                }
                self.partial.push(b);
            }
        }
        true
    }
}

impl<R: AsyncRead + Unpin> AsyncRead for LineCapReader<R> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let this = &mut *self;
        loop {
            if this.oversized.load(Ordering::Relaxed) {
                return Poll::Ready(Err(oversized_error(this.max)));
            }
            if this.taken < this.ready.len() {
                let n = buf.remaining().min(this.ready.len() - this.taken);
                buf.put_slice(&this.ready[this.taken..this.taken + n]);
                this.taken += n;
                if this.taken == this.ready.len() {
                    this.ready.clear();
                    this.taken = 0;
                }
                return Poll::Ready(Ok(()));
            }
            if this.eof {
                return Poll::Ready(Ok(()));
            }
            let mut chunk = [0u8; 16 * 1024];
            let mut read = ReadBuf::new(&mut chunk);
            match Pin::new(&mut this.inner).poll_read(cx, &mut read) {
                Poll::Ready(Ok(())) => {
                    let filled = read.filled();
                    if filled.is_empty() {
                        this.eof = true;
                        continue;
                    }
                    if !this.take_bytes(filled) {
                        this.oversized.store(true, Ordering::Relaxed);
                        return Poll::Ready(Err(oversized_error(this.max)));
                    }
                }
                Poll::Ready(Err(e)) => return Poll::Ready(Err(e)),
                Poll::Pending => return Poll::Pending,
            }
        }
    }
}

fn oversized_error(max: usize) -> std::io::Error {
    std::io::Error::new(
        std::io::ErrorKind::InvalidData,
        format!("the server sent a line longer than {max} bytes"),
    )
}
