//! `make_directory`: create a directory and its missing parents.

use std::sync::Arc;

use cairn_workspace::Workspace;
use rmcp::model::{CallToolResult, Tool};
use serde::Deserialize;
use serde_json::{Map, Value, json};

use crate::util::{blocking, error_result, object_schema, parse_args, text_result, tool};

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Args {
    path: String,
}

pub(crate) fn definition() -> Tool {
    let schema = object_schema(
        json!({"path": {"type": "string", "description": "Directory to create, relative to the workspace root (or absolute inside it)."}}),
        &["path"],
    );
    tool(
        "make_directory",
        "Make directory",
        "Create a directory (and missing parents); an existing directory is fine. Files do not need it: writing a file creates its directories.",
        schema,
        false,
    )
}

pub(crate) async fn call(ws: Arc<Workspace>, arguments: Map<String, Value>) -> CallToolResult {
    let args: Args = match parse_args("make_directory", arguments) {
        Ok(args) => args,
        Err(result) => return result,
    };
    blocking(ws, move |ws| {
        match ws
            .resolve(&args.path)
            .and_then(|p| ws.create_dir(&p).map(|()| p))
        {
            Ok(path) => text_result(format!("created directory {}", path.display_path())),
            Err(e) => error_result(e.to_string()),
        }
    })
    .await
}
