//! `github_failed_jobs`: a workflow run's failed jobs, their failed steps, and the tail of each
//! failed job's log. GitHub answers the log request with a redirect to a short-lived download;
//! the guard follows it (and does not carry the GitHub credential to the download's host).

use std::fmt::Write as _;

use cairn_toolkit::{CallContext, Category, Effect, JsonSchema, Paths, Tool};
use rmcp::model::CallToolResult;
use serde::Deserialize;
use serde_json::Value;

use super::{PUBLIC, SERVICE, Services, arr, bounded, failed, get, n, repo_path, s};
use cairn_web::Method;

/// The `github_failed_jobs` tool.
pub struct GithubFailedJobs;

/// Arguments of `github_failed_jobs`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// The repository, `owner/name`.
    repo: String,
    /// The workflow run's id (the `run id` column of github_workflow_runs).
    run_id: u64,
    /// Lines of each failed job's log to show, from its end (default 60, at most 300).
    #[serde(default)]
    tail_lines: Option<u32>,
    /// How many failed jobs to read logs of (default 5, at most 10); the rest are listed.
    #[serde(default)]
    max_jobs: Option<u32>,
}

/// Characters of one log line shown.
const MAX_LINE: usize = 400;
/// Bytes of one job's log tail shown.
const MAX_TAIL_BYTES: usize = 12 * 1024;

/// The outcomes that count as failed.
fn is_failed(conclusion: &str) -> bool {
    matches!(conclusion, "failure" | "timed_out" | "startup_failure")
}

impl Tool for GithubFailedJobs {
    type Host = Services;
    type Args = Args;
    const NAME: &'static str = "github_failed_jobs";
    const TITLE: &'static str = "GitHub: failed jobs of a run";
    const DESCRIPTION: &'static str = "Show why a GitHub Actions run failed: its failed jobs, their failed steps, and the last lines of each failed job's log.";
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
        let what = format!("run {} in {}", args.run_id, args.repo.trim());
        let query = [
            ("filter", "latest".to_owned()),
            ("per_page", "100".to_owned()),
        ];
        let path = format!("{repo}/actions/runs/{}/jobs", args.run_id);
        let found = match get(host, &cx, &path, &query, &what).await {
            Ok(v) => v,
            Err(e) => return failed(e),
        };
        let jobs = arr(&found, "jobs");
        let failed_jobs: Vec<&Value> = jobs
            .iter()
            .filter(|j| is_failed(s(j, "conclusion")))
            .collect();
        let total = n(&found, "total_count").max(jobs.len() as u64);
        let mut out = format!("{what}: {total} job(s), {} failed", failed_jobs.len());
        if (jobs.len() as u64) < total {
            let _ = write!(out, " among the first {} read", jobs.len());
        }
        if failed_jobs.is_empty() {
            let pending = jobs
                .iter()
                .filter(|j| s(j, "status") != "completed")
                .count();
            if pending > 0 {
                let _ = write!(out, "; {pending} not finished yet");
            }
            return cairn_toolkit::reply::text(out);
        }
        let tail = bounded(args.tail_lines, 60, 300) as usize;
        let max_jobs = bounded(args.max_jobs, 5, 10) as usize;
        for (i, job) in failed_jobs.iter().enumerate() {
            let id = n(job, "id");
            let _ = write!(
                out,
                "\n\n## {} (job {id}): {}",
                s(job, "name"),
                s(job, "conclusion")
            );
            let steps = arr(job, "steps")
                .iter()
                .filter(|st| is_failed(s(st, "conclusion")))
                .map(|st| format!("{}. {}", n(st, "number"), s(st, "name")))
                .collect::<Vec<_>>();
            if !steps.is_empty() {
                let _ = write!(out, "\nfailed step(s): {}", steps.join("; "));
            }
            if i >= max_jobs {
                out.push_str("\n(log not read: over max_jobs)");
                continue;
            }
            let log_path = format!("{repo}/actions/jobs/{id}/logs");
            let what = format!("the log of job {id}");
            match host
                .call(
                    &cx,
                    SERVICE,
                    PUBLIC,
                    Method::GET,
                    &log_path,
                    &[],
                    None,
                    &what,
                )
                .await
            {
                Ok((response, _)) => {
                    let text = String::from_utf8_lossy(&response.body);
                    let _ = write!(out, "\n{}", tail_of(&text, tail, response.truncated));
                }
                Err(super::ServiceError::Cancelled) => {
                    return cairn_toolkit::reply::error("cancelled");
                }
                Err(e) => {
                    let _ = write!(out, "\n(log not read: {e})");
                }
            }
        }
        cairn_toolkit::reply::text(out)
    }
}

/// The last `lines` lines of a log (timestamps dropped, long lines cut, at most
/// [`MAX_TAIL_BYTES`]), fenced, with what was left out said.
fn tail_of(log: &str, lines: usize, truncated: bool) -> String {
    let all: Vec<&str> = log.lines().collect();
    let start = all.len().saturating_sub(lines);
    let mut kept: Vec<String> = Vec::new();
    let mut bytes = 0;
    for line in all[start..].iter().rev() {
        let line = super::cut(strip_time(line), MAX_LINE).replace("```", "'''");
        if bytes + line.len() + 1 > MAX_TAIL_BYTES {
            break;
        }
        bytes += line.len() + 1;
        kept.push(line);
    }
    kept.reverse();
    let mut head = format!("last {} of {} log line(s)", kept.len(), all.len());
    if truncated {
        head.push_str(
            " (the log was longer than the download cap: these end where the read stopped)",
        );
    }
    if all.is_empty() {
        return "log: empty".to_owned();
    }
    format!("{head}:\n```\n{}\n```", kept.join("\n"))
}

/// A log line without the timestamp Actions puts first (`2024-01-02T03:04:05.1234567Z `).
fn strip_time(line: &str) -> &str {
    match line.split_once(' ') {
        Some((first, rest))
            if first.len() >= 20
                && first.ends_with('Z')
                && first.as_bytes().get(10) == Some(&b'T')
                && first.starts_with(|c: char| c.is_ascii_digit()) =>
        {
            rest
        }
        _ => line,
    }
}
