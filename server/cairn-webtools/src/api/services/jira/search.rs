//! `jira_search`: issues matching a JQL query (key, summary, status, assignee, priority,
//! updated), a page at a time. Jira Cloud answers on `search/jql` (paged by token); sites and
//! descriptions without it (a 404 there) are asked on the older `search` (paged by index).

use cairn_toolkit::reply::{error, text};
use cairn_toolkit::table::{Cell, Limits, Table};
use cairn_toolkit::{CallContext, Category, Effect, JsonSchema, Paths, Tool};
use rmcp::model::CallToolResult;
use serde::Deserialize;
use serde_json::Value;

use super::{SERVICE, name_at, site, text_at};
use crate::api::services::paging::{self, Items, List, Listed, More, Next, Paging, Size};
use crate::api::services::{ServiceError, Services};
use cairn_web::Method;

/// The most issues one page shows (and the default).
const MAX_RESULTS: u32 = 50;
/// The longest JQL accepted.
const MAX_JQL: usize = 4000;
/// The fields shown.
const FIELDS: &str = "summary,status,assignee,priority,updated";

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
    /// For the next page: the `page_token` the previous page ended with.
    page_token: Option<String>,
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
        let token = args
            .page_token
            .as_deref()
            .map(str::trim)
            .filter(|t| !t.is_empty());
        let mut query = vec![
            ("jql", jql.to_owned()),
            ("maxResults", max.to_string()),
            ("fields", FIELDS.to_owned()),
        ];
        if let Some(t) = token {
            query.push(("nextPageToken", t.to_owned()));
        }
        if let Err(e) = site(services) {
            return error(e.to_string());
        }
        let current = paging::list(
            services,
            &cx,
            &search("rest/api/3/search/jql", query.clone()),
            &BY_TOKEN,
            max as usize,
            1,
        )
        .await;
        let (listed, start) = match current {
            Ok(listed) => (listed, None),
            Err(ServiceError::NotFound { .. }) => {
                // The older search, paged by index: the token is the index to start at.
                let start: u64 = match token.map(str::parse).transpose() {
                    Ok(s) => s.unwrap_or(0),
                    Err(_) => {
                        return error(format!(
                            "page_token {:?} is not one this Jira gave: leave it out for the first page",
                            token.unwrap_or_default()
                        ));
                    }
                };
                query.retain(|(k, _)| *k != "nextPageToken");
                query.push(("startAt", start.to_string()));
                match paging::list(
                    services,
                    &cx,
                    &search("rest/api/3/search", query),
                    &BY_INDEX,
                    max as usize,
                    1,
                )
                .await
                {
                    Ok(listed) => (listed, Some(start)),
                    Err(e) => return error(e.to_string()),
                }
            }
            Err(e) => return error(e.to_string()),
        };
        page(jql, &listed, start)
    }
}

/// Jira Cloud's `search/jql`: the `nextPageToken` the answer gives, unless it says `isLast`.
const BY_TOKEN: Paging = Paging {
    items: Items::At("/issues"),
    size: Some(Size {
        param: "maxResults",
        max: MAX_RESULTS as usize,
    }),
    next: Next::Token {
        at: "/nextPageToken",
        param: "nextPageToken",
        last: Some("/isLast"),
    },
};

/// The older `search`: an index (`startAt`) while the `total` is beyond it.
const BY_INDEX: Paging = Paging {
    items: Items::At("/issues"),
    size: Some(Size {
        param: "maxResults",
        max: MAX_RESULTS as usize,
    }),
    next: Next::Offset {
        param: "startAt",
        more: More::Total {
            at: "/total",
            or_link: None,
        },
    },
};

/// The search at `path` (under the configured site) with `query`.
fn search<'a>(path: &'a str, query: Vec<(&'a str, String)>) -> List<'a> {
    List {
        service: SERVICE,
        public: "",
        label: "Jira",
        method: Method::GET,
        path,
        query,
        body: None,
        what: "the search",
    }
}

/// The page as a table, with Jira's warnings and how to get the next page (`start`: the
/// older search's index, which also says the total).
fn page(jql: &str, listed: &Listed, start: Option<u64>) -> CallToolResult {
    let (json, issues) = (&listed.last, &listed.items);
    let mut heading = format!("Jira issues matching `{jql}`");
    if let Some(start) = start
        && let Some(total) = json.get("total").and_then(Value::as_u64)
    {
        heading.push_str(&format!(": {total} in all, from {}", start + 1));
    }
    let next = listed.next.as_ref().map(|(_, n)| n.clone());
    if let Some(w) = json.get("warningMessages").and_then(Value::as_array) {
        for m in w.iter().filter_map(Value::as_str) {
            heading.push_str(&format!("\nJira warns: {m}"));
        }
    }
    if issues.is_empty() {
        return text(format!("{heading}\n\nNo issues on this page."));
    }
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
        more: next.is_some(),
    };
    table.result_hinting(
        &heading,
        &Limits::default(),
        &format!("call again with page_token={:?}", next.unwrap_or_default()),
    )
}
