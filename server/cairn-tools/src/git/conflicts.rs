//! `git_conflicts`: the paths with unresolved merge conflicts and which sides each has.

use std::fmt::Write as _;

use cairn_toolkit::{CallContext, Category, Effect, Paths, Tool};
use cairn_workspace::Workspace;
use rmcp::model::CallToolResult;

use super::{Git, GitResult, RepoArgs, open, run};

/// The `git_conflicts` tool.
pub struct GitConflicts;

impl Tool for GitConflicts {
    type Host = Git;
    type Args = RepoArgs;
    const NAME: &'static str = "git_conflicts";
    const TITLE: &'static str = "Git conflicts";
    const DESCRIPTION: &'static str = "List the paths with unresolved merge conflicts in the index and which sides (base, ours, theirs) each has.";
    const CATEGORY: Category = Category::Git;
    const EFFECT: Effect = Effect::Read;
    const AGENT_ONLY: bool = false;

    /// Read through git2 (confined by `confine.rs`); the tool withholds files the user may not see.
    fn paths(_: &RepoArgs) -> Paths {
        Paths::metadata()
    }

    async fn call(git: &Git, args: RepoArgs, _: CallContext) -> CallToolResult {
        run(git, args, conflicts_impl).await
    }
}

fn conflicts_impl(ws: &Workspace, args: RepoArgs) -> GitResult {
    let r = open(ws, args.repo_path.as_deref())?;
    let index = r.repo.index()?;
    let mut out = String::new();
    for conflict in index.conflicts()? {
        let conflict = conflict?;
        let path = [&conflict.our, &conflict.their, &conflict.ancestor]
            .into_iter()
            .flatten()
            .next()
            .map(|e| String::from_utf8_lossy(&e.path).into_owned())
            .unwrap_or_default();
        let mut sides = Vec::new();
        if conflict.ancestor.is_some() {
            sides.push("base");
        }
        if conflict.our.is_some() {
            sides.push("ours");
        }
        if conflict.their.is_some() {
            sides.push("theirs");
        }
        let _ = writeln!(out, "{path}\t({})", sides.join(", "));
    }
    if out.is_empty() {
        out.push_str("(no conflicts)");
    }
    Ok(out)
}
