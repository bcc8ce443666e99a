//! `git_stash_pop`: re-apply a stash and drop it, refusing to overwrite local changes.

use cairn_toolkit::{CallContext, Category, Effect, JsonSchema, Paths, Tool};
use cairn_workspace::{Operation, Workspace};
use git2::ErrorCode;
use rmcp::model::CallToolResult;
use serde::Deserialize;

use super::{Fail, Git, GitResult, changed_between, check_protected, open, run};

/// The `git_stash_pop` tool.
pub struct GitStashPop;

/// Arguments of `git_stash_pop`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// A directory inside the repository, relative to the workspace root. Default: the workspace root.
    repo_path: Option<String>,
    /// Which stash (see git_stash_list). Default 0, the newest.
    index: Option<usize>,
}

impl Tool for GitStashPop {
    type Host = Git;
    type Args = Args;
    const NAME: &'static str = "git_stash_pop";
    const TITLE: &'static str = "Git stash pop";
    const DESCRIPTION: &'static str = "Re-apply a stash to the working tree and drop it; refused if local changes would be overwritten.";
    const CATEGORY: Category = Category::Git;
    const EFFECT: Effect = Effect::Write;
    const AGENT_ONLY: bool = true;

    /// Changed through git2 (confined by `confine.rs`), not through the workspace's file checks.
    fn paths(_: &Args) -> Paths {
        Paths::metadata()
    }

    async fn call(git: &Git, args: Args, _: CallContext) -> CallToolResult {
        run(git, args, stash_pop_impl).await
    }
}

fn stash_pop_impl(ws: &Workspace, args: Args) -> GitResult {
    let mut r = open(ws, args.repo_path.as_deref())?;
    let index = args.index.unwrap_or(0);
    // The files the stash writes back (its working-tree changes and untracked files): a
    // protected one needs the user's approval first.
    let mut stashes = Vec::new();
    r.repo.stash_foreach(|_, _, id| {
        stashes.push(*id);
        true
    })?;
    if let Some(id) = stashes.get(index) {
        let stash = r.repo.find_commit(*id)?;
        let base = stash.parent(0)?.tree()?;
        let mut changed = changed_between(&r.repo, Some(&base), &stash.tree()?)?;
        if let Ok(untracked) = stash.parent(2) {
            changed.extend(changed_between(&r.repo, None, &untracked.tree()?)?);
        }
        check_protected(ws, &r, changed.iter().map(String::as_str), Operation::Write)?;
    }
    match r.repo.stash_pop(index, None) {
        Ok(()) => Ok(format!("applied and dropped stash@{{{index}}}")),
        Err(e) if e.code() == ErrorCode::NotFound => Err(Fail::from(format!(
            "there is no stash@{{{index}}}; see git_stash_list"
        ))),
        Err(e) => Err(Fail::from(format!(
            "could not apply stash@{{{index}}}: {} (the stash was kept; commit or stash local changes first)",
            e.message()
        ))),
    }
}
