//! `gitlab_issues`: a project's issues by state, labels and search; or one issue by iid with
//! its description and recent comments.

use cairn_toolkit::reply::{error, text};
use cairn_toolkit::table::{Cell, Limits, Table};
use cairn_toolkit::{CallContext, Category, Effect, JsonSchema, Paths, Tool};
use rmcp::model::CallToolResult;
use serde::Deserialize;
use serde_json::Value;

use super::{
    MAX_ROWS, MAX_TEXT, PUBLIC, SERVICE, cell, cut, field, list_page, project_segment, user,
};
use crate::api::services::Services;
use cairn_web::Method;

/// The most comments shown with one issue.
const MAX_NOTES: usize = 20;

/// The `gitlab_issues` tool.
pub struct GitlabIssues;

/// Which issues to list.
#[derive(Debug, Clone, Copy, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum IssueState {
    Opened,
    Closed,
    All,
}

/// Arguments of `gitlab_issues`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// The project: its numeric id or its path, like `gitlab-org/gitlab`.
    project: String,
    /// One issue's number in the project (the `#12` iid): show it with its description and
    /// recent comments instead of listing.
    iid: Option<u64>,
    /// Which issues to list: `opened` (default), `closed` or `all`.
    state: Option<IssueState>,
    /// Only issues with all these labels, comma-separated (`bug,backend`).
    labels: Option<String>,
    /// Only issues whose title or description contain this text.
    search: Option<String>,
    /// The page of the list, from 1 (50 issues a page).
    page: Option<u32>,
}

impl Tool for GitlabIssues {
    type Host = Services;
    type Args = Args;
    const NAME: &'static str = "gitlab_issues";
    const TITLE: &'static str = "GitLab issues";
    const DESCRIPTION: &'static str = "List a GitLab project's issues (by state, labels, search text), or show one issue by its iid with its description and recent comments.";
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
    let state = match args.state.unwrap_or(IssueState::Opened) {
        IssueState::Opened => "opened",
        IssueState::Closed => "closed",
        IssueState::All => "all",
    };
    let page = args.page.unwrap_or(1).max(1);
    let mut query = vec![
        ("state", state.to_owned()),
        ("per_page", MAX_ROWS.to_string()),
        ("page", page.to_string()),
    ];
    if let Some(labels) = args.labels.as_deref().filter(|l| !l.trim().is_empty()) {
        query.push(("labels", labels.trim().to_owned()));
    }
    if let Some(search) = args.search.as_deref().filter(|s| !s.trim().is_empty()) {
        query.push(("search", search.trim().to_owned()));
    }
    let what = format!("project {}", args.project);
    let listed = match list_page(
        services,
        cx,
        &format!("projects/{project}/issues"),
        query,
        MAX_ROWS as usize,
        &what,
    )
    .await
    {
        Ok(l) => l,
        Err(e) => return error(e.to_string()),
    };
    let found = &listed.items;
    let table = Table {
        columns: [
            "iid",
            "title",
            "state",
            "author",
            "assignees",
            "labels",
            "updated",
        ]
        .map(str::to_owned)
        .to_vec(),
        rows: found
            .iter()
            .map(|i| {
                let assignees = i
                    .get("assignees")
                    .and_then(Value::as_array)
                    .map(|a| {
                        a.iter()
                            .filter_map(|u| u.get("username").and_then(Value::as_str))
                            .collect::<Vec<_>>()
                            .join(", ")
                    })
                    .unwrap_or_default();
                let labels = i
                    .get("labels")
                    .and_then(Value::as_array)
                    .map(|a| {
                        a.iter()
                            .filter_map(Value::as_str)
                            .collect::<Vec<_>>()
                            .join(", ")
                    })
                    .unwrap_or_default();
                [
                    format!("#{}", field(i, "iid")),
                    cell(&field(i, "title"), 120),
                    field(i, "state"),
                    user(i, "author"),
                    assignees,
                    labels,
                    field(i, "updated_at"),
                ]
                .into_iter()
                .map(Cell::Text)
                .collect()
            })
            .collect(),
        more: listed.next.is_some(),
    };
    let heading = format!(
        "{state} issues of {} (page {page}{})",
        args.project,
        filters(args)
    );
    if found.is_empty() {
        return text(format!("{heading}: none"));
    }
    table.result_hinting(
        &heading,
        &Limits::default(),
        &format!("call again with page={}", page + 1),
    )
}

/// The filters asked for, said after the heading.
fn filters(args: &Args) -> String {
    let mut out = String::new();
    if let Some(l) = args.labels.as_deref().filter(|l| !l.trim().is_empty()) {
        out.push_str(&format!(", labels {l}"));
    }
    if let Some(s) = args.search.as_deref().filter(|s| !s.trim().is_empty()) {
        out.push_str(&format!(", matching {s:?}"));
    }
    out
}

async fn one(
    services: &Services,
    cx: &CallContext,
    name: &str,
    project: &str,
    iid: u64,
) -> CallToolResult {
    let what = format!("issue #{iid} of {name}");
    let issue = match services
        .call(
            cx,
            SERVICE,
            PUBLIC,
            Method::GET,
            &format!("projects/{project}/issues/{iid}"),
            &[],
            None,
            &what,
        )
        .await
    {
        Ok((_, json)) => json,
        Err(e) => return error(e.to_string()),
    };
    let mut out = format!(
        "#{} {} ({})\nauthor: {}; created {}; updated {}\n",
        field(&issue, "iid"),
        field(&issue, "title"),
        field(&issue, "state"),
        user(&issue, "author"),
        field(&issue, "created_at"),
        field(&issue, "updated_at"),
    );
    let labels = issue
        .get("labels")
        .and_then(Value::as_array)
        .map(|a| a.iter().filter_map(Value::as_str).collect::<Vec<_>>())
        .unwrap_or_default();
    if !labels.is_empty() {
        out.push_str(&format!("labels: {}\n", labels.join(", ")));
    }
    let url = field(&issue, "web_url");
    if !url.is_empty() {
        out.push_str(&format!("{url}\n"));
    }
    let description = field(&issue, "description");
    out.push_str(&format!(
        "\n{}\n",
        if description.trim().is_empty() {
            "(no description)".to_owned()
        } else {
            cut(&description, MAX_TEXT)
        }
    ));
    // Newest first, so the comments shown are the recent ones.
    let notes = list_page(
        services,
        cx,
        &format!("projects/{project}/issues/{iid}/notes"),
        vec![
            ("sort", "desc".to_owned()),
            ("order_by", "created_at".to_owned()),
            ("per_page", MAX_NOTES.to_string()),
        ],
        MAX_NOTES,
        &format!("the comments of issue #{iid} of {name}"),
    )
    .await;
    match notes {
        Ok(listed) => {
            out.push_str(&notes_text(&listed.items, listed.next.is_some()));
        }
        Err(e) => out.push_str(&format!("\n(comments not read: {e})\n")),
    }
    text(out)
}

/// The comments (not system notes), newest first, with a note when more were left out.
pub(crate) fn notes_text(notes: &[Value], more: bool) -> String {
    let notes: Vec<&Value> = notes
        .iter()
        .filter(|n| n.get("system").and_then(Value::as_bool) != Some(true))
        .take(MAX_NOTES)
        .collect();
    if notes.is_empty() {
        return "\nNo comments.\n".to_owned();
    }
    let mut out = format!("\nComments, newest first ({}):\n", notes.len());
    for n in notes {
        out.push_str(&format!(
            "- {} at {}: {}\n",
            user(n, "author"),
            field(n, "created_at"),
            cut(field(n, "body").trim(), 1000)
        ));
    }
    if more {
        out.push_str(&format!("(only the {MAX_NOTES} newest are shown)\n"));
    }
    out
}
