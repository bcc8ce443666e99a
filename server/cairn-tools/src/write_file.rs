//! `write_file`: replace a file's whole content (or create it); through the editor when open.

use std::sync::Arc;

use cairn_workspace::Workspace;
use rmcp::model::{CallToolResult, Tool};
use serde::Deserialize;
use serde_json::{Map, Value, json};

use crate::util::{
    error_result, object_schema, parse_args, plural, report, text_result, tool, with_edits,
    write_whole,
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
            "path": {"type": "string", "description": "File to write, relative to the workspace root (or absolute inside it)."},
            "content": {"type": "string", "description": "The whole new content of the file."}
        }),
        &["path", "content"],
    );
    tool(
        "write_file",
        "Write file",
        "Replace a file's whole content, or create it (with missing directories); prefer edit_file for small changes to an existing file.",
        schema,
        false,
    )
}

pub(crate) async fn call(ws: Arc<Workspace>, arguments: Map<String, Value>) -> CallToolResult {
    let args: Args = match parse_args("write_file", arguments) {
        Ok(args) => args,
        Err(result) => return result,
    };
    let (path, read) = match crate::util::read_for_edit(&ws, &args.path).await {
        Ok(r) => r,
        Err(result) => return result,
    };
    let shown = path.display_path();
    let (old, version) = match read {
        Ok(Some((old, version))) => (old, version),
        Ok(None) => (String::new(), None),
        Err(e) => return crate::util::rejected(&path, e),
    };
    let existed = !(old.is_empty() && version.is_none());
    let lines = plural(args.content.lines().count(), "line");
    match write_whole(&ws, &path, &old, version, args.content).await {
        Ok(where_) => {
            let verb = if existed { "wrote" } else { "created" };
            with_edits(
                text_result(format!("{verb} {shown} ({lines}){where_}")),
                vec![report(&path, None)],
            )
        }
        Err(e) => with_edits(error_result(e.clone()), vec![report(&path, Some(e))]),
    }
}
