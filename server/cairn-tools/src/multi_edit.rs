//! `multi_edit`: several exact replacements in one file, applied in order, all or nothing.
//!
//! Each edit is planned on the text left by the ones before it (with `edit_file`'s rules), and
//! the file is written once at the end; if any edit fails, nothing is written and the error
//! names the edit.

use cairn_toolkit::reply::{error, text, with_edits};
use cairn_toolkit::{CallContext, Category, Effect, JsonSchema, Paths, Tool};
use rmcp::model::CallToolResult;
use serde::Deserialize;

use crate::Files;
use crate::edit::{apply, plan};
use crate::util::{plural, read_for_edit, report, write_whole};

/// The `multi_edit` tool.
pub struct MultiEdit;

/// Arguments of `multi_edit`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// File to edit, relative to the workspace root (or absolute inside it).
    path: String,
    /// Replacements applied in order, each to the result of the previous ones; each old_string must match exactly once unless replace_all is set.
    #[schemars(length(min = 1))]
    edits: Vec<Edit>,
}

/// One replacement.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Edit {
    /// Exact text to replace.
    old_string: String,
    /// The replacement text.
    new_string: String,
    /// Replace every occurrence. Default false.
    replace_all: Option<bool>,
}

impl Tool for MultiEdit {
    type Host = Files;
    type Args = Args;
    const NAME: &'static str = "multi_edit";
    const TITLE: &'static str = "Edit file (several changes)";
    const DESCRIPTION: &'static str = "Make several exact replacements in one file at once; if any of them does not match, none is applied. Use it instead of repeated edit_file calls on one file.";
    const CATEGORY: Category = Category::File;
    const EFFECT: Effect = Effect::Write;
    const AGENT_ONLY: bool = true;

    fn paths(args: &Args) -> Paths {
        Paths::write(&args.path)
    }

    async fn call(files: &Files, args: Args, _: CallContext) -> CallToolResult {
        if args.edits.is_empty() {
            return error("invalid argument `edits` for multi_edit: give at least one edit");
        }
        let ws = files.workspace();
        let (path, read) = match read_for_edit(&ws, &args.path).await {
            Ok(r) => r,
            Err(result) => return result,
        };
        let rejected = |reason: String| crate::util::rejected(&path, reason);
        let (original, version) = match read {
            Ok(Some(read)) => read,
            Ok(None) => return rejected(format!("{} does not exist", path.display_path())),
            Err(e) => return rejected(e.to_string()),
        };
        let shown = path.display_path();
        let mut content = original.clone();
        let mut replaced = 0;
        for (i, edit) in args.edits.iter().enumerate() {
            match plan(
                &content,
                &shown,
                &edit.old_string,
                &edit.new_string,
                edit.replace_all.unwrap_or(false),
            ) {
                Ok(p) => {
                    replaced += p.edits.len();
                    content = apply(&content, &p.edits);
                }
                Err(e) => {
                    return rejected(format!(
                        "edit {} of {} failed, so no edit was applied: {e}",
                        i + 1,
                        args.edits.len()
                    ));
                }
            }
        }
        match write_whole(&ws, &path, &original, version, content).await {
            Ok(where_) => with_edits(
                text(format!(
                    "edited {shown}: {} applied, {} replaced{where_}",
                    plural(args.edits.len(), "edit"),
                    plural(replaced, "occurrence")
                )),
                &[report(&path, None)],
            ),
            Err(e) => rejected(e.to_string()),
        }
    }
}
