//! `github_search`: issues and pull requests by a search query, narrowed by repository, state,
//! labels and kind, as a capped table.

use cairn_toolkit::table::{Cell, Limits, Table};
use cairn_toolkit::{CallContext, Category, Effect, JsonSchema, Paths, Tool};
use rmcp::model::CallToolResult;
use serde::Deserialize;
use serde_json::Value;

use super::{Services, arr, bounded, failed, get, login, n, s, when};

/// The `github_search` tool.
pub struct GithubSearch;

/// Open, closed, or either.
#[derive(Debug, Clone, Copy, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum State {
    Open,
    Closed,
    All,
}

/// Issues, pull requests, or both.
#[derive(Debug, Clone, Copy, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    Issue,
    Pr,
    Any,
}

/// Arguments of `github_search`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// Search words and GitHub search qualifiers (`crash in:title`, `author:octocat`); may be
    /// omitted when `repo` is given.
    #[serde(default)]
    query: Option<String>,
    /// Only in this repository, `owner/name`.
    #[serde(default)]
    repo: Option<String>,
    /// `open`, `closed` or `all` (default `all`).
    #[serde(default)]
    state: Option<State>,
    /// Only items carrying every one of these labels.
    #[serde(default)]
    labels: Vec<String>,
    /// `issue`, `pr` (pull requests) or `any` (default).
    #[serde(default)]
    kind: Option<Kind>,
    /// How many to show, most recently updated first (default 20, at most 100).
    #[serde(default)]
    max_results: Option<u32>,
}

/// The search string GitHub is sent: the words, then a qualifier per argument.
fn query_of(args: &Args) -> Result<String, String> {
    let mut parts = Vec::new();
    if let Some(q) = args
        .query
        .as_deref()
        .map(str::trim)
        .filter(|q| !q.is_empty())
    {
        parts.push(q.to_owned());
    }
    if let Some(repo) = &args.repo {
        let path = super::repo_path(repo)?;
        parts.push(format!("repo:{}", path.trim_start_matches("repos/")));
    }
    if parts.is_empty() {
        return Err("give a query, a repo, or both".into());
    }
    match args.state {
        Some(State::Open) => parts.push("state:open".into()),
        Some(State::Closed) => parts.push("state:closed".into()),
        Some(State::All) | None => {}
    }
    for label in &args.labels {
        let label = label.replace('"', "");
        if !label.trim().is_empty() {
            parts.push(format!("label:\"{}\"", label.trim()));
        }
    }
    match args.kind {
        Some(Kind::Issue) => parts.push("is:issue".into()),
        Some(Kind::Pr) => parts.push("is:pr".into()),
        Some(Kind::Any) | None => {}
    }
    Ok(parts.join(" "))
}

/// The repository of a search hit (`owner/name`, from its `repository_url`).
fn repo_of(item: &Value) -> String {
    let url = s(item, "repository_url");
    url.rsplitn(3, '/')
        .take(2)
        .collect::<Vec<_>>()
        .into_iter()
        .rev()
        .collect::<Vec<_>>()
        .join("/")
}

impl Tool for GithubSearch {
    type Host = Services;
    type Args = Args;
    const NAME: &'static str = "github_search";
    const TITLE: &'static str = "GitHub: search issues and PRs";
    const DESCRIPTION: &'static str = "Search GitHub issues and pull requests by words and qualifiers, narrowed by repository, state, labels and kind; lists number, state, title, author and last update, most recently updated first.";
    const CATEGORY: Category = Category::Api;
    const EFFECT: Effect = Effect::Network;
    const AGENT_ONLY: bool = false;
    const READ_ONLY: bool = true;

    fn paths(_: &Args) -> Paths {
        Paths::none()
    }

    async fn call(host: &Services, args: Args, cx: CallContext) -> CallToolResult {
        let q = match query_of(&args) {
            Ok(q) => q,
            Err(e) => return cairn_toolkit::reply::error(e),
        };
        let max = bounded(args.max_results, 20, 100);
        let query = [
            ("q", q.clone()),
            ("sort", "updated".to_owned()),
            ("order", "desc".to_owned()),
            ("per_page", max.to_string()),
        ];
        let found = match get(host, &cx, "search/issues", &query, "the search").await {
            Ok(v) => v,
            Err(e) => return failed(e),
        };
        let items = arr(&found, "items");
        let total = n(&found, "total_count");
        let rows = items
            .iter()
            .take(max as usize)
            .map(|item| {
                let kind = if item.get("pull_request").is_some() {
                    "PR"
                } else {
                    "issue"
                };
                vec![
                    Cell::Text(format!("{}#{}", repo_of(item), n(item, "number"))),
                    Cell::Text(kind.to_owned()),
                    Cell::Text(s(item, "state").to_owned()),
                    Cell::Text(s(item, "title").to_owned()),
                    Cell::Text(login(item, "user")),
                    Cell::Text(super::labels(item)),
                    Cell::Text(when(s(item, "updated_at"))),
                ]
            })
            .collect::<Vec<_>>();
        let shown = rows.len() as u64;
        let table = Table {
            columns: [
                "item", "kind", "state", "title", "author", "labels", "updated",
            ]
            .map(str::to_owned)
            .to_vec(),
            rows,
            more: total > shown,
        };
        let mut heading = format!("GitHub search `{q}`: {total} found");
        if found.get("incomplete_results").and_then(Value::as_bool) == Some(true) {
            heading.push_str(" (GitHub says the results are incomplete: the search timed out)");
        }
        table.result_hinting(
            &heading,
            &Limits {
                max_rows: max as usize,
                max_cell_chars: 120,
                ..Limits::default()
            },
            "narrow the query or raise max_results (at most 100)",
        )
    }
}
