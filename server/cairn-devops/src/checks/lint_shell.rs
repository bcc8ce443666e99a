//! `lint_shell`: shell scripts checked by ShellCheck in a sandbox.

use cairn_toolkit::{CallContext, Category, Effect, JsonSchema, Paths, Tool};
use rmcp::model::CallToolResult;
use serde::Deserialize;
use serde_json::Value;

use super::{Finding, Severity, num, outcome, relative, report, run, string, tool_failure};
use crate::DevOps;

/// The `lint_shell` tool.
pub struct LintShell;

/// The dialect ShellCheck checks for.
#[derive(Debug, Clone, Copy, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Shell {
    Sh,
    Bash,
    Dash,
    Ksh,
}

/// The least severe findings to report.
#[derive(Debug, Clone, Copy, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Level {
    Error,
    Warning,
    Info,
    Style,
}

/// Arguments of `lint_shell`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// Shell scripts to check, relative to the workspace root.
    paths: Vec<String>,
    /// The dialect (default: from each script's shebang, else sh).
    #[serde(default)]
    shell: Option<Shell>,
    /// The least severe findings to report (default: style, all of them).
    #[serde(default)]
    severity: Option<Level>,
}

/// Prints the version, then ShellCheck's JSON; its arguments are the options and the files.
const SCRIPT: &str = "shellcheck --version | sed -n 's/^version: /@@version shellcheck /p'; exec shellcheck -f json1 \"$@\"";

impl Tool for LintShell {
    type Host = DevOps;
    type Args = Args;
    const NAME: &'static str = "lint_shell";
    const TITLE: &'static str = "Lint shell scripts";
    const DESCRIPTION: &'static str = "Check shell scripts (sh, bash, dash, ksh) with ShellCheck in a sandbox: quoting, word splitting, unset variables, portability; lists `file:line:col severity SCnnnn message`. Read-only, no network.";
    const CATEGORY: Category = Category::Devops;
    const EFFECT: Effect = Effect::Read;
    const AGENT_ONLY: bool = false;
    const NEEDS_WORKSPACE: bool = true;

    fn paths(args: &Args) -> Paths {
        Paths::read_all(args.paths.iter().cloned())
    }

    async fn call(host: &DevOps, args: Args, cx: CallContext) -> CallToolResult {
        outcome(lint(host, args, &cx).await)
    }
}

async fn lint(host: &DevOps, args: Args, cx: &CallContext) -> Result<CallToolResult, String> {
    let files = super::workspace_files(host, &args.paths, false).await?;
    let mut argv = Vec::new();
    if let Some(shell) = args.shell {
        argv.push("--shell".to_owned());
        argv.push(format!("{shell:?}").to_lowercase());
    }
    if let Some(level) = args.severity {
        argv.push("--severity".to_owned());
        argv.push(format!("{level:?}").to_lowercase());
    }
    // ShellCheck takes `--` before files, so a file named `-x` stays a file.
    argv.push("--".to_owned());
    argv.extend(files.iter().cloned());
    let run = run(host, SCRIPT, argv, None, cx).await?;
    // 0: clean, 1: findings; anything else is ShellCheck failing.
    if run.exit != 0 && run.exit != 1 {
        return Ok(tool_failure("ShellCheck", &run));
    }
    let Ok(json) = serde_json::from_str::<Value>(&run.stdout) else {
        return Ok(tool_failure("ShellCheck", &run));
    };
    let findings = json["comments"]
        .as_array()
        .map(|c| c.iter().map(finding).collect())
        .unwrap_or_default();
    Ok(report(&run.version, &files, findings, &[]))
}

fn finding(c: &Value) -> Finding {
    Finding {
        file: relative(&string(&c["file"])),
        line: num(&c["line"]),
        col: num(&c["column"]),
        severity: Severity::parse(c["level"].as_str().unwrap_or("warning")),
        code: c["code"]
            .as_u64()
            .map(|n| format!("SC{n}"))
            .unwrap_or_default(),
        message: string(&c["message"]),
    }
}
