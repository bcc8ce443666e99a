//! `gitlab_merge_requests`: a project's merge requests; or one by iid with the files it changes
//! (lines added and removed) and its pipeline.

use cairn_toolkit::reply::{error, text};
use cairn_toolkit::table::{Cell, Limits, Table};
use cairn_toolkit::{CallContext, Category, Effect, JsonSchema, Paths, Tool};
use rmcp::model::CallToolResult;
use serde::Deserialize;
use serde_json::Value;

use super::{
    MAX_ROWS, MAX_TEXT, PUBLIC, SERVICE, cell, cut, field, items, list_page, project_segment, user,
};
use crate::api::services::Services;
use cairn_web::Method;

/// The most changed files listed for one merge request.
const MAX_FILES: usize = 100;

/// The `gitlab_merge_requests` tool.
pub struct GitlabMergeRequests;

/// Which merge requests to list.
#[derive(Debug, Clone, Copy, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum MrState {
    Opened,
    Closed,
    Merged,
    All,
}

/// Arguments of `gitlab_merge_requests`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// The project: its numeric id or its path, like `gitlab-org/gitlab`.
    project: String,
    /// One merge request's number in the project (the `!7` iid): show it with the files it
    /// changes and its pipeline instead of listing.
    iid: Option<u64>,
    /// Which merge requests to list: `opened` (default), `closed`, `merged` or `all`.
    state: Option<MrState>,
    /// The page of the list, from 1 (50 a page).
    page: Option<u32>,
}

impl Tool for GitlabMergeRequests {
    type Host = Services;
    type Args = Args;
    const NAME: &'static str = "gitlab_merge_requests";
    const TITLE: &'static str = "GitLab merge requests";
    const DESCRIPTION: &'static str = "List a GitLab project's merge requests by state, or show one by its iid with the files it changes (lines added and removed) and its pipeline's status.";
    const CATEGORY: Category = Category::Api;
    const EFFECT: Effect = Effect::Network;
    const AGENT_ONLY: bool = false;
    const READ_ONLY: bool = true;

    fn paths(_: &Args) -> Paths {
        Paths::none()
    }

    async fn call(services: &Services, args: Args, cx: CallContext) -> CallToolResult {
        let project = match project_segment(&args.project) {
            Ok(p) => p,
            Err(e) => return error(e),
        };
        match args.iid {
            Some(iid) => one(services, &cx, &args.project, &project, iid).await,
            None => list(services, &cx, &args, &project).await,
        }
    }
}

async fn list(services: &Services, cx: &CallContext, args: &Args, project: &str) -> CallToolResult {
    let state = match args.state.unwrap_or(MrState::Opened) {
        MrState::Opened => "opened",
        MrState::Closed => "closed",
        MrState::Merged => "merged",
        MrState::All => "all",
    };
    let page = args.page.unwrap_or(1).max(1);
    let query = [
        ("state", state.to_owned()),
        ("per_page", MAX_ROWS.to_string()),
        ("page", page.to_string()),
    ];
    let listed = match list_page(
        services,
        cx,
        &format!("projects/{project}/merge_requests"),
        query.to_vec(),
        MAX_ROWS as usize,
        &format!("project {}", args.project),
    )
    .await
    {
        Ok(l) => l,
        Err(e) => return error(e.to_string()),
    };
    let found = &listed.items;
    let heading = format!("{state} merge requests of {} (page {page})", args.project);
    if found.is_empty() {
        return text(format!("{heading}: none"));
    }
    let table = Table {
        columns: ["iid", "title", "state", "author", "branches", "updated"]
            .map(str::to_owned)
            .to_vec(),
        rows: found
            .iter()
            .map(|m| {
                [
                    format!("!{}", field(m, "iid")),
                    cell(&field(m, "title"), 120),
                    field(m, "state"),
                    user(m, "author"),
                    format!(
                        "{} → {}",
                        field(m, "source_branch"),
                        field(m, "target_branch")
                    ),
                    field(m, "updated_at"),
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
        &format!("call again with page={}", page + 1),
    )
}

async fn one(
    services: &Services,
    cx: &CallContext,
    name: &str,
    project: &str,
    iid: u64,
) -> CallToolResult {
    // The changes answer is the merge request itself with its `changes`: one call.
    let mr = match services
        .call(
            cx,
            SERVICE,
            PUBLIC,
            Method::GET,
            &format!("projects/{project}/merge_requests/{iid}/changes"),
            &[],
            None,
            &format!("merge request !{iid} of {name}"),
        )
        .await
    {
        Ok((_, json)) => json,
        Err(e) => return error(e.to_string()),
    };
    let mut out = format!(
        "!{} {} ({})\n{} → {}; author: {}; created {}; updated {}\n",
        field(&mr, "iid"),
        field(&mr, "title"),
        field(&mr, "state"),
        field(&mr, "source_branch"),
        field(&mr, "target_branch"),
        user(&mr, "author"),
        field(&mr, "created_at"),
        field(&mr, "updated_at"),
    );
    let merge_status = field(&mr, "merge_status");
    if !merge_status.is_empty() {
        out.push_str(&format!("merge status: {merge_status}\n"));
    }
    let pipeline = mr
        .get("head_pipeline")
        .filter(|p| p.is_object())
        .or_else(|| mr.get("pipeline").filter(|p| p.is_object()));
    match pipeline {
        Some(p) => out.push_str(&format!(
            "pipeline {}: {} (ref {}, sha {})\n",
            field(p, "id"),
            field(p, "status"),
            field(p, "ref"),
            field(p, "sha").chars().take(12).collect::<String>()
        )),
        None => out.push_str("pipeline: none reported\n"),
    }
    let url = field(&mr, "web_url");
    if !url.is_empty() {
        out.push_str(&format!("{url}\n"));
    }
    let description = field(&mr, "description");
    if !description.trim().is_empty() {
        out.push_str(&format!("\n{}\n", cut(&description, MAX_TEXT)));
    }
    out.push_str(&changes_text(&mr));
    text(out)
}

/// The files changed, each with the lines its diff adds and removes, at most [`MAX_FILES`].
fn changes_text(mr: &Value) -> String {
    let changes = mr.get("changes").map(items).unwrap_or_default();
    if changes.is_empty() {
        return "\nNo changes reported.\n".to_owned();
    }
    let (mut added, mut removed) = (0usize, 0usize);
    let mut lines = Vec::new();
    for c in &changes {
        let (a, r) = diff_counts(&field(c, "diff"));
        added += a;
        removed += r;
        let (old, new) = (field(c, "old_path"), field(c, "new_path"));
        let kind = if c.get("new_file").and_then(Value::as_bool) == Some(true) {
            " (new)".to_owned()
        } else if c.get("deleted_file").and_then(Value::as_bool) == Some(true) {
            " (deleted)".to_owned()
        } else if c.get("renamed_file").and_then(Value::as_bool) == Some(true) {
            format!(" (renamed from {old})")
        } else {
            String::new()
        };
        lines.push(format!("- {new}{kind}: +{a} -{r}\n"));
    }
    let mut out = format!(
        "\nChanges: {} file{}, +{added} -{removed}\n",
        changes.len(),
        if changes.len() == 1 { "" } else { "s" }
    );
    for line in lines.iter().take(MAX_FILES) {
        out.push_str(line);
    }
    if lines.len() > MAX_FILES {
        out.push_str(&format!(
            "({} more files not listed)\n",
            lines.len() - MAX_FILES
        ));
    }
    if mr.get("overflow").and_then(Value::as_bool) == Some(true) {
        out.push_str("(GitLab left some changes out of its answer: the diff is too large)\n");
    }
    out
}

/// Lines a unified diff adds and removes (hunk lines only, not the `---`/`+++` headers).
fn diff_counts(diff: &str) -> (usize, usize) {
    let mut added = 0;
    let mut removed = 0;
    for line in diff.lines() {
        if line.starts_with("+++") || line.starts_with("---") {
            continue;
        }
        if line.starts_with('+') {
            added += 1;
        } else if line.starts_with('-') {
            removed += 1;
        }
    }
    (added, removed)
}
