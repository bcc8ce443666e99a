//! GitLab (`gitlab`, REST API v4 at `https://gitlab.com/api/v4`, or a self-managed instance's
//! `/api/v4` in `[api.services.gitlab] base_url`): issues, merge requests, pipelines.

pub mod create_issue;
pub mod issues;
pub mod merge_requests;
pub mod pipelines;

use cairn_agent::tools::CallContext;
use cairn_web::Method;
use serde_json::Value;

use super::paging::{self, Items, List, Listed, Next, Paging, Size};
use super::{ServiceError, Services};

/// The service's name in `[api.services]`.
pub(crate) const SERVICE: &str = "gitlab";
/// GitLab.com's API.
pub(crate) const PUBLIC: &str = "https://gitlab.com/api/v4";
/// The most rows a list asks for and shows (one page).
pub(crate) const MAX_ROWS: u32 = 50;
/// The most characters of an issue's or MR's description shown.
pub(crate) const MAX_TEXT: usize = 4000;

/// How GitLab's lists page: numbered pages, the next one named in `X-Next-Page`.
const PAGING: Paging = Paging {
    items: Items::ArrayOrObject,
    size: Some(Size {
        param: "per_page",
        max: MAX_ROWS as usize,
    }),
    next: Next::Header {
        name: "x-next-page",
        param: "page",
    },
};

/// One page of `per_page` rows of the list at `path` (`query` in the order sent, its `page`
/// among them when not the first): the items and whether GitLab has a next page.
pub(crate) async fn list_page(
    services: &Services,
    cx: &CallContext,
    path: &str,
    query: Vec<(&str, String)>,
    per_page: usize,
    what: &str,
) -> Result<Listed, ServiceError> {
    let paging = Paging {
        size: Some(Size {
            param: "per_page",
            max: per_page,
        }),
        ..PAGING
    };
    let list = List {
        service: SERVICE,
        public: PUBLIC,
        label: "GitLab",
        method: Method::GET,
        path,
        query,
        body: None,
        what,
    };
    paging::list(services, cx, &list, &paging, per_page, 1).await
}

/// The project as a path segment: a numeric id as is, `group/name` URL-encoded (GitLab's
/// `:id` takes either), or why not.
pub(crate) fn project_segment(project: &str) -> Result<String, String> {
    let project = project.trim().trim_matches('/');
    if project.is_empty() {
        return Err("`project` is empty: give a numeric id or a path like `group/name`".into());
    }
    // A `.` or `..` part would be resolved away in the address, asking another path.
    if project
        .split('/')
        .any(|p| p.is_empty() || p == "." || p == "..")
    {
        return Err(format!(
            "{project:?} is not a GitLab project: give a numeric id or a path like `group/name`"
        ));
    }
    Ok(url::form_urlencoded::byte_serialize(project.as_bytes())
        .collect::<String>()
        .replace('+', "%20"))
}

/// The items of a list answer: an array's, or one object as one item (some descriptions
/// answer a list with a single object).
pub(crate) fn items(value: &Value) -> Vec<&Value> {
    match value {
        Value::Array(a) => a.iter().collect(),
        Value::Object(_) => vec![value],
        _ => Vec::new(),
    }
}

/// `value[key]` as text: strings as they are, numbers and booleans written out, `""` else.
pub(crate) fn field(value: &Value, key: &str) -> String {
    match value.get(key) {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Number(n)) => n.to_string(),
        Some(Value::Bool(b)) => b.to_string(),
        _ => String::new(),
    }
}

/// The user name at `value[key].username`, or `-`.
pub(crate) fn user(value: &Value, key: &str) -> String {
    value
        .get(key)
        .and_then(|u| u.get("username").or_else(|| u.get("name")))
        .and_then(Value::as_str)
        .map_or_else(|| "-".to_owned(), str::to_owned)
}

/// `text` cut to `max` characters, saying how long it was.
pub(crate) fn cut(text: &str, max: usize) -> String {
    let count = text.chars().count();
    if count <= max {
        return text.to_owned();
    }
    let mut out: String = text.chars().take(max).collect();
    out.push_str(&format!("… (cut: {count} characters in all)"));
    out
}

/// One line for a table cell: no line breaks or pipes, at most `max` characters.
pub(crate) fn cell(text: &str, max: usize) -> String {
    let flat = text.replace(['\n', '\r'], " ").replace('|', "\\|");
    cut(&flat, max)
}
