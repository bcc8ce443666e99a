//! `git_commit`: commit the index with the configured identity.

use cairn_toolkit::{CallContext, Category, Effect, JsonSchema, Paths, Tool};
use cairn_workspace::Workspace;
use rmcp::model::CallToolResult;
use serde::Deserialize;

use super::{Fail, Git, GitResult, identity, one_line, open, run};

/// The `git_commit` tool.
pub struct GitCommit;

/// Arguments of `git_commit`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// A directory inside the repository, relative to the workspace root. Default: the workspace root.
    repo_path: Option<String>,
    /// The commit message: a short summary line, a blank line, then details.
    message: String,
    /// Commit even if nothing is staged. Default false.
    #[serde(default)]
    allow_empty: bool,
}

impl Tool for GitCommit {
    type Host = Git;
    type Args = Args;
    const NAME: &'static str = "git_commit";
    const TITLE: &'static str = "Git commit";
    const DESCRIPTION: &'static str = "Commit the staged changes with a message, as the identity configured in git; stage with git_stage first.";
    const CATEGORY: Category = Category::Git;
    const EFFECT: Effect = Effect::Write;
    const AGENT_ONLY: bool = true;

    /// Changed through git2 (confined by `confine.rs`), not through the workspace's file checks.
    fn paths(_: &Args) -> Paths {
        Paths::metadata()
    }

    async fn call(git: &Git, args: Args, _: CallContext) -> CallToolResult {
        run(git, args, commit_impl).await
    }
}

fn commit_impl(ws: &Workspace, args: Args) -> GitResult {
    let r = open(ws, args.repo_path.as_deref())?;
    if args.message.trim().is_empty() {
        return Err("invalid argument `message`: it is empty".into());
    }
    if r.repo.state() != git2::RepositoryState::Clean {
        return Err(Fail::from(format!(
            "refused: a {:?} is in progress; resolve it (git_conflicts lists conflicted paths) and ask the user to conclude it",
            r.repo.state()
        )));
    }
    let sig = identity(&r.repo)?;
    let mut index = r.repo.index()?;
    if index.has_conflicts() {
        return Err("refused: the index has unresolved conflicts (see git_conflicts)".into());
    }
    let tree_id = index.write_tree()?;
    let tree = r.repo.find_tree(tree_id)?;
    let head = r.head_commit()?;
    let unchanged = match &head {
        Some(h) => h.tree_id() == tree_id,
        None => tree.is_empty(),
    };
    if unchanged && !args.allow_empty {
        return Err("nothing staged to commit; stage changes with git_stage first".into());
    }
    let parents: Vec<&git2::Commit<'_>> = head.iter().collect();
    let mut message = args.message.trim_end().to_owned();
    message.push('\n');
    let id = r
        .repo
        .commit(Some("HEAD"), &sig, &sig, &message, &tree, &parents)?;
    let commit = r.repo.find_commit(id)?;
    Ok(format!("committed {}", one_line(&commit)))
}
