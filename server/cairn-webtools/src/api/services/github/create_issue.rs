//! `github_create_issue`: opens an issue (agent-only, a write the user approves).

use cairn_toolkit::{CallContext, Category, Effect, JsonSchema, Paths, Tool};
use rmcp::model::CallToolResult;
use serde::Deserialize;
use serde_json::{Value, json};

use super::{Services, failed, n, post, repo_path, s};

/// The `github_create_issue` tool.
pub struct GithubCreateIssue;

/// Arguments of `github_create_issue`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// The repository, `owner/name`.
    repo: String,
    /// The issue's title.
    title: String,
    /// The description, in GitHub Markdown.
    #[serde(default)]
    body: Option<String>,
    /// Labels to set (they must exist in the repository, or need push access to be created).
    #[serde(default)]
    labels: Vec<String>,
    /// Logins to assign (people with access to the repository).
    #[serde(default)]
    assignees: Vec<String>,
}

/// GitHub's limit on an issue title, in characters.
const MAX_TITLE: usize = 256;
/// GitHub's limit on an issue body, in characters.
const MAX_BODY: usize = 65_536;

impl Tool for GithubCreateIssue {
    type Host = Services;
    type Args = Args;
    const NAME: &'static str = "github_create_issue";
    const TITLE: &'static str = "GitHub: create issue";
    const DESCRIPTION: &'static str = "Open a new issue in a GitHub repository with a title, a Markdown body, labels and assignees; answers its number and address.";
    const CATEGORY: Category = Category::Api;
    const EFFECT: Effect = Effect::Write;
    const AGENT_ONLY: bool = true;

    fn paths(_: &Args) -> Paths {
        Paths::none()
    }

    async fn call(host: &Services, args: Args, cx: CallContext) -> CallToolResult {
        let repo = match repo_path(&args.repo) {
            Ok(r) => r,
            Err(e) => return cairn_toolkit::reply::error(e),
        };
        let title = args.title.trim();
        if title.is_empty() {
            return cairn_toolkit::reply::error("the title is empty: give the issue a title");
        }
        if title.chars().count() > MAX_TITLE {
            return cairn_toolkit::reply::error(format!(
                "the title has {} characters, more than GitHub's {MAX_TITLE}: shorten it and put the rest in the body",
                title.chars().count()
            ));
        }
        let mut body = json!({"title": title});
        if let Some(text) = args.body.as_deref().filter(|b| !b.trim().is_empty()) {
            if text.chars().count() > MAX_BODY {
                return cairn_toolkit::reply::error(format!(
                    "the body has {} characters, more than GitHub's {MAX_BODY}: shorten it",
                    text.chars().count()
                ));
            }
            body["body"] = Value::from(text);
        }
        let clean = |v: &[String]| {
            v.iter()
                .map(|x| x.trim().trim_start_matches('@').to_owned())
                .filter(|x| !x.is_empty())
                .collect::<Vec<_>>()
        };
        if !args.labels.is_empty() {
            body["labels"] = json!(clean(&args.labels));
        }
        if !args.assignees.is_empty() {
            body["assignees"] = json!(clean(&args.assignees));
        }
        let what = format!("repository {}", args.repo.trim());
        match post(host, &cx, &format!("{repo}/issues"), &body, &what).await {
            Ok(issue) => cairn_toolkit::reply::text(format!(
                "created issue {}#{}: {}\n{}",
                args.repo.trim(),
                n(&issue, "number"),
                s(&issue, "title"),
                s(&issue, "html_url")
            )),
            Err(e) => failed(e),
        }
    }
}
