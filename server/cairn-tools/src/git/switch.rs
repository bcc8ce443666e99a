//! `git_switch`: check out a local branch, refusing to overwrite local changes.

use cairn_toolkit::{CallContext, Category, Effect, JsonSchema, Paths, Tool};
use cairn_workspace::{Operation, Workspace};
use git2::BranchType;
use git2::build::CheckoutBuilder;
use rmcp::model::CallToolResult;
use serde::Deserialize;

use super::{
    Fail, Git, GitResult, changed_between, check_protected, one_line, open, refuse_dash, run,
};

/// The `git_switch` tool.
pub struct GitSwitch;

/// Arguments of `git_switch`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// A directory inside the repository, relative to the workspace root. Default: the workspace root.
    repo_path: Option<String>,
    /// The local branch to switch to.
    branch: String,
}

impl Tool for GitSwitch {
    type Host = Git;
    type Args = Args;
    const NAME: &'static str = "git_switch";
    const TITLE: &'static str = "Switch git branch";
    const DESCRIPTION: &'static str = "Check out an existing local branch; refused if local changes would be overwritten (commit or stash them first).";
    const CATEGORY: Category = Category::Git;
    const EFFECT: Effect = Effect::Write;
    const AGENT_ONLY: bool = true;

    /// Changed through git2 (confined by `confine.rs`), not through the workspace's file checks.
    fn paths(_: &Args) -> Paths {
        Paths::metadata()
    }

    async fn call(git: &Git, args: Args, _: CallContext) -> CallToolResult {
        run(git, args, switch_impl).await
    }
}

fn switch_impl(ws: &Workspace, args: Args) -> GitResult {
    let r = open(ws, args.repo_path.as_deref())?;
    refuse_dash("branch", &args.branch)?;
    let branch = r
        .repo
        .find_branch(&args.branch, BranchType::Local)
        .map_err(|_| {
            Fail::from(format!(
                "no local branch named `{}`; list them with git_branches, or create it with git_branch_create",
                args.branch
            ))
        })?;
    if branch.is_head() {
        return Ok(format!("already on {}", args.branch));
    }
    let refname = branch
        .get()
        .name()
        .ok_or_else(|| Fail::from("the branch name is not valid UTF-8"))?
        .to_owned();
    let commit = branch.get().peel_to_commit()?;
    // The files the checkout rewrites: a protected one needs the user's approval first.
    let head = r.repo.head()?.peel_to_tree()?;
    let changed = changed_between(&r.repo, Some(&head), &commit.tree()?)?;
    check_protected(ws, &r, changed.iter().map(String::as_str), Operation::Write)?;
    let mut checkout = CheckoutBuilder::new();
    checkout.safe();
    r.repo
        .checkout_tree(commit.as_object(), Some(&mut checkout))
        .map_err(|e| {
            Fail::from(format!(
                "refused to switch to {}: {} (local changes would be overwritten; commit them with git_commit or stash them with git_stash_push first)",
                args.branch,
                e.message()
            ))
        })?;
    r.repo.set_head(&refname)?;
    Ok(format!(
        "switched to {} at {}",
        args.branch,
        one_line(&commit)
    ))
}
