//! The git tools that change the repository (agent mode only).

use std::fmt::Write as _;

use cairn_workspace::Workspace;
use git2::build::CheckoutBuilder;
use git2::{Branch, BranchType, DiffOptions, ErrorCode, IndexAddOption, StashFlags};
use rmcp::model::Tool;
use serde::Deserialize;
use serde_json::json;

use super::tool;
use super::{
    Fail, GitResult, Repo, check_nested, identity, is_whole, one_line, open, refuse_dash, schema,
};

// ---------------------------------------------------------------- git_branch_create

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct BranchCreateArgs {
    repo_path: Option<String>,
    name: String,
    start: Option<String>,
}

pub(crate) fn branch_create_def() -> Tool {
    tool(
        "git_branch_create",
        "Create git branch",
        "Create a new local branch at HEAD or at `start`, without switching to it; follow with git_switch to work on it.",
        schema(
            json!({
                "name": {"type": "string", "description": "The new branch name, e.g. `fix/parser`."},
                "start": {"type": "string", "description": "Revision the branch starts at. Default HEAD."}
            }),
            &["name"],
        ),
        false,
    )
}

handler!(
    branch_create,
    "git_branch_create",
    BranchCreateArgs,
    branch_create_impl
);

fn branch_create_impl(ws: &Workspace, args: BranchCreateArgs) -> GitResult {
    let r = open(ws, args.repo_path.as_deref())?;
    refuse_dash("branch name", &args.name)?;
    if !Branch::name_is_valid(&args.name)? {
        return Err(Fail(format!("`{}` is not a valid branch name", args.name)));
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
        Err(e) if e.code() == ErrorCode::Exists => Err(Fail(format!(
            "a branch named `{}` already exists",
            args.name
        ))),
        Err(e) => Err(e.into()),
    }
}

// ---------------------------------------------------------------- git_switch

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct SwitchArgs {
    repo_path: Option<String>,
    branch: String,
}

pub(crate) fn switch_def() -> Tool {
    tool(
        "git_switch",
        "Switch git branch",
        "Check out an existing local branch; refused if local changes would be overwritten (commit or stash them first).",
        schema(
            json!({
                "branch": {"type": "string", "description": "The local branch to switch to."}
            }),
            &["branch"],
        ),
        false,
    )
}

handler!(switch, "git_switch", SwitchArgs, switch_impl);

fn switch_impl(ws: &Workspace, args: SwitchArgs) -> GitResult {
    let r = open(ws, args.repo_path.as_deref())?;
    refuse_dash("branch", &args.branch)?;
    let branch = r
        .repo
        .find_branch(&args.branch, BranchType::Local)
        .map_err(|_| {
            Fail(format!(
                "no local branch named `{}`; list them with git_branches, or create it with git_branch_create",
                args.branch
            ))
        })?;
    if branch.is_head() {
        return Ok(format!("already on {}", args.branch));
    }
    let refname = branch
        .get()
        .name()
        .ok_or_else(|| Fail::from("the branch name is not valid UTF-8"))?
        .to_owned();
    let commit = branch.get().peel_to_commit()?;
    let mut checkout = CheckoutBuilder::new();
    checkout.safe();
    r.repo
        .checkout_tree(commit.as_object(), Some(&mut checkout))
        .map_err(|e| {
            Fail(format!(
                "refused to switch to {}: {} (local changes would be overwritten; commit them with git_commit or stash them with git_stash_push first)",
                args.branch,
                e.message()
            ))
        })?;
    r.repo.set_head(&refname)?;
    Ok(format!(
        "switched to {} at {}",
        args.branch,
        one_line(&commit)
    ))
}

// ---------------------------------------------------------------- git_stage / git_unstage

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct PathsArgs {
    repo_path: Option<String>,
    paths: Vec<String>,
}

fn paths_schema(what: &str) -> rmcp::model::JsonObject {
    schema(
        json!({
            "paths": {
                "type": "array", "items": {"type": "string"}, "minItems": 1,
                "description": format!("Files or directories to {what} (workspace paths; `.` for everything).")
            }
        }),
        &["paths"],
    )
}

/// The repository-relative pathspecs for `paths`; empty (everything) when one of them is the
/// whole working tree.
fn pathspecs(ws: &Workspace, r: &Repo, paths: &[String]) -> Result<Vec<String>, Fail> {
    if paths.is_empty() {
        return Err("invalid argument `paths`: give at least one path".into());
    }
    let mut specs = Vec::new();
    let mut whole = false;
    for p in paths {
        let rel = r.rel_path(ws, "path", p)?;
        whole |= is_whole(&rel);
        specs.push(rel);
    }
    if whole {
        specs.clear();
    }
    Ok(specs)
}

pub(crate) fn stage_def() -> Tool {
    tool(
        "git_stage",
        "Stage changes",
        "Stage files or directories (new, modified or deleted) for the next commit; check with git_status or git_diff staged first.",
        paths_schema("stage"),
        false,
    )
}

handler!(stage, "git_stage", PathsArgs, stage_impl);

fn stage_impl(ws: &Workspace, args: PathsArgs) -> GitResult {
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

pub(crate) fn unstage_def() -> Tool {
    tool(
        "git_unstage",
        "Unstage changes",
        "Remove files or directories from the next commit, keeping their changes in the working tree.",
        paths_schema("unstage"),
        false,
    )
}

handler!(unstage, "git_unstage", PathsArgs, unstage_impl);

fn unstage_impl(ws: &Workspace, args: PathsArgs) -> GitResult {
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

// ---------------------------------------------------------------- git_commit

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct CommitArgs {
    repo_path: Option<String>,
    message: String,
    #[serde(default)]
    allow_empty: bool,
}

pub(crate) fn commit_def() -> Tool {
    tool(
        "git_commit",
        "Git commit",
        "Commit the staged changes with a message, as the identity configured in git; stage with git_stage first.",
        schema(
            json!({
                "message": {"type": "string", "description": "The commit message: a short summary line, a blank line, then details."},
                "allow_empty": {"type": "boolean", "description": "Commit even if nothing is staged. Default false."}
            }),
            &["message"],
        ),
        false,
    )
}

handler!(commit, "git_commit", CommitArgs, commit_impl);

fn commit_impl(ws: &Workspace, args: CommitArgs) -> GitResult {
    let r = open(ws, args.repo_path.as_deref())?;
    if args.message.trim().is_empty() {
        return Err("invalid argument `message`: it is empty".into());
    }
    if r.repo.state() != git2::RepositoryState::Clean {
        return Err(Fail(format!(
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

// ---------------------------------------------------------------- git_stash_push / pop

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct StashPushArgs {
    repo_path: Option<String>,
    message: Option<String>,
    #[serde(default)]
    include_untracked: bool,
}

pub(crate) fn stash_push_def() -> Tool {
    tool(
        "git_stash_push",
        "Git stash push",
        "Set local changes aside (staged and unstaged, optionally untracked files) and clean the working tree; restore them with git_stash_pop.",
        schema(
            json!({
                "message": {"type": "string", "description": "A note to recognise the stash by."},
                "include_untracked": {"type": "boolean", "description": "Also stash untracked files. Default false."}
            }),
            &[],
        ),
        false,
    )
}

handler!(stash_push, "git_stash_push", StashPushArgs, stash_push_impl);

fn stash_push_impl(ws: &Workspace, args: StashPushArgs) -> GitResult {
    let mut r = open(ws, args.repo_path.as_deref())?;
    let sig = identity(&r.repo)?;
    let flags = if args.include_untracked {
        StashFlags::INCLUDE_UNTRACKED
    } else {
        StashFlags::DEFAULT
    };
    match r
        .repo
        .stash_save2(&sig, args.message.as_deref(), Some(flags))
    {
        Ok(id) => Ok(format!(
            "stashed local changes as stash@{{0}} ({})",
            super::short(id)
        )),
        Err(e) if e.code() == ErrorCode::NotFound => Err("no local changes to stash".into()),
        Err(e) => Err(e.into()),
    }
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct StashPopArgs {
    repo_path: Option<String>,
    index: Option<usize>,
}

pub(crate) fn stash_pop_def() -> Tool {
    tool(
        "git_stash_pop",
        "Git stash pop",
        "Re-apply a stash to the working tree and drop it; refused if local changes would be overwritten.",
        schema(
            json!({
                "index": {"type": "integer", "minimum": 0, "description": "Which stash (see git_stash_list). Default 0, the newest."}
            }),
            &[],
        ),
        false,
    )
}

handler!(stash_pop, "git_stash_pop", StashPopArgs, stash_pop_impl);

fn stash_pop_impl(ws: &Workspace, args: StashPopArgs) -> GitResult {
    let mut r = open(ws, args.repo_path.as_deref())?;
    let index = args.index.unwrap_or(0);
    match r.repo.stash_pop(index, None) {
        Ok(()) => Ok(format!("applied and dropped stash@{{{index}}}")),
        Err(e) if e.code() == ErrorCode::NotFound => Err(Fail(format!(
            "there is no stash@{{{index}}}; see git_stash_list"
        ))),
        Err(e) => Err(Fail(format!(
            "could not apply stash@{{{index}}}: {} (the stash was kept; commit or stash local changes first)",
            e.message()
        ))),
    }
}
