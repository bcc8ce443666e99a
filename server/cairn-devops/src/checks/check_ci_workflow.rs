//! `check_ci_workflow`: CI definitions checked in a sandbox, GitHub Actions workflows by
//! actionlint and `.gitlab-ci.yml` against GitLab's schema (check-jsonschema's vendored copy).

use cairn_toolkit::{CallContext, Category, Effect, JsonSchema, Paths, Tool};
use rmcp::model::CallToolResult;
use serde::Deserialize;
use serde_json::Value;

use super::{Finding, Severity, num, outcome, relative, report, run, string, tool_failure};
use crate::DevOps;

/// The `check_ci_workflow` tool.
pub struct CheckCiWorkflow;

/// Which CI a file is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    /// A GitHub Actions workflow.
    Github,
    /// A GitLab CI definition.
    Gitlab,
}

/// Arguments of `check_ci_workflow`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// CI files to check, relative to the workspace root (`.github/workflows/*.yml`,
    /// `.gitlab-ci.yml`).
    paths: Vec<String>,
    /// Which CI the files are for (default: from each path: under `.github/workflows/` is
    /// GitHub, a name with `gitlab-ci` is GitLab).
    #[serde(default)]
    kind: Option<Kind>,
}

/// actionlint's JSON (one array of errors); it also runs ShellCheck on `run:` scripts.
const ACTIONLINT: &str = "printf '@@version actionlint %s\\n' \"$(actionlint --version 2>&1 | head -n 1)\"; exec actionlint -no-color -format '{{json .}}' \"$@\"";

impl Tool for CheckCiWorkflow {
    type Host = DevOps;
    type Args = Args;
    const NAME: &'static str = "check_ci_workflow";
    const TITLE: &'static str = "Check CI workflows";
    const DESCRIPTION: &'static str = "Check CI definitions in a sandbox: GitHub Actions workflows with actionlint (syntax, expressions, runner labels, action inputs, ShellCheck on run: scripts) and .gitlab-ci.yml against GitLab's JSON schema; the kind is guessed from the path. Read-only, no network.";
    const CATEGORY: Category = Category::Devops;
    const EFFECT: Effect = Effect::Read;
    const AGENT_ONLY: bool = false;
    const NEEDS_WORKSPACE: bool = true;

    fn paths(args: &Args) -> Paths {
        Paths::read_all(args.paths.iter().cloned())
            .and_read(".github/actionlint.yaml")
            .and_read(".github/actionlint.yml")
    }

    async fn call(host: &DevOps, args: Args, cx: CallContext) -> CallToolResult {
        outcome(check(host, args, &cx).await)
    }
}

/// The kind of `path` by its name, if it tells.
fn guess(path: &str) -> Option<Kind> {
    let p = path.replace('\\', "/");
    let name = p.rsplit('/').next().unwrap_or(&p);
    if name.contains("gitlab-ci") {
        Some(Kind::Gitlab)
    } else if p.contains(".github/workflows/")
        && (name.ends_with(".yml") || name.ends_with(".yaml"))
    {
        Some(Kind::Github)
    } else {
        None
    }
}

async fn check(host: &DevOps, args: Args, cx: &CallContext) -> Result<CallToolResult, String> {
    let files = super::workspace_files(host, &args.paths, false).await?;
    let (mut github, mut gitlab) = (Vec::new(), Vec::new());
    for f in &files {
        match args.kind.or_else(|| guess(f)) {
            Some(Kind::Github) => github.push(f.clone()),
            Some(Kind::Gitlab) => gitlab.push(f.clone()),
            None => {
                return Err(format!(
                    "cannot tell which CI {f} is for (not under .github/workflows/, no \
                     `gitlab-ci` in its name); pass kind \"github\" or \"gitlab\""
                ));
            }
        }
    }
    let mut findings = Vec::new();
    let mut versions = Vec::new();
    if !github.is_empty() {
        let run = run(host, ACTIONLINT, github, None, cx).await?;
        // 0: clean, 1: problems; 2: bad options, 3: actionlint failed.
        let items = serde_json::from_str::<Value>(&run.stdout).ok();
        let items = match (&items, run.exit) {
            (Some(Value::Array(items)), 0 | 1) => items.clone(),
            // No problems: actionlint may print nothing, or null.
            (Some(Value::Null), 0) => Vec::new(),
            (None, 0) if run.stdout.trim().is_empty() => Vec::new(),
            _ => return Ok(tool_failure("actionlint", &run)),
        };
        findings.extend(items.iter().map(|e| Finding {
            file: relative(&string(&e["filepath"])),
            line: num(&e["line"]),
            col: num(&e["column"]),
            severity: Severity::Error,
            code: string(&e["kind"]),
            message: string(&e["message"]),
        }));
        versions.push(run.version);
    }
    if !gitlab.is_empty() {
        let args = super::schema_args("vendor.gitlab-ci", &gitlab);
        let run = run(host, super::SCHEMA_SCRIPT, args, None, cx).await?;
        let Some(json) = serde_json::from_str::<Value>(&run.stdout).ok() else {
            return Ok(tool_failure("check-jsonschema", &run));
        };
        for e in json["parse_errors"].as_array().into_iter().flatten() {
            findings.push(Finding {
                file: relative(&string(&e["filename"])),
                line: 0,
                col: 0,
                severity: Severity::Error,
                code: "parse".into(),
                message: string(&e["message"]),
            });
        }
        for e in json["errors"].as_array().into_iter().flatten() {
            findings.push(super::schema_finding(e));
        }
        if run.exit != 0 && findings.is_empty() {
            return Ok(tool_failure("check-jsonschema", &run));
        }
        versions.push(format!(
            "{} with its vendored GitLab CI schema",
            run.version
        ));
    }
    Ok(report(&versions.join("; "), &files, findings, &[]))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use super::*;

    #[test]
    fn kinds_are_guessed_from_the_path() {
        assert_eq!(guess(".github/workflows/ci.yml"), Some(Kind::Github));
        assert_eq!(guess("sub/.github/workflows/ci.yaml"), Some(Kind::Github));
        assert_eq!(guess(".gitlab-ci.yml"), Some(Kind::Gitlab));
        assert_eq!(guess("ci/deploy.gitlab-ci.yml"), Some(Kind::Gitlab));
        assert_eq!(guess("config.yml"), None);
    }
}
