//! `git_unstage`: reset paths in the index to HEAD, keeping their changes in the working tree.

use cairn_toolkit::{CallContext, Category, Effect, JsonSchema, Paths, Tool};
use cairn_workspace::Workspace;
use rmcp::model::CallToolResult;
use serde::Deserialize;

use super::{Git, GitResult, open, pathspecs, run};

/// The `git_unstage` tool.
pub struct GitUnstage;

/// Arguments of `git_unstage`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// A directory inside the repository, relative to the workspace root. Default: the workspace root.
    repo_path: Option<String>,
    /// Files or directories to unstage (workspace paths; `.` for everything).
    #[schemars(length(min = 1))]
    paths: Vec<String>,
}

impl Tool for GitUnstage {
    type Host = Git;
    type Args = Args;
    const NAME: &'static str = "git_unstage";
    const TITLE: &'static str = "Unstage changes";
    const DESCRIPTION: &'static str = "Remove files or directories from the next commit, keeping their changes in the working tree.";
    const CATEGORY: Category = Category::Git;
    const EFFECT: Effect = Effect::Write;
    const AGENT_ONLY: bool = true;

    /// Changed through git2 (confined by `confine.rs`), not through the workspace's file checks.
    fn paths(_: &Args) -> Paths {
        Paths::metadata()
    }

    async fn call(git: &Git, args: Args, _: CallContext) -> CallToolResult {
        run(git, args, unstage_impl).await
    }
}

fn unstage_impl(ws: &Workspace, args: Args) -> GitResult {
    let r = open(ws, args.repo_path.as_deref())?;
    let mut specs = pathspecs(ws, &r, &args.paths)?;
    if specs.is_empty() {
        // libgit2's reset needs at least one pathspec; `*` matches everything.
        specs.push("*".to_owned());
    }
    match r.head_commit()? {
        Some(head) => r.repo.reset_default(Some(head.as_object()), specs.iter())?,
        None => {
            let mut index = r.repo.index()?;
            index.remove_all(specs.iter(), None)?;
            index.write()?;
        }
    }
    Ok(format!(
        "unstaged {} (changes stay in the working tree)",
        args.paths.join(", ")
    ))
}
