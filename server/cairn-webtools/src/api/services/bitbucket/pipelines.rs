//! `bitbucket_pipelines`: a repository's recent Pipelines runs; or one run with its steps,
//! failed ones first.

use cairn_toolkit::reply::{error, text};
use cairn_toolkit::table::{Cell, Limits, Table};
use cairn_toolkit::{CallContext, Category, Effect, JsonSchema, Paths, Tool};
use rmcp::model::CallToolResult;
use serde::Deserialize;
use serde_json::Value;

use super::{MAX_ROWS, PUBLIC, SERVICE, account, failed, list_page, repo_path, state};
use crate::api::services::Services;
use crate::api::services::gitlab::{cell, field};
use cairn_web::Method;

/// The most steps read for one run (Bitbucket's largest page).
const MAX_STEPS: u32 = 100;

/// The `bitbucket_pipelines` tool.
pub struct BitbucketPipelines;

/// Arguments of `bitbucket_pipelines`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// The repository as `workspace/repo-slug`.
    repo: String,
    /// One run's UUID (with or without its braces, as the list shows it): show it with its
    /// steps, failed ones first, instead of listing.
    pipeline: Option<String>,
    /// The page of the list, from 1 (50 a page, newest first).
    page: Option<u32>,
}

impl Tool for BitbucketPipelines {
    type Host = Services;
    type Args = Args;
    const NAME: &'static str = "bitbucket_pipelines";
    const TITLE: &'static str = "Bitbucket Pipelines";
    const DESCRIPTION: &'static str = "List a Bitbucket Cloud repository's recent Pipelines runs (state, branch, trigger), or show one run with its steps, failed ones first, to see why it failed.";
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
        match args
            .pipeline
            .as_deref()
            .map(str::trim)
            .filter(|p| !p.is_empty())
        {
            Some(p) => match uuid(p) {
                Ok(u) => one(services, &cx, args.repo.trim(), &path, &u).await,
                Err(e) => error(e),
            },
            None => list(services, &cx, &args, &path).await,
        }
    }
}

/// A run's UUID in braces, checked (hex digits and dashes only inside).
fn uuid(text: &str) -> Result<String, String> {
    let inner = text.trim_start_matches('{').trim_end_matches('}');
    if !inner.is_empty()
        && inner.len() <= 40
        && inner.chars().all(|c| c.is_ascii_hexdigit() || c == '-')
    {
        Ok(format!("{{{inner}}}"))
    } else {
        Err(format!(
            "`pipeline` {text:?} is not a run's UUID (like {{3f9c1a2e-…}}): list the runs to find it"
        ))
    }
}

async fn list(services: &Services, cx: &CallContext, args: &Args, path: &str) -> CallToolResult {
    let page = args.page.unwrap_or(1).max(1);
    let listed = match list_page(
        services,
        cx,
        &format!("{path}/pipelines"),
        vec![
            ("sort", "-created_on".to_owned()),
            ("pagelen", MAX_ROWS.to_string()),
            ("page", page.to_string()),
        ],
        MAX_ROWS as usize,
        &format!("repository {}", args.repo.trim()),
    )
    .await
    {
        Ok(l) => l,
        Err(e) => return error(e.to_string()),
    };
    let heading = format!(
        "pipelines of {} (page {page}, newest first)",
        args.repo.trim()
    );
    let found = &listed.items;
    if found.is_empty() {
        return text(format!("{heading}: none"));
    }
    let table = Table {
        columns: ["#", "uuid", "state", "ref", "trigger", "created", "build s"]
            .map(str::to_owned)
            .to_vec(),
        rows: found
            .iter()
            .map(|p| {
                [
                    field(p, "build_number"),
                    field(p, "uuid"),
                    state(p),
                    cell(&target_ref(p), 80),
                    trigger(p),
                    field(p, "created_on"),
                    field(p, "build_seconds_used"),
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

/// The branch or tag a run built (`target.ref_name`), or its commit.
fn target_ref(p: &Value) -> String {
    let target = p.get("target").unwrap_or(&Value::Null);
    let name = field(target, "ref_name");
    if !name.is_empty() {
        return name;
    }
    target
        .pointer("/commit/hash")
        .and_then(Value::as_str)
        .map_or_else(String::new, |h| h.chars().take(12).collect())
}

/// What started a run (`PUSH`, `MANUAL`, `SCHEDULE`), from its trigger's name or type.
fn trigger(p: &Value) -> String {
    let t = p.get("trigger").unwrap_or(&Value::Null);
    let name = field(t, "name");
    if name.is_empty() {
        field(t, "type")
    } else {
        name
    }
}

async fn one(
    services: &Services,
    cx: &CallContext,
    repo: &str,
    path: &str,
    uuid: &str,
) -> CallToolResult {
    let what = format!("pipeline {uuid} of {repo}");
    // Braces are not allowed in a path as they are.
    let segment = uuid.replace('{', "%7B").replace('}', "%7D");
    let base = format!("{path}/pipelines/{segment}");
    let run = match services
        .call(cx, SERVICE, PUBLIC, Method::GET, &base, &[], None, &what)
        .await
    {
        Ok((_, json)) => json,
        Err(e) => return error(e.to_string()),
    };
    let mut out = format!(
        "pipeline #{} {} of {repo}: {} (ref {}, trigger {}); by {}; created {}, completed {}; {} build seconds\n",
        field(&run, "build_number"),
        field(&run, "uuid"),
        state(&run),
        or_dash(target_ref(&run)),
        or_dash(trigger(&run)),
        account(&run, "creator"),
        field(&run, "created_on"),
        or_dash(field(&run, "completed_on")),
        or_dash(field(&run, "build_seconds_used")),
    );
    let (steps, more) = match list_page(
        services,
        cx,
        &format!("{base}/steps"),
        vec![("pagelen", MAX_STEPS.to_string())],
        MAX_STEPS as usize,
        &format!("the steps of {what}"),
    )
    .await
    {
        Ok(listed) => {
            let more = listed.next.is_some();
            (listed.items, more)
        }
        Err(e) => {
            out.push_str(&format!("\n(steps not read: {e})\n"));
            return text(out);
        }
    };
    let mut steps: Vec<&Value> = steps.iter().collect();
    if steps.is_empty() {
        out.push_str("\nNo steps.\n");
        return text(out);
    }
    // Failed first, then in Bitbucket's order (stable).
    steps.sort_by_key(|s| !failed(&state(s)));
    let failures = steps.iter().filter(|s| failed(&state(s))).count();
    out.push_str(&format!("\n{} steps, {failures} failed:\n", steps.len()));
    let table = Table {
        columns: [
            "step",
            "name",
            "state",
            "started",
            "completed",
            "last command",
        ]
        .map(str::to_owned)
        .to_vec(),
        rows: steps
            .iter()
            .map(|s| {
                let last = s
                    .get("script_commands")
                    .and_then(Value::as_array)
                    .and_then(|c| c.last())
                    .map(|c| field(c, "command"))
                    .unwrap_or_default();
                [
                    field(s, "uuid"),
                    cell(&field(s, "name"), 80),
                    state(s),
                    field(s, "started_on"),
                    field(s, "completed_on"),
                    cell(&last, 120),
                ]
                .into_iter()
                .map(Cell::Text)
                .collect()
            })
            .collect(),
        more,
    };
    let (markdown, shown) = table.markdown(&Limits::default());
    out.push_str(&markdown);
    if more || shown < steps.len() {
        out.push_str(&format!(
            "({shown} steps shown; the run has more than {MAX_STEPS}: see it on Bitbucket)\n"
        ));
    }
    text(out)
}

fn or_dash(s: String) -> String {
    if s.is_empty() { "-".to_owned() } else { s }
}
