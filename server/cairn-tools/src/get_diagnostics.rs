//! `get_diagnostics`: the errors and warnings the editor holds for a file or the workspace, and
//! the new ones of the files an edit changed.
//!
//! Decisions:
//! - The diagnostics are the editor's (its language servers'), as it last published them
//!   (`cairn/diagnostics` in the LSP front); cairn runs no checker of its own. An editor that
//!   does not send them (Helix, ACP clients, the terminal) gets an answer that says so, so the
//!   model runs the project's build or linter instead.
//! - Only files whose contents the user may read are shown: a file outside the roots, refused
//!   by the user's rules, or protected (`.env`) without an approval held is left out, as the
//!   workspace decides ([`Workspace::diagnostics`]).
//! - Output is grouped per file (workspace-relative paths, sorted), each diagnostic as
//!   `line:col severity: message (source code)`, 1-based, capped at [`MAX_SHOWN`] diagnostics
//!   and the tools' byte cap, saying how many were left out.
//! - After an edit ([`after_edit`], through the file tools' `around_write`): when the editor
//!   sends diagnostics, each edited file's are appended to the result once the editor has
//!   published for it after the call started, or after [`EDIT_WAIT`] (then they are marked as
//!   not yet updated). A language server takes a moment after a change; waiting longer would
//!   hold every edit up, and the model can call `get_diagnostics` again.

use cairn_toolkit::ToolError;
use std::fmt::Write as _;
use std::sync::Arc;
use std::time::Duration;

use cairn_toolkit::reply::{error, text};
use cairn_toolkit::{CallContext, Category, Effect, JsonSchema, Paths, Tool};
use cairn_workspace::{Diagnostic, PathDiagnostics, Severity, Workspace};
use futures::future::BoxFuture;
use rmcp::model::{CallToolResult, ContentBlock};
use serde::Deserialize;

use crate::Files;
use crate::util::{MAX_OUTPUT_BYTES, off_thread, plural};

/// Diagnostics shown by one call at most.
const MAX_SHOWN: usize = 200;
/// Diagnostics shown per file after an edit at most.
const MAX_AFTER_EDIT: usize = 30;
/// How long an edit waits for the editor's new diagnostics of the files it changed.
pub(crate) const EDIT_WAIT: Duration = Duration::from_secs(2);

/// What this editor's answer is when it sends no diagnostics.
const NOT_SENT: &str = "this editor does not send its diagnostics to cairn (Helix, ACP clients and the terminal do not), so there are none to show; run the project's build, tests or linter to find errors";

/// The `get_diagnostics` tool.
pub struct GetDiagnostics;

/// Which diagnostics to show: errors only, errors and warnings (the default), or everything,
/// information and hints included. (No docs on the variants, so the schema stays a plain
/// string enum.)
#[derive(Debug, Clone, Copy, Default, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Level {
    Error,
    #[default]
    Warning,
    All,
}

impl Level {
    fn shows(self, severity: Severity) -> bool {
        match self {
            Level::Error => severity == Severity::Error,
            Level::Warning => severity <= Severity::Warning,
            Level::All => true,
        }
    }

    fn what(self) -> &'static str {
        match self {
            Level::Error => "errors",
            Level::Warning => "errors or warnings",
            Level::All => "diagnostics",
        }
    }
}

/// Arguments of `get_diagnostics`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// File or directory to show diagnostics for, relative to the workspace root (or absolute inside it). Default: the whole workspace.
    path: Option<String>,
    /// "error" for errors only, "warning" for errors and warnings (the default), "all" to include information and hints.
    severity: Option<Level>,
}

impl Tool for GetDiagnostics {
    type Host = Files;
    type Args = Args;
    const NAME: &'static str = "get_diagnostics";
    const TITLE: &'static str = "Get diagnostics";
    const DESCRIPTION: &'static str = "Show the errors and warnings the editor's language servers report for a file, a directory or the whole workspace, with line:column; use it to check code after editing or to find what is broken.";
    const CATEGORY: Category = Category::File;
    const EFFECT: Effect = Effect::Read;
    const AGENT_ONLY: bool = false;

    /// A named file's diagnostics tell about its contents, so it is read; across the workspace
    /// the workspace leaves out what the user may not read.
    fn paths(args: &Args) -> Paths {
        match &args.path {
            Some(path) => Paths::read(path),
            None => Paths::walks(),
        }
    }

    async fn call(files: &Files, args: Args, _: CallContext) -> CallToolResult {
        let level = args.severity.unwrap_or_default();
        let found = off_thread(&files.workspace(), move |ws| -> Result<Found, ToolError> {
            let scope = match &args.path {
                Some(p) => Some(ws.resolve(p)?),
                None => None,
            };
            let Some(all) = ws.diagnostics() else {
                return Ok(None);
            };
            let chosen = all
                .into_iter()
                .filter(|f| {
                    scope
                        .as_ref()
                        .is_none_or(|s| f.path.as_path().starts_with(s.as_path()))
                })
                .collect::<Vec<_>>();
            let shown = scope.map(|s| s.display_path());
            Ok(Some((chosen, shown)))
        })
        .await;
        match found {
            Ok(Ok(Some((files, scope)))) => text(render(files, level, scope.as_deref())),
            Ok(Ok(None)) => error(NOT_SENT),
            Ok(Err(e)) => e.into(),
            Err(e) => error(e),
        }
    }
}

/// The files with diagnostics and the path asked for, shown; `None` when the editor sends none.
type Found = Option<(Vec<PathDiagnostics>, Option<String>)>;

/// The report of one call: a count, then each file's diagnostics.
fn render(mut files: Vec<PathDiagnostics>, level: Level, scope: Option<&str>) -> String {
    for f in &mut files {
        f.diagnostics.retain(|d| level.shows(d.severity));
        f.diagnostics
            .sort_by_key(|d| (d.line, d.column, d.severity));
    }
    files.retain(|f| !f.diagnostics.is_empty());
    files.sort_by_key(|f| f.path.display_path());
    let total: usize = files.iter().map(|f| f.diagnostics.len()).sum();
    if total == 0 {
        let place = scope.map_or("the workspace".to_owned(), str::to_owned);
        return format!(
            "no {} in {place}, as the editor reports them now",
            level.what()
        );
    }
    let count = |s: Severity, noun: &str| {
        let n = files
            .iter()
            .flat_map(|f| &f.diagnostics)
            .filter(|d| d.severity == s)
            .count();
        (n > 0).then(|| plural(n, noun))
    };
    let counts = [
        count(Severity::Error, "error"),
        count(Severity::Warning, "warning"),
        count(Severity::Information, "info message"),
        count(Severity::Hint, "hint"),
    ]
    .into_iter()
    .flatten()
    .collect::<Vec<_>>()
    .join(", ");
    let mut out = format!("{counts} in {}:\n", plural(files.len(), "file"));
    let mut shown = 0;
    'files: for f in &files {
        let _ = writeln!(out, "{}:", f.path.display_path());
        for d in &f.diagnostics {
            let line = format!("  {}\n", one(d));
            if shown == MAX_SHOWN || out.len() + line.len() > MAX_OUTPUT_BYTES {
                break 'files;
            }
            out.push_str(&line);
            shown += 1;
        }
    }
    if shown < total {
        let _ = write!(
            out,
            "… {} more not shown; ask for one file or directory with `path`, or for errors only",
            total - shown
        );
    }
    out.trim_end().to_owned()
}

/// One diagnostic: `line:col severity: message (source code)`, a message of several lines
/// indented under it.
fn one(d: &Diagnostic) -> String {
    let message = d.message.trim().replace('\n', "\n    ");
    let origin = match (&d.source, &d.code) {
        (Some(s), Some(c)) => format!(" ({s} {c})"),
        (Some(s), None) => format!(" ({s})"),
        (None, Some(c)) => format!(" ({c})"),
        (None, None) => String::new(),
    };
    format!(
        "{}:{} {}: {message}{origin}",
        d.line,
        d.column,
        d.severity.as_str()
    )
}

/// Runs an edit `call` and, when the editor sends diagnostics, appends the errors and warnings
/// of each file it changed, as the editor publishes them after the call started (waiting up to
/// [`EDIT_WAIT`]). Results that changed no file are returned as they are.
pub(crate) fn after_edit<'a>(
    ws: &'a Arc<Workspace>,
    call: BoxFuture<'a, CallToolResult>,
) -> BoxFuture<'a, CallToolResult> {
    Box::pin(async move {
        let Some(mark) = ws.diagnostics_mark() else {
            return call.await;
        };
        let result = call.await;
        let edited: Vec<_> = cairn_agent::tools::edits_of(&result)
            .into_iter()
            .filter(|e| e.applied)
            .filter_map(|e| cairn_workspace::path_of_file_uri(&e.uri))
            .collect();
        if edited.is_empty() {
            return result;
        }
        match ws.diagnostics_after(edited, mark, EDIT_WAIT).await {
            Some(files) if !files.is_empty() => append(result, &after_edit_note(files)),
            _ => result,
        }
    })
}

/// What the model reads after an edit, per file.
fn after_edit_note(mut files: Vec<PathDiagnostics>) -> String {
    files.sort_by_key(|f| f.path.display_path());
    let mut out = String::new();
    for f in files {
        let shown = f.path.display_path();
        let stale = if f.updated {
            ""
        } else {
            " (the editor has not updated them since the edit yet)"
        };
        let mut ds: Vec<_> = f
            .diagnostics
            .into_iter()
            .filter(|d| Level::Warning.shows(d.severity))
            .collect();
        ds.sort_by_key(|d| (d.line, d.column));
        if ds.is_empty() {
            let _ = write!(out, "\nno errors or warnings now in {shown}{stale}");
            continue;
        }
        let _ = write!(out, "\ndiagnostics now for {shown}{stale}:");
        for d in ds.iter().take(MAX_AFTER_EDIT) {
            let _ = write!(out, "\n  {}", one(d));
        }
        if ds.len() > MAX_AFTER_EDIT {
            let _ = write!(
                out,
                "\n  … {} more; call get_diagnostics for all",
                ds.len() - MAX_AFTER_EDIT
            );
        }
    }
    out
}

/// `result` with `note` (lines that each start with a line break) added to its last text (a new
/// text block when it has none).
fn append(mut result: CallToolResult, note: &str) -> CallToolResult {
    let last = result.content.iter_mut().rev().find_map(|c| match c {
        ContentBlock::Text(t) => Some(t),
        _ => None,
    });
    match last {
        Some(t) => t.text.push_str(note),
        None => result
            .content
            .push(ContentBlock::text(note.trim_start().to_owned())),
    }
    result
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use super::*;

    fn d(line: u32, severity: Severity, message: &str) -> Diagnostic {
        Diagnostic {
            line,
            column: 5,
            severity,
            source: Some("rustc".into()),
            code: None,
            message: message.into(),
        }
    }

    #[test]
    fn one_diagnostic_reads_as_line_col_severity_message_origin() {
        let mut x = d(3, Severity::Error, "cannot find value `x`\nhelp: define it");
        x.code = Some("E0425".into());
        assert_eq!(
            one(&x),
            "3:5 error: cannot find value `x`\n    help: define it (rustc E0425)"
        );
        x.source = None;
        x.code = None;
        assert_eq!(
            one(&x),
            "3:5 error: cannot find value `x`\n    help: define it"
        );
    }

    #[test]
    fn levels_choose_severities() {
        let check = |level: Level, expected: &[Severity]| {
            let got: Vec<_> = [
                Severity::Error,
                Severity::Warning,
                Severity::Information,
                Severity::Hint,
            ]
            .into_iter()
            .filter(|s| level.shows(*s))
            .collect();
            assert_eq!(got, expected);
        };
        check(Level::Error, &[Severity::Error]);
        check(Level::Warning, &[Severity::Error, Severity::Warning]);
        check(
            Level::All,
            &[
                Severity::Error,
                Severity::Warning,
                Severity::Information,
                Severity::Hint,
            ],
        );
    }

    #[test]
    fn a_report_is_capped_and_says_what_it_left_out() {
        let tmp = tempfile::tempdir().unwrap();
        let ws = Workspace::new(vec![tmp.path().to_path_buf()]).unwrap();
        let file = |name: &str, n: u32| PathDiagnostics {
            path: ws.resolve(name).unwrap(),
            updated: true,
            diagnostics: (1..=n).map(|i| d(i, Severity::Error, "bad")).collect(),
        };
        let out = render(
            vec![file("b.rs", 150), file("a.rs", 100)],
            Level::Warning,
            None,
        );
        assert!(out.starts_with("250 errors in 2 files:\na.rs:\n  1:5 error: bad (rustc)\n"));
        assert_eq!(out.matches("error: bad").count(), MAX_SHOWN);
        assert!(out.ends_with("\n… 50 more not shown; ask for one file or directory with `path`, or for errors only"), "{out}");

        let hints = PathDiagnostics {
            diagnostics: vec![d(1, Severity::Hint, "consider this")],
            ..file("a.rs", 0)
        };
        assert_eq!(
            render(vec![hints.clone()], Level::Warning, Some("src")),
            "no errors or warnings in src, as the editor reports them now"
        );
        assert_eq!(
            render(vec![hints], Level::All, None),
            "1 hint in 1 file:\na.rs:\n  1:5 hint: consider this (rustc)"
        );
    }

    #[test]
    fn a_note_is_appended_to_the_last_text() {
        let r = append(text("edited a.rs"), "\nno errors or warnings now in a.rs");
        let t: Vec<_> = r
            .content
            .iter()
            .filter_map(|c| c.as_text().map(|t| t.text.clone()))
            .collect();
        assert_eq!(t, ["edited a.rs\nno errors or warnings now in a.rs"]);
    }
}
