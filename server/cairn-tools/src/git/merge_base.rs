//! `git_merge_base`: the best common ancestor of two revisions.

use cairn_toolkit::{CallContext, Category, Effect, JsonSchema, Paths, Tool};
use cairn_workspace::Workspace;
use rmcp::model::CallToolResult;
use serde::Deserialize;

use super::{Git, GitResult, one_line, open, run};

/// The `git_merge_base` tool.
pub struct GitMergeBase;

/// Arguments of `git_merge_base`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// A directory inside the repository, relative to the workspace root. Default: the workspace root.
    repo_path: Option<String>,
    /// The first revision.
    a: String,
    /// The second revision.
    b: String,
}

impl Tool for GitMergeBase {
    type Host = Git;
    type Args = Args;
    const NAME: &'static str = "git_merge_base";
    const TITLE: &'static str = "Git merge base";
    const DESCRIPTION: &'static str =
        "Find the best common ancestor of two revisions, e.g. where a branch forked from main.";
    const CATEGORY: Category = Category::Git;
    const EFFECT: Effect = Effect::Read;
    const AGENT_ONLY: bool = false;

    /// Read through git2 (confined by `confine.rs`); the tool withholds files the user may not see.
    fn paths(_: &Args) -> Paths {
        Paths::metadata()
    }

    async fn call(git: &Git, args: Args, _: CallContext) -> CallToolResult {
        run(git, args, merge_base_impl).await
    }
}

fn merge_base_impl(ws: &Workspace, args: Args) -> GitResult {
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
