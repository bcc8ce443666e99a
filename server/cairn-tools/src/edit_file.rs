//! `edit_file`: exact search and replace, through the editor when the file is open there.
//!
//! Decisions:
//! - `old_string` must match exactly once, unless `replace_all` is set; zero or several matches
//!   are an error that says how many and what to do.
//! - An empty `old_string` creates the file when it does not exist (missing directories are
//!   created) and fills it when it is empty; on a file with content it is an error.
//! - Line endings are kept: in a file with CRLF line endings, `new_string`'s line breaks become
//!   CRLF, and an `old_string` written with LF matches its CRLF spelling.
//! - An open document is edited through the editor ([`Workspace::apply_edits_in_editor`]) at
//!   the version that was read, as byte edits into that text, so the user sees and can undo
//!   the change; otherwise the file is written atomically.
//! - Once the path is resolved, every outcome, applied or not, carries an [`EditReport`] under
//!   `_meta` (`attach_edits`). A path refused by the scope has no workspace
//!   URI, so its error carries none.

use std::sync::Arc;

use cairn_agent::tools::{EditReport, attach_edits};
use cairn_workspace::{ByteEdit, ScopeError, Workspace, WorkspacePath};
use rmcp::model::{CallToolResult, Tool};
use serde::Deserialize;
use serde_json::{Map, Value, json};

use crate::util::{error_result, object_schema, parse_args, rejected, text_result, tool};

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Args {
    path: String,
    old_string: String,
    new_string: String,
    replace_all: Option<bool>,
}

pub(crate) fn definition() -> Tool {
    let schema = object_schema(
        json!({
            "path": {
                "type": "string",
                "description": "File to edit, relative to the workspace root (or absolute inside it)."
            },
            "old_string": {
                "type": "string",
                "description": "Exact text to replace, including whitespace and indentation, without read_file's line-number prefixes. It must match exactly once unless replace_all is set. Empty to create a new file."
            },
            "new_string": {
                "type": "string",
                "description": "The replacement text."
            },
            "replace_all": {
                "type": "boolean",
                "description": "Replace every occurrence of old_string instead of requiring exactly one. Default false."
            }
        }),
        &["path", "old_string", "new_string"],
    );
    tool(
        "edit_file",
        "Edit file",
        "Replace an exact, unique piece of text in a file (or create a file with an empty old_string); read the file first and copy the text to replace exactly.",
        schema,
        false,
    )
}

/// The planned change to one text.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Plan {
    /// Byte edits into the text that was read, ascending and disjoint.
    pub(crate) edits: Vec<ByteEdit>,
    /// 1-based line of the first edit.
    pub(crate) first_line: usize,
}

/// Find `old` in `text` and plan its replacement; the error says what went wrong and what to do.
pub(crate) fn plan(
    text: &str,
    path: &str,
    old: &str,
    new: &str,
    replace_all: bool,
) -> Result<Plan, String> {
    let crlf = text.contains("\r\n");
    let new = if crlf { to_crlf(new) } else { new.to_owned() };
    if old.is_empty() {
        if text.is_empty() {
            return Ok(Plan {
                edits: vec![ByteEdit {
                    start: 0,
                    end: 0,
                    new_text: new,
                }],
                first_line: 1,
            });
        }
        return Err(format!(
            "old_string is empty but {path} already has content; give the exact text to replace (read the file first)"
        ));
    }
    let mut old = old.to_owned();
    let mut starts: Vec<usize> = text.match_indices(old.as_str()).map(|(i, _)| i).collect();
    if starts.is_empty() && crlf && old.contains('\n') {
        let spelled = to_crlf(&old);
        starts = text
            .match_indices(spelled.as_str())
            .map(|(i, _)| i)
            .collect();
        old = spelled;
    }
    if old == new {
        return Err(
            "old_string and new_string are the same; there is nothing to change".to_owned(),
        );
    }
    match starts.len() {
        0 => Err(format!(
            "old_string was not found in {path}; it must match the file exactly, including whitespace and indentation: read the file again with read_file and copy the text without the line-number prefixes"
        )),
        n if n > 1 && !replace_all => Err(format!(
            "old_string matched {n} times in {path}; include more surrounding lines so that it matches exactly once, or set replace_all to true to replace every occurrence"
        )),
        _ => {
            let first = starts.first().copied().unwrap_or(0);
            let first_line = 1 + text.get(..first).map_or(0, |t| t.matches('\n').count());
            let edits = starts
                .into_iter()
                .map(|start| ByteEdit {
                    start,
                    end: start + old.len(),
                    new_text: new.clone(),
                })
                .collect();
            Ok(Plan { edits, first_line })
        }
    }
}

/// `s` with every line break spelled CRLF.
fn to_crlf(s: &str) -> String {
    s.replace("\r\n", "\n").replace('\n', "\r\n")
}

/// Apply disjoint, ascending byte edits to `text`.
pub(crate) fn apply(text: &str, edits: &[ByteEdit]) -> String {
    let mut out = String::with_capacity(text.len());
    let mut at = 0;
    for edit in edits {
        out.push_str(text.get(at..edit.start).unwrap_or(""));
        out.push_str(&edit.new_text);
        at = edit.end;
    }
    out.push_str(text.get(at..).unwrap_or(""));
    out
}

pub(crate) async fn call(ws: Arc<Workspace>, arguments: Map<String, Value>) -> CallToolResult {
    let args: Args = match parse_args("edit_file", arguments) {
        Ok(args) => args,
        Err(result) => return result,
    };
    let resolved = {
        let ws = ws.clone();
        let requested = args.path.clone();
        tokio::task::spawn_blocking(move || {
            let path = ws.resolve(&requested)?;
            let read = match ws.read_text(&path) {
                Ok(read) => Some(read),
                Err(ScopeError::NotFound { .. }) => None,
                Err(e) => return Ok((path, Err(e))),
            };
            Ok::<_, ScopeError>((path, Ok(read)))
        })
        .await
    };
    let (path, read) = match resolved {
        Ok(Ok(resolved)) => resolved,
        Ok(Err(denied)) => return error_result(denied.to_string()),
        Err(e) => return error_result(format!("internal error: the tool failed ({e})")),
    };
    let shown = path.display_path();
    let read = match read {
        Ok(read) => read,
        Err(e) => return rejected(&path, e.to_string()),
    };
    let replace_all = args.replace_all.unwrap_or(false);
    let (text, version) = match read {
        Some(read) => read,
        None if args.old_string.is_empty() => {
            return write_to_disk(ws, path, args.new_string, format!("created {shown}")).await;
        }
        None => {
            return rejected(
                &path,
                format!(
                    "{shown} does not exist; to create it, call edit_file with an empty old_string"
                ),
            );
        }
    };
    let plan = match plan(
        &text,
        &shown,
        &args.old_string,
        &args.new_string,
        replace_all,
    ) {
        Ok(plan) => plan,
        Err(reason) => return rejected(&path, reason),
    };
    let count = plan.edits.len();
    let summary = format!(
        "edited {shown}: replaced {count} occurrence{} (first at line {})",
        if count == 1 { "" } else { "s" },
        plan.first_line
    );
    match version {
        Some(version) => match ws.apply_edits_in_editor(&path, version, plan.edits).await {
            Ok(()) => applied(&path, format!("{summary}, in the editor (not saved yet)")),
            Err(e) => rejected(&path, e.to_string()),
        },
        None => {
            let new_text = apply(&text, &plan.edits);
            write_to_disk(ws, path, new_text, summary).await
        }
    }
}

async fn write_to_disk(
    ws: Arc<Workspace>,
    path: WorkspacePath,
    text: String,
    summary: String,
) -> CallToolResult {
    let written = {
        let path = path.clone();
        tokio::task::spawn_blocking(move || ws.write_text_atomic(&path, &text)).await
    };
    match written {
        Ok(Ok(())) => applied(&path, summary),
        Ok(Err(e)) => rejected(&path, e.to_string()),
        Err(e) => rejected(&path, format!("internal error: the write failed ({e})")),
    }
}

fn applied(path: &WorkspacePath, summary: String) -> CallToolResult {
    let report = EditReport {
        uri: path.uri(),
        applied: true,
        reason: None,
    };
    attach_edits(text_result(summary), &[report])
}
