//! `jira_create_issue`: creates an issue in a project (agent-only, effect `write`: the approval
//! shows the project, type and summary).

use cairn_toolkit::reply::{error, text};
use cairn_toolkit::{CallContext, Category, Effect, JsonSchema, Paths, Tool};
use rmcp::model::CallToolResult;
use serde::Deserialize;
use serde_json::{Value, json};

use super::{adf_of, call, site, text_at};
use crate::api::services::Services;
use cairn_web::Method;

/// Jira's limit on a summary.
const MAX_SUMMARY: usize = 255;
/// Jira's limit on a text field (32 767 characters).
const MAX_DESCRIPTION: usize = 32_767;

/// The `jira_create_issue` tool.
pub struct JiraCreateIssue;

/// Arguments of `jira_create_issue`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// The project's key, like `PROJ`.
    project: String,
    /// The issue type's name as the project has it, like `Task`, `Bug` or `Story`.
    issue_type: String,
    /// The one-line summary (at most 255 characters).
    summary: String,
    /// The description, as plain text (blank lines separate paragraphs).
    description: Option<String>,
}

impl Tool for JiraCreateIssue {
    type Host = Services;
    type Args = Args;
    const NAME: &'static str = "jira_create_issue";
    const TITLE: &'static str = "Create a Jira issue";
    const DESCRIPTION: &'static str = "Create a Jira issue in a project with a type (Task, Bug, Story...), a summary and a plain-text description; answers with its key and address.";
    const CATEGORY: Category = Category::Api;
    const EFFECT: Effect = Effect::Write;
    const AGENT_ONLY: bool = true;

    fn paths(_: &Args) -> Paths {
        Paths::none()
    }

    async fn call(services: &Services, args: Args, cx: CallContext) -> CallToolResult {
        let project = args.project.trim().to_ascii_uppercase();
        if project.is_empty()
            || !project
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_')
        {
            return error(format!(
                "{:?} is not a Jira project key: give one like `PROJ`; nothing was created",
                args.project
            ));
        }
        let kind = args.issue_type.trim();
        if kind.is_empty() {
            return error(
                "`issue_type` is empty: give one like `Task` or `Bug`; nothing was created",
            );
        }
        let summary = args.summary.trim();
        if summary.is_empty() || summary.contains('\n') {
            return error(
                "`summary` must be one non-empty line; put details in `description`; nothing was created",
            );
        }
        let count = summary.chars().count();
        if count > MAX_SUMMARY {
            return error(format!(
                "`summary` has {count} characters, more than Jira's {MAX_SUMMARY}: shorten it; nothing was created"
            ));
        }
        let mut fields = json!({
            "project": {"key": project},
            "issuetype": {"name": kind},
            "summary": summary,
        });
        if let Some(d) = args.description.as_deref().filter(|d| !d.trim().is_empty()) {
            let count = d.chars().count();
            if count > MAX_DESCRIPTION {
                return error(format!(
                    "`description` has {count} characters, more than Jira's {MAX_DESCRIPTION}: shorten it; nothing was created"
                ));
            }
            fields["description"] = adf_of(d);
        }
        let body = json!({ "fields": fields });
        match call(
            services,
            &cx,
            Method::POST,
            "issue",
            &[],
            Some(&body),
            &format!("project {project}"),
        )
        .await
        {
            Ok((_, created)) => {
                let key = text_at(&created, "key");
                let mut out = format!("created {key} in {project} ({kind}): {summary}");
                if let (Ok(site), false) = (site(services), key.is_empty()) {
                    out.push_str(&format!("\n{site}/browse/{key}"));
                }
                // A create that ran its workflow's first transition reports on it.
                if let Some(Value::Object(t)) = created.get("transition")
                    && let Some(status) = t.get("status").and_then(Value::as_u64)
                    && !(200..300).contains(&status)
                {
                    out.push_str(&format!("\n(its first transition answered {status})"));
                }
                text(out)
            }
            Err(e) => error(format!("{e}; the issue was not created")),
        }
    }
}
