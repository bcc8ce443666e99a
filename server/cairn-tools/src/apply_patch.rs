//! `apply_patch`: a unified diff over one or more files, all or nothing.
//!
//! Every hunk of every file is applied in memory first; if one does not apply, nothing is
//! written and the error names the file and the hunk. `--- /dev/null` creates a file (it must
//! not exist), `+++ /dev/null` deletes one (its hunks must remove every line). Open documents
//! are changed through the editor. Writes then happen file by file, so an I/O failure midway
//! (rare) is reported per file in the edit reports.

use cairn_agent::tools::EditReport;
use cairn_toolkit::reply::{error, text, with_edits};
use cairn_toolkit::{CallContext, Category, Effect, JsonSchema, Paths, Tool};
use cairn_workspace::{ScopeError, Workspace, WorkspacePath};
use rmcp::model::CallToolResult;
use serde::Deserialize;

use crate::Files;
use crate::diff::{apply_hunks, parse_patch};
use crate::util::{off_thread, plural, report, write_whole};
use cairn_toolkit::ToolError;

/// The `apply_patch` tool.
pub struct ApplyPatch;

/// Arguments of `apply_patch`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// A unified diff (`--- a/path`, `+++ b/path`, `@@ -l,n +l,n @@` hunks), paths relative to the workspace root; `/dev/null` creates or deletes a file.
    patch: String,
}

impl Tool for ApplyPatch {
    type Host = Files;
    type Args = Args;
    const NAME: &'static str = "apply_patch";
    const TITLE: &'static str = "Apply patch";
    const DESCRIPTION: &'static str = "Apply a unified diff to one or more files; if any hunk does not apply, no file is changed. Use it for coordinated changes across files.";
    const CATEGORY: Category = Category::File;
    const EFFECT: Effect = Effect::Write;
    const AGENT_ONLY: bool = true;

    /// The files the patch names: each one it changes or deletes is read and written, each one
    /// it creates is written. A patch that does not parse declares none; the call reports it.
    fn paths(args: &Args) -> Paths {
        let Ok(files) = parse_patch(&args.patch) else {
            return Paths::none();
        };
        files.iter().fold(Paths::none(), |paths, file| {
            let target = file.new_path.as_deref().or(file.old_path.as_deref());
            paths
                .and_read_opt(file.old_path.as_deref())
                .and_write_opt(target)
        })
    }

    async fn call(files: &Files, args: Args, _: CallContext) -> CallToolResult {
        let ws = files.workspace();
        let changes = match off_thread(&ws, move |ws| plan(ws, &args.patch)).await {
            Ok(Ok(changes)) => changes,
            Ok(Err(e)) => return error(format!("{e}\nNo file was changed.")),
            Err(e) => return error(e),
        };
        let mut reports: Vec<EditReport> = Vec::new();
        let mut lines = Vec::new();
        let mut failed = 0;
        for change in changes {
            let (path, done) = match change {
                Change::Create(path, content) => {
                    let p = path.clone();
                    let r = off_thread(&ws, move |ws| ws.create_text_exclusive(&p, &content))
                        .await
                        .map_err(ToolError::peer)
                        .and_then(|r| r.map_err(ToolError::from))
                        .map(|()| "created".to_owned());
                    (path, r)
                }
                Change::Delete(path) => {
                    let p = path.clone();
                    let r = off_thread(&ws, move |ws| ws.remove_file(&p))
                        .await
                        .map_err(ToolError::peer)
                        .and_then(|r| r.map_err(ToolError::from))
                        .map(|()| "deleted".to_owned());
                    (path, r)
                }
                Change::Update {
                    path,
                    old,
                    version,
                    new,
                } => {
                    // `w` is empty for the disk, else ", in the editor ..." (moved after the verb).
                    let r = write_whole(&ws, &path, &old, version, new)
                        .await
                        .map(|w| format!("patched{}", w.strip_prefix(',').unwrap_or(&w)));
                    (path, r)
                }
            };
            match done {
                Ok(what) => {
                    lines.push(format!("{what} {}", path.display_path()));
                    reports.push(report(&path, None));
                }
                Err(e) => {
                    failed += 1;
                    lines.push(format!("failed {}: {e}", path.display_path()));
                    reports.push(report(&path, Some(e.to_string())));
                }
            }
        }
        let summary = format!(
            "applied the patch to {}:\n{}",
            plural(lines.len(), "file"),
            lines.join("\n")
        );
        let result = if failed > 0 {
            error(summary)
        } else {
            text(summary)
        };
        with_edits(result, &reports)
    }
}

enum Change {
    Create(WorkspacePath, String),
    Delete(WorkspacePath),
    Update {
        path: WorkspacePath,
        old: String,
        version: Option<i32>,
        new: String,
    },
}

/// Plan every file's change, or the first reason one cannot be made.
fn plan(ws: &Workspace, patch: &str) -> Result<Vec<Change>, ToolError> {
    let files = parse_patch(patch).map_err(|e| e.context("the patch could not be read"))?;
    let mut changes = Vec::new();
    let mut seen = Vec::new();
    for file in files {
        let name = match (&file.old_path, &file.new_path) {
            (Some(old), Some(new)) if old != new => {
                return Err(ToolError::invalid(format!(
                    "the patch renames {old} to {new}, which apply_patch does not do; use move_file, then patch the new path"
                )));
            }
            (_, Some(p)) | (Some(p), None) => p.clone(),
            (None, None) => {
                return Err(ToolError::invalid(
                    "a file in the patch is /dev/null on both sides",
                ));
            }
        };
        let path = ws.resolve(&name)?;
        if seen.contains(&path) {
            return Err(ToolError::invalid(format!(
                "{name} appears twice in the patch; put all its hunks under one header"
            )));
        }
        seen.push(path.clone());
        let shown = path.display_path();
        if file.old_path.is_none() {
            if ws.kind_of(&path).is_ok() || ws.open_buffer(&path).is_some() {
                return Err(ToolError::invalid(format!(
                    "the patch creates {shown}, which already exists"
                )));
            }
            changes.push(Change::Create(path, apply_hunks("", &file.hunks, &shown)?));
            continue;
        }
        let (old, version) = match ws.read_text(&path) {
            Ok(read) => read,
            Err(ScopeError::NotFound { .. }) => {
                return Err(ToolError::not_found(format!(
                    "the patch changes {shown}, which does not exist"
                )));
            }
            Err(e) => return Err(e.into()),
        };
        let new = apply_hunks(&old, &file.hunks, &shown)?;
        if file.new_path.is_none() {
            if !new.trim().is_empty() {
                return Err(ToolError::invalid(format!(
                    "the patch deletes {shown} but its hunks leave lines in it"
                )));
            }
            changes.push(Change::Delete(path));
        } else {
            changes.push(Change::Update {
                path,
                old,
                version,
                new,
            });
        }
    }
    Ok(changes)
}
