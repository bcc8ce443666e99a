//! `git_status`: the current branch and the staged, unstaged, untracked and conflicted paths.

use std::fmt::Write as _;

use cairn_toolkit::{CallContext, Category, Effect, Paths, Tool};
use cairn_workspace::Workspace;
use git2::{Status, StatusOptions};
use rmcp::model::CallToolResult;

use super::{Fail, Git, GitResult, Repo, RepoArgs, open, run, short};
use crate::util::MAX_OUTPUT_BYTES;

/// The `git_status` tool.
pub struct GitStatus;

impl Tool for GitStatus {
    type Host = Git;
    type Args = RepoArgs;
    const NAME: &'static str = "git_status";
    const TITLE: &'static str = "Git status";
    const DESCRIPTION: &'static str = "Show the current branch and which files are staged, modified, untracked or conflicted; use it before staging or committing.";
    const CATEGORY: Category = Category::Git;
    const EFFECT: Effect = Effect::Read;
    const AGENT_ONLY: bool = false;

    /// Read through git2 (confined by `confine.rs`); the tool withholds files the user may not see.
    fn paths(_: &RepoArgs) -> Paths {
        Paths::metadata()
    }

    async fn call(git: &Git, args: RepoArgs, _: CallContext) -> CallToolResult {
        run(git, args, status_impl).await
    }
}

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
