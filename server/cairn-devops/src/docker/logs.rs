//! `docker_logs`: a container's recent output, bounded in lines, bytes and time.

use std::time::Duration;

use bollard::Docker;
use bollard::container::LogOutput;
use bollard::query_parameters::LogsOptions;
use cairn_toolkit::reply::{error, text};
use cairn_toolkit::{CallContext, Category, Effect, JsonSchema, Paths, Tool};
use futures::StreamExt;
use rmcp::model::CallToolResult;
use serde::Deserialize;

use super::{docker, engine_error, find_container, now_unix, parse_since, short_id};
use crate::DevOps;

/// Lines from the end by default, and the most one call may ask for.
pub(crate) const DEFAULT_TAIL: u32 = 200;
pub(crate) const MAX_TAIL: u32 = 5000;
/// Bytes read from the engine at most; the stream is dropped there, so a huge log never loads.
pub(crate) const MAX_BYTES: usize = 256 * 1024;
/// How long reading the logs may take.
pub(crate) const READ_TIMEOUT: Duration = Duration::from_secs(30);

/// The `docker_logs` tool.
pub struct DockerLogs;

/// Arguments of `docker_logs`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// The container's name or id.
    container: String,
    /// Only lines since this time: RFC 3339 (`2026-01-02T03:04:05Z`), or a duration before now
    /// (`30s`, `10m`, `2h`, `1d`).
    #[serde(default)]
    since: Option<String>,
    /// How many of the last lines (default 200, at most 5000).
    #[serde(default)]
    tail: Option<u32>,
    /// Prefix each line with the engine's timestamp.
    #[serde(default)]
    timestamps: bool,
    /// Which stream: `both` (default), `stdout` or `stderr`.
    #[serde(default)]
    stream: Option<String>,
}

impl Tool for DockerLogs {
    type Host = DevOps;
    type Args = Args;
    const NAME: &'static str = "docker_logs";
    const TITLE: &'static str = "Docker container logs";
    const DESCRIPTION: &'static str = "Show a Docker container's logs: the last `tail` lines (default 200, at most 5000), optionally since a time or a duration like `10m`, stderr lines marked `err|`. Stops at 256 KiB and says so.";
    const CATEGORY: Category = Category::Devops;
    const EFFECT: Effect = Effect::Read;
    const AGENT_ONLY: bool = false;

    fn paths(_: &Args) -> Paths {
        Paths::none()
    }

    async fn call(host: &DevOps, args: Args, cx: CallContext) -> CallToolResult {
        match logs(host, &args, &cx).await {
            Ok(t) => text(t),
            Err(e) => error(e),
        }
    }
}

async fn logs(host: &DevOps, args: &Args, cx: &CallContext) -> Result<String, String> {
    let (stdout, stderr) = match args.stream.as_deref().unwrap_or("both") {
        "both" => (true, true),
        "stdout" => (true, false),
        "stderr" => (false, true),
        other => {
            return Err(format!(
                "unknown stream `{other}`; use both, stdout or stderr"
            ));
        }
    };
    let since = args
        .since
        .as_deref()
        .map(|s| parse_since(s, now_unix()))
        .transpose()?;
    let tail = args.tail.unwrap_or(DEFAULT_TAIL).min(MAX_TAIL);
    let docker = docker(host).await?;
    let c = find_container(&docker, cx, &args.container).await?;
    let id = c.id.clone().unwrap_or_default();
    let name = c
        .name
        .as_deref()
        .unwrap_or_default()
        .trim_start_matches('/')
        .to_owned();
    let options = LogsOptions {
        stdout,
        stderr,
        since: since.map_or(0, |s| i32::try_from(s.max(0)).unwrap_or(i32::MAX)),
        timestamps: args.timestamps,
        tail: tail.to_string(),
        ..Default::default()
    };
    let read = read_logs(&docker, cx, &id, options, "", MAX_BYTES).await?;
    let mut out = format!(
        "logs of {name} ({}), last {tail} lines{}:\n",
        short_id(&id),
        args.since
            .as_deref()
            .map(|s| format!(" since {s}"))
            .unwrap_or_default()
    );
    if read.text.is_empty() {
        out.push_str("(no output)\n");
    }
    out.push_str(&read.text);
    if let Some(why) = read.stopped {
        out.push_str(&format!("\n({why})\n"));
    }
    Ok(out)
}

/// What was read of a log stream.
pub(crate) struct Read {
    pub(crate) text: String,
    /// Why reading stopped early, when it did.
    pub(crate) stopped: Option<String>,
}

/// Reads `id`'s logs as `options` ask, each line prefixed by `prefix` and stderr lines marked
/// `err|`, stopping at `max_bytes`, [`READ_TIMEOUT`] or the run's cancellation.
pub(crate) async fn read_logs(
    docker: &Docker,
    cx: &CallContext,
    id: &str,
    options: LogsOptions,
    prefix: &str,
    max_bytes: usize,
) -> Result<Read, String> {
    let mut stream = docker.logs(id, Some(options));
    let mut text = String::new();
    let mut stopped = None;
    let deadline = tokio::time::Instant::now() + READ_TIMEOUT;
    // Lines can arrive split across frames; a frame ending without a newline continues.
    let mut at_line_start = true;
    loop {
        let next = tokio::select! {
            () = cx.cancel.cancelled() => {
                stopped = Some("cancelled".to_owned());
                break;
            }
            () = tokio::time::sleep_until(deadline) => {
                stopped = Some(format!(
                    "stopped after {} s; what arrived is shown: ask for fewer lines",
                    READ_TIMEOUT.as_secs()
                ));
                break;
            }
            next = stream.next() => next,
        };
        let Some(frame) = next else { break };
        let frame = frame.map_err(|e| format!("reading logs: {}", engine_error(&e)))?;
        let (err, bytes) = match &frame {
            LogOutput::StdErr { message } => (true, message),
            LogOutput::StdOut { message }
            | LogOutput::Console { message }
            | LogOutput::StdIn { message } => (false, message),
        };
        let chunk = String::from_utf8_lossy(bytes);
        for piece in chunk.split_inclusive('\n') {
            if at_line_start {
                text.push_str(prefix);
                text.push_str(if err { "err| " } else { "out| " });
            }
            text.push_str(piece);
            at_line_start = piece.ends_with('\n');
        }
        if text.len() >= max_bytes {
            let mut cut = max_bytes;
            while !text.is_char_boundary(cut) {
                cut -= 1;
            }
            text.truncate(cut);
            stopped = Some(format!(
                "stopped at {} KiB; the rest was not read: ask for fewer lines (`tail`) or a later `since`",
                max_bytes / 1024
            ));
            break;
        }
    }
    if !text.is_empty() && !text.ends_with('\n') {
        text.push('\n');
    }
    Ok(Read { text, stopped })
}
