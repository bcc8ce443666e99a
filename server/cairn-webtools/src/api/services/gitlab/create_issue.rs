//! `gitlab_create_issue`: opens an issue in a project (agent-only, effect `write`: the approval
//! shows the project and the title).

use cairn_toolkit::reply::{error, text};
use cairn_toolkit::{CallContext, Category, Effect, JsonSchema, Paths, Tool};
use rmcp::model::CallToolResult;
use serde::Deserialize;
use serde_json::{Map, Value};

use super::{PUBLIC, SERVICE, field, project_segment};
use crate::api::services::Services;
use cairn_web::Method;

/// GitLab's limit on a title.
const MAX_TITLE: usize = 255;
/// GitLab's limit on a description (1 MB of text).
const MAX_DESCRIPTION: usize = 1_000_000;

/// The `gitlab_create_issue` tool.
pub struct GitlabCreateIssue;

/// Arguments of `gitlab_create_issue`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// The project: its numeric id or its path, like `group/name`.
    project: String,
    /// The issue's title (at most 255 characters).
    title: String,
    /// The issue's description, in GitLab Markdown.
    description: Option<String>,
    /// Labels to set, comma-separated (`bug,backend`); labels that do not exist are created.
    labels: Option<String>,
}

impl Tool for GitlabCreateIssue {
    type Host = Services;
    type Args = Args;
    const NAME: &'static str = "gitlab_create_issue";
    const TITLE: &'static str = "Create a GitLab issue";
    const DESCRIPTION: &'static str = "Open a new issue in a GitLab project with a title, a Markdown description and labels; answers with its iid and address.";
    const CATEGORY: Category = Category::Api;
    const EFFECT: Effect = Effect::Write;
    const AGENT_ONLY: bool = true;

    fn paths(_: &Args) -> Paths {
        Paths::none()
    }

    async fn call(services: &Services, args: Args, cx: CallContext) -> CallToolResult {
        let project = match project_segment(&args.project) {
            Ok(p) => p,
            Err(e) => return error(e),
        };
        let title = args.title.trim();
        if title.is_empty() {
            return error("`title` is empty: an issue needs a title; nothing was created");
        }
        let count = title.chars().count();
        if count > MAX_TITLE {
            return error(format!(
                "`title` has {count} characters, more than GitLab's {MAX_TITLE}: shorten it and put the rest in `description`; nothing was created"
            ));
        }
        let mut body = Map::new();
        body.insert("title".into(), Value::String(title.to_owned()));
        if let Some(d) = args.description.as_deref().filter(|d| !d.trim().is_empty()) {
            if d.len() > MAX_DESCRIPTION {
                return error(format!(
                    "`description` has {} bytes, more than GitLab's {MAX_DESCRIPTION}: shorten it; nothing was created",
                    d.len()
                ));
            }
            body.insert("description".into(), Value::String(d.to_owned()));
        }
        if let Some(l) = args.labels.as_deref().filter(|l| !l.trim().is_empty()) {
            body.insert("labels".into(), Value::String(l.trim().to_owned()));
        }
        match services
            .call(
                &cx,
                SERVICE,
                PUBLIC,
                Method::POST,
                &format!("projects/{project}/issues"),
                &[],
                Some(&Value::Object(body)),
                &format!("project {}", args.project),
            )
            .await
        {
            Ok((_, issue)) => {
                let mut out = format!(
                    "created issue #{} in {}: {}",
                    field(&issue, "iid"),
                    args.project,
                    field(&issue, "title")
                );
                let url = field(&issue, "web_url");
                if !url.is_empty() {
                    out.push_str(&format!("\n{url}"));
                }
                text(out)
            }
            Err(e) => error(format!("{e}; the issue was not created")),
        }
    }
}
