//! `grep`: regex search over workspace files, gitignore-aware, binary files skipped.
//!
//! Files come from [`Workspace::walk`] (ignore rules, no symlinks followed, hidden files and
//! `.git` skipped) and are read with [`Workspace::read_text`], so unsaved editor text is
//! searched and binary, oversized or non-UTF-8 files are skipped.

use std::fmt::Write as _;
use std::sync::Arc;

use cairn_agent::tools::CallContext;
use cairn_workspace::{WalkOptions, Workspace};
use regex::{Regex, RegexBuilder};
use rmcp::model::{CallToolResult, Tool};
use serde::Deserialize;
use serde_json::{Map, Value, json};

use crate::util::{
    MAX_OUTPUT_BYTES, blocking, cut_line, error_result, object_schema, parse_args, text_result,
    tool,
};

const DEFAULT_MAX_RESULTS: usize = 100;
const MAX_MAX_RESULTS: usize = 1000;
const MAX_CONTEXT: usize = 10;
const MAX_LINE_CHARS: usize = 500;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Args {
    pattern: String,
    path: Option<String>,
    glob: Option<String>,
    case_insensitive: Option<bool>,
    context: Option<usize>,
    max_results: Option<usize>,
}

/// Files read per parallel batch: large enough to keep the threads busy, small enough that a
/// search that fills up early stops soon.
const BATCH: usize = 512;

pub(crate) fn definition() -> Tool {
    let schema = object_schema(
        json!({
            "pattern": {
                "type": "string",
                "description": "Regular expression (Rust regex syntax), matched against each line."
            },
            "path": {
                "type": "string",
                "description": "File or directory to search, relative to the workspace root. Default: the root."
            },
            "glob": {
                "type": "string",
                "description": "Only search files matching this glob, in .gitignore syntax relative to `path` (`*.rs` matches at any depth)."
            },
            "case_insensitive": {
                "type": "boolean",
                "description": "Ignore case. Default false."
            },
            "context": {
                "type": "integer", "minimum": 0, "maximum": MAX_CONTEXT,
                "description": "Lines of context to show before and after each match. Default 0."
            },
            "max_results": {
                "type": "integer", "minimum": 1, "maximum": MAX_MAX_RESULTS,
                "description": format!("Stop after this many matching lines. Default {DEFAULT_MAX_RESULTS}.")
            }
        }),
        &["pattern"],
    );
    tool(
        "grep",
        "Search files",
        "Search file contents with a regex, reporting `path:line:text` (files ignored by .gitignore and binary files are skipped); use it to find where something is defined or used.",
        schema,
        true,
    )
}

pub(crate) async fn call(
    ws: Arc<Workspace>,
    arguments: Map<String, Value>,
    ctx: CallContext,
) -> CallToolResult {
    let args: Args = match parse_args("grep", arguments) {
        Ok(args) => args,
        Err(result) => return result,
    };
    let context = args.context.unwrap_or(0);
    if context > MAX_CONTEXT {
        return error_result(format!(
            "invalid argument `context` for grep: at most {MAX_CONTEXT} lines"
        ));
    }
    let max_results = args.max_results.unwrap_or(DEFAULT_MAX_RESULTS);
    if !(1..=MAX_MAX_RESULTS).contains(&max_results) {
        return error_result(format!(
            "invalid argument `max_results` for grep: it must be between 1 and {MAX_MAX_RESULTS}"
        ));
    }
    let regex = match RegexBuilder::new(&args.pattern)
        .case_insensitive(args.case_insensitive.unwrap_or(false))
        .build()
    {
        Ok(regex) => regex,
        Err(e) => return error_result(format!("invalid argument `pattern` for grep: {e}")),
    };
    blocking(ws, move |ws| {
        let requested = args.path.as_deref().unwrap_or(".");
        let options = WalkOptions {
            glob: args.glob.clone(),
            ..WalkOptions::default()
        };
        let walker = match ws.resolve(requested).and_then(|p| ws.walk(&p, &options)) {
            Ok(walker) => walker,
            Err(e) => return error_result(e.to_string()),
        };
        let mut search = Search::new(&regex, context, max_results);
        let mut skipped = 0usize;
        let mut cancelled = false;
        // Files are read and pre-filtered in parallel, a batch at a time, and searched in walk
        // order, so the output is the same as a sequential search and a full result stops the
        // walk early.
        let threads = std::thread::available_parallelism()
            .map_or(2, |n| n.get())
            .clamp(1, 8);
        let mut walker = walker.peekable();
        while walker.peek().is_some() && !search.full() {
            if ctx.cancel.is_cancelled() {
                cancelled = true;
                break;
            }
            let mut batch = Vec::with_capacity(BATCH);
            for file in walker.by_ref().take(BATCH) {
                match file {
                    Ok(f) => batch.push(f),
                    Err(_) => skipped += 1,
                }
            }
            let per_thread = batch.len().div_ceil(threads).max(1);
            let found: Vec<Option<Result<String, ()>>> = std::thread::scope(|scope| {
                let handles: Vec<_> = batch
                    .chunks(per_thread)
                    .map(|part| {
                        let regex = &regex;
                        let cancel = &ctx.cancel;
                        let len = part.len();
                        let handle = scope.spawn(move || {
                            part.iter()
                                .map(|f| {
                                    if cancel.is_cancelled() {
                                        return None;
                                    }
                                    // Unreadable, binary, oversized and non-UTF-8 files are
                                    // skipped; files without a match need no line scan.
                                    match ws.read_text(f) {
                                        Ok((text, _)) if regex.is_match(&text) => Some(Ok(text)),
                                        Ok(_) => None,
                                        Err(_) => Some(Err(())),
                                    }
                                })
                                .collect::<Vec<_>>()
                        });
                        (len, handle)
                    })
                    .collect();
                // A thread that panicked counts its files as skipped, keeping files and
                // outcomes aligned.
                handles
                    .into_iter()
                    .flat_map(|(len, h)| h.join().unwrap_or_else(|_| vec![Some(Err(())); len]))
                    .collect()
            });
            for (file, outcome) in batch.iter().zip(found) {
                match outcome {
                    Some(Ok(text)) => search.file(&file.display_path(), &text),
                    Some(Err(())) => skipped += 1,
                    None => {}
                }
                if search.full() {
                    break;
                }
            }
        }
        text_result(search.finish(&args.pattern, requested, skipped, cancelled))
    })
    .await
}

/// The state of one search: output so far and the caps.
pub(crate) struct Search<'a> {
    regex: &'a Regex,
    context: usize,
    max_results: usize,
    matches: usize,
    files_matched: usize,
    out: String,
    hit_match_cap: bool,
    hit_byte_cap: bool,
}

impl<'a> Search<'a> {
    pub(crate) fn new(regex: &'a Regex, context: usize, max_results: usize) -> Search<'a> {
        Search {
            regex,
            context,
            max_results,
            matches: 0,
            files_matched: 0,
            out: String::new(),
            hit_match_cap: false,
            hit_byte_cap: false,
        }
    }

    pub(crate) fn full(&self) -> bool {
        self.hit_match_cap || self.hit_byte_cap
    }

    /// Matches as `path:line:text`, context lines as `path-line-text`, groups apart by `--`.
    pub(crate) fn file(&mut self, path: &str, text: &str) {
        let lines: Vec<&str> = text.lines().collect();
        let mut last_emitted: Option<usize> = None;
        let mut after_until = 0usize;
        let mut matched_here = false;
        for (i, line) in lines.iter().enumerate() {
            if self.full() {
                return;
            }
            if self.regex.is_match(line) {
                if self.matches == self.max_results {
                    self.hit_match_cap = true;
                    return;
                }
                let from = match last_emitted {
                    Some(last) => i.saturating_sub(self.context).max(last + 1),
                    None => i.saturating_sub(self.context),
                };
                let starts_group = last_emitted.is_none_or(|last| from > last + 1);
                if self.context > 0 && starts_group && !self.out.is_empty() {
                    self.out.push_str("--\n");
                }
                for (j, before) in lines.iter().enumerate().take(i).skip(from) {
                    self.emit(path, j, '-', before);
                }
                self.emit(path, i, ':', line);
                self.matches += 1;
                matched_here = true;
                last_emitted = Some(i);
                after_until = i + self.context + 1;
            } else if i < after_until {
                self.emit(path, i, '-', line);
                last_emitted = Some(i);
            }
        }
        if matched_here {
            self.files_matched += 1;
        }
    }

    fn emit(&mut self, path: &str, index: usize, sep: char, line: &str) {
        let (line, _) = cut_line(line, MAX_LINE_CHARS);
        let entry = format!("{path}{sep}{}{sep}{line}\n", index + 1);
        if self.out.len() + entry.len() > MAX_OUTPUT_BYTES {
            self.hit_byte_cap = true;
            return;
        }
        self.out.push_str(&entry);
    }

    pub(crate) fn finish(
        mut self,
        pattern: &str,
        path: &str,
        skipped: usize,
        cancelled: bool,
    ) -> String {
        if self.matches == 0 {
            self.out = format!("no matches for `{pattern}` in {path}");
        }
        let mut notes = Vec::new();
        if self.hit_match_cap {
            notes.push(format!(
                "stopped at {} matches; narrow the pattern, path or glob, or raise max_results (at most {MAX_MAX_RESULTS})",
                self.max_results
            ));
        }
        if self.hit_byte_cap {
            notes.push(format!(
                "output capped at {MAX_OUTPUT_BYTES} bytes; narrow the pattern, path or glob"
            ));
        }
        if cancelled {
            notes.push("the search was cancelled; results are partial".to_owned());
        }
        if skipped > 0 {
            notes.push(format!(
                "{skipped} files skipped (binary, too large, not UTF-8 or unreadable)"
            ));
        }
        if self.matches > 0 {
            notes.push(format!(
                "{} matching lines in {} files",
                self.matches, self.files_matched
            ));
        }
        for note in notes {
            if !self.out.ends_with('\n') {
                self.out.push('\n');
            }
            let _ = write!(self.out, "[{note}]");
        }
        self.out
    }
}
