//! `git_branches`: the local (and optionally remote-tracking) branches, the current one marked.

use std::fmt::Write as _;

use cairn_toolkit::{CallContext, Category, Effect, JsonSchema, Paths, Tool};
use cairn_workspace::Workspace;
use git2::BranchType;
use rmcp::model::CallToolResult;
use serde::Deserialize;

use super::{Git, GitResult, one_line, open, run};

/// The `git_branches` tool.
pub struct GitBranches;

/// Arguments of `git_branches`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// A directory inside the repository, relative to the workspace root. Default: the workspace root.
    repo_path: Option<String>,
    /// Also list remote-tracking branches (as last fetched; nothing is contacted). Default false.
    #[serde(default)]
    remote: bool,
}

impl Tool for GitBranches {
    type Host = Git;
    type Args = Args;
    const NAME: &'static str = "git_branches";
    const TITLE: &'static str = "Git branches";
    const DESCRIPTION: &'static str = "List the local branches (the current one marked `*`) with their latest commit; `remote` adds remote-tracking branches.";
    const CATEGORY: Category = Category::Git;
    const EFFECT: Effect = Effect::Read;
    const AGENT_ONLY: bool = false;

    /// Read through git2 (confined by `confine.rs`); the tool withholds files the user may not see.
    fn paths(_: &Args) -> Paths {
        Paths::metadata()
    }

    async fn call(git: &Git, args: Args, _: CallContext) -> CallToolResult {
        run(git, args, branches_impl).await
    }
}

fn branches_impl(ws: &Workspace, args: Args) -> GitResult {
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
