//! `github_workflow_runs`: a repository's recent GitHub Actions runs, filtered by branch,
//! status and workflow, as a table.

use cairn_toolkit::table::{Cell, Limits, Table};
use cairn_toolkit::{CallContext, Category, Effect, JsonSchema, Paths, Tool};
use rmcp::model::CallToolResult;
use serde::Deserialize;

use super::{Services, arr, bounded, failed, get, n, repo_path, s, segment, when};

/// The `github_workflow_runs` tool.
pub struct GithubWorkflowRuns;

/// A run's status or conclusion, as GitHub filters by it.
#[derive(Debug, Clone, Copy, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    Queued,
    InProgress,
    Completed,
    Success,
    Failure,
    Cancelled,
    TimedOut,
    ActionRequired,
    Skipped,
}

impl Status {
    fn as_str(self) -> &'static str {
        match self {
            Status::Queued => "queued",
            Status::InProgress => "in_progress",
            Status::Completed => "completed",
            Status::Success => "success",
            Status::Failure => "failure",
            Status::Cancelled => "cancelled",
            Status::TimedOut => "timed_out",
            Status::ActionRequired => "action_required",
            Status::Skipped => "skipped",
        }
    }
}

/// Arguments of `github_workflow_runs`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// The repository, `owner/name`.
    repo: String,
    /// Only runs on this branch.
    #[serde(default)]
    branch: Option<String>,
    /// Only runs in this state or with this outcome: `queued`, `in_progress`, `completed`,
    /// `success`, `failure`, `cancelled`, `timed_out`, `action_required` or `skipped`.
    #[serde(default)]
    status: Option<Status>,
    /// Only runs of this workflow: its file name (`ci.yml`) or numeric id.
    #[serde(default)]
    workflow: Option<String>,
    /// How many runs to show, newest first (default 20, at most 100).
    #[serde(default)]
    max_results: Option<u32>,
}

impl Tool for GithubWorkflowRuns {
    type Host = Services;
    type Args = Args;
    const NAME: &'static str = "github_workflow_runs";
    const TITLE: &'static str = "GitHub: Actions runs";
    const DESCRIPTION: &'static str = "List a GitHub repository's recent Actions workflow runs, newest first, optionally only one branch, status or workflow; shows each run's id (for github_failed_jobs), workflow, branch, event, status and outcome.";
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
        let max = bounded(args.max_results, 20, 100);
        let mut query = vec![("per_page", max.to_string())];
        if let Some(branch) = args
            .branch
            .as_deref()
            .map(str::trim)
            .filter(|b| !b.is_empty())
        {
            query.push(("branch", branch.to_owned()));
        }
        if let Some(status) = args.status {
            query.push(("status", status.as_str().to_owned()));
        }
        let workflow = args
            .workflow
            .as_deref()
            .map(str::trim)
            .filter(|w| !w.is_empty());
        let (path, what) = match workflow {
            Some(w) => (
                format!("{repo}/actions/workflows/{}/runs", segment(w)),
                format!("workflow {w} in {}", args.repo.trim()),
            ),
            None => (
                format!("{repo}/actions/runs"),
                format!("repository {}", args.repo.trim()),
            ),
        };
        let found = match get(host, &cx, &path, &query, &what).await {
            Ok(v) => v,
            Err(e) => return failed(e),
        };
        let runs = arr(&found, "workflow_runs");
        let total = n(&found, "total_count");
        let rows = runs
            .iter()
            .take(max as usize)
            .map(|r| {
                let outcome = match s(r, "conclusion") {
                    "" => "-",
                    c => c,
                };
                vec![
                    Cell::Text(n(r, "id").to_string()),
                    Cell::Text(s(r, "name").to_owned()),
                    Cell::Text(s(r, "head_branch").to_owned()),
                    Cell::Text(s(r, "event").to_owned()),
                    Cell::Text(s(r, "status").to_owned()),
                    Cell::Text(outcome.to_owned()),
                    Cell::Text(s(r, "head_sha").get(..7).unwrap_or("").to_owned()),
                    Cell::Text(when(s(r, "created_at"))),
                ]
            })
            .collect::<Vec<_>>();
        let shown = rows.len() as u64;
        let table = Table {
            columns: [
                "run id", "workflow", "branch", "event", "status", "outcome", "commit", "started",
            ]
            .map(str::to_owned)
            .to_vec(),
            rows,
            more: total > shown,
        };
        table.result_hinting(
            &format!("Actions runs of {}: {total} matching", args.repo.trim()),
            &Limits {
                max_rows: max as usize,
                max_cell_chars: 80,
                ..Limits::default()
            },
            "filter by branch, status or workflow, or raise max_results (at most 100)",
        )
    }
}
