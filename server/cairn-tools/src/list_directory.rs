//! `list_directory`: the entries of a directory, symlinks marked and not followed.

use std::fmt::Write as _;
use std::sync::Arc;

use cairn_workspace::{DirEntry, EntryKind, Workspace};
use rmcp::model::{CallToolResult, Tool};
use serde::Deserialize;
use serde_json::{Map, Value, json};

use crate::util::{
    MAX_OUTPUT_BYTES, blocking, error_result, object_schema, parse_args, text_result, tool,
};

/// Entries shown at most.
const MAX_ENTRIES: usize = 1000;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Args {
    path: Option<String>,
}

pub(crate) fn definition() -> Tool {
    let schema = object_schema(
        json!({
            "path": {
                "type": "string",
                "description": "Directory to list, relative to the workspace root (or absolute inside it). Default: the root."
            }
        }),
        &[],
    );
    tool(
        "list_directory",
        "List directory",
        "List a directory's entries (directories end in `/`, symlinks in `@`); use it to find your way around the workspace.",
        schema,
        true,
    )
}

pub(crate) async fn call(ws: Arc<Workspace>, arguments: Map<String, Value>) -> CallToolResult {
    let args: Args = match parse_args("list_directory", arguments) {
        Ok(args) => args,
        Err(result) => return result,
    };
    blocking(ws, move |ws| {
        let requested = args.path.as_deref().unwrap_or(".");
        match ws
            .resolve(requested)
            .and_then(|p| ws.list_dir(&p).map(|e| (p, e)))
        {
            Ok((path, entries)) => text_result(render(&path.display_path(), &entries)),
            Err(e) => error_result(e.to_string()),
        }
    })
    .await
}

pub(crate) fn render(path: &str, entries: &[DirEntry]) -> String {
    if entries.is_empty() {
        return format!("{path} is an empty directory");
    }
    let mut out = format!(
        "{path} ({} entries; `/` marks a directory, `@` a symlink, which is not followed)\n",
        entries.len()
    );
    let mut shown = 0;
    for entry in entries {
        let suffix = match entry.kind {
            EntryKind::File => "",
            EntryKind::Dir => "/",
            EntryKind::Symlink => "@",
            EntryKind::Other => " (special file)",
        };
        if shown == MAX_ENTRIES || out.len() > MAX_OUTPUT_BYTES {
            break;
        }
        let _ = writeln!(out, "{}{suffix}", entry.name);
        shown += 1;
    }
    if shown < entries.len() {
        let _ = write!(
            out,
            "[showed {shown} of {} entries; list a subdirectory or use grep with a glob to narrow]",
            entries.len()
        );
    }
    out
}
