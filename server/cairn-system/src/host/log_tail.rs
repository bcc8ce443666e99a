//! `log_tail`: the last lines of a log file, read from its end (a 10 GB log costs what its
//! tail costs), optionally following what is appended for a few seconds.

use std::collections::VecDeque;
use std::fs::File;
use std::io::{Seek, SeekFrom};
use std::time::{Duration, Instant};

use cairn_toolkit::reply::{error, text};
use cairn_toolkit::{CallContext, Category, Effect, JsonSchema, Paths, Tool};
use rmcp::model::CallToolResult;
use serde::Deserialize;

use super::blocking;
use super::logs::{self, LogFile, line_text, read_line_capped};
use crate::system::System;

/// The `log_tail` tool.
pub struct LogTail;

/// Arguments of `log_tail`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// The log file: a workspace path, or an absolute path under a directory the user allows
    /// (`system.log_paths`). `.gz` files are decompressed.
    path: String,
    /// Lines to show from the end (default 50).
    #[serde(default)]
    #[schemars(range(min = 1, max = 1000))]
    lines: Option<usize>,
    /// Then wait this many seconds for lines appended to the file, and show them too (not for
    /// `.gz` files).
    #[serde(default)]
    #[schemars(range(min = 0, max = 60))]
    follow_seconds: Option<u64>,
}

/// Bytes of one line kept.
const LINE_CAP: usize = 2000;
/// Bytes read back from the end at most, looking for line ends.
const BACK_CAP: u64 = 8 * 1024 * 1024;
/// Decompressed bytes of a `.gz` read at most (a compression bomb stops here).
const GZ_CAP: u64 = 1024 * 1024 * 1024;
/// Bytes of appended data shown at most while following.
const FOLLOW_CAP: usize = 256 * 1024;

impl Tool for LogTail {
    type Host = System;
    type Args = Args;
    const NAME: &'static str = "log_tail";
    const TITLE: &'static str = "Tail a log";
    const DESCRIPTION: &'static str = "Show the last lines of a log file (in the workspace, or under a directory the user allows in `system.log_paths`), read from its end so huge logs are cheap; `.gz` rotated logs are decompressed; `follow_seconds` (up to 60) then waits for appended lines. Lines are redacted.";
    const CATEGORY: Category = Category::System;
    const EFFECT: Effect = Effect::Read;
    const AGENT_ONLY: bool = false;

    fn paths(args: &Args) -> Paths {
        Paths::read(&args.path)
    }

    async fn call(system: &System, args: Args, cx: CallContext) -> CallToolResult {
        let count = args.lines.unwrap_or(50).clamp(1, 1000);
        let follow = args.follow_seconds.unwrap_or(0).min(60);
        let log = match logs::open(system, &args.path) {
            Ok(l) => l,
            Err(e) => return error(e),
        };
        let shown = log.shown.clone();
        if log.gz && follow > 0 {
            return error(format!(
                "{shown} is compressed (a rotated log) and is not written to any more; follow the live log instead, or drop `follow_seconds`"
            ));
        }
        let cancel = cx.cancel.clone();
        let tail = blocking(move || -> Result<Tail, String> {
            if log.gz {
                let (lines, note) = tail_gz(log, count, &cancel);
                return Ok((lines, note, None));
            }
            let LogFile { mut file, .. } = log;
            let (lines, note, end) = tail_plain(&mut file, count).map_err(|e| e.to_string())?;
            Ok((lines, note, Some((file, end))))
        })
        .await;
        let (lines, note, live) = match tail {
            Ok(Ok(t)) => t,
            Ok(Err(e)) | Err(e) => return error(format!("{shown}: {e}")),
        };
        let mut out = format!("last {} lines of {shown}{note}:\n", lines.len());
        out.push_str(&lines.join("\n"));
        if follow > 0
            && let Some((file, end)) = live
        {
            out.push_str(&format!("\n--- following for {follow} s ---\n"));
            out.push_str(&follow_file(file, end, Duration::from_secs(follow), &cx).await);
        }
        text(system.shown(&out))
    }
}

/// The lines of a tail, a note on what was left out, and the live file with the offset the
/// tail ended at (none for a `.gz`).
type Tail = (Vec<String>, String, Option<(File, u64)>);

/// The last `count` lines of a plain file, read backwards from its end, a note on what was
/// left out, and the offset the tail ends at.
fn tail_plain(file: &mut File, count: usize) -> std::io::Result<(Vec<String>, String, u64)> {
    let len = file.metadata()?.len();
    let mut start = len;
    let mut buf: Vec<u8> = Vec::new();
    let chunk = 64 * 1024u64;
    // Read back until there are `count` complete lines (count + 1 line ends, or the start).
    loop {
        let ends = buf.iter().filter(|b| **b == b'\n').count();
        // A final line end closes the last line rather than starting one.
        let needed = count + usize::from(buf.last() == Some(&b'\n')) + 1;
        if start == 0 || ends >= needed || len - start >= BACK_CAP {
            break;
        }
        let step = chunk.min(start);
        start -= step;
        file.seek(SeekFrom::Start(start))?;
        let mut piece = logs::read_at_most(&mut *file, step)?;
        piece.extend_from_slice(&buf);
        buf = piece;
    }
    let mut text_lines: Vec<&[u8]> = buf.split(|b| *b == b'\n').collect();
    if buf.last() == Some(&b'\n') {
        text_lines.pop();
    }
    // The first piece is partial unless the read reached the file's start.
    let mut note = String::new();
    if start > 0 && text_lines.len() > count {
        text_lines.remove(0);
    } else if start > 0 && !text_lines.is_empty() {
        note = format!(
            " (no earlier line end in the last {} MiB; the first line shown is its end)",
            BACK_CAP / (1024 * 1024)
        );
    }
    let skip = text_lines.len().saturating_sub(count);
    let lines = text_lines[skip..]
        .iter()
        .map(|l| {
            let l = l.strip_suffix(b"\r").unwrap_or(l);
            let cut = l.len() > LINE_CAP;
            // Keep the line's end: the newest data is what a tail is for.
            let kept = if cut { &l[l.len() - LINE_CAP..] } else { l };
            if cut {
                format!(
                    "(line cut, {} bytes) …{}",
                    l.len(),
                    String::from_utf8_lossy(kept)
                )
            } else {
                String::from_utf8_lossy(kept).into_owned()
            }
        })
        .collect();
    Ok((lines, note, len))
}

/// The last `count` lines of a `.gz`, streamed through (the lines before are dropped as it
/// goes), stopping at [`GZ_CAP`] decompressed bytes.
fn tail_gz(
    log: LogFile,
    count: usize,
    cancel: &tokio_util::sync::CancellationToken,
) -> (Vec<String>, String) {
    let mut reader = log.reader();
    let mut ring: VecDeque<String> = VecDeque::with_capacity(count + 1);
    let mut line = Vec::new();
    let mut total = 0u64;
    let mut note = String::new();
    loop {
        match read_line_capped(&mut *reader, &mut line, LINE_CAP) {
            Ok((0, _)) => break,
            Ok((n, cut)) => {
                total += n as u64;
                if ring.len() == count {
                    ring.pop_front();
                }
                ring.push_back(line_text(&line, cut));
            }
            Err(e) => {
                note = format!(" (the compressed data is damaged after {total} bytes: {e})");
                break;
            }
        }
        if total >= GZ_CAP {
            note = format!(
                " (stopped after {} GiB decompressed: these are the last lines read, not the file's end)",
                GZ_CAP >> 30
            );
            break;
        }
        if cancel.is_cancelled() {
            note = " (cancelled before the end)".to_owned();
            break;
        }
    }
    (ring.into_iter().collect(), note)
}

/// What is appended to `file` after offset `pos` during `wait`, in whole lines.
async fn follow_file(file: File, mut pos: u64, wait: Duration, cx: &CallContext) -> String {
    let began = Instant::now();
    let mut out = String::new();
    let mut pending: Vec<u8> = Vec::new();
    let mut shown = 0usize;
    let file = std::sync::Arc::new(std::sync::Mutex::new(file));
    while began.elapsed() < wait {
        tokio::select! {
            () = cx.cancel.cancelled() => {
                out.push_str("(cancelled)\n");
                break;
            }
            () = tokio::time::sleep(Duration::from_millis(200)) => {}
        }
        let f = file.clone();
        let room = FOLLOW_CAP.saturating_sub(shown) as u64;
        let read = blocking(move || -> std::io::Result<(u64, Vec<u8>, bool)> {
            let mut f = f.lock().map_err(|_| std::io::Error::other("poisoned"))?;
            let len = f.metadata()?.len();
            let truncated = len < pos;
            let from = if truncated { 0 } else { pos };
            f.seek(SeekFrom::Start(from))?;
            let data = logs::read_at_most(&mut *f, (len - from).min(room))?;
            Ok((from + data.len() as u64, data, truncated))
        })
        .await;
        match read {
            Ok(Ok((next, data, truncated))) => {
                if truncated {
                    out.push_str(
                        "(the file was truncated or replaced; reading it from its start)\n",
                    );
                    pending.clear();
                }
                pos = next;
                shown += data.len();
                pending.extend_from_slice(&data);
                while let Some(i) = pending.iter().position(|b| *b == b'\n') {
                    let line: Vec<u8> = pending.drain(..=i).collect();
                    let line = line.strip_suffix(b"\n").unwrap_or(&line);
                    let cut = line.len() > LINE_CAP;
                    out.push_str(&line_text(&line[..line.len().min(LINE_CAP)], cut));
                    out.push('\n');
                }
                if shown >= FOLLOW_CAP {
                    out.push_str(&format!(
                        "(stopped following: {} KiB appended, the cap)\n",
                        FOLLOW_CAP / 1024
                    ));
                    break;
                }
            }
            Ok(Err(e)) => {
                out.push_str(&format!("(stopped following: {e})\n"));
                break;
            }
            Err(e) => {
                out.push_str(&format!("(stopped following: {e})\n"));
                break;
            }
        }
    }
    if !pending.is_empty() {
        out.push_str(&line_text(
            &pending[..pending.len().min(LINE_CAP)],
            pending.len() > LINE_CAP,
        ));
        out.push_str(" (no line end yet)\n");
    }
    if out.is_empty() {
        out.push_str("(nothing was appended)\n");
    }
    out
}
