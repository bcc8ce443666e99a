//! `log_search`: lines of a log file (or of a directory's logs) matching a regex or a literal,
//! with context and an optional time range, streamed with caps on matches, bytes and time.

use std::collections::VecDeque;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use cairn_toolkit::reply::{error, text};
use cairn_toolkit::table::cut;
use cairn_toolkit::{CallContext, Category, Effect, JsonSchema, Paths, Tool};
use regex::{Regex, RegexBuilder};
use rmcp::model::CallToolResult;
use serde::Deserialize;
use tokio_util::sync::CancellationToken;

use super::blocking;
use super::logs::{self, line_text, read_line_capped};
use crate::system::System;

/// The `log_search` tool.
pub struct LogSearch;

/// Arguments of `log_search`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// A log file, or a directory whose `*.log` files (and rotated `*.log.N`, `.gz`) are
    /// searched: a workspace path, or an absolute path under `system.log_paths`.
    path: String,
    /// What to look for: a regular expression (Rust syntax), or plain text with `literal`.
    pattern: String,
    /// Take `pattern` as plain text.
    #[serde(default)]
    literal: bool,
    /// Match regardless of case.
    #[serde(default)]
    ignore_case: bool,
    /// Lines of context before and after each match (default 0).
    #[serde(default)]
    #[schemars(range(min = 0, max = 10))]
    context: Option<usize>,
    /// Only lines at or after this time (`2024-05-01`, `2024-05-01 13:00`, `2024-05-01T13:00:05`),
    /// judged by the ISO timestamp lines start with; lines without one belong to the line
    /// above.
    #[serde(default)]
    since: Option<String>,
    /// Only lines at or before this time (same forms as `since`; a date alone means its end).
    #[serde(default)]
    until: Option<String>,
    /// Matches to show at most (default 50).
    #[serde(default)]
    #[schemars(range(min = 1, max = 500))]
    max_matches: Option<usize>,
}

/// Bytes of one line kept (a longer one is matched on its start).
const LINE_CAP: usize = 64 * 1024;
/// Characters of a line shown.
const SHOWN_CHARS: usize = 400;
/// Bytes read in one call at most, over all files.
const SCAN_CAP: u64 = 1024 * 1024 * 1024;
/// Time spent at most.
const TIME_LIMIT: Duration = Duration::from_secs(30);
/// Bytes of the result at most.
const OUTPUT_CAP: usize = 64 * 1024;

impl Tool for LogSearch {
    type Host = System;
    type Args = Args;
    const NAME: &'static str = "log_search";
    const TITLE: &'static str = "Search logs";
    const DESCRIPTION: &'static str = "Search a log file, or a directory's *.log files (rotated and .gz too), for a regex or literal text, with context lines and an optional time range (lines starting with an ISO timestamp); in the workspace or under `system.log_paths`. Capped matches, streamed; lines are redacted.";
    const CATEGORY: Category = Category::System;
    const EFFECT: Effect = Effect::Read;
    const AGENT_ONLY: bool = false;

    fn paths(args: &Args) -> Paths {
        Paths::read(&args.path)
    }

    async fn call(system: &System, args: Args, cx: CallContext) -> CallToolResult {
        let source = if args.literal {
            regex::escape(&args.pattern)
        } else {
            args.pattern.clone()
        };
        let regex = match RegexBuilder::new(&source)
            .case_insensitive(args.ignore_case)
            .size_limit(1 << 22)
            .build()
        {
            Ok(r) => r,
            Err(e) => {
                return error(format!(
                    "the pattern is not a valid regular expression: {e}\nfix it, or pass `literal: true` to search for the text as written"
                ));
            }
        };
        let since = match args.since.as_deref().map(|s| bound(s, false)).transpose() {
            Ok(b) => b,
            Err(e) => return error(e),
        };
        let until = match args.until.as_deref().map(|s| bound(s, true)).transpose() {
            Ok(b) => b,
            Err(e) => return error(e),
        };
        let files = match logs::list_dir(system, &args.path) {
            Some(Ok(files)) if files.is_empty() => {
                return error(format!(
                    "{} has no log files (*.log, *.log.N, *.gz); name a file instead",
                    args.path
                ));
            }
            Some(Ok(files)) => files,
            Some(Err(e)) => return error(e),
            None => vec![args.path.clone()],
        };
        let mut opened = Vec::new();
        let mut problems = Vec::new();
        for f in &files {
            match logs::open(system, f) {
                Ok(l) => opened.push(l),
                // One file of a directory that cannot be read does not stop the others.
                Err(e) if files.len() > 1 => problems.push(e),
                Err(e) => return error(e),
            }
        }
        let search = Search {
            regex,
            context: args.context.unwrap_or(0).min(10),
            since,
            until,
            max_matches: args.max_matches.unwrap_or(50).clamp(1, 500),
        };
        let cancel = cx.cancel.clone();
        let found = match blocking(move || search.run(opened, &cancel)).await {
            Ok(f) => f,
            Err(e) => return error(e),
        };
        let mut out = found;
        for p in problems {
            out.push_str(&format!("\n(skipped: {p})"));
        }
        text(system.shown(&out))
    }
}

/// A time bound in the form lines carry, `YYYY-MM-DDTHH:MM:SS`; a date alone is its start, or
/// its end for `until`.
fn bound(text: &str, end: bool) -> Result<String, String> {
    let t = text.trim();
    if let Some(stamp) = stamp(t) {
        return Ok(stamp);
    }
    let date_only = t.len() == 10
        && t.as_bytes().get(4) == Some(&b'-')
        && t.as_bytes().get(7) == Some(&b'-')
        && t.bytes().filter(u8::is_ascii_digit).count() == 8;
    if date_only {
        return Ok(format!("{t}T{}", if end { "23:59:59" } else { "00:00:00" }));
    }
    Err(format!(
        "{text:?} is not a time this tool reads; use `2024-05-01`, `2024-05-01 13:00` or `2024-05-01T13:00:05`"
    ))
}

/// The timestamp a line starts with (optionally in `[`), normalised.
fn stamp(line: &str) -> Option<String> {
    static RE: OnceLock<Option<Regex>> = OnceLock::new();
    let re = RE
        .get_or_init(|| Regex::new(r"^\[?(\d{4}-\d{2}-\d{2})[T ](\d{2}:\d{2})(:\d{2})?").ok())
        .as_ref()?;
    let c = re.captures(line.get(..line.len().min(40))?)?;
    Some(format!(
        "{}T{}{}",
        c.get(1)?.as_str(),
        c.get(2)?.as_str(),
        c.get(3).map_or(":00", |s| s.as_str())
    ))
}

struct Search {
    regex: Regex,
    context: usize,
    since: Option<String>,
    until: Option<String>,
    max_matches: usize,
}

impl Search {
    fn in_range(&self, at: Option<&String>) -> bool {
        if self.since.is_none() && self.until.is_none() {
            return true;
        }
        let Some(at) = at else { return false };
        self.since.as_ref().is_none_or(|s| at >= s) && self.until.as_ref().is_none_or(|u| at <= u)
    }

    fn run(&self, files: Vec<logs::LogFile>, cancel: &CancellationToken) -> String {
        let began = Instant::now();
        let mut out = String::new();
        let mut matches = 0usize;
        let mut scanned = 0u64;
        let mut stopped: Option<String> = None;
        let mut stamped_any = false;
        let count = files.len();
        'files: for log in files {
            let shown = log.shown.clone();
            let mut reader = log.reader();
            let mut line = Vec::new();
            let mut before: VecDeque<(u64, String)> = VecDeque::new();
            let mut after = 0usize;
            let mut last_printed = 0u64;
            let mut at: Option<String> = None;
            let mut number = 0u64;
            loop {
                let (n, was_cut) = match read_line_capped(&mut *reader, &mut line, LINE_CAP) {
                    Ok((0, _)) => break,
                    Ok(r) => r,
                    Err(e) => {
                        out.push_str(&format!("({shown}: read stopped at line {number}: {e})\n"));
                        break;
                    }
                };
                number += 1;
                scanned += n as u64;
                let text = line_text(&line, false);
                if let Some(s) = stamp(&text) {
                    stamped_any = true;
                    at = Some(s);
                }
                let hit = self.in_range(at.as_ref()) && self.regex.is_match(&text);
                let shown_line = |t: &str| {
                    let mut s = cut(t, SHOWN_CHARS);
                    if was_cut {
                        s.push_str(" … (line cut)");
                    }
                    s
                };
                if hit {
                    if matches == self.max_matches {
                        stopped = Some(format!(
                            "stopped at {} matches; narrow the pattern or the time range",
                            self.max_matches
                        ));
                        break 'files;
                    }
                    matches += 1;
                    let first = before.front().map_or(number, |(n, _)| *n);
                    if last_printed > 0 && first > last_printed + 1 {
                        out.push_str("--\n");
                    }
                    for (n, t) in before.drain(..) {
                        out.push_str(&format!("{shown}-{n}- {t}\n"));
                    }
                    out.push_str(&format!("{shown}:{number}: {}\n", shown_line(&text)));
                    last_printed = number;
                    after = self.context;
                } else if after > 0 {
                    after -= 1;
                    out.push_str(&format!("{shown}-{number}- {}\n", shown_line(&text)));
                    last_printed = number;
                } else if self.context > 0 {
                    if before.len() == self.context {
                        before.pop_front();
                    }
                    before.push_back((number, shown_line(&text)));
                }
                if out.len() >= OUTPUT_CAP {
                    stopped = Some(format!("stopped at {} KiB of output", OUTPUT_CAP / 1024));
                    break 'files;
                }
                if scanned >= SCAN_CAP {
                    stopped = Some(format!(
                        "stopped after reading {} GiB (at {shown} line {number}); search a smaller file or use a time range",
                        SCAN_CAP >> 30
                    ));
                    break 'files;
                }
                if number.is_multiple_of(4096) {
                    if cancel.is_cancelled() {
                        stopped = Some("cancelled".to_owned());
                        break 'files;
                    }
                    if began.elapsed() >= TIME_LIMIT {
                        stopped = Some(format!(
                            "stopped after {} s (at {shown} line {number})",
                            TIME_LIMIT.as_secs()
                        ));
                        break 'files;
                    }
                }
            }
        }
        let mut head = format!(
            "{matches} match{} in {count} file{}",
            if matches == 1 { "" } else { "es" },
            if count == 1 { "" } else { "s" }
        );
        if let Some(s) = stopped {
            head.push_str(&format!(" ({s})"));
        }
        if (self.since.is_some() || self.until.is_some()) && !stamped_any {
            head.push_str(
                " (no line started with an ISO timestamp, so the time range matched nothing)",
            );
        }
        format!("{head}\n{out}")
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn timestamps_and_bounds_normalise_to_one_form() {
        assert_eq!(
            stamp("2024-05-01T13:00:05Z INFO x").unwrap(),
            "2024-05-01T13:00:05"
        );
        assert_eq!(
            stamp("[2024-05-01 13:00] x").unwrap(),
            "2024-05-01T13:00:00"
        );
        assert_eq!(stamp("INFO 2024-05-01"), None);
        assert_eq!(bound("2024-05-01", true).unwrap(), "2024-05-01T23:59:59");
        assert_eq!(bound("2024-05-01", false).unwrap(), "2024-05-01T00:00:00");
        assert!(
            bound("yesterday", false)
                .unwrap_err()
                .contains("not a time")
        );
    }
}
