//! `launchdarkly_flags`: a project's feature flags with whether each is on or off in each
//! environment, by tag or text, a page at a time.

use cairn_toolkit::reply::{error, text};
use cairn_toolkit::table::{Cell, Limits, Table};
use cairn_toolkit::{CallContext, Category, Effect, JsonSchema, Paths, Tool};
use rmcp::model::CallToolResult;
use serde::Deserialize;
use serde_json::Value;

use super::{PUBLIC, SERVICE, key};
use crate::api::services::Services;
use crate::api::services::github::{arr, bounded, s};
use crate::api::services::paging::{self, Items, List, More, Next, Paging, Size};
use cairn_web::Method;

/// The most flags one call lists.
const MAX_LIMIT: u32 = 100;
/// How the flags page: an `offset` while the `totalCount` is beyond it (without a total, while
/// the answer links a next page).
const PAGING: Paging = Paging {
    items: Items::At("/items"),
    size: Some(Size {
        param: "limit",
        max: MAX_LIMIT as usize,
    }),
    next: Next::Offset {
        param: "offset",
        more: More::Total {
            at: "/totalCount",
            or_link: Some("/_links/next"),
        },
    },
};
/// The most environments shown as columns.
const MAX_ENVIRONMENTS: usize = 8;

/// The `launchdarkly_flags` tool.
pub struct LaunchdarklyFlags;

/// Arguments of `launchdarkly_flags`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// The project's key (`default` for most accounts).
    project: String,
    /// Only these environments' states, by key (`production`, `staging`); default all.
    environments: Option<Vec<String>>,
    /// Only flags with this tag.
    tag: Option<String>,
    /// Only flags whose key or name contains this text.
    search: Option<String>,
    /// How many flags to list (default 50, at most 100).
    limit: Option<u32>,
    /// Skip this many flags: the value the previous answer gave for its next page.
    offset: Option<u32>,
}

impl Tool for LaunchdarklyFlags {
    type Host = Services;
    type Args = Args;
    const NAME: &'static str = "launchdarkly_flags";
    const TITLE: &'static str = "LaunchDarkly flags";
    const DESCRIPTION: &'static str = "List a LaunchDarkly project's feature flags with whether each is on or off in each environment (by tag or search text).";
    const CATEGORY: Category = Category::Api;
    const EFFECT: Effect = Effect::Network;
    const AGENT_ONLY: bool = false;
    const READ_ONLY: bool = true;

    fn paths(_: &Args) -> Paths {
        Paths::none()
    }

    async fn call(services: &Services, args: Args, cx: CallContext) -> CallToolResult {
        let project = match key("project", &args.project) {
            Ok(p) => p,
            Err(e) => return error(e),
        };
        let mut wanted = Vec::new();
        for env in args.environments.iter().flatten() {
            match key("environment", env) {
                Ok(e) if !wanted.contains(&e) => wanted.push(e),
                Ok(_) => {}
                Err(e) => return error(e),
            }
        }
        let limit = bounded(args.limit, 50, MAX_LIMIT);
        let offset = args.offset.unwrap_or(0);
        let mut query = vec![
            ("summary", "true".to_owned()),
            ("limit", limit.to_string()),
            ("offset", offset.to_string()),
        ];
        for env in &wanted {
            query.push(("env", env.clone()));
        }
        if let Some(tag) = args.tag.as_deref().map(str::trim).filter(|t| !t.is_empty()) {
            query.push(("tag", tag.to_owned()));
        }
        let search = args
            .search
            .as_deref()
            .map(str::trim)
            .filter(|t| !t.is_empty());
        if let Some(q) = search {
            // LaunchDarkly's filter syntax separates clauses with commas.
            query.push(("filter", format!("query:{}", q.replace(',', " "))));
        }
        let path = format!("flags/{project}");
        let what = format!("project {project}");
        let list = List {
            service: SERVICE,
            public: PUBLIC,
            label: "LaunchDarkly",
            method: Method::GET,
            path: &path,
            query,
            body: None,
            what: &what,
        };
        let listed = match paging::list(services, &cx, &list, &PAGING, limit as usize, 1).await {
            Ok(l) => l,
            Err(e) => return error(e.to_string()),
        };
        let (json, flags) = (&listed.last, listed.items.iter().collect::<Vec<_>>());
        let mut heading = format!("flags of project {project}");
        if let Some(tag) = args.tag.as_deref().filter(|t| !t.trim().is_empty()) {
            heading.push_str(&format!(", tagged {tag}"));
        }
        if let Some(q) = search {
            heading.push_str(&format!(", matching {q:?}"));
        }
        if flags.is_empty() {
            return text(format!("{heading}: none"));
        }
        // The environments as columns: those asked for, else every one the flags carry.
        let mut environments = wanted.clone();
        if environments.is_empty() {
            for f in &flags {
                if let Some(envs) = f.get("environments").and_then(Value::as_object) {
                    for k in envs.keys() {
                        if !environments.contains(k) {
                            environments.push(k.clone());
                        }
                    }
                }
            }
            environments.sort();
        }
        let hidden = environments.len().saturating_sub(MAX_ENVIRONMENTS);
        environments.truncate(MAX_ENVIRONMENTS);
        let mut columns: Vec<String> = ["key", "name", "kind"].map(str::to_owned).to_vec();
        columns.extend(environments.iter().cloned());
        columns.push("tags".to_owned());
        let rows = flags
            .iter()
            .map(|f| {
                let mut row = vec![
                    s(f, "key").to_owned(),
                    cairn_toolkit::table::cut(s(f, "name"), 80),
                    kind(f),
                ];
                for env in &environments {
                    row.push(state(f, env));
                }
                row.push(
                    arr(f, "tags")
                        .iter()
                        .filter_map(Value::as_str)
                        .collect::<Vec<_>>()
                        .join(", "),
                );
                row.into_iter().map(Cell::Text).collect()
            })
            .collect();
        let total = json.get("totalCount").and_then(Value::as_u64);
        let next = u64::from(offset) + flags.len() as u64;
        let more = listed.next.is_some();
        // A total smaller than what came back (a mock's `0`) says nothing: not shown.
        if let Some(t) = total.filter(|t| *t >= next) {
            heading.push_str(&format!(" ({t} in all, from {})", offset + 1));
        }
        if hidden > 0 {
            heading.push_str(&format!(
                "; {hidden} more environments not shown: name them in `environments`"
            ));
        }
        let table = Table {
            columns,
            rows,
            more,
        };
        table.result_hinting(
            &heading,
            &Limits::default(),
            &format!("call again with offset={next}"),
        )
    }
}

/// A flag's kind (`boolean`, `multivariate`), marked when temporary or archived.
fn kind(flag: &Value) -> String {
    let mut out = s(flag, "kind").to_owned();
    if flag.get("temporary").and_then(Value::as_bool) == Some(true) {
        out.push_str(", temporary");
    }
    if flag.get("archived").and_then(Value::as_bool) == Some(true) {
        out.push_str(", archived");
    }
    out
}

/// `on` or `off` in `env`, `-` when the answer has no such environment.
fn state(flag: &Value, env: &str) -> String {
    match flag
        .get("environments")
        .and_then(|e| e.get(env))
        .and_then(|e| e.get("on"))
        .and_then(Value::as_bool)
    {
        Some(true) => "on".to_owned(),
        Some(false) => "off".to_owned(),
        None => "-".to_owned(),
    }
}
