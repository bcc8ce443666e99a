//! `bitbucket_pull_requests`: a repository's pull requests by state; or one pull request with
//! its description, its comments and its diffstat (files changed, lines added and removed).

use cairn_toolkit::reply::{error, text};
use cairn_toolkit::table::{Cell, Limits, Table};
use cairn_toolkit::{CallContext, Category, Effect, JsonSchema, Paths, Tool};
use rmcp::model::CallToolResult;
use serde::Deserialize;
use serde_json::Value;

use super::{MAX_ROWS, PUBLIC, SERVICE, account, list_page, repo_path};
use crate::api::services::Services;
use crate::api::services::gitlab::{cell, cut, field};
use cairn_web::Method;

/// The most characters of a description shown.
const MAX_DESCRIPTION: usize = 4000;
/// The most comments read and shown with one pull request.
const MAX_COMMENTS: u32 = 30;
/// The most characters of one comment shown.
const MAX_COMMENT: usize = 800;
/// The most files of the diffstat read and shown.
const MAX_FILES: u32 = 100;

/// The `bitbucket_pull_requests` tool.
pub struct BitbucketPullRequests;

/// Which pull requests to list.
#[derive(Debug, Clone, Copy, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum PrState {
    Open,
    Merged,
    Declined,
    Superseded,
}

impl PrState {
    fn api(self) -> &'static str {
        match self {
            PrState::Open => "OPEN",
            PrState::Merged => "MERGED",
            PrState::Declined => "DECLINED",
            PrState::Superseded => "SUPERSEDED",
        }
    }
}

/// Arguments of `bitbucket_pull_requests`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// The repository as `workspace/repo-slug`.
    repo: String,
    /// One pull request's id: show it with its comments and diffstat instead of listing.
    id: Option<u64>,
    /// Which to list: `open` (default), `merged`, `declined` or `superseded`.
    state: Option<PrState>,
    /// The page of the list, from 1 (50 a page).
    page: Option<u32>,
}

impl Tool for BitbucketPullRequests {
    type Host = Services;
    type Args = Args;
    const NAME: &'static str = "bitbucket_pull_requests";
    const TITLE: &'static str = "Bitbucket pull requests";
    const DESCRIPTION: &'static str = "List a Bitbucket Cloud repository's pull requests by state, or show one with its description, comments and diffstat (files changed, lines added and removed).";
    const CATEGORY: Category = Category::Api;
    const EFFECT: Effect = Effect::Network;
    const AGENT_ONLY: bool = false;
    const READ_ONLY: bool = true;

    fn paths(_: &Args) -> Paths {
        Paths::none()
    }

    async fn call(services: &Services, args: Args, cx: CallContext) -> CallToolResult {
        let path = match repo_path(&args.repo) {
            Ok(p) => p,
            Err(e) => return error(e),
        };
        match args.id {
            Some(id) => one(services, &cx, &args.repo, &path, id).await,
            None => list(services, &cx, &args, &path).await,
        }
    }
}

async fn list(services: &Services, cx: &CallContext, args: &Args, path: &str) -> CallToolResult {
    let page = args.page.unwrap_or(1).max(1);
    let state = args.state.unwrap_or(PrState::Open);
    let listed = match list_page(
        services,
        cx,
        &format!("{path}/pullrequests"),
        vec![
            ("state", state.api().to_owned()),
            ("pagelen", MAX_ROWS.to_string()),
            ("page", page.to_string()),
        ],
        MAX_ROWS as usize,
        &format!("repository {}", args.repo),
    )
    .await
    {
        Ok(l) => l,
        Err(e) => return error(e.to_string()),
    };
    let heading = format!(
        "{} pull requests of {} (page {page})",
        state.api().to_ascii_lowercase(),
        args.repo.trim()
    );
    let found = &listed.items;
    if found.is_empty() {
        return text(format!("{heading}: none"));
    }
    let table = Table {
        columns: ["id", "title", "author", "branches", "comments", "updated"]
            .map(str::to_owned)
            .to_vec(),
        rows: found
            .iter()
            .map(|pr| {
                [
                    format!("#{}", field(pr, "id")),
                    cell(&field(pr, "title"), 100),
                    account(pr, "author"),
                    format!("{} → {}", branch(pr, "source"), branch(pr, "destination")),
                    field(pr, "comment_count"),
                    field(pr, "updated_on"),
                ]
                .into_iter()
                .map(Cell::Text)
                .collect()
            })
            .collect(),
        more: listed.next.is_some(),
    };
    table.result_hinting(
        &heading,
        &Limits::default(),
        &format!("call again with page={}", page.saturating_add(1)),
    )
}

/// The branch name at `pr[side].branch.name`.
fn branch(pr: &Value, side: &str) -> String {
    pr.get(side)
        .and_then(|s| s.get("branch"))
        .and_then(|b| b.get("name"))
        .and_then(Value::as_str)
        .map_or_else(|| "?".to_owned(), str::to_owned)
}

async fn one(
    services: &Services,
    cx: &CallContext,
    repo: &str,
    path: &str,
    id: u64,
) -> CallToolResult {
    let repo = repo.trim();
    let what = format!("pull request #{id} of {repo}");
    let base = format!("{path}/pullrequests/{id}");
    let pr = match services
        .call(cx, SERVICE, PUBLIC, Method::GET, &base, &[], None, &what)
        .await
    {
        Ok((_, json)) => json,
        Err(e) => return error(e.to_string()),
    };
    let mut out = format!(
        "#{} {} ({})\n{} → {}; author: {}; created {}, updated {}\n",
        field(&pr, "id"),
        field(&pr, "title"),
        field(&pr, "state"),
        branch(&pr, "source"),
        branch(&pr, "destination"),
        account(&pr, "author"),
        field(&pr, "created_on"),
        field(&pr, "updated_on"),
    );
    let reviewers: Vec<String> = pr
        .get("participants")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter(|p| field(p, "role") == "REVIEWER")
        .map(|p| {
            let verdict = match (field(p, "state").as_str(), p.get("approved")) {
                ("changes_requested", _) => "changes requested",
                (_, Some(Value::Bool(true))) => "approved",
                _ => "no verdict",
            };
            format!("{} ({verdict})", account(p, "user"))
        })
        .collect();
    if !reviewers.is_empty() {
        out.push_str(&format!("reviewers: {}\n", reviewers.join(", ")));
    }
    if let Some(url) = pr
        .pointer("/links/html/href")
        .and_then(Value::as_str)
        .filter(|u| !u.is_empty())
    {
        out.push_str(&format!("{url}\n"));
    }
    let description = pr
        .pointer("/summary/raw")
        .and_then(Value::as_str)
        .or_else(|| pr.get("description").and_then(Value::as_str))
        .unwrap_or("");
    if !description.trim().is_empty() {
        out.push_str(&format!("\n{}\n", cut(description.trim(), MAX_DESCRIPTION)));
    }

    match list_page(
        services,
        cx,
        &format!("{base}/diffstat"),
        vec![("pagelen", MAX_FILES.to_string())],
        MAX_FILES as usize,
        &format!("the diffstat of {what}"),
    )
    .await
    {
        Ok(listed) => out.push_str(&diffstat(&listed.items, listed.next.is_some())),
        Err(e) => out.push_str(&format!("\n(diffstat not read: {e})\n")),
    }
    match list_page(
        services,
        cx,
        &format!("{base}/comments"),
        vec![
            ("pagelen", MAX_COMMENTS.to_string()),
            ("sort", "-created_on".to_owned()),
        ],
        MAX_COMMENTS as usize,
        &format!("the comments of {what}"),
    )
    .await
    {
        Ok(listed) => out.push_str(&comments(&listed.items, listed.next.is_some())),
        Err(e) => out.push_str(&format!("\n(comments not read: {e})\n")),
    }
    text(out)
}

/// The files changed with their added and removed lines, and the totals.
fn diffstat(files: &[Value], more: bool) -> String {
    let count = |f: &Value, k: &str| f.get(k).and_then(Value::as_u64).unwrap_or(0);
    let (added, removed) = files.iter().fold((0, 0), |(a, r), f| {
        (a + count(f, "lines_added"), r + count(f, "lines_removed"))
    });
    let mut out = format!(
        "\nChanges: {} file{}, +{added} -{removed}{}\n",
        files.len(),
        if files.len() == 1 { "" } else { "s" },
        if more {
            format!(" (the first {MAX_FILES} files; there are more)")
        } else {
            String::new()
        }
    );
    for f in files {
        let path = |side: &str| {
            f.get(side)
                .and_then(|s| s.get("path"))
                .and_then(Value::as_str)
                .map(str::to_owned)
        };
        let status = field(f, "status");
        let name = match (path("old"), path("new")) {
            (Some(old), Some(new)) if old != new => format!("{new} (renamed from {old})"),
            (_, Some(new)) => new,
            (Some(old), None) => old,
            (None, None) => "?".to_owned(),
        };
        let note = match status.as_str() {
            "added" | "removed" => format!(" ({status})"),
            _ => String::new(),
        };
        out.push_str(&format!(
            "- {}{note}: +{} -{}\n",
            cell(&name, 200),
            count(f, "lines_added"),
            count(f, "lines_removed")
        ));
    }
    out
}

/// The comments, newest first; deleted ones left out, inline ones with their place.
fn comments(all: &[Value], more: bool) -> String {
    let shown: Vec<&Value> = all
        .iter()
        .filter(|c| c.get("deleted").and_then(Value::as_bool) != Some(true))
        .collect();
    let mut out = format!("\nComments, newest first ({}):\n", shown.len());
    for c in &shown {
        let place = match c.get("inline") {
            Some(i) if i.is_object() => {
                let line = i
                    .get("to")
                    .or_else(|| i.get("from"))
                    .and_then(Value::as_u64)
                    .map(|l| format!(":{l}"))
                    .unwrap_or_default();
                format!(" on {}{line}", field(i, "path"))
            }
            _ => String::new(),
        };
        let body = c
            .pointer("/content/raw")
            .and_then(Value::as_str)
            .unwrap_or("");
        out.push_str(&format!(
            "- {} at {}{place}: {}\n",
            account(c, "user"),
            field(c, "created_on"),
            cut(body.trim(), MAX_COMMENT)
        ));
    }
    if more {
        out.push_str(&format!(
            "(only the newest {MAX_COMMENTS} comments shown: see the rest on Bitbucket)\n"
        ));
    }
    out
}
