//! `edit_file`: exact search and replace, through the editor when the file is open there.
//!
//! Decisions:
//! - `old_string` must match exactly once, unless `replace_all` is set; zero or several matches
//!   are an error that says how many and what to do (the rules are in the `edit` module, shared
//!   with `multi_edit`).
//! - An empty `old_string` creates the file when it does not exist (missing directories are
//!   created) and fills it when it is empty; on a file with content it is an error.
//! - Line endings are kept: in a file with CRLF line endings, `new_string`'s line breaks become
//!   CRLF, and an `old_string` written with LF matches its CRLF spelling.
//! - An open document is edited through the editor ([`Workspace::apply_edits_in_editor`]) at
//!   the version that was read, as byte edits into that text, so the user sees and can undo
//!   the change; otherwise the file is written atomically.
//! - Once the path is resolved, every outcome, applied or not, carries an edit report under
//!   `_meta` (`with_edits`). A path refused by the scope has no workspace URI, so its error
//!   carries none.

use std::sync::Arc;

use cairn_toolkit::reply::{error, text, with_edits};
use cairn_toolkit::{CallContext, Category, Effect, JsonSchema, Paths, Tool};
use cairn_workspace::checkpoint::carry;
use cairn_workspace::{ScopeError, Workspace, WorkspacePath};
use rmcp::model::CallToolResult;
use serde::Deserialize;

use crate::Files;
use crate::edit::{apply, plan};
use crate::util::{rejected, report};

/// The `edit_file` tool.
pub struct EditFile;

/// Arguments of `edit_file`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// File to edit, relative to the workspace root (or absolute inside it).
    path: String,
    /// Exact text to replace, including whitespace and indentation, without read_file's line-number prefixes. It must match exactly once unless replace_all is set. Empty to create a new file.
    old_string: String,
    /// The replacement text.
    new_string: String,
    /// Replace every occurrence of old_string instead of requiring exactly one. Default false.
    replace_all: Option<bool>,
}

impl Tool for EditFile {
    type Host = Files;
    type Args = Args;
    const NAME: &'static str = "edit_file";
    const TITLE: &'static str = "Edit file";
    const DESCRIPTION: &'static str = "Replace an exact, unique piece of text in a file (or create a file with an empty old_string); read the file first and copy the text to replace exactly.";
    const CATEGORY: Category = Category::File;
    const EFFECT: Effect = Effect::Write;
    const AGENT_ONLY: bool = true;

    fn paths(args: &Args) -> Paths {
        Paths::write(&args.path)
    }

    async fn call(files: &Files, args: Args, _: CallContext) -> CallToolResult {
        let ws = files.workspace();
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
            Ok(Err(denied)) => return error(denied.to_string()),
            Err(e) => return error(format!("internal error: the tool failed ({e})")),
        };
        let shown = path.display_path();
        let read = match read {
            Ok(read) => read,
            Err(e) => return rejected(&path, e.to_string()),
        };
        let replace_all = args.replace_all.unwrap_or(false);
        let (content, version) = match read {
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
            &content,
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
                Ok(()) => applied(&path, format!("{summary}, {}", ws.editor_note())),
                Err(e) => rejected(&path, e.to_string()),
            },
            None => {
                let new_text = apply(&content, &plan.edits);
                write_to_disk(ws, path, new_text, summary).await
            }
        }
    }
}

async fn write_to_disk(
    ws: Arc<Workspace>,
    path: WorkspacePath,
    content: String,
    summary: String,
) -> CallToolResult {
    let written = {
        let path = path.clone();
        tokio::task::spawn_blocking(carry(move || ws.write_text_atomic(&path, &content))).await
    };
    match written {
        Ok(Ok(())) => applied(&path, summary),
        Ok(Err(e)) => rejected(&path, e.to_string()),
        Err(e) => rejected(&path, format!("internal error: the write failed ({e})")),
    }
}

fn applied(path: &WorkspacePath, summary: String) -> CallToolResult {
    with_edits(text(summary), &[report(path, None)])
}
