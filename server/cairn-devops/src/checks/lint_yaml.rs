//! `lint_yaml`: YAML files checked by yamllint in a sandbox.

use cairn_toolkit::{CallContext, Category, Effect, JsonSchema, Paths, Tool};
use rmcp::model::CallToolResult;
use serde::Deserialize;

use super::{Finding, Severity, outcome, relative, report, run, tool_failure};
use crate::DevOps;

/// The `lint_yaml` tool.
pub struct LintYaml;

/// Arguments of `lint_yaml`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// YAML files or directories (checked recursively) to check, relative to the workspace root.
    paths: Vec<String>,
}

/// Prints the version, then yamllint's parsable lines. yamllint finds the workspace's
/// `.yamllint`, `.yamllint.yaml` or `.yamllint.yml` itself (the working directory is the
/// workspace root), else uses its default rules.
const SCRIPT: &str = "printf '@@version %s\\n' \"$(yamllint --version 2>&1 | head -n 1)\"; exec yamllint -f parsable -- \"$@\"";

/// The configuration files yamllint reads from the workspace root, when present.
const CONFIGS: [&str; 3] = [".yamllint", ".yamllint.yaml", ".yamllint.yml"];

impl Tool for LintYaml {
    type Host = DevOps;
    type Args = Args;
    const NAME: &'static str = "lint_yaml";
    const TITLE: &'static str = "Lint YAML";
    const DESCRIPTION: &'static str = "Check YAML files with yamllint in a sandbox: syntax errors, duplicate keys, indentation, truthy values, line length; uses the workspace's .yamllint config when there is one. Lists `file:line:col severity rule message`. Read-only, no network.";
    const CATEGORY: Category = Category::Devops;
    const EFFECT: Effect = Effect::Read;
    const AGENT_ONLY: bool = false;
    const NEEDS_WORKSPACE: bool = true;

    fn paths(args: &Args) -> Paths {
        CONFIGS
            .iter()
            .fold(Paths::read_all(args.paths.iter().cloned()), |p, c| {
                p.and_read(*c)
            })
    }

    async fn call(host: &DevOps, args: Args, cx: CallContext) -> CallToolResult {
        outcome(lint(host, args, &cx).await)
    }
}

async fn lint(host: &DevOps, args: Args, cx: &CallContext) -> Result<CallToolResult, String> {
    let files = super::workspace_files(host, &args.paths, true).await?;
    let run = run(host, SCRIPT, files.clone(), None, cx).await?;
    // 0: clean or warnings only, 1: errors; anything else (2: usage) is yamllint failing.
    if run.exit != 0 && run.exit != 1 {
        return Ok(tool_failure("yamllint", &run));
    }
    let findings: Vec<Finding> = run.stdout.lines().filter_map(parse_line).collect();
    if run.exit == 1 && findings.is_empty() {
        return Ok(tool_failure("yamllint", &run));
    }
    Ok(report(&run.version, &files, findings, &[]))
}

/// `file:line:col: [level] message (rule)`.
fn parse_line(line: &str) -> Option<Finding> {
    let (place, rest) = line.split_once(": [")?;
    let mut parts = place.rsplitn(3, ':');
    let col = parts.next()?.parse().ok()?;
    let line_no = parts.next()?.parse().ok()?;
    let file = parts.next()?;
    let (level, message) = rest.split_once("] ")?;
    let (message, code) = match message.rsplit_once(" (") {
        Some((m, rule)) if rule.ends_with(')') => (m, rule.trim_end_matches(')')),
        _ => (message, "syntax"),
    };
    Some(Finding {
        file: relative(file),
        line: line_no,
        col,
        severity: Severity::parse(level),
        code: code.to_owned(),
        message: message.to_owned(),
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use super::*;

    #[test]
    fn parsable_lines_are_read() {
        let f = parse_line(
            "a/b.yaml:3:1: [error] duplication of key \"x\" in mapping (key-duplicates)",
        )
        .unwrap();
        assert_eq!((f.file.as_str(), f.line, f.col), ("a/b.yaml", 3, 1));
        assert_eq!(f.severity, Severity::Error);
        assert_eq!(f.code, "key-duplicates");
        assert_eq!(f.message, "duplication of key \"x\" in mapping");
        let s = parse_line("c.yml:2:5: [error] syntax error: mapping values are not allowed here")
            .unwrap();
        assert_eq!(s.code, "syntax");
        assert!(parse_line("garbage").is_none());
    }
}
