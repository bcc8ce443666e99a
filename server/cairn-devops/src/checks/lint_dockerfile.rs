//! `lint_dockerfile`: Dockerfiles checked by hadolint in a sandbox.

use cairn_toolkit::{CallContext, Category, Effect, JsonSchema, Paths, Tool};
use rmcp::model::CallToolResult;
use serde::Deserialize;
use serde_json::Value;

use super::{Finding, Severity, num, outcome, relative, report, run, string, tool_failure};
use crate::DevOps;

/// The `lint_dockerfile` tool.
pub struct LintDockerfile;

/// Arguments of `lint_dockerfile`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// Dockerfiles to check, relative to the workspace root.
    paths: Vec<String>,
}

/// Prints the version, then hadolint's JSON. `--no-fail` is not used: the exit status tells
/// findings (1) from hadolint failing (anything else with no JSON).
const SCRIPT: &str = "printf '@@version %s\\n' \"$(hadolint --version 2>&1 | head -n 1)\"; exec hadolint --no-color -f json -- \"$@\"";

impl Tool for LintDockerfile {
    type Host = DevOps;
    type Args = Args;
    const NAME: &'static str = "lint_dockerfile";
    const TITLE: &'static str = "Lint Dockerfiles";
    const DESCRIPTION: &'static str = "Check Dockerfiles with hadolint in a sandbox: unpinned base images and packages, apt/pip hygiene, shell in RUN lines (through ShellCheck); lists `file:line:col severity DLnnnn message`. Uses the workspace's .hadolint.yaml. Read-only, no network.";
    const CATEGORY: Category = Category::Devops;
    const EFFECT: Effect = Effect::Read;
    const AGENT_ONLY: bool = false;
    const NEEDS_WORKSPACE: bool = true;

    fn paths(args: &Args) -> Paths {
        Paths::read_all(args.paths.iter().cloned()).and_read(".hadolint.yaml")
    }

    async fn call(host: &DevOps, args: Args, cx: CallContext) -> CallToolResult {
        outcome(lint(host, args, &cx).await)
    }
}

async fn lint(host: &DevOps, args: Args, cx: &CallContext) -> Result<CallToolResult, String> {
    let files = super::workspace_files(host, &args.paths, false).await?;
    let run = run(host, SCRIPT, files.clone(), None, cx).await?;
    let json = serde_json::from_str::<Value>(&run.stdout).ok();
    let Some(items) = json.as_ref().and_then(Value::as_array) else {
        return Ok(tool_failure("hadolint", &run));
    };
    let findings = items
        .iter()
        .map(|c| Finding {
            file: relative(&string(&c["file"])),
            line: num(&c["line"]),
            col: num(&c["column"]),
            severity: Severity::parse(c["level"].as_str().unwrap_or("warning")),
            code: string(&c["code"]),
            message: string(&c["message"]),
        })
        .collect();
    Ok(report(&run.version, &files, findings, &[]))
}
