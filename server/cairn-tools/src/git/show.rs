//! `git_show`: one commit: header, message, stats and patch, files the user may not read withheld.

use std::fmt::Write as _;

use cairn_toolkit::{CallContext, Category, Effect, JsonSchema, Paths, Tool};
use cairn_workspace::Workspace;
use git2::DiffFindOptions;
use rmcp::model::CallToolResult;
use serde::Deserialize;

use super::render::{render_patch, stat_lines};
use super::{Git, GitResult, open, run, short};

/// The `git_show` tool.
pub struct GitShow;

/// Arguments of `git_show`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// A directory inside the repository, relative to the workspace root. Default: the workspace root.
    repo_path: Option<String>,
    /// The commit (id, branch, tag, HEAD~2). Default HEAD.
    rev: Option<String>,
}

impl Tool for GitShow {
    type Host = Git;
    type Args = Args;
    const NAME: &'static str = "git_show";
    const TITLE: &'static str = "Git show";
    const DESCRIPTION: &'static str = "Show one commit: author, date, full message, changed-file stats and the patch; use it to understand what a commit did.";
    const CATEGORY: Category = Category::Git;
    const EFFECT: Effect = Effect::Read;
    const AGENT_ONLY: bool = false;

    /// Read through git2 (confined by `confine.rs`); the tool withholds files the user may not see.
    fn paths(_: &Args) -> Paths {
        Paths::metadata()
    }

    async fn call(git: &Git, args: Args, _: CallContext) -> CallToolResult {
        run(git, args, show_impl).await
    }
}

fn show_impl(ws: &Workspace, args: Args) -> GitResult {
    let r = open(ws, args.repo_path.as_deref())?;
    let commit = r.commit("rev", args.rev.as_deref().unwrap_or("HEAD"))?;
    let author = commit.author();
    let mut out = format!(
        "commit {}\nAuthor: {} <{}>\nDate:   {}\n",
        commit.id(),
        author.name().unwrap_or("?"),
        author.email().unwrap_or("?"),
        super::date(author.when()),
    );
    if commit.parent_count() > 1 {
        let parents: Vec<String> = commit.parent_ids().map(short).collect();
        let _ = writeln!(
            out,
            "Merge:  {} (diff against the first parent)",
            parents.join(" ")
        );
    }
    out.push('\n');
    for line in String::from_utf8_lossy(commit.message_bytes()).lines() {
        let _ = writeln!(out, "    {line}");
    }
    out.push('\n');
    let parent_tree = match commit.parent(0) {
        Ok(p) => Some(p.tree()?),
        Err(_) => None,
    };
    let mut diff = r
        .repo
        .diff_tree_to_tree(parent_tree.as_ref(), Some(&commit.tree()?), None)?;
    diff.find_similar(Some(DiffFindOptions::new().renames(true)))?;
    out.push_str(&stat_lines(ws, &r, &diff)?);
    out.push('\n');
    out.push_str(&render_patch(ws, &r, &diff)?);
    Ok(out)
}
