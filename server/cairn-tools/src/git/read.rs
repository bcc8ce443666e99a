//! The read-only git tools.

use std::fmt::Write as _;
use std::path::Path;

use cairn_workspace::Workspace;
use git2::{
    BranchType, Diff, DiffFindOptions, DiffFormat, DiffOptions, Oid, Sort, Status, StatusOptions,
};
use rmcp::model::Tool;
use serde::Deserialize;
use serde_json::json;

use super::tool;
use super::{Fail, GitResult, Repo, is_whole, one_line, open, schema, short};
use crate::util::MAX_OUTPUT_BYTES;

/// Commits shown by `git_log` and `git_file_history` when no `max_count` is given.
const DEFAULT_MAX_COUNT: usize = 30;
/// Most commits one call may show.
const MAX_COUNT_LIMIT: usize = 1000;
/// Most commits walked when filtering by path, so a huge history cannot stall a call.
const MAX_WALK: usize = 100_000;

fn max_count(requested: Option<usize>) -> Result<usize, Fail> {
    match requested {
        Some(0) => Err("invalid argument `max_count`: it must be at least 1".into()),
        Some(n) => Ok(n.min(MAX_COUNT_LIMIT)),
        None => Ok(DEFAULT_MAX_COUNT),
    }
}

// ---------------------------------------------------------------- git_status

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RepoArgs {
    repo_path: Option<String>,
}

pub(crate) fn status_def() -> Tool {
    tool(
        "git_status",
        "Git status",
        "Show the current branch and which files are staged, modified, untracked or conflicted; use it before staging or committing.",
        schema(json!({}), &[]),
        true,
    )
}

handler!(status, "git_status", RepoArgs, status_impl);

fn status_impl(ws: &Workspace, args: RepoArgs) -> GitResult {
    let r = open(ws, args.repo_path.as_deref())?;
    let mut out = format!("## {}\n", head_description(&r)?);
    let mut opts = StatusOptions::new();
    opts.include_untracked(true)
        .recurse_untracked_dirs(true)
        .include_ignored(false)
        .exclude_submodules(false);
    let statuses = r.repo.statuses(Some(&mut opts))?;
    for entry in statuses.iter() {
        let s = entry.status();
        let path = entry.path().unwrap_or("(non-UTF-8 path)");
        let code = if s.contains(Status::CONFLICTED) {
            "UU".to_owned()
        } else if s.contains(Status::WT_NEW) && !s.intersects(index_flags()) {
            "??".to_owned()
        } else {
            let x = if s.contains(Status::INDEX_NEW) {
                'A'
            } else if s.contains(Status::INDEX_MODIFIED) {
                'M'
            } else if s.contains(Status::INDEX_DELETED) {
                'D'
            } else if s.contains(Status::INDEX_RENAMED) {
                'R'
            } else if s.contains(Status::INDEX_TYPECHANGE) {
                'T'
            } else {
                ' '
            };
            let y = if s.contains(Status::WT_MODIFIED) {
                'M'
            } else if s.contains(Status::WT_DELETED) {
                'D'
            } else if s.contains(Status::WT_TYPECHANGE) {
                'T'
            } else if s.contains(Status::WT_RENAMED) {
                'R'
            } else if s.contains(Status::WT_NEW) {
                '?'
            } else {
                ' '
            };
            format!("{x}{y}")
        };
        let _ = writeln!(out, "{code} {path}");
        if out.len() > MAX_OUTPUT_BYTES {
            break;
        }
    }
    if statuses.is_empty() {
        out.push_str("nothing to commit, working tree clean\n");
    } else {
        out.push_str("(X = staged, Y = unstaged: M modified, A added, D deleted, R renamed, ?? untracked, UU conflicted)\n");
    }
    Ok(out)
}

fn index_flags() -> Status {
    Status::INDEX_NEW
        | Status::INDEX_MODIFIED
        | Status::INDEX_DELETED
        | Status::INDEX_RENAMED
        | Status::INDEX_TYPECHANGE
}

fn head_description(r: &Repo) -> Result<String, Fail> {
    let state = match r.repo.state() {
        git2::RepositoryState::Clean => String::new(),
        other => format!(" [{other:?} in progress]"),
    };
    let head = match r.repo.head() {
        Ok(head) => head,
        Err(e) if e.code() == git2::ErrorCode::UnbornBranch => {
            let name = r
                .repo
                .find_reference("HEAD")
                .ok()
                .and_then(|h| h.symbolic_target().map(str::to_owned))
                .unwrap_or_default();
            let name = name.strip_prefix("refs/heads/").unwrap_or(&name).to_owned();
            return Ok(format!("{name} (no commits yet){state}"));
        }
        Err(e) => return Err(e.into()),
    };
    let id = head.target().map(short).unwrap_or_default();
    if r.repo.head_detached().unwrap_or(false) {
        Ok(format!("HEAD (detached at {id}){state}"))
    } else {
        Ok(format!(
            "{} at {id}{state}",
            head.shorthand().unwrap_or("?")
        ))
    }
}

// ---------------------------------------------------------------- git_diff

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct DiffArgs {
    repo_path: Option<String>,
    #[serde(default)]
    staged: bool,
    from: Option<String>,
    to: Option<String>,
    #[serde(default)]
    paths: Vec<String>,
    context_lines: Option<u32>,
}

pub(crate) fn diff_def() -> Tool {
    tool(
        "git_diff",
        "Git diff",
        "Show changes as a patch: unstaged changes by default, staged ones with `staged`, or between revisions with `from`/`to`; use `paths` to narrow it.",
        schema(
            json!({
                "staged": {"type": "boolean", "description": "Diff HEAD against the index (what would be committed). Default false."},
                "from": {"type": "string", "description": "A revision (branch, tag, commit id, HEAD~1). Alone: diff it against the working tree."},
                "to": {"type": "string", "description": "A second revision; diff `from` against it. Needs `from`."},
                "paths": {"type": "array", "items": {"type": "string"}, "description": "Only these files or directories (workspace paths)."},
                "context_lines": {"type": "integer", "minimum": 0, "maximum": 100, "description": "Context lines around changes. Default 3."}
            }),
            &[],
        ),
        true,
    )
}

handler!(diff, "git_diff", DiffArgs, diff_impl);

fn diff_impl(ws: &Workspace, args: DiffArgs) -> GitResult {
    let r = open(ws, args.repo_path.as_deref())?;
    let mut opts = DiffOptions::new();
    opts.context_lines(args.context_lines.unwrap_or(3).min(100));
    for p in &args.paths {
        let rel = r.rel_path(ws, "path", p)?;
        if !is_whole(&rel) {
            opts.pathspec(rel);
        }
    }
    opts.disable_pathspec_match(true);
    let diff = match (&args.from, &args.to, args.staged) {
        (None, Some(_), _) => return Err("`to` needs `from`".into()),
        (Some(_), _, true) => return Err("give either `staged` or `from`/`to`, not both".into()),
        (Some(from), Some(to), false) => {
            let a = r.commit("from", from)?.tree()?;
            let b = r.commit("to", to)?.tree()?;
            r.repo
                .diff_tree_to_tree(Some(&a), Some(&b), Some(&mut opts))?
        }
        (Some(from), None, false) => {
            let a = r.commit("from", from)?.tree()?;
            r.repo
                .diff_tree_to_workdir_with_index(Some(&a), Some(&mut opts))?
        }
        (None, None, true) => {
            let head = r.head_commit()?.map(|c| c.tree()).transpose()?;
            r.repo
                .diff_tree_to_index(head.as_ref(), None, Some(&mut opts))?
        }
        (None, None, false) => r.repo.diff_index_to_workdir(None, Some(&mut opts))?,
    };
    let patch = render_patch(ws, &r, &diff)?;
    if patch.is_empty() {
        return Ok("(no differences)".to_owned());
    }
    Ok(patch)
}

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
fn hidden(ws: &Workspace, r: &Repo, delta: &git2::DiffDelta<'_>) -> bool {
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
fn stat_lines(ws: &Workspace, r: &Repo, diff: &Diff<'_>) -> GitResult {
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

// ---------------------------------------------------------------- git_log

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct LogArgs {
    repo_path: Option<String>,
    max_count: Option<usize>,
    path: Option<String>,
    rev: Option<String>,
}

pub(crate) fn log_def() -> Tool {
    tool(
        "git_log",
        "Git log",
        "List recent commits, one line each (id, date, author, summary); use `path` for the commits touching a file or directory.",
        schema(
            json!({
                "max_count": {"type": "integer", "minimum": 1, "maximum": MAX_COUNT_LIMIT, "description": format!("How many commits. Default {DEFAULT_MAX_COUNT}.")},
                "path": {"type": "string", "description": "Only commits that change this file or directory (workspace path)."},
                "rev": {"type": "string", "description": "Start from this revision instead of HEAD."}
            }),
            &[],
        ),
        true,
    )
}

handler!(log, "git_log", LogArgs, log_impl);

fn log_impl(ws: &Workspace, args: LogArgs) -> GitResult {
    let r = open(ws, args.repo_path.as_deref())?;
    let limit = max_count(args.max_count)?;
    let rel = match &args.path {
        Some(p) => Some(r.rel_path(ws, "path", p)?).filter(|rel| !is_whole(rel)),
        None => None,
    };
    let start = match &args.rev {
        Some(rev) => r.commit("rev", rev)?,
        None => match r.head_commit()? {
            Some(c) => c,
            None => return Ok("(no commits yet)".to_owned()),
        },
    };
    let mut walk = r.repo.revwalk()?;
    walk.set_sorting(Sort::TIME)?;
    walk.push(start.id())?;
    let mut out = String::new();
    let mut shown = 0;
    for (walked, id) in walk.enumerate() {
        if shown >= limit || walked >= MAX_WALK {
            break;
        }
        let commit = r.repo.find_commit(id?)?;
        if let Some(rel) = &rel
            && !touches(&commit, rel)?
        {
            continue;
        }
        out.push_str(&one_line(&commit));
        out.push('\n');
        shown += 1;
    }
    if shown == 0 {
        out.push_str("(no commits)");
    }
    Ok(out)
}

/// The id of `rel` in `commit`'s tree, if it exists there.
fn entry_id(commit: &git2::Commit<'_>, rel: &str) -> Result<Option<Oid>, Fail> {
    let tree = commit.tree()?;
    match tree.get_path(Path::new(rel)) {
        Ok(entry) => Ok(Some(entry.id())),
        Err(e) if e.code() == git2::ErrorCode::NotFound => Ok(None),
        Err(e) => Err(e.into()),
    }
}

/// Whether `commit` changed `rel` relative to its first parent.
fn touches(commit: &git2::Commit<'_>, rel: &str) -> Result<bool, Fail> {
    let mine = entry_id(commit, rel)?;
    let parent = match commit.parent(0) {
        Ok(p) => entry_id(&p, rel)?,
        Err(_) => None,
    };
    Ok(mine != parent)
}

// ---------------------------------------------------------------- git_show

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct ShowArgs {
    repo_path: Option<String>,
    rev: Option<String>,
}

pub(crate) fn show_def() -> Tool {
    tool(
        "git_show",
        "Git show",
        "Show one commit: author, date, full message, changed-file stats and the patch; use it to understand what a commit did.",
        schema(
            json!({
                "rev": {"type": "string", "description": "The commit (id, branch, tag, HEAD~2). Default HEAD."}
            }),
            &[],
        ),
        true,
    )
}

handler!(show, "git_show", ShowArgs, show_impl);

fn show_impl(ws: &Workspace, args: ShowArgs) -> GitResult {
    let r = open(ws, args.repo_path.as_deref())?;
    let commit = r.commit("rev", args.rev.as_deref().unwrap_or("HEAD"))?;
    let author = commit.author();
    let mut out = format!(
        "commit {}\nAuthor: {} <{}>\nDate:   {}\n",
        commit.id(),
        author.name().unwrap_or("?"),
        author.email().unwrap_or("?"),
        super::date(author.when()),
    );
    if commit.parent_count() > 1 {
        let parents: Vec<String> = commit.parent_ids().map(short).collect();
        let _ = writeln!(
            out,
            "Merge:  {} (diff against the first parent)",
            parents.join(" ")
        );
    }
    out.push('\n');
    for line in String::from_utf8_lossy(commit.message_bytes()).lines() {
        let _ = writeln!(out, "    {line}");
    }
    out.push('\n');
    let parent_tree = match commit.parent(0) {
        Ok(p) => Some(p.tree()?),
        Err(_) => None,
    };
    let mut diff = r
        .repo
        .diff_tree_to_tree(parent_tree.as_ref(), Some(&commit.tree()?), None)?;
    diff.find_similar(Some(DiffFindOptions::new().renames(true)))?;
    out.push_str(&stat_lines(ws, &r, &diff)?);
    out.push('\n');
    out.push_str(&render_patch(ws, &r, &diff)?);
    Ok(out)
}

// ---------------------------------------------------------------- git_blame

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct BlameArgs {
    repo_path: Option<String>,
    path: String,
    start_line: Option<usize>,
    end_line: Option<usize>,
}

pub(crate) fn blame_def() -> Tool {
    tool(
        "git_blame",
        "Git blame",
        "Show which commit and author last changed each line of a file (as committed at HEAD); use start_line/end_line for a range.",
        schema(
            json!({
                "path": {"type": "string", "description": "The file (workspace path)."},
                "start_line": {"type": "integer", "minimum": 1, "description": "First line, counting from 1."},
                "end_line": {"type": "integer", "minimum": 1, "description": "Last line (inclusive)."}
            }),
            &["path"],
        ),
        true,
    )
}

handler!(blame, "git_blame", BlameArgs, blame_impl);

fn blame_impl(ws: &Workspace, args: BlameArgs) -> GitResult {
    let r = open(ws, args.repo_path.as_deref())?;
    let rel = r.rel_path(ws, "path", &args.path)?;
    if is_whole(&rel) {
        return Err("`path` must name a file, not the repository root".into());
    }
    r.check_read(ws, &args.path)?;
    let head = r
        .head_commit()?
        .ok_or_else(|| Fail::from("the repository has no commits yet"))?;
    let entry = head.tree()?.get_path(Path::new(&rel)).map_err(|_| {
        Fail(format!(
            "`{}` is not in the HEAD commit (new or untracked files have no blame)",
            args.path
        ))
    })?;
    let blob = r
        .repo
        .find_blob(entry.id())
        .map_err(|_| Fail(format!("`{}` is a directory, not a file", args.path)))?;
    if blob.is_binary() {
        return Err(Fail(format!("`{}` is a binary file", args.path)));
    }
    let text = String::from_utf8_lossy(blob.content()).into_owned();
    let total = text.lines().count();
    if total == 0 {
        return Ok("(empty file)".to_owned());
    }
    let start = args.start_line.unwrap_or(1);
    let end = args.end_line.unwrap_or(total).min(total);
    if start == 0 || start > end {
        return Err(Fail(format!(
            "invalid line range {start}-{end}: the file has {total} lines, counted from 1"
        )));
    }
    let mut opts = git2::BlameOptions::new();
    opts.min_line(start).max_line(end).newest_commit(head.id());
    let blame = r.repo.blame_file(Path::new(&rel), Some(&mut opts))?;
    let mut out = String::new();
    for (n, line) in text.lines().enumerate().map(|(i, l)| (i + 1, l)) {
        if n < start {
            continue;
        }
        if n > end || out.len() > MAX_OUTPUT_BYTES {
            break;
        }
        let who = match blame.get_line(n) {
            Some(hunk) => {
                let sig = hunk.final_signature();
                format!(
                    "{} {} {:<16}",
                    short(hunk.final_commit_id()),
                    super::date(sig.when()),
                    sig.name()
                        .unwrap_or("?")
                        .chars()
                        .take(16)
                        .collect::<String>()
                )
            }
            None => "?".repeat(7),
        };
        let (line, _) = crate::util::cut_line(line, 500);
        let _ = writeln!(out, "{who} {n:>5}\t{line}");
    }
    Ok(out)
}

// ---------------------------------------------------------------- git_branches

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct BranchesArgs {
    repo_path: Option<String>,
    #[serde(default)]
    remote: bool,
}

pub(crate) fn branches_def() -> Tool {
    tool(
        "git_branches",
        "Git branches",
        "List the local branches (the current one marked `*`) with their latest commit; `remote` adds remote-tracking branches.",
        schema(
            json!({
                "remote": {"type": "boolean", "description": "Also list remote-tracking branches (as last fetched; nothing is contacted). Default false."}
            }),
            &[],
        ),
        true,
    )
}

handler!(branches, "git_branches", BranchesArgs, branches_impl);

fn branches_impl(ws: &Workspace, args: BranchesArgs) -> GitResult {
    let r = open(ws, args.repo_path.as_deref())?;
    let filter = if args.remote {
        None
    } else {
        Some(BranchType::Local)
    };
    let mut out = String::new();
    for branch in r.repo.branches(filter)? {
        let (branch, kind) = branch?;
        let name = String::from_utf8_lossy(branch.name_bytes()?).into_owned();
        let mark = if branch.is_head() { '*' } else { ' ' };
        let tip = match branch.get().peel_to_commit() {
            Ok(c) => one_line(&c),
            Err(_) => "(no commit)".to_owned(),
        };
        let prefix = if kind == BranchType::Remote {
            "remotes/"
        } else {
            ""
        };
        let _ = writeln!(out, "{mark} {prefix}{name}  {tip}");
    }
    if out.is_empty() {
        out.push_str("(no branches yet: the repository has no commits)");
    }
    Ok(out)
}

// ---------------------------------------------------------------- git_stash_list

pub(crate) fn stash_list_def() -> Tool {
    tool(
        "git_stash_list",
        "Git stash list",
        "List the stashes (index and message); use it before git_stash_pop to pick one.",
        schema(json!({}), &[]),
        true,
    )
}

handler!(stash_list, "git_stash_list", RepoArgs, stash_list_impl);

fn stash_list_impl(ws: &Workspace, args: RepoArgs) -> GitResult {
    let mut r = open(ws, args.repo_path.as_deref())?;
    let mut out = String::new();
    r.repo.stash_foreach(|index, message, id| {
        let _ = writeln!(out, "stash@{{{index}}} {} {message}", short(*id));
        true
    })?;
    if out.is_empty() {
        out.push_str("(no stashes)");
    }
    Ok(out)
}

// ---------------------------------------------------------------- git_tags

pub(crate) fn tags_def() -> Tool {
    tool(
        "git_tags",
        "Git tags",
        "List the tags with the commit each points to and, for annotated tags, their message.",
        schema(json!({}), &[]),
        true,
    )
}

handler!(tags, "git_tags", RepoArgs, tags_impl);

fn tags_impl(ws: &Workspace, args: RepoArgs) -> GitResult {
    let r = open(ws, args.repo_path.as_deref())?;
    let mut out = String::new();
    for name in r.repo.tag_names(None)?.iter().flatten() {
        let reference = r.repo.find_reference(&format!("refs/tags/{name}"))?;
        let annotation = reference.peel_to_tag().ok().and_then(|t| {
            t.message()
                .map(|m| m.lines().next().unwrap_or("").to_owned())
        });
        let target = match reference.peel_to_commit() {
            Ok(c) => one_line(&c),
            Err(_) => "(not a commit)".to_owned(),
        };
        match annotation {
            Some(m) => {
                let _ = writeln!(out, "{name}  -> {target}  [annotated: {m}]");
            }
            None => {
                let _ = writeln!(out, "{name}  -> {target}");
            }
        }
        if out.len() > MAX_OUTPUT_BYTES {
            break;
        }
    }
    if out.is_empty() {
        out.push_str("(no tags)");
    }
    Ok(out)
}

// ---------------------------------------------------------------- git_remotes

pub(crate) fn remotes_def() -> Tool {
    tool(
        "git_remotes",
        "Git remotes",
        "List the configured remotes with their URLs (read from the configuration; nothing is contacted).",
        schema(json!({}), &[]),
        true,
    )
}

handler!(remotes, "git_remotes", RepoArgs, remotes_impl);

fn remotes_impl(ws: &Workspace, args: RepoArgs) -> GitResult {
    let r = open(ws, args.repo_path.as_deref())?;
    let mut out = String::new();
    for name in r.repo.remotes()?.iter().flatten() {
        let remote = r.repo.find_remote(name)?;
        let url = remote.url().map(redact).unwrap_or_default();
        let _ = writeln!(out, "{name}\t{url} (fetch)");
        let push = remote.pushurl().map(redact).unwrap_or_else(|| url.clone());
        let _ = writeln!(out, "{name}\t{push} (push)");
    }
    if out.is_empty() {
        out.push_str("(no remotes)");
    }
    Ok(out)
}

/// A URL with any password in its user-info replaced, so tokens are not shown to the model.
fn redact(url: &str) -> String {
    let Some(scheme_end) = url.find("://") else {
        return url.to_owned();
    };
    let rest = &url[scheme_end + 3..];
    let authority_end = rest.find('/').unwrap_or(rest.len());
    let authority = &rest[..authority_end];
    match authority.rfind('@') {
        Some(at) => {
            let userinfo = &authority[..at];
            let user = userinfo.split(':').next().unwrap_or("");
            let masked = if userinfo.contains(':') {
                format!("{user}:***")
            } else {
                "***".to_owned()
            };
            format!("{}{masked}{}", &url[..scheme_end + 3], &rest[at..])
        }
        None => url.to_owned(),
    }
}

// ---------------------------------------------------------------- git_merge_base

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct MergeBaseArgs {
    repo_path: Option<String>,
    a: String,
    b: String,
}

pub(crate) fn merge_base_def() -> Tool {
    tool(
        "git_merge_base",
        "Git merge base",
        "Find the best common ancestor of two revisions, e.g. where a branch forked from main.",
        schema(
            json!({
                "a": {"type": "string", "description": "The first revision."},
                "b": {"type": "string", "description": "The second revision."}
            }),
            &["a", "b"],
        ),
        true,
    )
}

handler!(merge_base, "git_merge_base", MergeBaseArgs, merge_base_impl);

fn merge_base_impl(ws: &Workspace, args: MergeBaseArgs) -> GitResult {
    let r = open(ws, args.repo_path.as_deref())?;
    let a = r.commit("a", &args.a)?.id();
    let b = r.commit("b", &args.b)?.id();
    match r.repo.merge_base(a, b) {
        Ok(id) => {
            let commit = r.repo.find_commit(id)?;
            Ok(format!("{}\n{}", id, one_line(&commit)))
        }
        Err(e) if e.code() == git2::ErrorCode::NotFound => Ok(format!(
            "`{}` and `{}` have no common ancestor",
            args.a, args.b
        )),
        Err(e) => Err(e.into()),
    }
}

// ---------------------------------------------------------------- git_file_history

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct FileHistoryArgs {
    repo_path: Option<String>,
    path: String,
    max_count: Option<usize>,
}

pub(crate) fn file_history_def() -> Tool {
    tool(
        "git_file_history",
        "Git file history",
        "List the commits that changed one file, newest first, following renames; use it to see how a file evolved.",
        schema(
            json!({
                "path": {"type": "string", "description": "The file (workspace path), as named at HEAD."},
                "max_count": {"type": "integer", "minimum": 1, "maximum": MAX_COUNT_LIMIT, "description": format!("How many commits. Default {DEFAULT_MAX_COUNT}.")}
            }),
            &["path"],
        ),
        true,
    )
}

handler!(
    file_history,
    "git_file_history",
    FileHistoryArgs,
    file_history_impl
);

fn file_history_impl(ws: &Workspace, args: FileHistoryArgs) -> GitResult {
    let r = open(ws, args.repo_path.as_deref())?;
    let limit = max_count(args.max_count)?;
    let mut current = r.rel_path(ws, "path", &args.path)?;
    if is_whole(&current) {
        return Err("`path` must name a file; use git_log for the whole repository".into());
    }
    let Some(head) = r.head_commit()? else {
        return Ok("(no commits yet)".to_owned());
    };
    let mut walk = r.repo.revwalk()?;
    walk.set_sorting(Sort::TOPOLOGICAL | Sort::TIME)?;
    walk.simplify_first_parent()?;
    walk.push(head.id())?;
    let mut out = String::new();
    let mut shown = 0;
    for (walked, id) in walk.enumerate() {
        if shown >= limit || walked >= MAX_WALK {
            break;
        }
        let commit = r.repo.find_commit(id?)?;
        let mine = entry_id(&commit, &current)?;
        if mine.is_none() {
            continue;
        }
        let parent = commit.parent(0).ok();
        let theirs = match &parent {
            Some(p) => entry_id(p, &current)?,
            None => None,
        };
        if mine == theirs {
            continue;
        }
        let mut line = one_line(&commit);
        let mut renamed_from = None;
        if let (Some(p), None) = (&parent, theirs) {
            let mut opts = DiffOptions::new();
            let mut diff = r.repo.diff_tree_to_tree(
                Some(&p.tree()?),
                Some(&commit.tree()?),
                Some(&mut opts),
            )?;
            diff.find_similar(Some(DiffFindOptions::new().renames(true)))?;
            for delta in diff.deltas() {
                let new = delta.new_file().path().and_then(Path::to_str);
                // A rename is found by likeness of contents; followed only when the user may
                // read both files, or it would say how alike a withheld file is to another.
                if delta.status() == git2::Delta::Renamed
                    && new == Some(current.as_str())
                    && !hidden(ws, &r, &delta)
                {
                    renamed_from = delta
                        .old_file()
                        .path()
                        .and_then(Path::to_str)
                        .map(str::to_owned);
                }
            }
        }
        let _ = write!(line, "  [{current}]");
        if let Some(old) = renamed_from {
            let _ = write!(line, " (renamed from {old})");
            current = old;
        }
        out.push_str(&line);
        out.push('\n');
        shown += 1;
    }
    if shown == 0 {
        out.push_str("(no commits touch this path)");
    }
    Ok(out)
}

// ---------------------------------------------------------------- git_conflicts

pub(crate) fn conflicts_def() -> Tool {
    tool(
        "git_conflicts",
        "Git conflicts",
        "List the paths with unresolved merge conflicts in the index and which sides (base, ours, theirs) each has.",
        schema(json!({}), &[]),
        true,
    )
}

handler!(conflicts, "git_conflicts", RepoArgs, conflicts_impl);

fn conflicts_impl(ws: &Workspace, args: RepoArgs) -> GitResult {
    let r = open(ws, args.repo_path.as_deref())?;
    let index = r.repo.index()?;
    let mut out = String::new();
    for conflict in index.conflicts()? {
        let conflict = conflict?;
        let path = [&conflict.our, &conflict.their, &conflict.ancestor]
            .into_iter()
            .flatten()
            .next()
            .map(|e| String::from_utf8_lossy(&e.path).into_owned())
            .unwrap_or_default();
        let mut sides = Vec::new();
        if conflict.ancestor.is_some() {
            sides.push("base");
        }
        if conflict.our.is_some() {
            sides.push("ours");
        }
        if conflict.their.is_some() {
            sides.push("theirs");
        }
        let _ = writeln!(out, "{path}\t({})", sides.join(", "));
    }
    if out.is_empty() {
        out.push_str("(no conflicts)");
    }
    Ok(out)
}
