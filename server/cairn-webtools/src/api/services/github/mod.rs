//! GitHub (`[api.services.github]`, public base `https://api.github.com`): issues and pull
//! requests, comments, Actions runs and their failed jobs' logs, releases, a pull request's
//! files. Every call goes through [`Services::call`]; what the tools share is here: the
//! repository argument checked before it becomes part of a path, the JSON fields read leniently,
//! and text cut to a bound with the cut said.

pub(crate) mod comment;
pub(crate) mod create_issue;
pub(crate) mod failed_jobs;
pub(crate) mod issue;
pub(crate) mod pull_files;
pub(crate) mod releases;
pub(crate) mod search;
pub(crate) mod workflow_runs;

use cairn_agent::tools::CallContext;
use percent_encoding::{AsciiSet, NON_ALPHANUMERIC, utf8_percent_encode};
use rmcp::model::CallToolResult;
use serde_json::Value;

use super::{ServiceError, Services};
use cairn_web::Method;

/// The service's name in `[api.services.NAME]`.
pub(crate) const SERVICE: &str = "github";
/// Where GitHub's REST API answers unless `base_url` says otherwise.
pub(crate) const PUBLIC: &str = "https://api.github.com";

/// Characters left as they are in one path segment (a tag, a workflow file name).
const SEGMENT: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'_')
    .remove(b'.')
    .remove(b'~');

/// `repo` as `owner/name`, checked: GitHub's names are letters, digits, `-`, `_` and `.`, so
/// nothing else can reach the request path.
pub(crate) fn repo_path(repo: &str) -> Result<String, String> {
    let repo = repo.trim().trim_end_matches(".git");
    let ok_part = |p: &str| {
        !p.is_empty()
            && p != "."
            && p != ".."
            && p.len() <= 100
            && p.chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
    };
    match repo.split_once('/') {
        Some((owner, name)) if ok_part(owner) && ok_part(name) => {
            Ok(format!("repos/{owner}/{name}"))
        }
        _ => Err(format!(
            "repo {repo:?} is not `owner/name` (for example `rust-lang/rust`)"
        )),
    }
}

/// One path segment, percent-encoded.
pub(crate) fn segment(text: &str) -> String {
    utf8_percent_encode(text, SEGMENT).to_string()
}

/// A GET to GitHub; `what` names the thing asked for, for a 404.
pub(crate) async fn get(
    host: &Services,
    cx: &CallContext,
    path: &str,
    query: &[(&str, String)],
    what: &str,
) -> Result<Value, ServiceError> {
    host.call(cx, SERVICE, PUBLIC, Method::GET, path, query, None, what)
        .await
        .map(|(_, json)| json)
}

/// A POST of `body` to GitHub.
pub(crate) async fn post(
    host: &Services,
    cx: &CallContext,
    path: &str,
    body: &Value,
    what: &str,
) -> Result<Value, ServiceError> {
    host.call(
        cx,
        SERVICE,
        PUBLIC,
        Method::POST,
        path,
        &[],
        Some(body),
        what,
    )
    .await
    .map(|(_, json)| json)
}

/// The error result for a failed call.
pub(crate) fn failed(e: ServiceError) -> CallToolResult {
    cairn_toolkit::reply::error(e.to_string())
}

/// `value[key]` as text (`""` when absent or not a string).
pub(crate) fn s<'a>(value: &'a Value, key: &str) -> &'a str {
    value.get(key).and_then(Value::as_str).unwrap_or("")
}

/// `value[key]` as a number (0 when absent).
pub(crate) fn n(value: &Value, key: &str) -> u64 {
    value.get(key).and_then(Value::as_u64).unwrap_or(0)
}

/// `value[key]` as an array (empty when absent).
pub(crate) fn arr<'a>(value: &'a Value, key: &str) -> &'a [Value] {
    value
        .get(key)
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or(&[])
}

/// The login of `value[key]` (a user object), `?` when absent.
pub(crate) fn login(value: &Value, key: &str) -> String {
    value
        .get(key)
        .map(|u| s(u, "login"))
        .filter(|l| !l.is_empty())
        .unwrap_or("?")
        .to_owned()
}

/// The names of `value["labels"]` (objects with `name`, or plain strings), comma-separated.
pub(crate) fn labels(value: &Value) -> String {
    arr(value, "labels")
        .iter()
        .filter_map(|l| l.as_str().or_else(|| l.get("name").and_then(Value::as_str)))
        .collect::<Vec<_>>()
        .join(", ")
}

/// `text` cut to `max` characters, saying how long it was.
pub(crate) fn cut(text: &str, max: usize) -> String {
    cairn_toolkit::table::cut(text, max)
}

/// `max` (or `default` when absent) kept within `1..=cap`.
pub(crate) fn bounded(max: Option<u32>, default: u32, cap: u32) -> u32 {
    max.unwrap_or(default).clamp(1, cap)
}

/// A timestamp as GitHub writes it (`2011-04-10T20:09:31Z`), shown without the seconds' `Z`
/// noise: `2011-04-10 20:09 UTC`.
pub(crate) fn when(text: &str) -> String {
    match (text.get(..10), text.get(10..11), text.get(11..16)) {
        (Some(day), Some("T"), Some(time)) => format!("{day} {time} UTC"),
        _ => text.to_owned(),
    }
}
