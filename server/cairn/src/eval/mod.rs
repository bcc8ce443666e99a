//! `cairn eval`: the agent task suite. Each task runs in a fresh copy of its workspace through
//! the real agent loop, composed for that copy as `cairn chat --agent` composes it (the
//! configured provider, the real tools, the sandbox, selection), with every approval the policy
//! asks for accepted (the workspace scope still confines the file tools to the copy, and
//! protected paths stay refused); then the task's checkers decide. The report is per category:
//! tasks, success rate, mean tool calls, model requests, tokens in and out, and wall time.

#[cfg(test)]
mod adversaries;
pub mod check;
mod html;
mod runners;
pub mod task;
#[cfg(test)]
mod tests;

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

use anyhow::Context as _;
use cairn_agent::model::{ModelClient, ModelError, ModelRequest, ModelStream};
use cairn_agent::policy::{ApprovalAnswer, ApprovalRequest, Approver, SessionGrants};
use cairn_agent::sessions::SessionStore;
use cairn_agent::{Mode, RunEvent, RunInput, StopReason};
use futures::future::BoxFuture;
use serde::Serialize;
use tokio_util::sync::CancellationToken;

use crate::compose::{self, Env};
use check::{Checked, Verdict};
use task::{Category, Task};

/// What `cairn eval` was asked.
pub struct EvalArgs {
    pub suite: Option<PathBuf>,
    pub categories: Vec<String>,
    pub tasks: Vec<String>,
    pub json: bool,
    /// Keep each task's copy (and its session) instead of removing it.
    pub keep: bool,
    /// Wall-clock limit of one task's turn; past it the turn is cancelled.
    pub timeout: Duration,
    /// Where to write the HTML report, besides the table or the JSON.
    pub html: Option<PathBuf>,
}

/// Accepts every call the policy would ask about: the eval has no user to ask, and the task's
/// copy is all the file tools can reach. A protected path still needs a user's own approval of
/// that path, which an unattended run cannot give, so it is refused as `--yes` refuses it.
struct AcceptAll;

impl Approver for AcceptAll {
    fn ask<'a>(&'a self, request: &'a ApprovalRequest) -> BoxFuture<'a, ApprovalAnswer> {
        let answer = if request.protected_paths.is_empty() {
            ApprovalAnswer::AllowOnce
        } else {
            ApprovalAnswer::Deny
        };
        Box::pin(async move { answer })
    }
}

/// The configured model, counting the requests made to it (the agent's steps, the tool
/// filter, and the built-in tools' own completions).
struct Counted {
    inner: Arc<dyn ModelClient>,
    requests: AtomicU32,
}

impl ModelClient for Counted {
    fn describe(&self) -> String {
        self.inner.describe()
    }

    fn stream(&self, request: ModelRequest) -> BoxFuture<'_, Result<ModelStream, ModelError>> {
        self.requests.fetch_add(1, Ordering::SeqCst);
        self.inner.stream(request)
    }

    fn accepts_images(&self) -> bool {
        self.inner.accepts_images()
    }
}

/// How a task's turn ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum Stop {
    Done,
    ToolCallCap,
    Refused,
    Cancelled,
    Timeout,
    Error,
}

impl Stop {
    fn words(self) -> &'static str {
        match self {
            Stop::Done => "done",
            Stop::ToolCallCap => "tool-call cap",
            Stop::Refused => "refused",
            Stop::Cancelled => "cancelled",
            Stop::Timeout => "timeout",
            Stop::Error => "error",
        }
    }
}

/// One task's result.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TaskResult {
    pub id: String,
    pub category: &'static str,
    pub success: bool,
    /// Why it failed (every failed checker, and a turn that did not end normally).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    pub stop: Stop,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    pub tool_calls: u32,
    /// The calls the model wrote (sub-agents' included), and of those the ones whose arguments
    /// were a JSON object: a call that does not parse is answered with an error, not run.
    pub calls_written: u32,
    pub well_formed_calls: u32,
    pub model_requests: u32,
    pub tokens_in: u64,
    pub tokens_out: u64,
    pub wall_secs: f64,
    pub answer: String,
    /// Where the copy was kept (`--keep`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kept: Option<PathBuf>,
    /// The checkers that failed, by kind (`tests`, `changes` …), and the turn's ending when it
    /// was not normal: what the report groups failures by.
    pub failed_checks: Vec<String>,
    /// The turn's messages, for the HTML report's folded transcripts (not in the JSON: the
    /// session store and `--keep` hold them).
    #[serde(skip)]
    pub transcript: Vec<cairn_agent::model::Message>,
}

/// One row of the table.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Row {
    pub category: String,
    pub tasks: usize,
    pub succeeded: usize,
    pub success_rate: f64,
    /// The 95% confidence interval of the success rate (Wilson's, which stays inside 0..1 and
    /// is honest for few tasks and rates near 0 or 1).
    pub success_interval: [f64; 2],
    pub mean_tool_calls: f64,
    /// The share of calls whose arguments parsed, over all calls of the row (none: no calls).
    pub well_formed_share: Option<f64>,
    pub mean_model_requests: f64,
    pub mean_tokens_in: f64,
    pub mean_tokens_out: f64,
    pub mean_wall_secs: f64,
}

fn row(category: &str, results: &[&TaskResult]) -> Row {
    let n = results.len().max(1) as f64;
    let mean = |f: &dyn Fn(&TaskResult) -> f64| results.iter().map(|r| f(r)).sum::<f64>() / n;
    let succeeded = results.iter().filter(|r| r.success).count();
    Row {
        category: category.to_owned(),
        tasks: results.len(),
        succeeded,
        success_rate: succeeded as f64 / n,
        success_interval: wilson(succeeded, results.len()),
        mean_tool_calls: mean(&|r| f64::from(r.tool_calls)),
        well_formed_share: {
            let calls: u32 = results.iter().map(|r| r.calls_written).sum();
            let good: u32 = results.iter().map(|r| r.well_formed_calls).sum();
            (calls > 0).then(|| f64::from(good) / f64::from(calls))
        },
        mean_model_requests: mean(&|r| f64::from(r.model_requests)),
        mean_tokens_in: mean(&|r| r.tokens_in as f64),
        mean_tokens_out: mean(&|r| r.tokens_out as f64),
        mean_wall_secs: mean(&|r| r.wall_secs),
    }
}

/// Wilson's 95% score interval for `k` successes in `n` trials.
pub fn wilson(k: usize, n: usize) -> [f64; 2] {
    if n == 0 {
        return [0.0, 1.0];
    }
    let (k, n) = (k as f64, n as f64);
    let z = 1.959_964_f64;
    let p = k / n;
    let denom = 1.0 + z * z / n;
    let centre = (p + z * z / (2.0 * n)) / denom;
    let half = z * (p * (1.0 - p) / n + z * z / (4.0 * n * n)).sqrt() / denom;
    [(centre - half).max(0.0), (centre + half).min(1.0)]
}

/// The failed tasks per reason (a checker's kind, or how the turn ended), most first.
pub fn failure_groups(results: &[TaskResult]) -> Vec<(String, Vec<String>)> {
    let mut groups: std::collections::BTreeMap<String, Vec<String>> = Default::default();
    for r in results.iter().filter(|r| !r.success) {
        for kind in &r.failed_checks {
            groups
                .entry(kind.clone())
                .or_default()
                .push(format!("{}/{}", r.category, r.id));
        }
    }
    let mut out: Vec<(String, Vec<String>)> = groups.into_iter().collect();
    out.sort_by(|a, b| b.1.len().cmp(&a.1.len()).then(a.0.cmp(&b.0)));
    out
}

/// The rows of the report: each category that ran, in the suite's order, then `all`.
pub fn rows(results: &[TaskResult]) -> Vec<Row> {
    let mut rows: Vec<Row> = Category::ALL
        .iter()
        .filter_map(|c| {
            let of: Vec<&TaskResult> = results.iter().filter(|r| r.category == c.id()).collect();
            (!of.is_empty()).then(|| row(c.id(), &of))
        })
        .collect();
    rows.push(row("all", &results.iter().collect::<Vec<_>>()));
    rows
}

/// The table and the failed tasks, as `cairn eval` prints them.
pub fn render_table(results: &[TaskResult]) -> String {
    let header = [
        "category",
        "tasks",
        "success",
        "mean tool calls",
        "well-formed calls",
        "mean model requests",
        "mean tokens in",
        "mean tokens out",
        "mean wall s",
    ];
    let mut lines: Vec<[String; 9]> = vec![header.map(str::to_owned)];
    for r in rows(results) {
        lines.push([
            r.category,
            r.tasks.to_string(),
            format!(
                "{:.0}% ({:.0}-{:.0})",
                r.success_rate * 100.0,
                r.success_interval[0] * 100.0,
                r.success_interval[1] * 100.0
            ),
            format!("{:.1}", r.mean_tool_calls),
            r.well_formed_share
                .map_or_else(|| "-".to_owned(), |s| format!("{:.0}%", s * 100.0)),
            format!("{:.1}", r.mean_model_requests),
            format!("{:.0}", r.mean_tokens_in),
            format!("{:.0}", r.mean_tokens_out),
            format!("{:.1}", r.mean_wall_secs),
        ]);
    }
    let widths: Vec<usize> = (0..9)
        .map(|i| {
            lines
                .iter()
                .map(|l| l[i].chars().count())
                .max()
                .unwrap_or(0)
        })
        .collect();
    let mut out = String::new();
    for line in &lines {
        let cells: Vec<String> = line
            .iter()
            .enumerate()
            .map(|(i, cell)| {
                if i == 0 {
                    format!("{cell:<w$}", w = widths[i])
                } else {
                    format!("{cell:>w$}", w = widths[i])
                }
            })
            .collect();
        out.push_str(cells.join(" | ").trim_end());
        out.push('\n');
    }
    out.push_str("(success: percent of tasks, and its 95% interval)\n");
    let groups = failure_groups(results);
    if !groups.is_empty() {
        out.push_str("\nfailures by reason:\n");
        let width = groups.iter().map(|(k, _)| k.len()).max().unwrap_or(0);
        for (kind, tasks) in &groups {
            out.push_str(&format!(
                "  {kind:<width$} {:>3}  {}\n",
                tasks.len(),
                tasks.join(", ")
            ));
        }
    }
    let failed: Vec<&TaskResult> = results.iter().filter(|r| !r.success).collect();
    if !failed.is_empty() {
        out.push_str("\nfailed:\n");
        for r in failed {
            out.push_str(&format!(
                "  {}/{}: {}\n",
                r.category,
                r.id,
                r.reason.as_deref().unwrap_or("failed")
            ));
        }
    }
    out
}

/// The tasks of `suite` that the filters pick; an unknown category or task is an error.
fn select(suite: &Path, args: &EvalArgs) -> anyhow::Result<Vec<Task>> {
    if !suite.is_dir() {
        anyhow::bail!(
            "no task suite at {} (run from the repository, or pass --suite DIR)",
            suite.display()
        );
    }
    let all = task::load_suite(suite)?;
    let mut categories = Vec::new();
    for c in &args.categories {
        let Some(category) = Category::parse(c) else {
            anyhow::bail!("unknown category `{c}` (known: {})", Category::known());
        };
        categories.push(category);
    }
    for id in &args.tasks {
        if !all.iter().any(|t| &t.id == id) {
            anyhow::bail!("no task `{id}` in {}", suite.display());
        }
    }
    let picked: Vec<Task> = all
        .into_iter()
        .filter(|t| categories.is_empty() || categories.contains(&t.category))
        .filter(|t| args.tasks.is_empty() || args.tasks.contains(&t.id))
        .collect();
    if picked.is_empty() {
        anyhow::bail!("no task in {} matches the filters", suite.display());
    }
    Ok(picked)
}

/// `cairn eval`: runs the picked tasks one after another and prints the report.
#[allow(clippy::print_stdout, clippy::print_stderr)]
pub async fn run(env: &Env, args: EvalArgs) -> anyhow::Result<ExitCode> {
    let suite = match &args.suite {
        Some(dir) => dir.clone(),
        None => std::env::current_dir()?.join("bench").join("eval"),
    };
    let tasks = select(&suite, &args)?;
    // Ctrl-C cancels the task in flight and ends the suite; what ran is still reported.
    let interrupted = CancellationToken::new();
    let on_ctrl_c = interrupted.clone();
    let watcher = tokio::spawn(async move {
        if tokio::signal::ctrl_c().await.is_ok() {
            on_ctrl_c.cancel();
        }
    });
    let mut results = Vec::new();
    let mut model = String::new();
    for (i, task) in tasks.iter().enumerate() {
        if interrupted.is_cancelled() {
            break;
        }
        let result = run_task(env, task, &args, i == 0, &mut model, &interrupted).await?;
        // One whole line per task, after it: logs of the run would split a line begun before.
        eprintln!(
            "[{}/{}] {} {} ({}, {} tool calls, {} model requests, {:.1} s){}",
            i + 1,
            tasks.len(),
            task.name(),
            if result.success { "ok" } else { "FAILED" },
            result.stop.words(),
            result.tool_calls,
            result.model_requests,
            result.wall_secs,
            result
                .kept
                .as_ref()
                .map(|p| format!(" kept in {}", p.display()))
                .unwrap_or_default()
        );
        results.push(result);
    }
    watcher.abort();
    compose::shutdown_sandbox().await;
    if args.json {
        let report = serde_json::json!({
            "suite": suite,
            "model": model,
            "categories": rows(&results),
            "tasks": results,
        });
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        print!("{}", render_table(&results));
    }
    if let Some(path) = &args.html {
        let page = html::render(&suite, &model, &results);
        std::fs::write(path, page)
            .with_context(|| format!("cannot write the HTML report to {}", path.display()))?;
        eprintln!("cairn: wrote the HTML report to {}", path.display());
    }
    if interrupted.is_cancelled() {
        eprintln!(
            "cairn: interrupted after {} of {} tasks",
            results.len(),
            tasks.len()
        );
        return Ok(ExitCode::from(130));
    }
    Ok(ExitCode::SUCCESS)
}

/// One task: a fresh copy, one agent turn in it, the checkers. An error here is one the suite
/// cannot run past (the copy cannot be made, the configuration is broken); what goes wrong in
/// the turn is the task's failure.
async fn run_task(
    env: &Env,
    task: &Task,
    args: &EvalArgs,
    first: bool,
    model_name: &mut String,
    interrupted: &CancellationToken,
) -> anyhow::Result<TaskResult> {
    let temp = tempfile::Builder::new()
        .prefix(&format!("cairn-eval-{}-", task.id))
        .tempdir()
        .context("cannot make a directory for the task's copy")?;
    let copy = temp.path().join("workspace");
    check::copy_tree(&task.workspace(), &copy)
        .with_context(|| format!("cannot copy {}", task.workspace().display()))?;
    let copy = std::fs::canonicalize(&copy)?;

    let (mut config, mcp) = compose::terminal_setup(env, &copy, first).await?;
    // Each task has its own session directory, so no run sees another's transcript.
    config.sessions.dir = Some(temp.path().join("sessions"));
    let mut agent = compose::agent(&config, env, &mcp);
    let counted = Arc::new(Counted {
        inner: agent.model.clone(),
        requests: AtomicU32::new(0),
    });
    agent.model = counted.clone();
    mcp.model.set(counted.clone());
    if model_name.is_empty() {
        *model_name = counted.describe();
    }

    let store = SessionStore::new(compose::sessions_dir(&config, env));
    let session_id = uuid::Uuid::new_v4().to_string();
    let run_id = uuid::Uuid::new_v4().to_string();
    // The outcome carries the counts and the answer; the events say which calls parsed.
    let (events, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let drain = tokio::spawn(async move {
        let (mut written, mut well_formed) = (0u32, 0u32);
        while let Some(event) = rx.recv().await {
            if let RunEvent::ToolCall { arguments, .. } = event {
                written += 1;
                well_formed += u32::from(arguments.is_object());
            }
        }
        (written, well_formed)
    });
    let cancel = interrupted.child_token();
    let timer = {
        let cancel = cancel.clone();
        let limit = args.timeout;
        tokio::spawn(async move {
            tokio::time::sleep(limit).await;
            cancel.cancel();
        })
    };
    let started = Instant::now();
    let outcome = agent
        .run(RunInput {
            session_id: session_id.clone(),
            run_id: run_id.clone(),
            mode: Mode::Agent,
            history: Vec::new(),
            message: task.instruction.clone(),
            approver: &AcceptAll,
            grants: SessionGrants::default(),
            events,
            cancel: cancel.clone(),
        })
        .await;
    let wall = started.elapsed();
    let timed_out = timer.is_finished();
    timer.abort();
    let (calls_written, well_formed_calls) = drain.await.unwrap_or((0, 0));
    if let Err(e) = store.save_run(&session_id, &run_id, Mode::Agent, &outcome) {
        tracing::warn!("cannot store the transcript of {}: {e}", task.name());
    }
    mcp.hub.shutdown().await;

    let (stop, error) = match &outcome.result {
        Ok(None) => (Stop::Done, None),
        Ok(Some(StopReason::ToolBudget)) => (Stop::ToolCallCap, None),
        Ok(Some(StopReason::Refused)) => (Stop::Refused, None),
        Ok(Some(StopReason::Cancelled)) if timed_out => (Stop::Timeout, None),
        Ok(Some(StopReason::Cancelled)) => (Stop::Cancelled, None),
        Err(e) => (Stop::Error, Some(e.clone())),
    };
    let answer = final_answer(&outcome.messages);
    let sandbox = compose::sandbox_service(&config.sandbox);
    let checked = check::check_task(task, &copy, &answer, Some(&sandbox), interrupted).await;

    let mut reasons = Vec::new();
    match stop {
        Stop::Done => {}
        Stop::ToolCallCap => reasons.push(format!(
            "the turn stopped at the tool-call cap (agent.max_tool_calls = {})",
            config.agent.max_tool_calls
        )),
        Stop::Timeout => reasons.push(format!(
            "the turn passed the {} s limit (--timeout) and was cancelled",
            args.timeout.as_secs()
        )),
        Stop::Error => reasons.push(format!(
            "the turn failed: {}",
            error.as_deref().unwrap_or_default()
        )),
        Stop::Refused => reasons.push("the model refused".into()),
        Stop::Cancelled => reasons.push("the turn was cancelled (Ctrl-C)".into()),
    }
    let mut failed_checks: Vec<String> = match stop {
        Stop::Done => Vec::new(),
        other => vec![format!("turn: {}", other.words())],
    };
    for c in &checked {
        if c.verdict != Verdict::Pass && !failed_checks.iter().any(|k| k == c.kind) {
            failed_checks.push(c.kind.to_owned());
        }
    }
    reasons.extend(failures(&checked));
    let kept = if args.keep {
        let path = temp.keep();
        Some(path)
    } else {
        None
    };
    Ok(TaskResult {
        id: task.id.clone(),
        category: task.category.id(),
        success: reasons.is_empty(),
        reason: (!reasons.is_empty()).then(|| reasons.join("; ")),
        stop,
        error,
        tool_calls: outcome.tool_calls,
        calls_written,
        well_formed_calls,
        model_requests: counted.requests.load(Ordering::SeqCst),
        tokens_in: outcome.usage.input_tokens,
        tokens_out: outcome.usage.output_tokens,
        wall_secs: (wall.as_secs_f64() * 10.0).round() / 10.0,
        answer,
        kept,
        failed_checks,
        transcript: outcome.messages.clone(),
    })
}

/// What failed, checker by checker: `answer_contains: the answer lacks "42"`.
pub fn failures(checked: &[Checked]) -> Vec<String> {
    checked
        .iter()
        .filter_map(|c| match &c.verdict {
            Verdict::Pass => None,
            Verdict::Fail(why) => Some(format!("{}: {why}", c.kind)),
            Verdict::Skipped(why) => Some(format!("{}: not run ({why})", c.kind)),
        })
        .collect()
}

/// The answer the checkers judge: the text of the turn's last assistant message, the one the
/// user reads at the end.
fn final_answer(messages: &[cairn_agent::model::Message]) -> String {
    messages
        .iter()
        .rev()
        .find_map(|m| match m {
            cairn_agent::model::Message::Assistant { text, .. } if !text.trim().is_empty() => {
                Some(text.clone())
            }
            _ => None,
        })
        .unwrap_or_default()
}
