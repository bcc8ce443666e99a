//! `git_log`: recent commits, one line each, optionally only those touching a path.

use cairn_toolkit::{CallContext, Category, Effect, JsonSchema, Paths, Tool};
use cairn_workspace::Workspace;
use git2::Sort;
use rmcp::model::CallToolResult;
use serde::Deserialize;

use super::history::{MAX_COUNT_LIMIT, MAX_WALK, entry_id, max_count};
use super::{Fail, Git, GitResult, is_whole, one_line, open, run};

/// The `git_log` tool.
pub struct GitLog;

/// Arguments of `git_log`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// A directory inside the repository, relative to the workspace root. Default: the workspace root.
    repo_path: Option<String>,
    /// How many commits. Default 30.
    #[schemars(range(min = 1, max = MAX_COUNT_LIMIT))]
    max_count: Option<usize>,
    /// Only commits that change this file or directory (workspace path).
    path: Option<String>,
    /// Start from this revision instead of HEAD.
    rev: Option<String>,
}

impl Tool for GitLog {
    type Host = Git;
    type Args = Args;
    const NAME: &'static str = "git_log";
    const TITLE: &'static str = "Git log";
    const DESCRIPTION: &'static str = "List recent commits, one line each (id, date, author, summary); use `path` for the commits touching a file or directory.";
    const CATEGORY: Category = Category::Git;
    const EFFECT: Effect = Effect::Read;
    const AGENT_ONLY: bool = false;

    /// Read through git2 (confined by `confine.rs`); the tool withholds files the user may not see.
    fn paths(_: &Args) -> Paths {
        Paths::metadata()
    }

    async fn call(git: &Git, args: Args, _: CallContext) -> CallToolResult {
        run(git, args, log_impl).await
    }
}

fn log_impl(ws: &Workspace, args: Args) -> GitResult {
    let r = open(ws, args.repo_path.as_deref())?;
    let limit = max_count(args.max_count)?;
    let rel = match &args.path {
        Some(p) => Some(r.rel_path(ws, "path", p)?).filter(|rel| !is_whole(rel)),
        None => None,
    };
    let start = match &args.rev {
        Some(rev) => r.commit("rev", rev)?,
        None => match r.head_commit()? {
            Some(c) => c,
            None => return Ok("(no commits yet)".to_owned()),
        },
    };
    let mut walk = r.repo.revwalk()?;
    walk.set_sorting(Sort::TIME)?;
    walk.push(start.id())?;
    let mut out = String::new();
    let mut shown = 0;
    for (walked, id) in walk.enumerate() {
        if shown >= limit || walked >= MAX_WALK {
            break;
        }
        let commit = r.repo.find_commit(id?)?;
        if let Some(rel) = &rel
            && !touches(&commit, rel)?
        {
            continue;
        }
        out.push_str(&one_line(&commit));
        out.push('\n');
        shown += 1;
    }
    if shown == 0 {
        out.push_str("(no commits)");
    }
    Ok(out)
}

/// Whether `commit` changed `rel` relative to its first parent.
fn touches(commit: &git2::Commit<'_>, rel: &str) -> Result<bool, Fail> {
    let mine = entry_id(commit, rel)?;
    let parent = match commit.parent(0) {
        Ok(p) => entry_id(&p, rel)?,
        Err(_) => None,
    };
    Ok(mine != parent)
}
