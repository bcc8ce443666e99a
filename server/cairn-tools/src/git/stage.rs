//! `git_stage`: add paths (new, modified or deleted) to the index.

use std::fmt::Write as _;

use cairn_toolkit::{CallContext, Category, Effect, JsonSchema, Paths, Tool};
use cairn_workspace::{Operation, Workspace};
use git2::{DiffOptions, IndexAddOption};
use rmcp::model::CallToolResult;
use serde::Deserialize;

use super::{Git, GitResult, check_nested, check_protected, open, pathspecs, run};

/// The `git_stage` tool.
pub struct GitStage;

/// Arguments of `git_stage`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// A directory inside the repository, relative to the workspace root. Default: the workspace root.
    repo_path: Option<String>,
    /// Files or directories to stage (workspace paths; `.` for everything).
    #[schemars(length(min = 1))]
    paths: Vec<String>,
}

impl Tool for GitStage {
    type Host = Git;
    type Args = Args;
    const NAME: &'static str = "git_stage";
    const TITLE: &'static str = "Stage changes";
    const DESCRIPTION: &'static str = "Stage files or directories (new, modified or deleted) for the next commit; check with git_status or git_diff staged first.";
    const CATEGORY: Category = Category::Git;
    const EFFECT: Effect = Effect::Write;
    const AGENT_ONLY: bool = true;

    /// Changed through git2 (confined by `confine.rs`), not through the workspace's file checks.
    fn paths(_: &Args) -> Paths {
        Paths::metadata()
    }

    async fn call(git: &Git, args: Args, _: CallContext) -> CallToolResult {
        run(git, args, stage_impl).await
    }
}

fn stage_impl(ws: &Workspace, args: Args) -> GitResult {
    let r = open(ws, args.repo_path.as_deref())?;
    let specs = pathspecs(ws, &r, &args.paths)?;
    // What will be staged: the index-to-working-tree changes under the paths. (git2's
    // per-path callback of add_all cannot be used: it dereferences a null pathspec when matching
    // is literal or the pathspec is empty.)
    let mut opts = DiffOptions::new();
    opts.include_untracked(true)
        .recurse_untracked_dirs(true)
        .disable_pathspec_match(true);
    for spec in &specs {
        opts.pathspec(spec);
    }
    let mut staged: Vec<String> = r
        .repo
        .diff_index_to_workdir(None, Some(&mut opts))?
        .deltas()
        .filter_map(|d| d.new_file().path().or(d.old_file().path()))
        .map(|p| p.to_string_lossy().into_owned())
        .collect();
    // An untracked directory listed whole is a nested repository: staging it opens it to read
    // its HEAD, so it must pass the same check as the repository itself.
    let nested: Vec<String> = staged
        .iter()
        .filter(|p| p.ends_with('/'))
        .cloned()
        .collect();
    check_nested(&r, ws, &nested)?;
    check_protected(ws, &r, staged.iter().map(String::as_str), Operation::Read)?;
    let mut index = r.repo.index()?;
    index.add_all(specs.iter(), IndexAddOption::DISABLE_PATHSPEC_MATCH, None)?;
    index.update_all(specs.iter(), None)?;
    index.write()?;
    staged.sort();
    staged.dedup();
    if staged.is_empty() {
        return Ok(
            "nothing to stage: those paths have no changes (ignored files are not staged)"
                .to_owned(),
        );
    }
    let mut out = format!("staged {} path(s):\n", staged.len());
    for p in staged {
        let _ = writeln!(out, "  {p}");
    }
    Ok(out)
}
