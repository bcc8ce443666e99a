//! `delete_file`: delete one regular file (never a directory, symlink or special file).

use std::sync::Arc;

use cairn_workspace::Workspace;
use rmcp::model::{CallToolResult, Tool};
use serde::Deserialize;
use serde_json::{Map, Value, json};

use crate::util::{
    blocking, error_result, object_schema, parse_args, report, text_result, tool, with_edits,
};

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Args {
    path: String,
}

pub(crate) fn definition() -> Tool {
    let schema = object_schema(
        json!({"path": {"type": "string", "description": "File to delete, relative to the workspace root (or absolute inside it)."}}),
        &["path"],
    );
    tool(
        "delete_file",
        "Delete file",
        "Delete one file (not a directory); use it to remove a file that is no longer needed.",
        schema,
        false,
    )
}

pub(crate) async fn call(ws: Arc<Workspace>, arguments: Map<String, Value>) -> CallToolResult {
    let args: Args = match parse_args("delete_file", arguments) {
        Ok(args) => args,
        Err(result) => return result,
    };
    blocking(ws, move |ws| {
        let path = match ws.resolve(&args.path) {
            Ok(path) => path,
            Err(e) => return error_result(e.to_string()),
        };
        match ws.remove_file(&path) {
            Ok(()) => with_edits(
                text_result(format!("deleted {}", path.display_path())),
                vec![report(&path, None)],
            ),
            Err(e) => with_edits(
                error_result(e.to_string()),
                vec![report(&path, Some(e.to_string()))],
            ),
        }
    })
    .await
}
