//! `jira_issue`: one issue with its description as text and its recent comments.

use cairn_toolkit::reply::{error, text};
use cairn_toolkit::{CallContext, Category, Effect, JsonSchema, Paths, Tool};
use rmcp::model::CallToolResult;
use serde::Deserialize;
use serde_json::Value;

use super::{adf_text, call, issue_segment, name_at, site, text_at};
use crate::api::services::Services;
use crate::api::services::gitlab::cut;
use cairn_web::Method;

/// The most comments shown (the newest).
const MAX_COMMENTS: u32 = 10;
/// The most characters of the description shown.
const MAX_DESCRIPTION: usize = 6000;
/// The most characters of one comment shown.
const MAX_COMMENT: usize = 1500;

/// The `jira_issue` tool.
pub struct JiraIssue;

/// Arguments of `jira_issue`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// The issue's key, like `PROJ-123` (or its numeric id).
    issue: String,
}

impl Tool for JiraIssue {
    type Host = Services;
    type Args = Args;
    const NAME: &'static str = "jira_issue";
    const TITLE: &'static str = "Jira issue";
    const DESCRIPTION: &'static str = "Show one Jira issue by key: summary, type, status, people, dates, its description as text and the most recent comments.";
    const CATEGORY: Category = Category::Api;
    const EFFECT: Effect = Effect::Network;
    const AGENT_ONLY: bool = false;
    const READ_ONLY: bool = true;

    fn paths(_: &Args) -> Paths {
        Paths::none()
    }

    async fn call(services: &Services, args: Args, cx: CallContext) -> CallToolResult {
        let key = match issue_segment(&args.issue) {
            Ok(k) => k,
            Err(e) => return error(e),
        };
        let what = format!("issue {key}");
        let fields = "summary,status,assignee,reporter,priority,issuetype,labels,created,updated,description";
        let issue = match call(
            services,
            &cx,
            Method::GET,
            &format!("issue/{key}"),
            &[("fields", fields.to_owned())],
            None,
            &what,
        )
        .await
        {
            Ok((_, json)) => json,
            Err(e) => return error(e.to_string()),
        };
        let f = issue.get("fields").unwrap_or(&Value::Null);
        let shown_key = match text_at(&issue, "key") {
            k if k.is_empty() => key.clone(),
            k => k,
        };
        let mut out = format!(
            "{shown_key}: {}\ntype: {}; status: {}; priority: {}\nassignee: {}; reporter: {}\ncreated {}; updated {}\n",
            or_dash(text_at(f, "summary")),
            name_at(f, "issuetype"),
            name_at(f, "status"),
            name_at(f, "priority"),
            name_at(f, "assignee"),
            name_at(f, "reporter"),
            or_dash(text_at(f, "created")),
            or_dash(text_at(f, "updated")),
        );
        let labels: Vec<&str> = f
            .get("labels")
            .and_then(Value::as_array)
            .map(|a| a.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        if !labels.is_empty() {
            out.push_str(&format!("labels: {}\n", labels.join(", ")));
        }
        if let Ok(site) = site(services) {
            out.push_str(&format!("{site}/browse/{shown_key}\n"));
        }
        let description = adf_text(f.get("description").unwrap_or(&Value::Null));
        out.push_str(&format!(
            "\n{}\n",
            if description.is_empty() {
                "(no description)".to_owned()
            } else {
                cut(&description, MAX_DESCRIPTION)
            }
        ));
        let comments = call(
            services,
            &cx,
            Method::GET,
            &format!("issue/{key}/comment"),
            &[
                ("orderBy", "-created".to_owned()),
                ("maxResults", MAX_COMMENTS.to_string()),
            ],
            None,
            &format!("the comments of {what}"),
        )
        .await;
        match comments {
            Ok((_, json)) => out.push_str(&comments_text(&json)),
            Err(e) => out.push_str(&format!("\n(comments not read: {e})\n")),
        }
        text(out)
    }
}

/// The comments as Jira gave them (newest first, as asked), with how many there are in all.
fn comments_text(json: &Value) -> String {
    let comments: Vec<&Value> = json
        .get("comments")
        .and_then(Value::as_array)
        .map(|a| a.iter().take(MAX_COMMENTS as usize).collect())
        .unwrap_or_default();
    if comments.is_empty() {
        return "\nNo comments.\n".to_owned();
    }
    let total = json
        .get("total")
        .and_then(Value::as_u64)
        .unwrap_or(comments.len() as u64);
    let mut out = format!(
        "\nComments ({} of {total}, newest first):\n",
        comments.len()
    );
    for c in comments {
        out.push_str(&format!(
            "- {} at {}: {}\n",
            name_at(c, "author"),
            text_at(c, "created"),
            cut(
                &adf_text(c.get("body").unwrap_or(&Value::Null)),
                MAX_COMMENT
            )
        ));
    }
    out
}

fn or_dash(s: String) -> String {
    if s.is_empty() { "-".to_owned() } else { s }
}
