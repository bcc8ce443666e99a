//! `github_pull_files`: a pull request's changed files with their additions and deletions, and
//! each file's patch cut to a bound.

use std::fmt::Write as _;

use cairn_toolkit::{CallContext, Category, Effect, JsonSchema, Paths, Tool};
use cairn_web::Method;
use rmcp::model::CallToolResult;
use serde::Deserialize;

use super::{PUBLIC, SERVICE, Services, bounded, failed, n, repo_path, s};
use crate::api::services::paging::{self, Items, List, More, Next, Paging, Size};

/// The `github_pull_files` tool.
pub struct GithubPullFiles;

/// Arguments of `github_pull_files`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// The repository, `owner/name`.
    repo: String,
    /// The pull request number.
    number: u64,
    /// Whether to show each file's patch (default true); false lists the files only.
    #[serde(default)]
    patch: Option<bool>,
    /// Lines of each file's patch shown (default 60, at most 400).
    #[serde(default)]
    max_patch_lines: Option<u32>,
    /// How many files to list (default 100, at most 300).
    #[serde(default)]
    max_files: Option<u32>,
}

/// Bytes of the whole answer; files past it are listed without their patch.
const MAX_BYTES: usize = 64 * 1024;
/// Characters of one patch line shown.
const MAX_LINE: usize = 300;
/// Files per page, GitHub's maximum.
const PAGE: u32 = 100;
/// How the files page: numbered pages of [`PAGE`], a full one perhaps not the last.
const PAGING: Paging = Paging {
    items: Items::At(""),
    size: Some(Size {
        param: "per_page",
        max: PAGE as usize,
    }),
    next: Next::Page {
        param: "page",
        more: More::FullPage,
    },
};

impl Tool for GithubPullFiles {
    type Host = Services;
    type Args = Args;
    const NAME: &'static str = "github_pull_files";
    const TITLE: &'static str = "GitHub: PR files";
    const DESCRIPTION: &'static str = "List the files a GitHub pull request changes, with status and lines added and deleted, and each file's diff cut to a bound; use it to review a pull request.";
    const CATEGORY: Category = Category::Api;
    const EFFECT: Effect = Effect::Network;
    const AGENT_ONLY: bool = false;
    const READ_ONLY: bool = true;

    fn paths(_: &Args) -> Paths {
        Paths::none()
    }

    async fn call(host: &Services, args: Args, cx: CallContext) -> CallToolResult {
        let repo = match repo_path(&args.repo) {
            Ok(r) => r,
            Err(e) => return cairn_toolkit::reply::error(e),
        };
        let what = format!("pull request {}#{}", args.repo.trim(), args.number);
        let max_files = bounded(args.max_files, 100, 300) as usize;
        let lines = bounded(args.max_patch_lines, 60, 400) as usize;
        let with_patch = args.patch.unwrap_or(true);
        let path = format!("{repo}/pulls/{}/files", args.number);
        // Pages of 100 until a short page or the cap; GitHub itself stops at 3000 files.
        let list = List {
            service: SERVICE,
            public: PUBLIC,
            label: "GitHub",
            method: Method::GET,
            path: &path,
            query: vec![("per_page", PAGE.to_string()), ("page", "1".to_owned())],
            body: None,
            what: &what,
        };
        let pages = max_files.div_ceil(PAGE as usize);
        let listed = match paging::list(host, &cx, &list, &PAGING, max_files, pages).await {
            Ok(l) => l,
            Err(e) => return failed(e),
        };
        let more = listed.next.is_some() || listed.cut;
        let files = listed.items;
        let (adds, dels) = files.iter().fold((0, 0), |(a, d), f| {
            (a + n(f, "additions"), d + n(f, "deletions"))
        });
        let mut out = format!(
            "{what}: {} file(s){}, +{adds} -{dels}",
            files.len(),
            if more {
                " shown (more not listed: raise max_files, at most 300)"
            } else {
                ""
            },
        );
        let mut patches_left_out = 0;
        for f in &files {
            let mut entry = format!(
                "\n\n{} {} (+{} -{})",
                s(f, "status"),
                s(f, "filename"),
                n(f, "additions"),
                n(f, "deletions"),
            );
            let previous = s(f, "previous_filename");
            if !previous.is_empty() {
                let _ = write!(entry, " from {previous}");
            }
            let patch = s(f, "patch");
            if with_patch {
                if patch.is_empty() {
                    entry.push_str("\n(no patch: binary, or too large for GitHub to show)");
                } else {
                    let all: Vec<&str> = patch.lines().collect();
                    let shown: Vec<String> = all
                        .iter()
                        .take(lines)
                        .map(|l| super::cut(l, MAX_LINE).replace("```", "'''"))
                        .collect();
                    let _ = write!(entry, "\n```diff\n{}\n```", shown.join("\n"));
                    if all.len() > lines {
                        let _ = write!(
                            entry,
                            "\n({} more patch line(s): raise max_patch_lines)",
                            all.len() - lines
                        );
                    }
                }
            }
            if out.len() + entry.len() > MAX_BYTES {
                // Keep listing the file, without its patch.
                patches_left_out += 1;
                let _ = write!(
                    out,
                    "\n\n{} {} (+{} -{})",
                    s(f, "status"),
                    s(f, "filename"),
                    n(f, "additions"),
                    n(f, "deletions")
                );
                continue;
            }
            out.push_str(&entry);
        }
        if patches_left_out > 0 {
            let _ = write!(
                out,
                "\n\n({patches_left_out} file(s) listed without their patch: the answer reached {} KB; lower max_patch_lines)",
                MAX_BYTES / 1024
            );
        }
        cairn_toolkit::reply::text(out)
    }
}
