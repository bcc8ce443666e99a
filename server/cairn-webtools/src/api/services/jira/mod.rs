//! Jira Cloud (`jira`, platform REST API v3 at the user's site, `https://NAME.atlassian.net`,
//! which `[api.services.jira] base_url` must give: there is no public default). Descriptions
//! and comments are Atlassian Document Format, read as text and written from text here.

pub mod create_issue;
pub mod issue;
pub mod search;
pub mod transition;

use cairn_agent::tools::CallContext;
use serde_json::{Value, json};

use super::{ServiceError, Services};
use cairn_web::{Method, WebResponse};

/// The service's name in `[api.services]`.
pub(crate) const SERVICE: &str = "jira";

/// What a call says when no site is configured.
pub(crate) const NO_SITE: &str = "Jira has no public address: set your site in the configuration, `[api.services.jira] base_url = \"https://YOUR-SITE.atlassian.net\"`, with `auth = { secret = \"NAME\", scheme = \"basic\", name = \"you@example.com\" }` and an API token in the vault (`cairn vault set NAME --host YOUR-SITE.atlassian.net`)";

/// One call to the configured site's REST API (`rest/api/3/` + `path`), or why not.
#[allow(clippy::too_many_arguments)]
pub(crate) async fn call(
    services: &Services,
    cx: &CallContext,
    method: Method,
    path: &str,
    query: &[(&str, String)],
    body: Option<&Value>,
    what: &str,
) -> Result<(WebResponse, Value), ServiceError> {
    site(services)?;
    services
        .call(
            cx,
            SERVICE,
            "",
            method,
            &format!("rest/api/3/{path}"),
            query,
            body,
            what,
        )
        .await
}

/// The configured site's address, or the message saying how to set it.
pub(crate) fn site(services: &Services) -> Result<String, ServiceError> {
    services
        .settings
        .get(SERVICE)
        .and_then(|s| s.base_url.as_deref())
        .filter(|b| !b.trim().is_empty())
        .map(|b| b.trim_end_matches('/').to_owned())
        .ok_or_else(|| ServiceError::Invalid(NO_SITE.to_owned()))
}

/// An issue key (`PROJ-123`) or numeric id as a path segment, or why it is not one.
pub(crate) fn issue_segment(key: &str) -> Result<String, String> {
    let key = key.trim();
    let ok = !key.is_empty()
        && key.len() <= 100
        && key
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
    if ok {
        Ok(key.to_ascii_uppercase())
    } else {
        Err(format!(
            "{key:?} is not a Jira issue key: give one like `PROJ-123` (or the numeric id)"
        ))
    }
}

/// `value[key]` as text: strings as they are, numbers written out, `""` else.
pub(crate) fn text_at(value: &Value, key: &str) -> String {
    match value.get(key) {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Number(n)) => n.to_string(),
        _ => String::new(),
    }
}

/// The name of `fields[key]` (`status`, `priority`, `issuetype`: `name`; users:
/// `displayName`), or `-`.
pub(crate) fn name_at(fields: &Value, key: &str) -> String {
    fields
        .get(key)
        .and_then(|v| {
            v.get("displayName")
                .or_else(|| v.get("name"))
                .and_then(Value::as_str)
        })
        .map_or_else(|| "-".to_owned(), str::to_owned)
}

/// An Atlassian Document Format value as plain text (a string as it is): paragraphs and
/// headings on their own lines, list items with `- `, mentions and links by their text.
pub(crate) fn adf_text(doc: &Value) -> String {
    let mut out = String::new();
    match doc {
        Value::String(s) => out.push_str(s),
        Value::Null => {}
        other => walk(other, &mut out, 0),
    }
    out.trim().to_owned()
}

/// The deepest nesting walked; deeper content is left out (a document is bounded by the
/// answer's size anyway, this keeps the stack bounded too).
const MAX_DEPTH: usize = 64;

fn walk(node: &Value, out: &mut String, depth: usize) {
    if depth > MAX_DEPTH {
        return;
    }
    let kind = node.get("type").and_then(Value::as_str).unwrap_or("");
    let attr = |k: &str| {
        node.get("attrs")
            .and_then(|a| a.get(k))
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_owned()
    };
    match kind {
        "text" => out.push_str(node.get("text").and_then(Value::as_str).unwrap_or("")),
        "hardBreak" => out.push('\n'),
        "mention" => out.push_str(&attr("text")),
        "emoji" => out.push_str(&attr("shortName")),
        "inlineCard" | "blockCard" => out.push_str(&attr("url")),
        "rule" => out.push_str("\n---\n"),
        _ => {
            if kind == "listItem" {
                out.push_str("- ");
            }
            if kind == "codeBlock" {
                out.push_str("```\n");
            }
            if let Some(children) = node.get("content").and_then(Value::as_array) {
                for child in children {
                    walk(child, out, depth + 1);
                }
            }
            if kind == "codeBlock" {
                out.push_str("\n```");
            }
            if matches!(
                kind,
                "paragraph" | "heading" | "codeBlock" | "blockquote" | "panel"
            ) && !out.ends_with('\n')
            {
                out.push('\n');
            }
        }
    }
}

/// Plain text as an Atlassian Document Format document: a paragraph per blank-line-separated
/// block, line breaks kept.
pub(crate) fn adf_of(text: &str) -> Value {
    let paragraphs: Vec<Value> = text
        .replace("\r\n", "\n")
        .split("\n\n")
        .filter(|p| !p.trim().is_empty())
        .map(|p| {
            let mut content = Vec::new();
            for (i, line) in p.trim_matches('\n').split('\n').enumerate() {
                if i > 0 {
                    content.push(json!({"type": "hardBreak"}));
                }
                if !line.is_empty() {
                    content.push(json!({"type": "text", "text": line}));
                }
            }
            json!({"type": "paragraph", "content": content})
        })
        .collect();
    json!({"type": "doc", "version": 1, "content": paragraphs})
}
