//! `gitlab_pipelines`: a project's recent pipelines; or one pipeline with its jobs, failed ones
//! first.

use cairn_toolkit::reply::{error, text};
use cairn_toolkit::table::{Cell, Limits, Table};
use cairn_toolkit::{CallContext, Category, Effect, JsonSchema, Paths, Tool};
use rmcp::model::CallToolResult;
use serde::Deserialize;
use serde_json::Value;

use super::{MAX_ROWS, PUBLIC, SERVICE, cell, field, list_page, project_segment};
use crate::api::services::Services;
use cairn_web::Method;

/// The most jobs read for one pipeline (GitLab's largest page).
const MAX_JOBS: u32 = 100;

/// The `gitlab_pipelines` tool.
pub struct GitlabPipelines;

/// Arguments of `gitlab_pipelines`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// The project: its numeric id or its path, like `gitlab-org/gitlab`.
    project: String,
    /// One pipeline's id: show it with its jobs (failed ones first) instead of listing.
    pipeline_id: Option<u64>,
    /// Only pipelines of this branch or tag.
    #[serde(rename = "ref")]
    git_ref: Option<String>,
    /// The page of the list, from 1 (50 a page).
    page: Option<u32>,
}

impl Tool for GitlabPipelines {
    type Host = Services;
    type Args = Args;
    const NAME: &'static str = "gitlab_pipelines";
    const TITLE: &'static str = "GitLab pipelines";
    const DESCRIPTION: &'static str = "List a GitLab project's recent CI pipelines (optionally of one branch), or show one pipeline with its jobs, failed ones first, to see why it failed.";
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
        match args.pipeline_id {
            Some(id) => one(services, &cx, &args.project, &project, id).await,
            None => list(services, &cx, &args, &project).await,
        }
    }
}

async fn list(services: &Services, cx: &CallContext, args: &Args, project: &str) -> CallToolResult {
    let page = args.page.unwrap_or(1).max(1);
    let mut query = vec![
        ("per_page", MAX_ROWS.to_string()),
        ("page", page.to_string()),
    ];
    if let Some(r) = args.git_ref.as_deref().filter(|r| !r.trim().is_empty()) {
        query.push(("ref", r.trim().to_owned()));
    }
    let listed = match list_page(
        services,
        cx,
        &format!("projects/{project}/pipelines"),
        query,
        MAX_ROWS as usize,
        &format!("project {}", args.project),
    )
    .await
    {
        Ok(l) => l,
        Err(e) => return error(e.to_string()),
    };
    let found = &listed.items;
    let heading = match &args.git_ref {
        Some(r) => format!("pipelines of {} on {r} (page {page})", args.project),
        None => format!("pipelines of {} (page {page})", args.project),
    };
    if found.is_empty() {
        return text(format!("{heading}: none"));
    }
    let table = Table {
        columns: ["id", "status", "ref", "sha", "updated"]
            .map(str::to_owned)
            .to_vec(),
        rows: found
            .iter()
            .map(|p| {
                [
                    field(p, "id"),
                    field(p, "status"),
                    cell(&field(p, "ref"), 80),
                    field(p, "sha").chars().take(12).collect(),
                    field(p, "updated_at"),
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
    id: u64,
) -> CallToolResult {
    let what = format!("pipeline {id} of {name}");
    let pipeline = match services
        .call(
            cx,
            SERVICE,
            PUBLIC,
            Method::GET,
            &format!("projects/{project}/pipelines/{id}"),
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
        "pipeline {} of {name}: {} (ref {}, sha {}); created {}, finished {}\n",
        field(&pipeline, "id"),
        field(&pipeline, "status"),
        field(&pipeline, "ref"),
        field(&pipeline, "sha").chars().take(12).collect::<String>(),
        field(&pipeline, "created_at"),
        or_dash(field(&pipeline, "finished_at")),
    );
    let url = field(&pipeline, "web_url");
    if !url.is_empty() {
        out.push_str(&format!("{url}\n"));
    }
    let jobs = list_page(
        services,
        cx,
        &format!("projects/{project}/pipelines/{id}/jobs"),
        vec![("per_page", MAX_JOBS.to_string())],
        MAX_JOBS as usize,
        &format!("the jobs of {what}"),
    )
    .await;
    let listed = match jobs {
        Ok(l) => l,
        Err(e) => {
            out.push_str(&format!("\n(jobs not read: {e})\n"));
            return text(out);
        }
    };
    let mut jobs: Vec<&Value> = listed.items.iter().collect();
    if jobs.is_empty() {
        out.push_str("\nNo jobs.\n");
        return text(out);
    }
    // Failed first, then in the order GitLab gave (stable).
    jobs.sort_by_key(|j| field(j, "status") != "failed");
    let failed = jobs
        .iter()
        .filter(|j| field(j, "status") == "failed")
        .count();
    out.push_str(&format!("\n{} jobs, {failed} failed:\n", jobs.len()));
    let table = Table {
        columns: ["job", "name", "stage", "status", "duration s", "failure"]
            .map(str::to_owned)
            .to_vec(),
        rows: jobs
            .iter()
            .map(|j| {
                [
                    field(j, "id"),
                    cell(&field(j, "name"), 80),
                    field(j, "stage"),
                    field(j, "status"),
                    j.get("duration")
                        .and_then(Value::as_f64)
                        .map(|d| format!("{d:.0}"))
                        .unwrap_or_default(),
                    field(j, "failure_reason"),
                ]
                .into_iter()
                .map(Cell::Text)
                .collect()
            })
            .collect(),
        more: listed.next.is_some(),
    };
    let (markdown, shown) = table.markdown(&Limits::default());
    out.push_str(&markdown);
    if table.more || shown < jobs.len() {
        out.push_str(&format!(
            "({shown} jobs shown; the pipeline has more than {MAX_JOBS}: see it on GitLab)\n"
        ));
    }
    text(out)
}

fn or_dash(s: String) -> String {
    if s.is_empty() { "-".to_owned() } else { s }
}
