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
/// `oversized` records why; the whole lines before it are passed on first, whatever the chunks
/// they arrived in. Memory stays bounded by `max`.
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
            // Whole lines read before a line over the cap are passed on first (a response may
            // be among them), then the read fails.
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
            if this.oversized.load(Ordering::Relaxed) {
                return Poll::Ready(Err(oversized_error(this.max)));
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
                        this.partial = Vec::new();
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

#[cfg(test)]
mod tests {
    //! The MCP frame property: garbage lines never cost a valid response, and never memory.
    #![allow(clippy::unwrap_used)]

    use proptest::prelude::*;
    use rmcp::model::{ClientRequest, JsonRpcMessage, JsonRpcRequest, NumberOrString};
    use rmcp::transport::Transport;
    use tokio::io::AsyncReadExt;

    use super::*;
    use crate::ids::KnownIds;

    const OUR_ID: i64 = 7;
    const RESPONSE: &str = r#"{"jsonrpc":"2.0","id":7,"result":{}}"#;

    /// A line a confused or hostile server may write (without its line end): bytes that are
    /// not UTF-8, text that is not JSON, JSON that is not JSON-RPC, responses to ids never
    /// sent (`"7"` is not `7`), notifications, and lines around and over the cap.
    fn garbage_line(max: usize) -> impl Strategy<Value = Vec<u8>> {
        let fixed = prop::sample::select(vec![
            "",
            "\r",
            "null",
            "[]",
            "{}",
            "{\"a\":1}",
            "\u{feff}{\"jsonrpc\":\"2.0\",\"id\":1000,\"result\":{}}",
            "{\"jsonrpc\":\"2.0\",\"id\":\"7\",\"result\":{}}",
            "{\"jsonrpc\":\"1.0\",\"id\":8,\"result\":{}}",
            "{\"jsonrpc\":\"2.0\",\"id\":9,\"error\":{\"code\":-1,\"message\":\"x\"}}",
            "{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32700,\"message\":\"x\"}}",
            "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{\"level\":\"info\",\"data\":\"x\"}}",
            "{\"jsonrpc\":\"2.0\",\"method\":\"textDocument/didOpen\",\"params\":{}}",
            "{\"jsonrpc\":\"2.0\",\"id\":7",
        ])
        .prop_map(|s| s.as_bytes().to_vec());
        prop_oneof![
            fixed,
            prop::collection::vec(
                any::<u8>().prop_filter("no line end", |b| *b != b'\n'),
                0..64
            ),
            "[ -~]{0,80}".prop_map(String::into_bytes),
            (1000i64..100_000).prop_map(|id| format!(
                r#"{{"jsonrpc":"2.0","id":{id},"result":{{"tools":[]}}}}"#
            )
            .into_bytes()),
            (max - 2..max + 3, prop::sample::select(vec![b'a', 0xff]))
                .prop_map(|(n, b)| vec![b; n]),
            (max + 1..3 * max).prop_map(|n| vec![b'{'; n]),
        ]
    }

    fn lines(max: usize) -> impl Strategy<Value = Vec<(Vec<u8>, bool)>> {
        prop::collection::vec((garbage_line(max), any::<bool>()), 0..8)
    }

    fn join(lines: &[(Vec<u8>, bool)]) -> Vec<u8> {
        let mut out = Vec::new();
        for (line, crlf) in lines {
            out.extend_from_slice(line);
            out.extend_from_slice(if *crlf { b"\r\n" } else { b"\n" });
        }
        out
    }

    /// The reader alone: it passes on exactly the UTF-8 lines before the first line over the
    /// cap, in order, then fails; it never holds more than the cap of an unfinished line.
    #[test]
    fn fuzz_mcp_line_reader_passes_lines_and_bounds_memory() {
        let rt = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        let strategy = (prop::sample::select(vec![64usize, 100, 1000]), 1usize..200)
            .prop_flat_map(|(max, read)| (lines(max), Just(max), Just(read)));
        cairn_test_support::fuzz::check("MCP line reader", strategy, |(lines, max, read)| {
            let input = join(&lines);
            let mut expected = Vec::new();
            let mut over = false;
            for (line, crlf) in &lines {
                let whole = [line.as_slice(), if *crlf { b"\r" } else { b"" }].concat();
                if whole.len() > max {
                    over = true;
                    break;
                }
                if std::str::from_utf8(&whole).is_ok() {
                    expected.extend_from_slice(&whole);
                    expected.push(b'\n');
                }
            }
            let flag = Arc::new(AtomicBool::new(false));
            let mut reader = LineCapReader::new(std::io::Cursor::new(input), max, flag.clone());
            let mut got = Vec::new();
            let mut buf = vec![0u8; read];
            let failed = rt.block_on(async {
                loop {
                    match reader.read(&mut buf).await {
                        Ok(0) => return false,
                        Ok(n) => got.extend_from_slice(&buf[..n]),
                        Err(_) => return true,
                    }
                    assert!(
                        reader.partial.len() <= max,
                        "an unfinished line over the cap"
                    );
                }
            });
            prop_assert!(reader.partial.len() <= max);
            prop_assert_eq!(failed, over);
            prop_assert_eq!(flag.load(Ordering::Relaxed), over);
            prop_assert_eq!(
                String::from_utf8_lossy(&got),
                String::from_utf8_lossy(&expected)
            );
            Ok(())
        });
    }

    /// Through the transport cairn uses (the line cap, rmcp's line transport, the known-ids
    /// filter): with garbage lines before and after it, the response to the request sent is
    /// delivered, unless a line over the cap came first (which ends the connection), and no
    /// response to another id ever is.
    #[test]
    fn fuzz_mcp_a_valid_response_among_garbage_is_delivered() {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let strategy = prop::sample::select(vec![64usize, 100, 1000]).prop_flat_map(|max| {
            (
                lines(max),
                lines(max),
                Just(max),
                prop_oneof![1usize..32, Just(64 * 1024)],
            )
        });
        cairn_test_support::fuzz::check(
            "MCP frames: a valid response among garbage",
            strategy,
            |(before, after, max, pipe)| {
                let over_before = before
                    .iter()
                    .any(|(l, crlf)| l.len() + usize::from(*crlf) > max);
                let input = [
                    join(&before),
                    format!("{RESPONSE}\n").into_bytes(),
                    join(&after),
                ]
                .concat();
                let delivered = rt.block_on(async move {
                    let (mut server, client) = tokio::io::duplex(pipe);
                    let writer = tokio::spawn(async move {
                        use tokio::io::AsyncWriteExt;
                        let _ = server.write_all(&input).await;
                        let _ = server.shutdown().await;
                    });
                    let reader = LineCapReader::new(client, max, Arc::new(AtomicBool::new(false)));
                    let transport =
                        AsyncRwTransport::<RoleClient, _, _>::new(reader, tokio::io::sink())
                            .with_max_line_length(max.saturating_add(1024));
                    let mut known = KnownIds::new(transport);
                    let ping = ClientRequest::PingRequest(Default::default());
                    known
                        .send(JsonRpcMessage::Request(JsonRpcRequest::new(
                            NumberOrString::Number(OUR_ID),
                            ping,
                        )))
                        .await
                        .unwrap();
                    let mut ours = 0;
                    let mut others = Vec::new();
                    while let Some(message) = known.receive().await {
                        match message {
                            JsonRpcMessage::Response(r)
                                if r.id == NumberOrString::Number(OUR_ID) =>
                            {
                                ours += 1
                            }
                            JsonRpcMessage::Response(r) => others.push(format!("{:?}", r.id)),
                            JsonRpcMessage::Error(e) if e.id.is_some() => {
                                others.push(format!("{:?}", e.id))
                            }
                            _ => {}
                        }
                    }
                    writer.abort();
                    (ours, others)
                });
                let (ours, others) = delivered;
                prop_assert!(others.is_empty(), "responses to ids never sent: {others:?}");
                prop_assert_eq!(ours, usize::from(!over_before));
                Ok(())
            },
        );
    }
}
