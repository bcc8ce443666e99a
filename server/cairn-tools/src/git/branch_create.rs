//! `git_branch_create`: a new local branch at HEAD or a start revision, without switching to it.

use cairn_toolkit::{CallContext, Category, Effect, JsonSchema, Paths, Tool};
use cairn_workspace::Workspace;
use git2::{Branch, ErrorCode};
use rmcp::model::CallToolResult;
use serde::Deserialize;

use super::{Fail, Git, GitResult, one_line, open, refuse_dash, run};

/// The `git_branch_create` tool.
pub struct GitBranchCreate;

/// Arguments of `git_branch_create`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// A directory inside the repository, relative to the workspace root. Default: the workspace root.
    repo_path: Option<String>,
    /// The new branch name, e.g. `fix/parser`.
    name: String,
    /// Revision the branch starts at. Default HEAD.
    start: Option<String>,
}

impl Tool for GitBranchCreate {
    type Host = Git;
    type Args = Args;
    const NAME: &'static str = "git_branch_create";
    const TITLE: &'static str = "Create git branch";
    const DESCRIPTION: &'static str = "Create a new local branch at HEAD or at `start`, without switching to it; follow with git_switch to work on it.";
    const CATEGORY: Category = Category::Git;
    const EFFECT: Effect = Effect::Write;
    const AGENT_ONLY: bool = true;

    /// Changed through git2 (confined by `confine.rs`), not through the workspace's file checks.
    fn paths(_: &Args) -> Paths {
        Paths::metadata()
    }

    async fn call(git: &Git, args: Args, _: CallContext) -> CallToolResult {
        run(git, args, branch_create_impl).await
    }
}

fn branch_create_impl(ws: &Workspace, args: Args) -> GitResult {
    let r = open(ws, args.repo_path.as_deref())?;
    refuse_dash("branch name", &args.name)?;
    if !Branch::name_is_valid(&args.name)? {
        return Err(Fail::from(format!(
            "`{}` is not a valid branch name",
            args.name
        )));
    }
    let start = match &args.start {
        Some(rev) => r.commit("start", rev)?,
        None => r
            .head_commit()?
            .ok_or_else(|| Fail::from("the repository has no commits yet; commit first"))?,
    };
    match r.repo.branch(&args.name, &start, false) {
        Ok(_) => Ok(format!(
            "created branch {} at {}",
            args.name,
            one_line(&start)
        )),
        Err(e) if e.code() == ErrorCode::Exists => Err(Fail::from(format!(
            "a branch named `{}` already exists",
            args.name
        ))),
        Err(e) => Err(e.into()),
    }
}
