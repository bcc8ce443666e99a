//! `git_diff`: unstaged, staged or between-revision changes as a patch, the changes of files the
//! user may not read withheld.

use cairn_toolkit::{CallContext, Category, Effect, JsonSchema, Paths, Tool};
use cairn_workspace::Workspace;
use git2::DiffOptions;
use rmcp::model::CallToolResult;
use serde::Deserialize;

use super::render::render_patch;
use super::{Git, GitResult, is_whole, open, run};

/// The `git_diff` tool.
pub struct GitDiff;

/// Arguments of `git_diff`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// A directory inside the repository, relative to the workspace root. Default: the workspace root.
    repo_path: Option<String>,
    /// Diff HEAD against the index (what would be committed). Default false.
    #[serde(default)]
    staged: bool,
    /// A revision (branch, tag, commit id, HEAD~1). Alone: diff it against the working tree.
    from: Option<String>,
    /// A second revision; diff `from` against it. Needs `from`.
    to: Option<String>,
    /// Only these files or directories (workspace paths).
    #[serde(default)]
    paths: Vec<String>,
    /// Context lines around changes. Default 3.
    #[schemars(range(min = 0, max = 100))]
    context_lines: Option<u32>,
}

impl Tool for GitDiff {
    type Host = Git;
    type Args = Args;
    const NAME: &'static str = "git_diff";
    const TITLE: &'static str = "Git diff";
    const DESCRIPTION: &'static str = "Show changes as a patch: unstaged changes by default, staged ones with `staged`, or between revisions with `from`/`to`; use `paths` to narrow it.";
    const CATEGORY: Category = Category::Git;
    const EFFECT: Effect = Effect::Read;
    const AGENT_ONLY: bool = false;

    /// Read through git2 (confined by `confine.rs`); the tool withholds files the user may not see.
    fn paths(_: &Args) -> Paths {
        Paths::metadata()
    }

    async fn call(git: &Git, args: Args, _: CallContext) -> CallToolResult {
        run(git, args, diff_impl).await
    }
}

fn diff_impl(ws: &Workspace, args: Args) -> GitResult {
    let r = open(ws, args.repo_path.as_deref())?;
    let mut opts = DiffOptions::new();
    opts.context_lines(args.context_lines.unwrap_or(3).min(100));
    for p in &args.paths {
        let rel = r.rel_path(ws, "path", p)?;
        if !is_whole(&rel) {
            opts.pathspec(rel);
        }
    }
    opts.disable_pathspec_match(true);
    let diff = match (&args.from, &args.to, args.staged) {
        (None, Some(_), _) => return Err("`to` needs `from`".into()),
        (Some(_), _, true) => return Err("give either `staged` or `from`/`to`, not both".into()),
        (Some(from), Some(to), false) => {
            let a = r.commit("from", from)?.tree()?;
            let b = r.commit("to", to)?.tree()?;
            r.repo
                .diff_tree_to_tree(Some(&a), Some(&b), Some(&mut opts))?
        }
        (Some(from), None, false) => {
            let a = r.commit("from", from)?.tree()?;
            r.repo
                .diff_tree_to_workdir_with_index(Some(&a), Some(&mut opts))?
        }
        (None, None, true) => {
            let head = r.head_commit()?.map(|c| c.tree()).transpose()?;
            r.repo
                .diff_tree_to_index(head.as_ref(), None, Some(&mut opts))?
        }
        (None, None, false) => r.repo.diff_index_to_workdir(None, Some(&mut opts))?,
    };
    let patch = render_patch(ws, &r, &diff)?;
    if patch.is_empty() {
        return Ok("(no differences)".to_owned());
    }
    Ok(patch)
}
