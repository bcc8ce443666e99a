//! `jira_transition`: the transitions an issue can take now, or takes the one named
//! (agent-only, effect `write`).

use cairn_toolkit::reply::{error, text};
use cairn_toolkit::{CallContext, Category, Effect, JsonSchema, Paths, Tool};
use rmcp::model::CallToolResult;
use serde::Deserialize;
use serde_json::{Value, json};

use super::{call, issue_segment, text_at};
use crate::api::services::Services;
use cairn_web::Method;

/// The `jira_transition` tool.
pub struct JiraTransition;

/// Arguments of `jira_transition`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// The issue's key, like `PROJ-123`.
    issue: String,
    /// The transition to apply, by its name (`Done`, `In Progress`; case does not matter) or
    /// id. Leave it out to list the transitions available now.
    transition: Option<String>,
}

impl Tool for JiraTransition {
    type Host = Services;
    type Args = Args;
    const NAME: &'static str = "jira_transition";
    const TITLE: &'static str = "Move a Jira issue";
    const DESCRIPTION: &'static str = "Move a Jira issue through its workflow: without `transition`, list the transitions available now (and the status each leads to); with one, apply it by name or id.";
    const CATEGORY: Category = Category::Api;
    const EFFECT: Effect = Effect::Write;
    const AGENT_ONLY: bool = true;

    fn paths(_: &Args) -> Paths {
        Paths::none()
    }

    async fn call(services: &Services, args: Args, cx: CallContext) -> CallToolResult {
        let key = match issue_segment(&args.issue) {
            Ok(k) => k,
            Err(e) => return error(e),
        };
        let what = format!("issue {key}");
        let json = match call(
            services,
            &cx,
            Method::GET,
            &format!("issue/{key}/transitions"),
            &[],
            None,
            &what,
        )
        .await
        {
            Ok((_, json)) => json,
            Err(e) => return error(e.to_string()),
        };
        let available: Vec<(String, String, String)> = json
            .get("transitions")
            .and_then(Value::as_array)
            .map(|a| {
                a.iter()
                    .map(|t| {
                        let to = t
                            .get("to")
                            .and_then(|s| s.get("name"))
                            .and_then(Value::as_str)
                            .unwrap_or("-")
                            .to_owned();
                        (text_at(t, "id"), text_at(t, "name"), to)
                    })
                    .collect()
            })
            .unwrap_or_default();
        let listing = || {
            available
                .iter()
                .map(|(id, name, to)| format!("- {name} (id {id}) → {to}\n"))
                .collect::<String>()
        };
        let Some(wanted) = args
            .transition
            .as_deref()
            .map(str::trim)
            .filter(|t| !t.is_empty())
        else {
            if available.is_empty() {
                return text(format!("{key} has no transitions available now"));
            }
            return text(format!(
                "transitions available for {key} now:\n{}",
                listing()
            ));
        };
        let Some((id, name, to)) = available
            .iter()
            .find(|(id, name, _)| id == wanted || name.eq_ignore_ascii_case(wanted))
        else {
            return error(format!(
                "{key} has no transition {wanted:?} now; nothing was changed. Available:\n{}",
                if available.is_empty() {
                    "(none)\n".to_owned()
                } else {
                    listing()
                }
            ));
        };
        let body = json!({"transition": {"id": id}});
        match call(
            services,
            &cx,
            Method::POST,
            &format!("issue/{key}/transitions"),
            &[],
            Some(&body),
            &what,
        )
        .await
        {
            Ok(_) => text(format!(
                "{key}: applied {name:?} (id {id}); its status is now {to}"
            )),
            Err(e) => error(format!("{e}; {key} was not moved")),
        }
    }
}
