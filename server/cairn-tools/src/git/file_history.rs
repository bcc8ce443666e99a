//! `git_file_history`: the commits that changed one file, following renames between readable files.

use std::fmt::Write as _;
use std::path::Path;

use cairn_toolkit::{CallContext, Category, Effect, JsonSchema, Paths, Tool};
use cairn_workspace::Workspace;
use git2::{DiffFindOptions, DiffOptions, Sort};
use rmcp::model::CallToolResult;
use serde::Deserialize;

use super::history::{MAX_COUNT_LIMIT, MAX_WALK, entry_id, max_count};
use super::render::hidden;
use super::{Git, GitResult, is_whole, one_line, open, run};

/// The `git_file_history` tool.
pub struct GitFileHistory;

/// Arguments of `git_file_history`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// A directory inside the repository, relative to the workspace root. Default: the workspace root.
    repo_path: Option<String>,
    /// The file (workspace path), as named at HEAD.
    path: String,
    /// How many commits. Default 30.
    #[schemars(range(min = 1, max = MAX_COUNT_LIMIT))]
    max_count: Option<usize>,
}

impl Tool for GitFileHistory {
    type Host = Git;
    type Args = Args;
    const NAME: &'static str = "git_file_history";
    const TITLE: &'static str = "Git file history";
    const DESCRIPTION: &'static str = "List the commits that changed one file, newest first, following renames; use it to see how a file evolved.";
    const CATEGORY: Category = Category::Git;
    const EFFECT: Effect = Effect::Read;
    const AGENT_ONLY: bool = false;

    /// Read through git2 (confined by `confine.rs`); the tool withholds files the user may not see.
    fn paths(_: &Args) -> Paths {
        Paths::metadata()
    }

    async fn call(git: &Git, args: Args, _: CallContext) -> CallToolResult {
        run(git, args, file_history_impl).await
    }
}

fn file_history_impl(ws: &Workspace, args: Args) -> GitResult {
    let r = open(ws, args.repo_path.as_deref())?;
    let limit = max_count(args.max_count)?;
    let mut current = r.rel_path(ws, "path", &args.path)?;
    if is_whole(&current) {
        return Err("`path` must name a file; use git_log for the whole repository".into());
    }
    let Some(head) = r.head_commit()? else {
        return Ok("(no commits yet)".to_owned());
    };
    let mut walk = r.repo.revwalk()?;
    walk.set_sorting(Sort::TOPOLOGICAL | Sort::TIME)?;
    walk.simplify_first_parent()?;
    walk.push(head.id())?;
    let mut out = String::new();
    let mut shown = 0;
    for (walked, id) in walk.enumerate() {
        if shown >= limit || walked >= MAX_WALK {
            break;
        }
        let commit = r.repo.find_commit(id?)?;
        let mine = entry_id(&commit, &current)?;
        if mine.is_none() {
            continue;
        }
        let parent = commit.parent(0).ok();
        let theirs = match &parent {
            Some(p) => entry_id(p, &current)?,
            None => None,
        };
        if mine == theirs {
            continue;
        }
        let mut line = one_line(&commit);
        let mut renamed_from = None;
        if let (Some(p), None) = (&parent, theirs) {
            let mut opts = DiffOptions::new();
            let mut diff = r.repo.diff_tree_to_tree(
                Some(&p.tree()?),
                Some(&commit.tree()?),
                Some(&mut opts),
            )?;
            diff.find_similar(Some(DiffFindOptions::new().renames(true)))?;
            for delta in diff.deltas() {
                let new = delta.new_file().path().and_then(Path::to_str);
                // A rename is found by likeness of contents; followed only when the user may
                // read both files, or it would say how alike a withheld file is to another.
                if delta.status() == git2::Delta::Renamed
                    && new == Some(current.as_str())
                    && !hidden(ws, &r, &delta)
                {
                    renamed_from = delta
                        .old_file()
                        .path()
                        .and_then(Path::to_str)
                        .map(str::to_owned);
                }
            }
        }
        let _ = write!(line, "  [{current}]");
        if let Some(old) = renamed_from {
            let _ = write!(line, " (renamed from {old})");
            current = old;
        }
        out.push_str(&line);
        out.push('\n');
        shown += 1;
    }
    if shown == 0 {
        out.push_str("(no commits touch this path)");
    }
    Ok(out)
}
