//! `git_tags`: the tags with their targets and, for annotated tags, their message.

use std::fmt::Write as _;

use cairn_toolkit::{CallContext, Category, Effect, Paths, Tool};
use cairn_workspace::Workspace;
use rmcp::model::CallToolResult;

use super::{Git, GitResult, RepoArgs, one_line, open, run};
use crate::util::MAX_OUTPUT_BYTES;

/// The `git_tags` tool.
pub struct GitTags;

impl Tool for GitTags {
    type Host = Git;
    type Args = RepoArgs;
    const NAME: &'static str = "git_tags";
    const TITLE: &'static str = "Git tags";
    const DESCRIPTION: &'static str =
        "List the tags with the commit each points to and, for annotated tags, their message.";
    const CATEGORY: Category = Category::Git;
    const EFFECT: Effect = Effect::Read;
    const AGENT_ONLY: bool = false;

    /// Read through git2 (confined by `confine.rs`); the tool withholds files the user may not see.
    fn paths(_: &RepoArgs) -> Paths {
        Paths::metadata()
    }

    async fn call(git: &Git, args: RepoArgs, _: CallContext) -> CallToolResult {
        run(git, args, tags_impl).await
    }
}

fn tags_impl(ws: &Workspace, args: RepoArgs) -> GitResult {
    let r = open(ws, args.repo_path.as_deref())?;
    let mut out = String::new();
    for name in r.repo.tag_names(None)?.iter().flatten() {
        let reference = r.repo.find_reference(&format!("refs/tags/{name}"))?;
        let annotation = reference.peel_to_tag().ok().and_then(|t| {
            t.message()
                .map(|m| m.lines().next().unwrap_or("").to_owned())
        });
        let target = match reference.peel_to_commit() {
            Ok(c) => one_line(&c),
            Err(_) => "(not a commit)".to_owned(),
        };
        match annotation {
            Some(m) => {
                let _ = writeln!(out, "{name}  -> {target}  [annotated: {m}]");
            }
            None => {
                let _ = writeln!(out, "{name}  -> {target}");
            }
        }
        if out.len() > MAX_OUTPUT_BYTES {
            break;
        }
    }
    if out.is_empty() {
        out.push_str("(no tags)");
    }
    Ok(out)
}
