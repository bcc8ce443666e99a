//! Bitbucket Cloud (`[api.services.bitbucket]`, public base `https://api.bitbucket.org/2.0`):
//! a repository's pull requests and its Pipelines. What the tools share is here: the
//! repository argument checked before it becomes part of a path, and Bitbucket's paged lists
//! (`values`, `next`) and state objects read leniently. A repository or workspace access token
//! is a bearer token (`auth = { secret = "bitbucket" }`); an app password is basic auth with the
//! user name (`scheme = "basic", name = "USER"`).

pub(crate) mod pipelines;
pub(crate) mod pull_requests;

use cairn_agent::tools::CallContext;
use cairn_web::Method;
use serde_json::Value;

use super::paging::{self, Items, List, Listed, More, Next, Paging, Size};
use super::{ServiceError, Services};

/// The service's name in `[api.services.NAME]`.
pub(crate) const SERVICE: &str = "bitbucket";
/// Where Bitbucket's API answers unless `base_url` says otherwise.
pub(crate) const PUBLIC: &str = "https://api.bitbucket.org/2.0";
/// The most rows a list asks for and shows (Bitbucket's largest page for most lists).
pub(crate) const MAX_ROWS: u32 = 50;

/// `repo` as the path `repositories/WORKSPACE/SLUG`, checked: workspace ids and repository
/// slugs are letters, digits, `-`, `_` and `.`, so nothing else can reach the request path.
pub(crate) fn repo_path(repo: &str) -> Result<String, String> {
    let repo = repo.trim().trim_matches('/');
    let ok_part = |p: &str| {
        !p.is_empty()
            && p != "."
            && p != ".."
            && p.len() <= 100
            && p.chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
    };
    match repo.split_once('/') {
        Some((workspace, slug)) if ok_part(workspace) && ok_part(slug) => Ok(format!(
            "repositories/{workspace}/{}",
            slug.to_ascii_lowercase()
        )),
        _ => Err(format!(
            "repo {repo:?} is not `workspace/repo-slug` (for example `atlassian/python-bitbucket`)"
        )),
    }
}

/// How Bitbucket's lists (`values`, `next`) page: numbered pages while the answer has a `next`.
const PAGING: Paging = Paging {
    items: Items::At("/values"),
    size: Some(Size {
        param: "pagelen",
        max: MAX_ROWS as usize,
    }),
    next: Next::Page {
        param: "page",
        more: More::Link("/next"),
    },
};

/// One page of `pagelen` items of the list at `path` (`query` in the order sent, its `page`
/// among them when not the first): the items and whether Bitbucket has a next page.
pub(crate) async fn list_page(
    services: &Services,
    cx: &CallContext,
    path: &str,
    query: Vec<(&str, String)>,
    pagelen: usize,
    what: &str,
) -> Result<Listed, ServiceError> {
    let paging = Paging {
        size: Some(Size {
            param: "pagelen",
            max: pagelen,
        }),
        ..PAGING
    };
    let list = List {
        service: SERVICE,
        public: PUBLIC,
        label: "Bitbucket",
        method: Method::GET,
        path,
        query,
        body: None,
        what,
    };
    paging::list(services, cx, &list, &paging, pagelen, 1).await
}

/// The display name at `value[key]` (a Bitbucket account), or `-`.
pub(crate) fn account(value: &Value, key: &str) -> String {
    let who = value.get(key);
    ["display_name", "nickname", "username"]
        .iter()
        .find_map(|k| {
            who.and_then(|w| w.get(k))
                .and_then(Value::as_str)
                .filter(|s| !s.is_empty())
        })
        .map_or_else(|| "-".to_owned(), str::to_owned)
}

/// A pipeline's or a step's state: `COMPLETED/FAILED`, `IN_PROGRESS/RUNNING`, `PENDING`
/// (its `name` and its result's or stage's), or its `type` when unnamed.
pub(crate) fn state(value: &Value) -> String {
    let Some(state) = value.get("state") else {
        return "-".to_owned();
    };
    let name = |v: &Value| {
        v.get("name")
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
            .map(str::to_owned)
    };
    let Some(head) = name(state) else {
        return state
            .get("type")
            .and_then(Value::as_str)
            .map_or_else(|| "-".to_owned(), str::to_owned);
    };
    match state
        .get("result")
        .or_else(|| state.get("stage"))
        .and_then(name)
    {
        Some(tail) => format!("{head}/{tail}"),
        None => head,
    }
}

/// Whether a state (as [`state`] writes it) is a failure: failed, errored, stopped or expired.
pub(crate) fn failed(state: &str) -> bool {
    ["FAILED", "ERROR", "STOPPED", "EXPIRED"]
        .iter()
        .any(|f| state.ends_with(&format!("/{f}")))
}
