//! `diff_files`: a unified diff of two files (the editor's unsaved text when open).

use std::sync::Arc;

use cairn_workspace::Workspace;
use rmcp::model::{CallToolResult, Tool};
use serde::Deserialize;
use serde_json::{Map, Value, json};

use crate::util::{
    MAX_OUTPUT_BYTES, blocking, error_result, object_schema, parse_args, text_result, tool,
};

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Args {
    a: String,
    b: String,
    context: Option<usize>,
}

pub(crate) fn definition() -> Tool {
    let schema = object_schema(
        json!({
            "a": {"type": "string", "description": "The old file, relative to the workspace root (or absolute inside it)."},
            "b": {"type": "string", "description": "The new file."},
            "context": {"type": "integer", "minimum": 0, "maximum": 20, "description": "Context lines around changes. Default 3."}
        }),
        &["a", "b"],
    );
    tool(
        "diff_files",
        "Diff two files",
        "Show a unified diff between two text files; use it to compare a file with a copy or a variant.",
        schema,
        true,
    )
}

pub(crate) async fn call(ws: Arc<Workspace>, arguments: Map<String, Value>) -> CallToolResult {
    let args: Args = match parse_args("diff_files", arguments) {
        Ok(args) => args,
        Err(result) => return result,
    };
    let context = args.context.unwrap_or(3).min(20);
    blocking(ws, move |ws| {
        let read = |p: &str| {
            ws.resolve(p)
                .and_then(|p| ws.read_text(&p).map(|(t, _)| (p, t)))
        };
        let ((pa, ta), (pb, tb)) = match read(&args.a).and_then(|a| read(&args.b).map(|b| (a, b))) {
            Ok(both) => both,
            Err(e) => return error_result(e.to_string()),
        };
        let diff = crate::diff::unified(&ta, &tb, &pa.display_path(), &pb.display_path(), context);
        if diff.is_empty() {
            return text_result(format!(
                "{} and {} have the same lines",
                pa.display_path(),
                pb.display_path()
            ));
        }
        if diff.len() > MAX_OUTPUT_BYTES {
            let mut cut = MAX_OUTPUT_BYTES;
            while !diff.is_char_boundary(cut) {
                cut -= 1;
            }
            return text_result(format!(
                "{}\n[diff cut at {MAX_OUTPUT_BYTES} bytes of {}]",
                diff.get(..cut).unwrap_or(""),
                diff.len()
            ));
        }
        text_result(diff)
    })
    .await
}
