//! Diff rendering shared by the tools that show changes: patches and `--stat` lines, with the
//! changes of files the user may not read withheld.

use std::fmt::Write as _;

use cairn_workspace::Workspace;
use git2::{Diff, DiffFormat};

use super::{GitResult, Repo};
use crate::util::MAX_OUTPUT_BYTES;

/// The patch text of `diff`, stopping a little past the output cap. The changes of files the
/// user may not read (protected, or outside their read grants) are withheld, and with them
/// everything derived from their contents: the header is rebuilt from the paths and the kind of
/// change alone, so no blob id (`index` line), similarity index, hunk range or binary note shows.
pub(crate) fn render_patch(ws: &Workspace, r: &Repo, diff: &Diff<'_>) -> GitResult {
    let mut out = String::new();
    let mut stopped = false;
    let printed = diff.print(DiffFormat::Patch, |delta, _, line| {
        if hidden(ws, r, &delta) {
            if line.origin() == 'F' {
                out.push_str(&withheld_header(ws, r, &delta));
            }
            return true;
        }
        if matches!(line.origin(), '+' | '-' | ' ') {
            out.push(line.origin());
        }
        out.push_str(&String::from_utf8_lossy(line.content()));
        if out.len() > MAX_OUTPUT_BYTES {
            stopped = true;
            return false;
        }
        true
    });
    match printed {
        Err(e) if !stopped => Err(e.into()),
        _ => Ok(out),
    }
}

/// Whether either side of `delta` is a file the user may not read.
pub(crate) fn hidden(ws: &Workspace, r: &Repo, delta: &git2::DiffDelta<'_>) -> bool {
    [delta.old_file().path(), delta.new_file().path()]
        .into_iter()
        .flatten()
        .any(|p| !r.may_read(ws, p))
}

/// The header of a withheld file's change: paths and the kind of change, nothing from contents.
/// A rename or copy pairs two files because their contents are alike; when one side is
/// readable the pair would say how alike, so it is shown as a deletion and an addition instead.
fn withheld_header(ws: &Workspace, r: &Repo, delta: &git2::DiffDelta<'_>) -> String {
    let (old, new) = paths_of(delta);
    let one = |path: &str, kind: &str| {
        format!(
            "diff --git a/{path} b/{path}\n[changes withheld: you may not read this file, or it is protected; it was {kind}]\n"
        )
    };
    match delta.status() {
        git2::Delta::Renamed | git2::Delta::Copied if !pair_hidden(ws, r, delta) => {
            let mut out = String::new();
            if delta.status() == git2::Delta::Renamed {
                out.push_str(&one(&old, "deleted"));
            }
            out.push_str(&one(&new, "added"));
            out
        }
        git2::Delta::Renamed => format!(
            "diff --git a/{old} b/{new}\n[changes withheld: you may not read this file, or it is protected; it was renamed from {old}]\n"
        ),
        git2::Delta::Copied => format!(
            "diff --git a/{old} b/{new}\n[changes withheld: you may not read this file, or it is protected; it was copied from {old}]\n"
        ),
        git2::Delta::Added => one(&new, "added"),
        git2::Delta::Deleted => one(&old, "deleted"),
        _ => one(&new, "changed"),
    }
}

/// The old and new paths of `delta`, as text.
fn paths_of(delta: &git2::DiffDelta<'_>) -> (String, String) {
    let name = |f: git2::DiffFile<'_>| {
        f.path()
            .map(|p| p.to_string_lossy().into_owned())
            .unwrap_or_default()
    };
    (name(delta.old_file()), name(delta.new_file()))
}

/// Whether both sides of `delta` are files the user may not read.
fn pair_hidden(ws: &Workspace, r: &Repo, delta: &git2::DiffDelta<'_>) -> bool {
    [delta.old_file().path(), delta.new_file().path()]
        .into_iter()
        .flatten()
        .all(|p| !r.may_read(ws, p))
}

/// `git show --stat`-like lines: per file the lines added and removed, and a total; a file the
/// user may not read is listed as withheld and counts toward nothing (its counts derive from its
/// contents).
pub(crate) fn stat_lines(ws: &Workspace, r: &Repo, diff: &Diff<'_>) -> GitResult {
    let mut out = String::new();
    let (mut files, mut added, mut removed, mut withheld) = (0, 0, 0, 0);
    for (idx, delta) in diff.deltas().enumerate() {
        let path = delta
            .new_file()
            .path()
            .or(delta.old_file().path())
            .map(|p| p.to_string_lossy().into_owned())
            .unwrap_or_default();
        if hidden(ws, r, &delta) {
            let (old, new) = paths_of(&delta);
            // A rename pairing a readable file with a withheld one is listed as two files.
            let mixed = matches!(delta.status(), git2::Delta::Renamed)
                && old != new
                && !pair_hidden(ws, r, &delta);
            for p in if mixed { vec![old, new] } else { vec![path] } {
                withheld += 1;
                let _ = writeln!(out, " {p} | withheld");
            }
            continue;
        }
        files += 1;
        match git2::Patch::from_diff(diff, idx)? {
            Some(patch) => {
                let (_, a, d) = patch.line_stats()?;
                added += a;
                removed += d;
                let _ = writeln!(
                    out,
                    " {path} | {} {}{}",
                    a + d,
                    "+".repeat(a.min(40)),
                    "-".repeat(d.min(40))
                );
            }
            None => {
                let _ = writeln!(out, " {path} | binary");
            }
        }
        if out.len() > MAX_OUTPUT_BYTES {
            break;
        }
    }
    let plural =
        |n: usize, one: &str, many: &str| format!("{n} {}", if n == 1 { one } else { many });
    let _ = write!(
        out,
        " {} changed, {}, {}",
        plural(files, "file", "files"),
        plural(added, "insertion(+)", "insertions(+)"),
        plural(removed, "deletion(-)", "deletions(-)")
    );
    if withheld > 0 {
        let _ = write!(
            out,
            " ({} not counted)",
            plural(withheld, "withheld file", "withheld files")
        );
    }
    out.push('\n');
    Ok(out)
}
