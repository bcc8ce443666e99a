//! `git_stash_list`: the stashes, with index and message.

use std::fmt::Write as _;

use cairn_toolkit::{CallContext, Category, Effect, Paths, Tool};
use cairn_workspace::Workspace;
use rmcp::model::CallToolResult;

use super::{Git, GitResult, RepoArgs, open, run, short};

/// The `git_stash_list` tool.
pub struct GitStashList;

impl Tool for GitStashList {
    type Host = Git;
    type Args = RepoArgs;
    const NAME: &'static str = "git_stash_list";
    const TITLE: &'static str = "Git stash list";
    const DESCRIPTION: &'static str =
        "List the stashes (index and message); use it before git_stash_pop to pick one.";
    const CATEGORY: Category = Category::Git;
    const EFFECT: Effect = Effect::Read;
    const AGENT_ONLY: bool = false;

    /// Read through git2 (confined by `confine.rs`); the tool withholds files the user may not see.
    fn paths(_: &RepoArgs) -> Paths {
        Paths::metadata()
    }

    async fn call(git: &Git, args: RepoArgs, _: CallContext) -> CallToolResult {
        run(git, args, stash_list_impl).await
    }
}

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
