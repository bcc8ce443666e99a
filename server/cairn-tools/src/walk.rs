//! What the walking tools (`grep`, `glob`, `tree`, `find_files`) share: the walk their switches
//! ask for, and the listing of found paths.

use std::fmt::Write as _;

use cairn_workspace::{WalkOptions, WorkspacePath};

/// Paths listed at most by `glob` and `find_files`.
const MAX_RESULTS: usize = 500;

/// The walk asked for by the `include_hidden` and `include_ignored` switches.
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

/// The files a walk found, at most [`MAX_RESULTS`] of them, with a note when more matched than
/// are shown.
pub(crate) fn list(files: &[WorkspacePath], what: &str) -> String {
    if files.is_empty() {
        return format!("no files match {what}");
    }
    let shown = files.len().min(MAX_RESULTS);
    let mut out = files[..shown]
        .iter()
        .map(WorkspacePath::display_path)
        .collect::<Vec<_>>()
        .join("\n");
    if files.len() > shown {
        let _ = write!(
            out,
            "\n[showed {shown} of {} matches; narrow the pattern]",
            files.len()
        );
    }
    out
}
