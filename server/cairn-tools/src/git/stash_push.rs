//! `git_stash_push`: set local changes aside in a stash.

use cairn_toolkit::{CallContext, Category, Effect, JsonSchema, Paths, Tool};
use cairn_workspace::{Operation, Workspace};
use git2::{ErrorCode, StashFlags, StatusOptions};
use rmcp::model::CallToolResult;
use serde::Deserialize;

use super::{Git, GitResult, check_protected, identity, open, run, short};

/// The `git_stash_push` tool.
pub struct GitStashPush;

/// Arguments of `git_stash_push`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// A directory inside the repository, relative to the workspace root. Default: the workspace root.
    repo_path: Option<String>,
    /// A note to recognise the stash by.
    message: Option<String>,
    /// Also stash untracked files. Default false.
    #[serde(default)]
    include_untracked: bool,
}

impl Tool for GitStashPush {
    type Host = Git;
    type Args = Args;
    const NAME: &'static str = "git_stash_push";
    const TITLE: &'static str = "Git stash push";
    const DESCRIPTION: &'static str = "Set local changes aside (staged and unstaged, optionally untracked files) and clean the working tree; restore them with git_stash_pop.";
    const CATEGORY: Category = Category::Git;
    const EFFECT: Effect = Effect::Write;
    const AGENT_ONLY: bool = true;

    /// Changed through git2 (confined by `confine.rs`), not through the workspace's file checks.
    fn paths(_: &Args) -> Paths {
        Paths::metadata()
    }

    async fn call(git: &Git, args: Args, _: CallContext) -> CallToolResult {
        run(git, args, stash_push_impl).await
    }
}

fn stash_push_impl(ws: &Workspace, args: Args) -> GitResult {
    let mut r = open(ws, args.repo_path.as_deref())?;
    let sig = identity(&r.repo)?;
    let flags = if args.include_untracked {
        StashFlags::INCLUDE_UNTRACKED
    } else {
        StashFlags::DEFAULT
    };
    // The stash stores these files' contents (where git_show could read them back) and resets
    // them in the working tree: a protected one needs the user's approval first.
    let mut opts = StatusOptions::new();
    opts.include_untracked(args.include_untracked)
        .recurse_untracked_dirs(args.include_untracked)
        .include_ignored(false);
    let changed: Vec<String> = r
        .repo
        .statuses(Some(&mut opts))?
        .iter()
        .filter_map(|e| e.path().map(str::to_owned))
        .collect();
    for op in [Operation::Read, Operation::Write] {
        check_protected(ws, &r, changed.iter().map(String::as_str), op)?;
    }
    match r
        .repo
        .stash_save2(&sig, args.message.as_deref(), Some(flags))
    {
        Ok(id) => Ok(format!(
            "stashed local changes as stash@{{0}} ({})",
            short(id)
        )),
        Err(e) if e.code() == ErrorCode::NotFound => Err("no local changes to stash".into()),
        Err(e) => Err(e.into()),
    }
}
