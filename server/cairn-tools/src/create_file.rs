//! `create_file`: a new file; refused when anything already exists at the path.

use std::sync::Arc;

use cairn_workspace::Workspace;
use rmcp::model::{CallToolResult, Tool};
use serde::Deserialize;
use serde_json::{Map, Value, json};

use crate::util::{
    blocking, error_result, object_schema, parse_args, plural, report, text_result, tool,
    with_edits,
};

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Args {
    path: String,
    content: String,
}

pub(crate) fn definition() -> Tool {
    let schema = object_schema(
        json!({
            "path": {"type": "string", "description": "New file, relative to the workspace root (or absolute inside it); missing directories are created."},
            "content": {"type": "string", "description": "The content of the new file."}
        }),
        &["path", "content"],
    );
    tool(
        "create_file",
        "Create file",
        "Create a new file with the given content; it fails if the path already exists, so it never overwrites anything.",
        schema,
        false,
    )
}

pub(crate) async fn call(ws: Arc<Workspace>, arguments: Map<String, Value>) -> CallToolResult {
    let args: Args = match parse_args("create_file", arguments) {
        Ok(args) => args,
        Err(result) => return result,
    };
    blocking(ws, move |ws| {
        let path = match ws.resolve(&args.path) {
            Ok(path) => path,
            Err(e) => return error_result(e.to_string()),
        };
        let exists_in_editor = ws.open_document(&path).is_some();
        let created = if exists_in_editor {
            Err(format!(
                "{} is open in the editor; use write_file or edit_file",
                path.display_path()
            ))
        } else {
            ws.create_text_exclusive(&path, &args.content)
                .map_err(|e| e.to_string())
        };
        match created {
            Ok(()) => with_edits(
                text_result(format!(
                    "created {} ({})",
                    path.display_path(),
                    plural(args.content.lines().count(), "line")
                )),
                vec![report(&path, None)],
            ),
            Err(e) => with_edits(error_result(e.clone()), vec![report(&path, Some(e))]),
        }
    })
    .await
}
