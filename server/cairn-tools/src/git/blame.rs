//! `git_blame`: who last changed each line of a file at HEAD, refused for a file the user may
//! not read.

use std::fmt::Write as _;
use std::path::Path;

use cairn_toolkit::{CallContext, Category, Effect, JsonSchema, Paths, Tool};
use cairn_workspace::Workspace;
use rmcp::model::CallToolResult;
use serde::Deserialize;

use super::{Fail, Git, GitResult, is_whole, open, run, short};
use crate::util::MAX_OUTPUT_BYTES;

/// The `git_blame` tool.
pub struct GitBlame;

/// Arguments of `git_blame`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// A directory inside the repository, relative to the workspace root. Default: the workspace root.
    repo_path: Option<String>,
    /// The file (workspace path).
    path: String,
    /// First line, counting from 1.
    #[schemars(range(min = 1))]
    start_line: Option<usize>,
    /// Last line (inclusive).
    #[schemars(range(min = 1))]
    end_line: Option<usize>,
}

impl Tool for GitBlame {
    type Host = Git;
    type Args = Args;
    const NAME: &'static str = "git_blame";
    const TITLE: &'static str = "Git blame";
    const DESCRIPTION: &'static str = "Show which commit and author last changed each line of a file (as committed at HEAD); use start_line/end_line for a range.";
    const CATEGORY: Category = Category::Git;
    const EFFECT: Effect = Effect::Read;
    const AGENT_ONLY: bool = false;

    /// Read through git2 (confined by `confine.rs`); the tool withholds files the user may not see.
    fn paths(_: &Args) -> Paths {
        Paths::metadata()
    }

    async fn call(git: &Git, args: Args, _: CallContext) -> CallToolResult {
        run(git, args, blame_impl).await
    }
}

fn blame_impl(ws: &Workspace, args: Args) -> GitResult {
    let r = open(ws, args.repo_path.as_deref())?;
    let rel = r.rel_path(ws, "path", &args.path)?;
    if is_whole(&rel) {
        return Err("`path` must name a file, not the repository root".into());
    }
    r.check_read(ws, &args.path)?;
    let head = r
        .head_commit()?
        .ok_or_else(|| Fail::from("the repository has no commits yet"))?;
    let entry = head.tree()?.get_path(Path::new(&rel)).map_err(|_| {
        Fail::from(format!(
            "`{}` is not in the HEAD commit (new or untracked files have no blame)",
            args.path
        ))
    })?;
    let blob = r
        .repo
        .find_blob(entry.id())
        .map_err(|_| Fail::from(format!("`{}` is a directory, not a file", args.path)))?;
    if blob.is_binary() {
        return Err(Fail::from(format!("`{}` is a binary file", args.path)));
    }
    let text = String::from_utf8_lossy(blob.content()).into_owned();
    let total = text.lines().count();
    if total == 0 {
        return Ok("(empty file)".to_owned());
    }
    let start = args.start_line.unwrap_or(1);
    let end = args.end_line.unwrap_or(total).min(total);
    if start == 0 || start > end {
        return Err(Fail::from(format!(
            "invalid line range {start}-{end}: the file has {total} lines, counted from 1"
        )));
    }
    let mut opts = git2::BlameOptions::new();
    opts.min_line(start).max_line(end).newest_commit(head.id());
    let blame = r.repo.blame_file(Path::new(&rel), Some(&mut opts))?;
    let mut out = String::new();
    for (n, line) in text.lines().enumerate().map(|(i, l)| (i + 1, l)) {
        if n < start {
            continue;
        }
        if n > end || out.len() > MAX_OUTPUT_BYTES {
            break;
        }
        let who = match blame.get_line(n) {
            Some(hunk) => {
                let sig = hunk.final_signature();
                format!(
                    "{} {} {:<16}",
                    short(hunk.final_commit_id()),
                    super::date(sig.when()),
                    sig.name()
                        .unwrap_or("?")
                        .chars()
                        .take(16)
                        .collect::<String>()
                )
            }
            None => "?".repeat(7),
        };
        let (line, _) = crate::util::cut_line(line, 500);
        let _ = writeln!(out, "{who} {n:>5}\t{line}");
    }
    Ok(out)
}
