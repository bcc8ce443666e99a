//! `find_files`: files whose name contains a substring (case-insensitive) or matches a glob.

use std::sync::Arc;

use cairn_workspace::Workspace;
use globset::GlobBuilder;
use rmcp::model::{CallToolResult, Tool};
use serde::Deserialize;
use serde_json::{Map, Value, json};

use crate::glob::{MAX_RESULTS, list, walk_options, with_walk_switches};
use crate::util::{blocking, error_result, object_schema, parse_args, text_result, tool};

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Args {
    name: String,
    path: Option<String>,
    include_hidden: Option<bool>,
    include_ignored: Option<bool>,
}

pub(crate) fn definition() -> Tool {
    let schema = object_schema(
        with_walk_switches(json!({
            "name": {"type": "string", "description": "Part of the file name (case-insensitive), or a glob on the name when it has `*`, `?`, `[` or `{` (`*_test.go`)."},
            "path": {"type": "string", "description": "Directory to search, relative to the workspace root. Default: the root."}
        })),
        &["name"],
    );
    tool(
        "find_files",
        "Find files by name",
        "Find files by name, anywhere below a directory (files ignored by .gitignore are skipped); use it when you know a file's name but not where it is.",
        schema,
        true,
    )
}

pub(crate) async fn call(ws: Arc<Workspace>, arguments: Map<String, Value>) -> CallToolResult {
    let args: Args = match parse_args("find_files", arguments) {
        Ok(args) => args,
        Err(result) => return result,
    };
    if args.name.is_empty() {
        return error_result("invalid argument `name` for find_files: it is empty");
    }
    let glob = if args.name.contains(['*', '?', '[', '{']) {
        match GlobBuilder::new(&args.name).case_insensitive(true).build() {
            Ok(glob) => Some(glob.compile_matcher()),
            Err(e) => return error_result(format!("invalid argument `name` for find_files: {e}")),
        }
    } else {
        None
    };
    let needle = args.name.to_lowercase();
    blocking(ws, move |ws| {
        let requested = args.path.as_deref().unwrap_or(".");
        let (start, walked) = match ws.resolve(requested).and_then(|p| {
            let options = walk_options(None, args.include_hidden, args.include_ignored);
            ws.walk_sorted(&p, &options, &|| false).map(|w| (p, w))
        }) {
            Ok(r) => r,
            Err(e) => return error_result(e.to_string()),
        };
        let mut found = Vec::new();
        let mut total = 0;
        for file in walked.files {
            let name = file
                .as_path()
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            let hit = match &glob {
                Some(glob) => glob.is_match(&name),
                None => name.to_lowercase().contains(&needle),
            };
            if hit {
                total += 1;
                if found.len() < MAX_RESULTS {
                    found.push(file.display_path());
                }
            }
        }
        text_result(list(
            &found,
            total,
            &format!("the name `{}` under {}", args.name, start.display_path()),
        ))
    })
    .await
}
