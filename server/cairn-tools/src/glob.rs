//! `glob`: files whose path matches a glob, ignore-aware.
//!
//! Patterns are `globset` globs matched against the path relative to `path` (default the
//! root); `*` stays within one directory, `**` crosses any number. Files come from
//! [`Workspace::walk_sorted`], so ignored and hidden files, `.git` and symlinks are left out,
//! and they are listed in path order.

use std::fmt::Write as _;
use std::path::Path;
use std::sync::Arc;

use cairn_workspace::{WalkOptions, Workspace, WorkspacePath};
use globset::GlobBuilder;
use rmcp::model::{CallToolResult, Tool};
use serde::Deserialize;
use serde_json::{Map, Value, json};

use crate::util::{blocking, error_result, object_schema, parse_args, text_result, tool};

pub(crate) const MAX_RESULTS: usize = 500;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Args {
    pattern: String,
    path: Option<String>,
    include_hidden: Option<bool>,
    include_ignored: Option<bool>,
}

pub(crate) fn definition() -> Tool {
    let schema = object_schema(
        with_walk_switches(json!({
            "pattern": {"type": "string", "description": "Glob matched against paths relative to `path`: `*` within a directory, `**` across directories, `{a,b}` alternatives (`src/**/*.rs`, `**/*.{ts,tsx}`)."},
            "path": {"type": "string", "description": "Directory to search, relative to the workspace root. Default: the root."}
        })),
        &["pattern"],
    );
    tool(
        "glob",
        "Find files by glob",
        "List files whose path matches a glob such as `src/**/*.rs` (files ignored by .gitignore are skipped); use it to find files by location and extension.",
        schema,
        true,
    )
}

/// `properties` with the walk switches `grep`, `glob`, `tree` and `find_files` share.
pub(crate) fn with_walk_switches(mut properties: Value) -> Value {
    if let Some(map) = properties.as_object_mut() {
        map.insert(
            "include_hidden".to_owned(),
            json!({"type": "boolean", "description": "Also include hidden files and directories (names starting with `.`; `.git` never). Default false."}),
        );
        map.insert(
            "include_ignored".to_owned(),
            json!({"type": "boolean", "description": "Also include files that .gitignore or .ignore rules leave out. Default false."}),
        );
    }
    properties
}

/// The walk asked for by the switches of [`with_walk_switches`].
pub(crate) fn walk_options(
    glob: Option<String>,
    include_hidden: Option<bool>,
    include_ignored: Option<bool>,
) -> WalkOptions {
    WalkOptions {
        glob,
        include_hidden: include_hidden.unwrap_or(false),
        include_ignored: include_ignored.unwrap_or(false),
    }
}

/// Paths under a walk, listed; shared with `find_files`.
pub(crate) fn list(found: &[String], total: usize, what: &str) -> String {
    if total == 0 {
        return format!("no files match {what}");
    }
    let mut out = found.join("\n");
    if total > found.len() {
        let _ = write!(
            out,
            "\n[showed {} of {total} matches; narrow the pattern]",
            found.len()
        );
    }
    out
}

pub(crate) async fn call(ws: Arc<Workspace>, arguments: Map<String, Value>) -> CallToolResult {
    let args: Args = match parse_args("glob", arguments) {
        Ok(args) => args,
        Err(result) => return result,
    };
    let matcher = match GlobBuilder::new(&args.pattern)
        .literal_separator(true)
        .build()
    {
        Ok(glob) => glob.compile_matcher(),
        Err(e) => return error_result(format!("invalid argument `pattern` for glob: {e}")),
    };
    blocking(ws, move |ws| {
        let requested = args.path.as_deref().unwrap_or(".");
        // Matched on the walk's threads, so only matching files are kept and sorted.
        let keep = |rel: &Path| matcher.is_match(rel);
        let (start, walked) = match ws.resolve(requested).and_then(|p| {
            let options = walk_options(None, args.include_hidden, args.include_ignored);
            ws.walk_sorted_where(&p, &options, &|| false, &keep)
                .map(|w| (p, w))
        }) {
            Ok(r) => r,
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
            &format!("`{}` under {}", args.pattern, start.display_path()),
        ))
    })
    .await
}
