//! `find_files`: files whose name contains a substring (case-insensitive) or matches a glob.

use std::ffi::OsStr;
use std::path::Path;

use cairn_toolkit::reply::{error, text};
use cairn_toolkit::{CallContext, Category, Effect, JsonSchema, Paths, Tool};
use globset::GlobBuilder;
use rmcp::model::CallToolResult;
use serde::Deserialize;

use crate::Files;
use crate::util::blocking;
use crate::walk::{list, walk_options};

/// The `find_files` tool.
pub struct FindFiles;

/// Arguments of `find_files`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// Part of the file name (case-insensitive), or a glob on the name when it has `*`, `?`, `[` or `{` (`*_test.go`).
    name: String,
    /// Directory to search, relative to the workspace root. Default: the root.
    path: Option<String>,
    /// Also include hidden files and directories (names starting with `.`; `.git` never). Default false.
    include_hidden: Option<bool>,
    /// Also include files that .gitignore or .ignore rules leave out. Default false.
    include_ignored: Option<bool>,
}

impl Tool for FindFiles {
    type Host = Files;
    type Args = Args;
    const NAME: &'static str = "find_files";
    const TITLE: &'static str = "Find files by name";
    const DESCRIPTION: &'static str = "Find files by name, anywhere below a directory (files ignored by .gitignore are skipped); use it when you know a file's name but not where it is.";
    const CATEGORY: Category = Category::File;
    const EFFECT: Effect = Effect::Read;
    const AGENT_ONLY: bool = false;

    /// The walk skips what the user may not read.
    fn paths(_: &Args) -> Paths {
        Paths::walks()
    }

    async fn call(files: &Files, args: Args, _: CallContext) -> CallToolResult {
        if args.name.is_empty() {
            return error("invalid argument `name` for find_files: it is empty");
        }
        let glob = if args.name.contains(['*', '?', '[', '{']) {
            match GlobBuilder::new(&args.name).case_insensitive(true).build() {
                Ok(glob) => Some(glob.compile_matcher()),
                Err(e) => return error(format!("invalid argument `name` for find_files: {e}")),
            }
        } else {
            None
        };
        let needle = args.name.to_lowercase();
        blocking(files.workspace(), move |ws| {
            let requested = args.path.as_deref().unwrap_or(".");
            let start = match ws.resolve(requested) {
                Ok(start) => start,
                Err(e) => return error(e.to_string()),
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
                Err(e) => return error(e.to_string()),
            };
            text(list(
                &walked.files,
                &format!("the name `{}` under {}", args.name, start.display_path()),
            ))
        })
        .await
    }
}
