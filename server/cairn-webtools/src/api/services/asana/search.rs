//! `asana_search`: tasks (or projects) of a workspace whose names match a text, through Asana's
//! typeahead search (which every plan has; full-text task search is a premium feature).

use cairn_toolkit::reply::{error, text};
use cairn_toolkit::table::{Cell, Limits, Table};
use cairn_toolkit::{CallContext, Category, Effect, JsonSchema, Paths, Tool};
use rmcp::model::CallToolResult;
use serde::Deserialize;
use serde_json::Value;

use super::{PUBLIC, SERVICE, data, gid};
use crate::api::services::Services;
use crate::api::services::gitlab::{cell, field};
use cairn_web::Method;

/// Asana's largest typeahead answer.
const MAX_RESULTS: u32 = 100;
/// Results asked for unless `count` says otherwise.
const DEFAULT_RESULTS: u32 = 20;

/// The `asana_search` tool.
pub struct AsanaSearch;

/// What to look for.
#[derive(Debug, Clone, Copy, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    Task,
    Project,
}

impl Kind {
    fn as_str(self) -> &'static str {
        match self {
            Kind::Task => "task",
            Kind::Project => "project",
        }
    }
}

/// Arguments of `asana_search`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// The workspace's gid (digits), from its app.asana.com address or the workspace list.
    workspace: String,
    /// The text to look for in names.
    query: String,
    /// What to find: `task` (default) or `project`.
    kind: Option<Kind>,
    /// How many results, 1 to 100 (default 20).
    count: Option<u32>,
}

impl Tool for AsanaSearch {
    type Host = Services;
    type Args = Args;
    const NAME: &'static str = "asana_search";
    const TITLE: &'static str = "Search Asana";
    const DESCRIPTION: &'static str = "Find Asana tasks or projects in a workspace by text in their names: gid, name, completion, last modified and address, to open one with asana_task.";
    const CATEGORY: Category = Category::Api;
    const EFFECT: Effect = Effect::Network;
    const AGENT_ONLY: bool = false;
    const READ_ONLY: bool = true;

    fn paths(_: &Args) -> Paths {
        Paths::none()
    }

    async fn call(services: &Services, args: Args, cx: CallContext) -> CallToolResult {
        let workspace = match gid("workspace", &args.workspace) {
            Ok(w) => w,
            Err(e) => return error(e),
        };
        let query = args.query.trim();
        if query.is_empty() {
            return error("`query` is empty: give the text to look for in names");
        }
        let kind = args.kind.unwrap_or(Kind::Task);
        let count = args.count.unwrap_or(DEFAULT_RESULTS).clamp(1, MAX_RESULTS);
        let fields = match kind {
            Kind::Task => "name,completed,modified_at,permalink_url,assignee.name",
            Kind::Project => "name,archived,modified_at,permalink_url,owner.name",
        };
        let json = match services
            .call(
                &cx,
                SERVICE,
                PUBLIC,
                Method::GET,
                &format!("workspaces/{workspace}/typeahead"),
                &[
                    ("resource_type", kind.as_str().to_owned()),
                    ("query", query.to_owned()),
                    ("count", count.to_string()),
                    ("opt_fields", fields.to_owned()),
                ],
                None,
                &format!("workspace {workspace}"),
            )
            .await
        {
            Ok((_, json)) => json,
            Err(e) => return error(e.to_string()),
        };
        let found: Vec<&Value> = data(&json)
            .as_array()
            .map(|a| a.iter().collect())
            .unwrap_or_default();
        let heading = format!(
            "{}s in workspace {workspace} matching {query:?}",
            kind.as_str()
        );
        if found.is_empty() {
            return text(format!("{heading}: none"));
        }
        let state = |v: &Value| match kind {
            Kind::Task => match v.get("completed").and_then(Value::as_bool) {
                Some(true) => "done",
                Some(false) => "open",
                None => "",
            },
            Kind::Project => match v.get("archived").and_then(Value::as_bool) {
                Some(true) => "archived",
                Some(false) => "active",
                None => "",
            },
        };
        let table = Table {
            columns: ["gid", "name", "state", "modified", "url"]
                .map(str::to_owned)
                .to_vec(),
            rows: found
                .iter()
                .map(|v| {
                    [
                        field(v, "gid"),
                        cell(&field(v, "name"), 120),
                        state(v).to_owned(),
                        field(v, "modified_at"),
                        field(v, "permalink_url"),
                    ]
                    .into_iter()
                    .map(Cell::Text)
                    .collect()
                })
                .collect(),
            // Typeahead has no pages: as many as asked, best first.
            more: found.len() as u32 >= count,
        };
        table.result_hinting(
            &heading,
            &Limits::default(),
            "there may be more: give a longer query, or a larger `count` (up to 100)",
        )
    }
}
