//! What the walking tools (`grep`, `glob`, `tree`, `find_files`) share: the walk their switches
//! ask for, and the listing of found paths.

use std::fmt::Write as _;

use cairn_workspace::WalkOptions;

/// Paths listed at most by `glob` and `find_files`.
pub(crate) const MAX_RESULTS: usize = 500;

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

/// Paths under a walk, listed, with a note when more matched than are shown.
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
