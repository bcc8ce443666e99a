//! Version-control tools (category `git`), built on libgit2 through `git2`.
//!
//! The tools, in the order listed in [`GIT_TOOLS`], each one type in its own file (`W` =
//! [`Effect::Write`](cairn_toolkit::Effect::Write) and agent-only, else
//! [`Effect::Read`](cairn_toolkit::Effect::Read)):
//!
//! | tool | effect | what it does |
//! | --- | --- | --- |
//! | `git_status` | read | branch, staged, unstaged, untracked and conflicted paths |
//! | `git_diff` | read | unstaged, `staged`, or `from`/`to` refs; optional paths; capped |
//! | `git_log` | read | one line per commit: id, date, author, summary; optional path |
//! | `git_show` | read | one commit: header, message, stats, patch (capped) |
//! | `git_blame` | read | who last changed each line of a file, optional line range |
//! | `git_branches` | read | local (and optionally remote-tracking) branches, current marked |
//! | `git_branch_create` | W | a new branch at HEAD or a start ref |
//! | `git_switch` | W | check out a local branch, refusing to overwrite local changes |
//! | `git_stage` | W | add paths (including deletions) to the index |
//! | `git_unstage` | W | reset paths in the index to HEAD |
//! | `git_commit` | W | commit the index with the configured identity |
//! | `git_stash_push` | W | stash local changes |
//! | `git_stash_pop` | W | apply and drop a stash |
//! | `git_stash_list` | read | the stashes |
//! | `git_tags` | read | tags with their targets |
//! | `git_remotes` | read | remote names and URLs (never contacted) |
//! | `git_merge_base` | read | the best common ancestor of two refs |
//! | `git_file_history` | read | commits touching one path, following renames |
//! | `git_conflicts` | read | conflicted paths in the index |
//!
//! That is 19 tool names: the three stash tools count as two of the 18 in issue 4 item 6, and
//! `git_tag_create` is not offered.
//!
//! This module holds what the tools share: opening and confining the repository ([`open`]),
//! argument checks, the output cap ([`finish`]) and one-line commit rendering; `render` renders
//! diffs (withholding unreadable files) and `history` walks commits.
//!
//! Security (SECURITY.md B9): the git CLI is never run, so no hook, fsmonitor, pager or filter
//! command can start (libgit2 implements none of them). The repository is discovered from a
//! `repo_path` resolved by [`Workspace::resolve`] (default: the workspace root), searching up no
//! further than that root and reading no `GIT_*` environment variable, and it is used only if
//! every location git2 reads or writes for it lies inside a workspace root (the `confine`
//! module: git directory, common directory, working directory, object directories and their
//! alternates, config includes and path keys, every symlink in its git data, and repositories
//! nested in its working tree). Every path argument goes through [`Workspace::resolve`] as well,
//! and a ref or path beginning with `-` is refused. Files the user may not read show in diffs by
//! name only: nothing derived from their contents (blob ids, line counts, similarity) is output,
//! and a revision that names something other than a commit is refused like a missing one.

mod blame;
mod branch_create;
mod branches;
mod commit;
mod confine;
mod conflicts;
mod diff;
mod file_history;
mod history;
mod log;
mod merge_base;
mod remotes;
mod render;
mod show;
mod stage;
mod stash_list;
mod stash_pop;
mod stash_push;
mod status;
mod switch;
mod tags;
mod unstage;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use cairn_agent::tools::{ProtectedPath, attach_protected, protected_of};
use cairn_toolkit::reply::{error, text};
use cairn_toolkit::{Entry, JsonSchema, Paths, ToolSet};
use cairn_workspace::{Operation, Workspace};
use git2::{Commit, Oid, Repository};
use rmcp::model::CallToolResult;
use serde::Deserialize;

use crate::util::{MAX_OUTPUT_BYTES, blocking};

/// What the git tools share: the workspace whose repositories they act on.
#[derive(Debug, Clone)]
pub struct Git {
    workspace: Arc<Workspace>,
}

impl cairn_toolkit::Host for Git {
    fn workspace(&self) -> Option<&Arc<Workspace>> {
        Some(&self.workspace)
    }
}

/// The git tools, in the order listed.
pub const GIT_TOOLS: &[Entry<Git>] = &[
    Entry::of::<status::GitStatus>(),
    Entry::of::<diff::GitDiff>(),
    Entry::of::<log::GitLog>(),
    Entry::of::<show::GitShow>(),
    Entry::of::<blame::GitBlame>(),
    Entry::of::<branches::GitBranches>(),
    Entry::of::<branch_create::GitBranchCreate>(),
    Entry::of::<switch::GitSwitch>(),
    Entry::of::<stage::GitStage>(),
    Entry::of::<unstage::GitUnstage>(),
    Entry::of::<commit::GitCommit>(),
    Entry::of::<stash_push::GitStashPush>(),
    Entry::of::<stash_pop::GitStashPop>(),
    Entry::of::<stash_list::GitStashList>(),
    Entry::of::<tags::GitTags>(),
    Entry::of::<remotes::GitRemotes>(),
    Entry::of::<merge_base::GitMergeBase>(),
    Entry::of::<file_history::GitFileHistory>(),
    Entry::of::<conflicts::GitConflicts>(),
];

/// The version-control tools over the repositories of one workspace.
pub fn git_tools(workspace: Arc<Workspace>) -> ToolSet<Git> {
    ToolSet::new(Git { workspace }, GIT_TOOLS)
}

/// Arguments of the tools that take only the repository.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RepoArgs {
    /// A directory inside the repository, relative to the workspace root. Default: the workspace root.
    repo_path: Option<String>,
}

/// Runs `imp` off the executor (git2 blocks) and caps its text.
pub(crate) async fn run<A: Send + 'static>(
    git: &Git,
    args: A,
    imp: fn(&Workspace, A) -> GitResult,
) -> CallToolResult {
    blocking(git.workspace.clone(), move |ws| finish(imp(ws, args))).await
}

/// A tool failure, already worded for the model; with the protected paths it names when the
/// call would touch them without an approval (the agent then asks the user about each).
pub(crate) struct Fail(String, Vec<ProtectedPath>);

impl From<git2::Error> for Fail {
    fn from(e: git2::Error) -> Fail {
        Fail(format!("git error: {}", e.message()), Vec::new())
    }
}

impl From<confine::RepoEscape> for Fail {
    fn from(e: confine::RepoEscape) -> Fail {
        Fail(e.to_string(), Vec::new())
    }
}

impl From<String> for Fail {
    fn from(s: String) -> Fail {
        Fail(s, Vec::new())
    }
}

impl From<&str> for Fail {
    fn from(s: &str) -> Fail {
        Fail(s.to_owned(), Vec::new())
    }
}

pub(crate) type GitResult = Result<String, Fail>;

/// Refuses, naming them for the agent, the protected paths among `changed` (relative to the
/// repository's working directory) that the call would touch (`op`) without an approval. The
/// files a checkout or a stash rewrites are only known once git has computed them, so these
/// tools check here what others declare in `paths()`; staging reads a file into the object
/// database (where `git_show` could read it back), so it checks reads.
pub(crate) fn check_protected<'a>(
    ws: &Workspace,
    r: &Repo,
    changed: impl IntoIterator<Item = &'a str>,
    op: Operation,
) -> Result<(), Fail> {
    let paths = changed.into_iter().fold(Paths::none(), |paths, rel| {
        let abs = r
            .workdir
            .join(rel.trim_end_matches('/'))
            .display()
            .to_string();
        match op {
            Operation::Read => paths.and_read(abs),
            _ => paths.and_write(abs),
        }
    });
    match paths.refusal(ws) {
        None => Ok(()),
        Some(refusal) => {
            let message = refusal
                .content
                .iter()
                .filter_map(|c| c.as_text().map(|t| t.text.clone()))
                .collect::<Vec<_>>()
                .join("\n");
            Err(Fail(message, protected_of(&refusal)))
        }
    }
}

/// The paths (relative to the working directory) that differ between `old` (none: empty) and
/// `new`.
pub(crate) fn changed_between(
    repo: &Repository,
    old: Option<&git2::Tree<'_>>,
    new: &git2::Tree<'_>,
) -> Result<Vec<String>, Fail> {
    let diff = repo.diff_tree_to_tree(old, Some(new), None)?;
    let mut paths: Vec<String> = diff
        .deltas()
        .flat_map(|d| [d.old_file().path(), d.new_file().path()])
        .flatten()
        .map(|p| p.to_string_lossy().into_owned())
        .collect();
    paths.sort();
    paths.dedup();
    Ok(paths)
}

/// Turn a handler's outcome into a result, capping the text.
pub(crate) fn finish(result: GitResult) -> CallToolResult {
    match result {
        Ok(out) => text(cap(out)),
        Err(Fail(message, protected)) if protected.is_empty() => error(message),
        Err(Fail(message, protected)) => attach_protected(error(message), &protected),
    }
}

/// `text` cut at [`MAX_OUTPUT_BYTES`] on a line (or character) boundary, with a note.
pub fn cap(mut text: String) -> String {
    if text.len() <= MAX_OUTPUT_BYTES {
        return text;
    }
    let mut at = MAX_OUTPUT_BYTES;
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    if let Some(nl) = text.get(..at).and_then(|t| t.rfind('\n')) {
        at = nl + 1;
    }
    text.truncate(at);
    text.push_str(&format!(
        "[output capped at {MAX_OUTPUT_BYTES} bytes; narrow the request (paths, max_count, a line range) to see the rest]"
    ));
    text
}

/// The repository at or above `repo_path` (default: the workspace root), opened and confined
/// exactly as the git tools open theirs (see the module docs); the error is worded for the model.
/// For tools elsewhere (release chores) that read history through the same checks.
pub fn open_repository(
    ws: &Workspace,
    repo_path: Option<&str>,
) -> Result<Repository, cairn_toolkit::ToolError> {
    open(ws, repo_path)
        .map(|r| r.repo)
        .map_err(|Fail(message, _)| cairn_toolkit::ToolError::invalid(message))
}

/// An opened repository whose working directory is inside the workspace.
pub(crate) struct Repo {
    pub(crate) repo: Repository,
    /// The canonical working directory.
    pub(crate) workdir: PathBuf,
}

/// Open the repository containing `repo_path` (default: the workspace root). The search goes up
/// from there but not above the root it started in, reads nothing from the environment, and the
/// repository is used only if every location git2 would read or write lies inside the workspace
/// ([`confine::confine`]).
pub(crate) fn open(ws: &Workspace, repo_path: Option<&str>) -> Result<Repo, Fail> {
    let requested = repo_path.unwrap_or(".");
    refuse_dash("repo_path", requested)?;
    let start = ws
        .resolve(requested)
        .map_err(|e| Fail::from(e.to_string()))?;
    // Without OPEN_FROM_ENV libgit2 reads no GIT_* variable; the ceiling stops the search at the
    // outermost root holding the start, so no repository above the workspace is even opened.
    let outermost = ws
        .roots()
        .iter()
        .filter(|root| start.as_path().starts_with(root))
        .min_by_key(|root| root.components().count());
    let ceiling: Vec<&Path> = outermost
        .and_then(|root| root.parent())
        .into_iter()
        .collect();
    let repo = Repository::open_ext(start.as_path(), git2::RepositoryOpenFlags::empty(), ceiling)
        .map_err(|e| {
        Fail::from(format!(
            "no git repository found at or above {} inside the workspace ({}); if the workspace \
             lies inside a repository, open the repository's own directory as the workspace",
            start.display_path(),
            e.message()
        ))
    })?;
    let Some(workdir) = repo.workdir() else {
        return Err("refused: the repository is bare (it has no working directory)".into());
    };
    let workdir = workdir.canonicalize().map_err(|e| {
        Fail::from(format!(
            "cannot resolve the repository's working directory: {e}"
        ))
    })?;
    confine::confine(ws, &repo)?;
    let r = Repo { repo, workdir };
    check_nested(&r, ws, &[])?;
    Ok(r)
}

/// Refuses when a repository nested in `r`'s working tree (a submodule, or a repository about to
/// be added as one) has git data outside the workspace: libgit2 opens those to read their HEAD
/// when it looks at the working tree (status, diffs against it, staging). `extra` are more
/// repository-relative paths to check (directories about to be staged).
pub(crate) fn check_nested(r: &Repo, ws: &Workspace, extra: &[String]) -> Result<(), Fail> {
    let index = r.repo.index()?;
    let gitlinks = index
        .iter()
        .filter(|e| e.mode == 0o160_000)
        .map(|e| String::from_utf8_lossy(&e.path).into_owned());
    for rel in gitlinks.chain(extra.iter().cloned()) {
        let dir = r.workdir.join(rel.trim_end_matches('/'));
        if let Ok(nested) = Repository::open_ext(
            &dir,
            git2::RepositoryOpenFlags::NO_SEARCH,
            std::iter::empty::<&std::ffi::OsStr>(),
        ) {
            confine::confine(ws, &nested)
                .map_err(|e| Fail::from(format!("{e} (the repository nested at {rel})")))?;
        }
    }
    Ok(())
}

/// Refuse an argument that git could read as an option.
pub(crate) fn refuse_dash(what: &str, value: &str) -> Result<(), Fail> {
    if value.starts_with('-') {
        return Err(Fail::from(format!(
            "refused {what} `{value}`: refs and paths may not begin with `-`"
        )));
    }
    Ok(())
}

impl Repo {
    /// A workspace path argument as a repository-relative path (`/`-separated, empty for the
    /// working directory itself).
    pub(crate) fn rel_path(&self, ws: &Workspace, what: &str, path: &str) -> Result<String, Fail> {
        refuse_dash(what, path)?;
        let resolved = ws.resolve(path).map_err(|e| Fail::from(e.to_string()))?;
        let rel = resolved
            .as_path()
            .strip_prefix(&self.workdir)
            .map_err(|_| {
                Fail::from(format!(
                    "refused {what} `{path}`: it is outside the repository at {}",
                    self.workdir.display()
                ))
            })?;
        let mut parts = Vec::new();
        for c in rel.components() {
            match c.as_os_str().to_str() {
                Some(s) => parts.push(s.to_owned()),
                None => return Err(Fail::from(format!("{what} `{path}` is not valid UTF-8"))),
            }
        }
        Ok(parts.join("/"))
    }

    /// True when the user may see the contents of `rel` (relative to the working directory).
    pub(crate) fn may_read(&self, ws: &Workspace, rel: &Path) -> bool {
        let abs = self.workdir.join(rel);
        match abs.to_str().map(|a| ws.resolve(a)) {
            Some(Ok(path)) => ws.may_read(&path),
            // A path that cannot be resolved inside the workspace is not shown.
            _ => false,
        }
    }

    /// Refuses a path argument whose contents the user may not see.
    pub(crate) fn check_read(&self, ws: &Workspace, path: &str) -> Result<(), Fail> {
        let resolved = ws.resolve(path).map_err(|e| Fail::from(e.to_string()))?;
        ws.check(&resolved, cairn_workspace::Operation::Read)
            .map_err(|e| Fail::from(e.to_string()))
    }

    /// A revision (`HEAD`, a branch, a tag, an id, `main~2`...) as a commit.
    ///
    /// Every failure gets the same message, without libgit2's: its peel errors print the id of
    /// the object met (a file's blob id), and telling "no such object" from "not a commit" would
    /// let a caller test guessed blob ids of a file it may not read.
    pub(crate) fn commit(&self, what: &str, rev: &str) -> Result<Commit<'_>, Fail> {
        refuse_dash(what, rev)?;
        self.repo
            .revparse_single(rev)
            .and_then(|object| object.peel_to_commit())
            .map_err(|_| {
                Fail::from(format!(
                    "{what} `{rev}` does not name a commit (give a branch, a tag, a commit id or an \
                     expression such as HEAD~2)"
                ))
            })
    }

    /// The HEAD commit, or `None` on a branch with no commits yet.
    pub(crate) fn head_commit(&self) -> Result<Option<Commit<'_>>, Fail> {
        match self.repo.head() {
            Ok(head) => Ok(Some(head.peel_to_commit()?)),
            Err(e) if e.code() == git2::ErrorCode::UnbornBranch => Ok(None),
            Err(e) if e.code() == git2::ErrorCode::NotFound => Ok(None),
            Err(e) => Err(e.into()),
        }
    }
}

/// The configured identity, or an error that says how to set it.
pub(crate) fn identity(repo: &Repository) -> Result<git2::Signature<'static>, Fail> {
    repo.signature().map_err(|e| {
        Fail::from(format!(
            "no commit identity is configured ({}); ask the user to set one, e.g. \
             `git config user.name \"Their Name\"` and `git config user.email them@example.com` \
             in the repository (or with --global)",
            e.message()
        ))
    })
}

/// A seven-hex-digit abbreviation of `id`.
pub(crate) fn short(id: Oid) -> String {
    let mut s = id.to_string();
    s.truncate(7);
    s
}

/// `YYYY-MM-DD` of a git time (UTC offset applied).
pub fn date(time: git2::Time) -> String {
    let secs = time.seconds() + i64::from(time.offset_minutes()) * 60;
    let days = secs.div_euclid(86_400);
    // Civil-from-days (Howard Hinnant).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = if m <= 2 { y + 1 } else { y };
    format!("{y:04}-{m:02}-{d:02}")
}

/// `id date author summary` for one commit.
pub(crate) fn one_line(commit: &Commit<'_>) -> String {
    let author = commit.author();
    format!(
        "{} {} {} {}",
        short(commit.id()),
        date(author.when()),
        author.name().unwrap_or("?"),
        commit.summary().unwrap_or("")
    )
}

/// Whether `path` (relative to the workdir) names the working directory itself.
pub(crate) fn is_whole(rel: &str) -> bool {
    rel.is_empty() || Path::new(rel) == Path::new(".")
}

/// The repository-relative pathspecs for `paths`; empty (everything) when one of them is the
/// whole working tree.
pub(crate) fn pathspecs(ws: &Workspace, r: &Repo, paths: &[String]) -> Result<Vec<String>, Fail> {
    if paths.is_empty() {
        return Err("invalid argument `paths`: give at least one path".into());
    }
    let mut specs = Vec::new();
    let mut whole = false;
    for p in paths {
        let rel = r.rel_path(ws, "path", p)?;
        whole |= is_whole(&rel);
        specs.push(rel);
    }
    if whole {
        specs.clear();
    }
    Ok(specs)
}
