//! `find_files`: files whose name contains a substring (case-insensitive) or matches a glob.

use std::ffi::OsStr;
use std::path::Path;
use std::sync::Arc;

use cairn_workspace::{Workspace, WorkspacePath};
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
        let start = match ws.resolve(requested) {
            Ok(start) => start,
            Err(e) => return error_result(e.to_string()),
        };
        // Matched on the walk's threads, so only matching files are kept and sorted.
        let keep = |rel: &Path| {
            // Empty when `path` names the file itself.
            let name = rel
                .file_name()
                .or_else(|| start.as_path().file_name())
                .map(OsStr::to_string_lossy)
                .unwrap_or_default();
            match &glob {
                Some(glob) => glob.is_match(name.as_ref()),
                None => name.to_lowercase().contains(&needle),
            }
        };
        let options = walk_options(None, args.include_hidden, args.include_ignored);
        let walked = match ws.walk_sorted_where(&start, &options, &|| false, &keep) {
            Ok(walked) => walked,
            Err(e) => return error_result(e.to_string()),
        };
        let total = walked.files.len();
        let found: Vec<String> = walked
            .files
            .iter()
            .take(MAX_RESULTS)
            .map(WorkspacePath::display_path)
            .collect();
        text_result(list(
            &found,
            total,
            &format!("the name `{}` under {}", args.name, start.display_path()),
        ))
    })
    .await
}
