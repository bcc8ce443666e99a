//! `multi_edit`: several exact replacements in one file, applied in order, all or nothing.
//!
//! Each edit is planned on the text left by the ones before it (with `edit_file`'s rules), and
//! the file is written once at the end; if any edit fails, nothing is written and the error
//! names the edit.

use std::sync::Arc;

use cairn_workspace::Workspace;
use rmcp::model::{CallToolResult, Tool};
use serde::Deserialize;
use serde_json::{Map, Value, json};

use crate::edit_file::{apply, plan};
use crate::util::{
    error_result, object_schema, parse_args, plural, report, text_result, tool, with_edits,
    write_whole,
};

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Args {
    path: String,
    edits: Vec<Edit>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Edit {
    old_string: String,
    new_string: String,
    replace_all: Option<bool>,
}

pub(crate) fn definition() -> Tool {
    let schema = object_schema(
        json!({
            "path": {"type": "string", "description": "File to edit, relative to the workspace root (or absolute inside it)."},
            "edits": {
                "type": "array", "minItems": 1,
                "description": "Replacements applied in order, each to the result of the previous ones; each old_string must match exactly once unless replace_all is set.",
                "items": {
                    "type": "object",
                    "properties": {
                        "old_string": {"type": "string", "description": "Exact text to replace."},
                        "new_string": {"type": "string", "description": "The replacement text."},
                        "replace_all": {"type": "boolean", "description": "Replace every occurrence. Default false."}
                    },
                    "required": ["old_string", "new_string"],
                    "additionalProperties": false
                }
            }
        }),
        &["path", "edits"],
    );
    tool(
        "multi_edit",
        "Edit file (several changes)",
        "Make several exact replacements in one file at once; if any of them does not match, none is applied. Use it instead of repeated edit_file calls on one file.",
        schema,
        false,
    )
}

pub(crate) async fn call(ws: Arc<Workspace>, arguments: Map<String, Value>) -> CallToolResult {
    let args: Args = match parse_args("multi_edit", arguments) {
        Ok(args) => args,
        Err(result) => return result,
    };
    if args.edits.is_empty() {
        return error_result("invalid argument `edits` for multi_edit: give at least one edit");
    }
    let (path, read) = match crate::util::read_for_edit(&ws, &args.path).await {
        Ok(r) => r,
        Err(result) => return result,
    };
    let rejected = |reason: String| crate::util::rejected(&path, reason);
    let (original, version) = match read {
        Ok(Some(read)) => read,
        Ok(None) => return rejected(format!("{} does not exist", path.display_path())),
        Err(e) => return rejected(e),
    };
    let shown = path.display_path();
    let mut text = original.clone();
    let mut replaced = 0;
    for (i, edit) in args.edits.iter().enumerate() {
        match plan(
            &text,
            &shown,
            &edit.old_string,
            &edit.new_string,
            edit.replace_all.unwrap_or(false),
        ) {
            Ok(p) => {
                replaced += p.edits.len();
                text = apply(&text, &p.edits);
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
    match write_whole(&ws, &path, &original, version, text).await {
        Ok(where_) => with_edits(
            text_result(format!(
                "edited {shown}: {} applied, {} replaced{where_}",
                plural(args.edits.len(), "edit"),
                plural(replaced, "occurrence")
            )),
            vec![report(&path, None)],
        ),
        Err(e) => rejected(e),
    }
}
