//! `git_remotes`: the configured remotes and their URLs, passwords masked; nothing is contacted.

use std::fmt::Write as _;

use cairn_toolkit::{CallContext, Category, Effect, Paths, Tool};
use cairn_workspace::Workspace;
use rmcp::model::CallToolResult;

use super::{Git, GitResult, RepoArgs, open, run};

/// The `git_remotes` tool.
pub struct GitRemotes;

impl Tool for GitRemotes {
    type Host = Git;
    type Args = RepoArgs;
    const NAME: &'static str = "git_remotes";
    const TITLE: &'static str = "Git remotes";
    const DESCRIPTION: &'static str = "List the configured remotes with their URLs (read from the configuration; nothing is contacted).";
    const CATEGORY: Category = Category::Git;
    const EFFECT: Effect = Effect::Read;
    const AGENT_ONLY: bool = false;

    /// Read through git2 (confined by `confine.rs`); the tool withholds files the user may not see.
    fn paths(_: &RepoArgs) -> Paths {
        Paths::metadata()
    }

    async fn call(git: &Git, args: RepoArgs, _: CallContext) -> CallToolResult {
        run(git, args, remotes_impl).await
    }
}

fn remotes_impl(ws: &Workspace, args: RepoArgs) -> GitResult {
    let r = open(ws, args.repo_path.as_deref())?;
    let mut out = String::new();
    for name in r.repo.remotes()?.iter().flatten() {
        let remote = r.repo.find_remote(name)?;
        let url = remote.url().map(redact).unwrap_or_default();
        let _ = writeln!(out, "{name}\t{url} (fetch)");
        let push = remote.pushurl().map(redact).unwrap_or_else(|| url.clone());
        let _ = writeln!(out, "{name}\t{push} (push)");
    }
    if out.is_empty() {
        out.push_str("(no remotes)");
    }
    Ok(out)
}

/// A URL with any password in its user-info replaced, so tokens are not shown to the model.
fn redact(url: &str) -> String {
    let Some(scheme_end) = url.find("://") else {
        return url.to_owned();
    };
    let rest = &url[scheme_end + 3..];
    let authority_end = rest.find('/').unwrap_or(rest.len());
    let authority = &rest[..authority_end];
    match authority.rfind('@') {
        Some(at) => {
            let userinfo = &authority[..at];
            let user = userinfo.split(':').next().unwrap_or("");
            let masked = if userinfo.contains(':') {
                format!("{user}:***")
            } else {
                "***".to_owned()
            };
            format!("{}{masked}{}", &url[..scheme_end + 3], &rest[at..])
        }
        None => url.to_owned(),
    }
}
