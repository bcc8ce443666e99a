//! `jira_search`: issues matching a JQL query (key, summary, status, assignee, priority,
//! updated), a page at a time.

use cairn_toolkit::reply::{error, text};
use cairn_toolkit::table::{Cell, Limits, Table};
use cairn_toolkit::{CallContext, Category, Effect, JsonSchema, Paths, Tool};
use rmcp::model::CallToolResult;
use serde::Deserialize;
use serde_json::Value;

use super::{call, name_at, text_at};
use crate::Method;
use crate::api::services::Services;

/// The most issues one page shows (and the default).
const MAX_RESULTS: u32 = 50;
/// The longest JQL accepted.
const MAX_JQL: usize = 4000;

/// The `jira_search` tool.
pub struct JiraSearch;

/// Arguments of `jira_search`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// The JQL query, like `project = PROJ AND status != Done ORDER BY updated DESC`.
    jql: String,
    /// How many issues to show, 1 to 50 (default 50).
    max_results: Option<u32>,
    /// The index of the first issue to show, for the next page (default 0).
    start_at: Option<u32>,
}

impl Tool for JiraSearch {
    type Host = Services;
    type Args = Args;
    const NAME: &'static str = "jira_search";
    const TITLE: &'static str = "Search Jira";
    const DESCRIPTION: &'static str = "Find Jira issues with a JQL query: key, summary, status, assignee, priority and last update, a page of up to 50 at a time.";
    const CATEGORY: Category = Category::Api;
    const EFFECT: Effect = Effect::Network;
    const AGENT_ONLY: bool = false;
    const READ_ONLY: bool = true;

    fn paths(_: &Args) -> Paths {
        Paths::none()
    }

    async fn call(services: &Services, args: Args, cx: CallContext) -> CallToolResult {
        let jql = args.jql.trim();
        if jql.is_empty() {
            return error(
                "`jql` is empty: give a query like `project = PROJ ORDER BY updated DESC`",
            );
        }
        if jql.len() > MAX_JQL {
            return error(format!(
                "`jql` has {} bytes, more than {MAX_JQL}: shorten the query",
                jql.len()
            ));
        }
        let max = args
            .max_results
            .unwrap_or(MAX_RESULTS)
            .clamp(1, MAX_RESULTS);
        let start = args.start_at.unwrap_or(0);
        let query = [
            ("jql", jql.to_owned()),
            ("startAt", start.to_string()),
            ("maxResults", max.to_string()),
            (
                "fields",
                "summary,status,assignee,priority,updated".to_owned(),
            ),
        ];
        let json = match call(
            services,
            &cx,
            Method::GET,
            "search",
            &query,
            None,
            "the search",
        )
        .await
        {
            Ok((_, json)) => json,
            Err(e) => return error(e.to_string()),
        };
        let issues: Vec<&Value> = json
            .get("issues")
            .and_then(Value::as_array)
            .map(|a| a.iter().take(max as usize).collect())
            .unwrap_or_default();
        let total = json.get("total").and_then(Value::as_u64);
        let mut heading = format!("Jira issues matching `{jql}`");
        if let Some(total) = total {
            heading.push_str(&format!(
                ": {total} in all, from {}",
                start.saturating_add(1)
            ));
        }
        if let Some(w) = json.get("warningMessages").and_then(Value::as_array) {
            for m in w.iter().filter_map(Value::as_str) {
                heading.push_str(&format!("\nJira warns: {m}"));
            }
        }
        if issues.is_empty() {
            return text(format!("{heading}\n\nNo issues on this page."));
        }
        let shown_to = u64::from(start) + issues.len() as u64;
        let table = Table {
            columns: [
                "key", "summary", "status", "assignee", "priority", "updated",
            ]
            .map(str::to_owned)
            .to_vec(),
            rows: issues
                .iter()
                .map(|i| {
                    let f = i.get("fields").unwrap_or(&Value::Null);
                    [
                        text_at(i, "key"),
                        text_at(f, "summary"),
                        name_at(f, "status"),
                        name_at(f, "assignee"),
                        name_at(f, "priority"),
                        text_at(f, "updated"),
                    ]
                    .into_iter()
                    .map(Cell::Text)
                    .collect()
                })
                .collect(),
            more: total.is_some_and(|t| shown_to < t),
        };
        table.result_hinting(
            &heading,
            &Limits::default(),
            &format!("call again with start_at={shown_to}"),
        )
    }
}
