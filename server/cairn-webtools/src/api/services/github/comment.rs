//! `github_comment`: comments on an issue or pull request (agent-only, a write the user
//! approves).

use cairn_toolkit::{CallContext, Category, Effect, JsonSchema, Paths, Tool};
use rmcp::model::CallToolResult;
use serde::Deserialize;
use serde_json::json;

use super::{Services, failed, post, repo_path, s};

/// The `github_comment` tool.
pub struct GithubComment;

/// Arguments of `github_comment`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// The repository, `owner/name`.
    repo: String,
    /// The issue or pull request number.
    number: u64,
    /// The comment, in GitHub Markdown.
    body: String,
}

/// GitHub's limit on a comment, in characters.
const MAX_BODY: usize = 65_536;

impl Tool for GithubComment {
    type Host = Services;
    type Args = Args;
    const NAME: &'static str = "github_comment";
    const TITLE: &'static str = "GitHub: comment";
    const DESCRIPTION: &'static str = "Add a comment to a GitHub issue or pull request (the conversation, not a review line); answers the comment's address.";
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
        if args.body.trim().is_empty() {
            return cairn_toolkit::reply::error("the comment is empty: write something to post");
        }
        let count = args.body.chars().count();
        if count > MAX_BODY {
            return cairn_toolkit::reply::error(format!(
                "the comment has {count} characters, more than GitHub's {MAX_BODY}: shorten it or split it"
            ));
        }
        let what = format!("{}#{}", args.repo.trim(), args.number);
        let path = format!("{repo}/issues/{}/comments", args.number);
        match post(host, &cx, &path, &json!({"body": args.body}), &what).await {
            Ok(c) => {
                cairn_toolkit::reply::text(format!("commented on {what}: {}", s(&c, "html_url")))
            }
            Err(e) => failed(e),
        }
    }
}
