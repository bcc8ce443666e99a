//! `stat`: what a path is, its size, mode and modification time.

use std::sync::Arc;

use cairn_workspace::{EntryKind, Workspace};
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
        json!({"path": {"type": "string", "description": "Path to describe, relative to the workspace root (or absolute inside it)."}}),
        &["path"],
    );
    tool(
        "stat",
        "File info",
        "Say whether a path exists and what it is (file, directory, symlink), with its size, permissions and modification time; use it before creating or overwriting.",
        schema,
        true,
    )
}

pub(crate) async fn call(ws: Arc<Workspace>, arguments: Map<String, Value>) -> CallToolResult {
    let args: Args = match parse_args("stat", arguments) {
        Ok(args) => args,
        Err(result) => return result,
    };
    blocking(ws, move |ws| {
        match ws
            .resolve(&args.path)
            .and_then(|p| ws.stat(&p).map(|s| (p, s)))
        {
            Ok((path, st)) => {
                let kind = match st.kind {
                    EntryKind::File => "file",
                    EntryKind::Dir => "directory",
                    EntryKind::Symlink => "symlink (not followed)",
                    EntryKind::Other => "special file",
                };
                let mut out = format!("{}: {kind}, {} bytes", path.display_path(), st.len);
                if let Some(mode) = st.mode {
                    out.push_str(&format!(", mode {mode:o}"));
                }
                if let Some(t) = st.modified_unix {
                    out.push_str(&format!(", modified {t} (Unix time)"));
                }
                if ws.open_document(&path).is_some() {
                    out.push_str(", open in the editor");
                }
                text_result(out)
            }
            Err(cairn_workspace::ScopeError::NotFound { .. }) => {
                text_result(format!("{} does not exist", args.path))
            }
            Err(e) => error_result(e.to_string()),
        }
    })
    .await
}
