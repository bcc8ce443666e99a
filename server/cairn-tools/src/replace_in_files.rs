//! `replace_in_files`: a regex or literal replacement across the files a glob selects.
//!
//! `preview` (the default) only shows the changes as diffs; nothing is written. With
//! `preview: false` every changed file is written (through the editor when open there) and
//! reported in `_meta["cairn/edits"]`. Files come from [`Workspace::walk`] (ignore-aware, no
//! symlinks) and are read with [`Workspace::read_text`]; binary or oversized files are skipped.
//!
//! [`Workspace::walk`]: cairn_workspace::Workspace::walk
//! [`Workspace::read_text`]: cairn_workspace::Workspace::read_text

use std::fmt::Write as _;

use cairn_toolkit::reply::{error, text, with_edits};
use cairn_toolkit::{CallContext, Category, Effect, JsonSchema, Paths, Tool};
use cairn_workspace::{Operation, WalkOptions, WorkspacePath};
use regex::RegexBuilder;
use rmcp::model::CallToolResult;
use serde::Deserialize;

use crate::Files;
use crate::util::{MAX_OUTPUT_BYTES, off_thread, plural, report, write_whole};

/// Files changed at most in one call.
const MAX_FILES: usize = 200;

/// The `replace_in_files` tool.
pub struct ReplaceInFiles;

/// Arguments of `replace_in_files`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// Text to find: literal unless `regex` is true.
    pattern: String,
    /// Replacement; with `regex`, `$1` / `${name}` insert groups.
    replacement: String,
    /// Files to change, in .gitignore syntax relative to `path` (`*.rs` at any depth, `src/*.rs` anchored).
    glob: String,
    /// Directory to search, relative to the workspace root. Default: the root.
    path: Option<String>,
    /// Treat pattern as a regular expression (Rust syntax). Default false.
    regex: Option<bool>,
    /// Ignore case. Default false.
    case_insensitive: Option<bool>,
    /// Only show the changes, as diffs, without writing. Default true; set false to write.
    preview: Option<bool>,
}

impl Tool for ReplaceInFiles {
    type Host = Files;
    type Args = Args;
    const NAME: &'static str = "replace_in_files";
    const TITLE: &'static str = "Replace in files";
    const DESCRIPTION: &'static str = "Replace a literal or regex across all files a glob selects; by default it only previews the diffs, call again with preview false to write them. Use it for renames across a project.";
    const CATEGORY: Category = Category::File;
    const EFFECT: Effect = Effect::Write;
    const AGENT_ONLY: bool = true;

    /// The walk skips files the user may not write (or that are protected), and counts them.
    fn paths(_: &Args) -> Paths {
        Paths::walks()
    }

    async fn call(files: &Files, args: Args, _: CallContext) -> CallToolResult {
        let ws = files.workspace();
        let is_regex = args.regex.unwrap_or(false);
        let source = if is_regex {
            args.pattern.clone()
        } else {
            regex::escape(&args.pattern)
        };
        let regex = match RegexBuilder::new(&source)
            .case_insensitive(args.case_insensitive.unwrap_or(false))
            .build()
        {
            Ok(regex) => regex,
            Err(e) => {
                return error(format!(
                    "invalid argument `pattern` for replace_in_files: {e}"
                ));
            }
        };
        if args.pattern.is_empty() {
            return error("invalid argument `pattern` for replace_in_files: it is empty");
        }
        let preview = args.preview.unwrap_or(true);
        let glob = args.glob.clone();
        let requested = args.path.clone().unwrap_or_else(|| ".".to_owned());
        let replacement = args.replacement.clone();
        let planned = off_thread(&ws, move |ws| {
            let options = WalkOptions { glob: Some(glob), ..WalkOptions::default() };
            let walk = ws.resolve(&requested).and_then(|p| ws.walk(&p, &options)).map_err(|e| e.to_string())?;
            let mut planned = Vec::new();
            let mut skipped = 0usize;
            for file in walk.flatten() {
                // Files the user may not write (or that are protected) are left alone, and counted.
                if ws.check(&file, Operation::Write).is_err() {
                    skipped += 1;
                    continue;
                }
                let Ok((old, version)) = ws.read_text(&file) else { continue };
                let count = regex.find_iter(&old).count();
                if count == 0 {
                    continue;
                }
                let new = if is_regex {
                    regex.replace_all(&old, replacement.as_str()).into_owned()
                } else {
                    regex.replace_all(&old, regex::NoExpand(&replacement)).into_owned()
                };
                if new != old {
                    planned.push(Planned { path: file, old, version, new, count });
                }
                if planned.len() > MAX_FILES {
                    return Err(format!(
                        "more than {MAX_FILES} files would change; narrow the glob or the path. Nothing was written."
                    ));
                }
            }
            Ok((planned, skipped))
        })
        .await;
        let (planned, skipped) = match planned {
            Ok(Ok(p)) => p,
            Ok(Err(e)) | Err(e) => return error(e),
        };
        let skipped_note = if skipped == 0 {
            String::new()
        } else {
            format!(
                "\n{} skipped: protected, or not writable under your policy",
                plural(skipped, "file")
            )
        };
        if planned.is_empty() {
            return text(format!(
                "`{}` was not found in files matching `{}`; nothing to change{skipped_note}",
                args.pattern, args.glob
            ));
        }
        let total: usize = planned.iter().map(|p| p.count).sum();
        let head = format!(
            "{} in {}",
            plural(total, "replacement"),
            plural(planned.len(), "file")
        );
        if preview {
            let mut out = format!("preview, nothing written: {head}\n");
            for p in &planned {
                let shown = p.path.display_path();
                let diff = crate::diff::unified(&p.old, &p.new, &shown, &shown, 1);
                if out.len() + diff.len() > MAX_OUTPUT_BYTES {
                    let _ = writeln!(out, "[more diffs left out; the output is capped]");
                    break;
                }
                out.push_str(&diff);
            }
            out.push_str("Call again with preview: false to write these changes.");
            out.push_str(&skipped_note);
            return text(out);
        }
        let mut reports = Vec::new();
        let mut lines = Vec::new();
        let mut failed = 0;
        for p in planned {
            let shown = p.path.display_path();
            match write_whole(&ws, &p.path, &p.old, p.version, p.new).await {
                Ok(where_) => {
                    lines.push(format!(
                        "{shown}: {}{where_}",
                        plural(p.count, "replacement")
                    ));
                    reports.push(report(&p.path, None));
                }
                Err(e) => {
                    failed += 1;
                    lines.push(format!("{shown}: not written: {e}"));
                    reports.push(report(&p.path, Some(e.to_string())));
                }
            }
        }
        let summary = format!("replaced: {head}\n{}{skipped_note}", lines.join("\n"));
        with_edits(
            if failed > 0 {
                error(summary)
            } else {
                text(summary)
            },
            &reports,
        )
    }
}

struct Planned {
    path: WorkspacePath,
    old: String,
    version: Option<i32>,
    new: String,
    count: usize,
}
