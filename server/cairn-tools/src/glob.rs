//! `glob`: files whose path matches a glob, ignore-aware.
//!
//! Patterns are `globset` globs matched against the path relative to `path` (default the
//! root); `*` stays within one directory, `**` crosses any number. Files come from
//! [`Workspace::walk_sorted`], so ignored and hidden files, `.git` and symlinks are left out,
//! and they are listed in path order.
//!
//! [`Workspace::walk_sorted`]: cairn_workspace::Workspace::walk_sorted

use std::path::Path;

use cairn_toolkit::reply::{error, text};
use cairn_toolkit::{CallContext, Category, Effect, JsonSchema, Paths, Tool};
use globset::GlobBuilder;
use rmcp::model::CallToolResult;
use serde::Deserialize;

use crate::Files;
use crate::util::blocking;
use crate::walk::{list, walk_options};

/// The `glob` tool.
pub struct Glob;

/// Arguments of `glob`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// Glob matched against paths relative to `path`: `*` within a directory, `**` across directories, `{a,b}` alternatives (`src/**/*.rs`, `**/*.{ts,tsx}`).
    pattern: String,
    /// Directory to search, relative to the workspace root. Default: the root.
    path: Option<String>,
    /// Also include hidden files and directories (names starting with `.`; `.git` never). Default false.
    include_hidden: Option<bool>,
    /// Also include files that .gitignore or .ignore rules leave out. Default false.
    include_ignored: Option<bool>,
}

impl Tool for Glob {
    type Host = Files;
    type Args = Args;
    const NAME: &'static str = "glob";
    const TITLE: &'static str = "Find files by glob";
    const DESCRIPTION: &'static str = "List files whose path matches a glob such as `src/**/*.rs` (files ignored by .gitignore are skipped); use it to find files by location and extension.";
    const CATEGORY: Category = Category::File;
    const EFFECT: Effect = Effect::Read;
    const AGENT_ONLY: bool = false;

    /// The walk skips what the user may not read.
    fn paths(_: &Args) -> Paths {
        Paths::walks()
    }

    async fn call(files: &Files, args: Args, _: CallContext) -> CallToolResult {
        let matcher = match GlobBuilder::new(&args.pattern)
            .literal_separator(true)
            .build()
        {
            Ok(glob) => glob.compile_matcher(),
            Err(e) => return error(format!("invalid argument `pattern` for glob: {e}")),
        };
        blocking(files.workspace(), move |ws| {
            let requested = args.path.as_deref().unwrap_or(".");
            // Matched on the walk's threads, so only matching files are kept and sorted.
            let keep = |rel: &Path| matcher.is_match(rel);
            let (start, walked) = match ws.resolve(requested).and_then(|p| {
                let options = walk_options(None, args.include_hidden, args.include_ignored);
                ws.walk_sorted_where(&p, &options, &|| false, &keep)
                    .map(|w| (p, w))
            }) {
                Ok(r) => r,
                Err(e) => return error(e.to_string()),
            };
            text(list(
                &walked.files,
                &format!("`{}` under {}", args.pattern, start.display_path()),
            ))
        })
        .await
    }
}
