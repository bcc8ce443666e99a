//! `move_file`: Move or rename a file or directory; it fails if the destination exists, so it never overwrites anything.

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
    from: String,
    to: String,
}

pub(crate) fn definition() -> Tool {
    let schema = object_schema(
        json!({
            "from": {"type": "string", "description": "Source path, relative to the workspace root (or absolute inside it)."},
            "to": {"type": "string", "description": "Destination path, which must not exist yet."}
        }),
        &["from", "to"],
    );
    tool(
        "move_file",
        "Move file",
        "Move or rename a file or directory; it fails if the destination exists, so it never overwrites anything.",
        schema,
        false,
    )
}

pub(crate) async fn call(ws: Arc<Workspace>, arguments: Map<String, Value>) -> CallToolResult {
    let args: Args = match parse_args("move_file", arguments) {
        Ok(args) => args,
        Err(result) => return result,
    };
    blocking(ws, move |ws| {
        let (from, to) = match ws
            .resolve(&args.from)
            .and_then(|f| ws.resolve(&args.to).map(|t| (f, t)))
        {
            Ok(paths) => paths,
            Err(e) => return error_result(e.to_string()),
        };
        match ws.rename(&from, &to) {
            Ok(()) => {
                let reports = vec![report(&from, None), report(&to, None)];
                with_edits(
                    text_result(format!(
                        "moved {} to {}",
                        from.display_path(),
                        to.display_path()
                    )),
                    reports,
                )
            }
            Err(e) => with_edits(
                error_result(e.to_string()),
                vec![report(&to, Some(e.to_string()))],
            ),
        }
    })
    .await
}
