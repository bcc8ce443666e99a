//! `github_releases`: a repository's releases, newest first, or one release by tag with its
//! notes and assets.

use std::fmt::Write as _;

use cairn_toolkit::table::{Cell, Limits, Table};
use cairn_toolkit::{CallContext, Category, Effect, JsonSchema, Paths, Tool};
use rmcp::model::CallToolResult;
use serde::Deserialize;
use serde_json::Value;

use super::{Services, arr, bounded, cut, failed, get, login, n, repo_path, s, segment, when};

/// The `github_releases` tool.
pub struct GithubReleases;

/// Arguments of `github_releases`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// The repository, `owner/name`.
    repo: String,
    /// One release by its tag (`v1.2.0`), with its notes and assets; without it, the list.
    #[serde(default)]
    tag: Option<String>,
    /// How many releases to list, newest first (default 10, at most 50).
    #[serde(default)]
    max_results: Option<u32>,
}

/// Characters of release notes shown.
const MAX_NOTES: usize = 6000;
/// Assets listed for one release.
const MAX_ASSETS: usize = 50;

/// Draft, pre-release or both, for a heading or a cell.
fn flags(release: &Value) -> String {
    let mut f = Vec::new();
    if release.get("draft").and_then(Value::as_bool) == Some(true) {
        f.push("draft");
    }
    if release.get("prerelease").and_then(Value::as_bool) == Some(true) {
        f.push("pre-release");
    }
    f.join(", ")
}

impl Tool for GithubReleases {
    type Host = Services;
    type Args = Args;
    const NAME: &'static str = "github_releases";
    const TITLE: &'static str = "GitHub: releases";
    const DESCRIPTION: &'static str = "List a GitHub repository's releases (tag, name, date, pre-release, asset count), or read one release by tag with its notes and downloadable assets.";
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
        let name = args.repo.trim();
        if let Some(tag) = args.tag.as_deref().map(str::trim).filter(|t| !t.is_empty()) {
            let path = format!("{repo}/releases/tags/{}", segment(tag));
            let what = format!("a release tagged {tag} in {name}");
            return match get(host, &cx, &path, &[], &what).await {
                Ok(r) => cairn_toolkit::reply::text(one(name, &r)),
                Err(e) => failed(e),
            };
        }
        let max = bounded(args.max_results, 10, 50);
        let query = [("per_page", max.to_string())];
        let what = format!("repository {name}");
        let list = match get(host, &cx, &format!("{repo}/releases"), &query, &what).await {
            Ok(v) => v,
            Err(e) => return failed(e),
        };
        let items = list.as_array().map(Vec::as_slice).unwrap_or(&[]);
        if items.is_empty() {
            return cairn_toolkit::reply::text(format!("{name} has no releases"));
        }
        let rows = items
            .iter()
            .take(max as usize)
            .map(|r| {
                let date = match s(r, "published_at") {
                    "" => s(r, "created_at"),
                    d => d,
                };
                vec![
                    Cell::Text(s(r, "tag_name").to_owned()),
                    Cell::Text(s(r, "name").to_owned()),
                    Cell::Text(when(date)),
                    Cell::Text(flags(r)),
                    Cell::Text(arr(r, "assets").len().to_string()),
                ]
            })
            .collect::<Vec<_>>();
        let table = Table {
            columns: ["tag", "name", "published", "flags", "assets"]
                .map(str::to_owned)
                .to_vec(),
            more: items.len() >= max as usize,
            rows,
        };
        table.result_hinting(
            &format!("Releases of {name}, newest first (give a tag to read one's notes)"),
            &Limits {
                max_rows: max as usize,
                max_cell_chars: 100,
                ..Limits::default()
            },
            "raise max_results (at most 50), or ask for one by tag",
        )
    }
}

/// One release: heading, notes, assets.
fn one(repo: &str, r: &Value) -> String {
    let mut out = format!("{repo} release {}", s(r, "tag_name"));
    let title = s(r, "name");
    if !title.is_empty() {
        let _ = write!(out, ": {title}");
    }
    let flags = flags(r);
    if !flags.is_empty() {
        let _ = write!(out, " ({flags})");
    }
    let _ = write!(
        out,
        "\npublished {} by {}, from {}\n{}",
        when(s(r, "published_at")),
        login(r, "author"),
        s(r, "target_commitish"),
        s(r, "html_url"),
    );
    let notes = s(r, "body").trim();
    let _ = write!(
        out,
        "\n\n{}",
        if notes.is_empty() {
            "(no release notes)".to_owned()
        } else {
            cut(notes, MAX_NOTES)
        }
    );
    let assets = arr(r, "assets");
    if assets.is_empty() {
        out.push_str("\n\nno assets");
    } else {
        let _ = write!(out, "\n\n{} asset(s):", assets.len());
        for a in assets.iter().take(MAX_ASSETS) {
            let _ = write!(
                out,
                "\n- {} ({} bytes, {} downloads) {}",
                s(a, "name"),
                n(a, "size"),
                n(a, "download_count"),
                s(a, "browser_download_url"),
            );
        }
        if assets.len() > MAX_ASSETS {
            let _ = write!(out, "\n({} more not listed)", assets.len() - MAX_ASSETS);
        }
    }
    out
}
