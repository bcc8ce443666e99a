//! `github_issue`: one issue or pull request with its comments; for a pull request also its
//! state, branches, and a summary of the checks on its head commit.

use std::fmt::Write as _;

use cairn_toolkit::{CallContext, Category, Effect, JsonSchema, Paths, Tool};
use rmcp::model::CallToolResult;
use serde::Deserialize;
use serde_json::Value;

use super::{Services, arr, bounded, cut, failed, get, login, n, repo_path, s, when};

/// The `github_issue` tool.
pub struct GithubIssue;

/// Arguments of `github_issue`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// The repository, `owner/name`.
    repo: String,
    /// The issue or pull request number.
    number: u64,
    /// How many comments to show, oldest first (default 20, at most 100).
    #[serde(default)]
    max_comments: Option<u32>,
}

/// Characters of the description shown.
const MAX_BODY: usize = 4000;
/// Characters of one comment shown.
const MAX_COMMENT: usize = 1500;
/// Bytes of the answer after which further comments are left out.
const MAX_TEXT: usize = 48 * 1024;

impl Tool for GithubIssue {
    type Host = Services;
    type Args = Args;
    const NAME: &'static str = "github_issue";
    const TITLE: &'static str = "GitHub: issue or PR";
    const DESCRIPTION: &'static str = "Read one GitHub issue or pull request with its comments; for a pull request also whether it is merged or mergeable, its branches and a summary of its checks.";
    const CATEGORY: Category = Category::Api;
    const EFFECT: Effect = Effect::Network;
    const AGENT_ONLY: bool = false;
    const READ_ONLY: bool = true;

    fn paths(_: &Args) -> Paths {
        Paths::none()
    }

    async fn call(host: &Services, args: Args, cx: CallContext) -> CallToolResult {
        let repo = match repo_path(&args.repo) {
            Ok(r) => r,
            Err(e) => return cairn_toolkit::reply::error(e),
        };
        let what = format!("{}#{}", args.repo.trim(), args.number);
        let issue_path = format!("{repo}/issues/{}", args.number);
        let issue = match get(host, &cx, &issue_path, &[], &what).await {
            Ok(v) => v,
            Err(e) => return failed(e),
        };
        let is_pr = issue.get("pull_request").is_some_and(|p| !p.is_null());
        let mut out = format!(
            "{what} ({}) {}\nstate: {}, by {}, created {}, updated {}",
            if is_pr { "pull request" } else { "issue" },
            s(&issue, "title"),
            s(&issue, "state"),
            login(&issue, "user"),
            when(s(&issue, "created_at")),
            when(s(&issue, "updated_at")),
        );
        let labels = super::labels(&issue);
        if !labels.is_empty() {
            let _ = write!(out, "\nlabels: {labels}");
        }
        let assignees = arr(&issue, "assignees")
            .iter()
            .map(|a| s(a, "login"))
            .collect::<Vec<_>>();
        if !assignees.is_empty() {
            let _ = write!(out, "\nassignees: {}", assignees.join(", "));
        }
        let _ = write!(out, "\n{}", s(&issue, "html_url"));
        if is_pr {
            out.push_str(&pull_summary(host, &cx, &repo, args.number, &what).await);
        }
        let body = s(&issue, "body").trim();
        let _ = write!(
            out,
            "\n\n{}",
            if body.is_empty() {
                "(no description)".to_owned()
            } else {
                cut(body, MAX_BODY)
            }
        );

        // The count on the issue can lag its comments: the list is read whatever it says.
        let max = bounded(args.max_comments, 20, 100);
        let query = [("per_page", max.to_string())];
        match get(host, &cx, &format!("{issue_path}/comments"), &query, &what).await {
            Ok(comments) => {
                let list = comments.as_array().map(Vec::as_slice).unwrap_or(&[]);
                let total = n(&issue, "comments").max(list.len() as u64);
                if total == 0 {
                    out.push_str("\n\nno comments");
                } else {
                    let _ = write!(out, "\n\n{total} comment(s)");
                    if (list.len() as u64) < total {
                        let _ = write!(
                            out,
                            ", the first {} shown (raise max_comments, at most 100)",
                            list.len()
                        );
                    }
                    out.push(':');
                }
                for (i, c) in list.iter().enumerate() {
                    if out.len() > MAX_TEXT {
                        let _ = write!(
                            out,
                            "\n\n({} more comment(s) not shown: the answer reached {} KB; lower max_comments)",
                            list.len() - i,
                            MAX_TEXT / 1024
                        );
                        break;
                    }
                    let _ = write!(
                        out,
                        "\n\n--- {} at {}:\n{}",
                        login(c, "user"),
                        when(s(c, "created_at")),
                        cut(s(c, "body").trim(), MAX_COMMENT)
                    );
                }
            }
            Err(super::ServiceError::Cancelled) => return cairn_toolkit::reply::error("cancelled"),
            Err(e) => {
                let _ = write!(out, "\n\ncomments not read: {e}");
            }
        }
        cairn_toolkit::reply::text(out)
    }
}

/// A pull request's merge state, branches and checks, as lines to add; a part that could not
/// be read says why instead.
async fn pull_summary(
    host: &Services,
    cx: &CallContext,
    repo: &str,
    number: u64,
    what: &str,
) -> String {
    let pull = match get(host, cx, &format!("{repo}/pulls/{number}"), &[], what).await {
        Ok(p) => p,
        Err(e) => return format!("\npull request details not read: {e}"),
    };
    let head = pull.get("head").cloned().unwrap_or(Value::Null);
    let base = pull.get("base").cloned().unwrap_or(Value::Null);
    let merged = pull.get("merged").and_then(Value::as_bool) == Some(true);
    let state = if merged {
        format!("merged at {}", when(s(&pull, "merged_at")))
    } else if pull.get("draft").and_then(Value::as_bool) == Some(true) {
        format!("{} (draft)", s(&pull, "state"))
    } else {
        s(&pull, "state").to_owned()
    };
    let mergeable = match pull.get("mergeable").and_then(Value::as_bool) {
        Some(true) => "mergeable",
        Some(false) => "has conflicts",
        None => "mergeability not computed yet",
    };
    let mut out = format!(
        "\npull request: {state}, {mergeable}; {} into {}; {} commit(s), +{} -{} in {} file(s)",
        s(&head, "label"),
        s(&base, "label"),
        n(&pull, "commits"),
        n(&pull, "additions"),
        n(&pull, "deletions"),
        n(&pull, "changed_files"),
    );
    let sha = s(&head, "sha");
    if sha.is_empty() {
        return out;
    }
    let query = [("per_page", "100".to_owned())];
    match get(
        host,
        cx,
        &format!("{repo}/commits/{}/check-runs", super::segment(sha)),
        &query,
        what,
    )
    .await
    {
        Ok(checks) => {
            let runs = arr(&checks, "check_runs");
            let mut counts: Vec<(String, usize)> = Vec::new();
            let mut failing = Vec::new();
            for run in runs {
                let outcome = match s(run, "conclusion") {
                    "" => s(run, "status").to_owned(),
                    c => c.to_owned(),
                };
                if matches!(
                    outcome.as_str(),
                    "failure" | "timed_out" | "action_required"
                ) {
                    failing.push(s(run, "name").to_owned());
                }
                match counts.iter_mut().find(|(k, _)| *k == outcome) {
                    Some((_, c)) => *c += 1,
                    None => counts.push((outcome, 1)),
                }
            }
            let total = n(&checks, "total_count").max(runs.len() as u64);
            if total == 0 {
                let _ = write!(out, "\nchecks on {}: none", short(sha));
            } else {
                let summary = counts
                    .iter()
                    .map(|(k, c)| format!("{c} {k}"))
                    .collect::<Vec<_>>()
                    .join(", ");
                let _ = write!(out, "\nchecks on {}: {total} ({summary})", short(sha));
                if (runs.len() as u64) < total {
                    let _ = write!(out, "; the first {} counted", runs.len());
                }
                if !failing.is_empty() {
                    let _ = write!(out, "; failing: {}", failing.join(", "));
                }
            }
        }
        Err(e) => {
            let _ = write!(out, "\nchecks not read: {e}");
        }
    }
    out
}

/// A commit's short form.
fn short(sha: &str) -> &str {
    sha.get(..7).unwrap_or(sha)
}
