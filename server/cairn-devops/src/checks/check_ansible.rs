//! `check_ansible`: Ansible playbooks checked by `ansible-playbook --syntax-check` in a
//! sandbox, against `localhost,` only: no inventory is read and no host contacted.

use cairn_toolkit::{CallContext, Category, Effect, JsonSchema, Paths, Tool};
use rmcp::model::CallToolResult;
use serde::Deserialize;

use super::{Finding, Severity, outcome, relative, report, run, tool_failure};
use crate::DevOps;

/// The `check_ansible` tool.
pub struct CheckAnsible;

/// Arguments of `check_ansible`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// Playbooks to check, relative to the workspace root (roles they use are found as
    /// Ansible finds them, next to the playbook).
    paths: Vec<String>,
}

/// One `ansible-playbook --syntax-check` per playbook (so each error names its playbook),
/// framed by `@@file` and `@@exit` lines. Ansible writes its temporary files under HOME,
/// which is the container's scratch space.
const SCRIPT: &str = "export HOME=/tmp ANSIBLE_LOCAL_TEMP=/tmp/.ansible ANSIBLE_NOCOLOR=1 ANSIBLE_DEPRECATION_WARNINGS=0 ANSIBLE_RETRY_FILES_ENABLED=0 ANSIBLE_INVENTORY_UNPARSED_WARNING=0 ANSIBLE_LOCALHOST_WARNING=0; printf '@@version %s\\n' \"$(ansible-playbook --version 2>&1 | head -n 1)\"; for f; do echo \"@@file $f\"; ansible-playbook --syntax-check -i localhost, -c local \"./$f\" 2>&1; echo \"@@exit $?\"; done";

impl Tool for CheckAnsible {
    type Host = DevOps;
    type Args = Args;
    const NAME: &'static str = "check_ansible";
    const TITLE: &'static str = "Check Ansible playbooks";
    const DESCRIPTION: &'static str = "Check Ansible playbooks with `ansible-playbook --syntax-check` (ansible-core) in a sandbox: YAML errors, unknown play or task keywords, missing roles or included files, with the line. Never contacts a host (inventory is `localhost,`), no network.";
    const CATEGORY: Category = Category::Devops;
    const EFFECT: Effect = Effect::Read;
    const AGENT_ONLY: bool = false;
    const NEEDS_WORKSPACE: bool = true;

    fn paths(args: &Args) -> Paths {
        Paths::read_all(args.paths.iter().cloned())
    }

    async fn call(host: &DevOps, args: Args, cx: CallContext) -> CallToolResult {
        outcome(check(host, args, &cx).await)
    }
}

async fn check(host: &DevOps, args: Args, cx: &CallContext) -> Result<CallToolResult, String> {
    let files = super::workspace_files(host, &args.paths, false).await?;
    let run = run(host, SCRIPT, files.clone(), None, cx).await?;
    let mut findings = Vec::new();
    let mut seen = 0;
    for block in run.stdout.split("@@file ").skip(1) {
        let Some((file, rest)) = block.split_once('\n') else {
            continue;
        };
        let Some((output, exit)) = rest.rsplit_once("@@exit ") else {
            continue;
        };
        seen += 1;
        if exit.trim() != "0" {
            findings.push(parse(file, output));
        }
    }
    if run.exit != 0 || seen != files.len() {
        return Ok(tool_failure("ansible-playbook", &run));
    }
    Ok(report(&run.version, &files, findings, &[]))
}

/// The finding of one failed syntax check: the `ERROR!` line(s) and, when Ansible says where,
/// "The error appears to be in '<file>': line N, column M".
fn parse(file: &str, output: &str) -> Finding {
    let mut message = String::new();
    let mut place = (file.to_owned(), 0, 0);
    let mut in_error = false;
    for line in output.lines() {
        if let Some(rest) = line.strip_prefix("ERROR! ") {
            message = rest.trim().to_owned();
            in_error = true;
        } else if let Some(rest) = line.trim().strip_prefix("The error appears to be in '") {
            in_error = false;
            if let Some((path, tail)) = rest.split_once("': line ") {
                let mut nums = tail.split(", column ");
                let line_no = nums.next().and_then(|n| n.trim().parse().ok()).unwrap_or(0);
                let col = nums
                    .next()
                    .and_then(|c| c.split(|ch: char| !ch.is_ascii_digit()).next())
                    .and_then(|c| c.parse().ok())
                    .unwrap_or(0);
                place = (relative(path), line_no, col);
            }
        } else if in_error && !line.trim().is_empty() && message.len() < 400 {
            message.push(' ');
            message.push_str(line.trim());
        } else if in_error {
            in_error = false;
        }
    }
    if message.is_empty() {
        message = output
            .lines()
            .rev()
            .find(|l| !l.trim().is_empty())
            .unwrap_or("the syntax check failed")
            .trim()
            .to_owned();
    }
    Finding {
        file: place.0,
        line: place.1,
        col: place.2,
        severity: Severity::Error,
        code: "syntax-check".into(),
        message,
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use super::*;

    #[test]
    fn the_error_and_its_place_are_read() {
        let out = "ERROR! 'hsots' is not a valid attribute for a Play\n\nThe error appears to be in '/workspace/site.yml': line 2, column 3, but may\nbe elsewhere in the file depending on the exact syntax problem.\n";
        let f = parse("site.yml", out);
        assert_eq!((f.file.as_str(), f.line, f.col), ("site.yml", 2, 3));
        assert_eq!(f.message, "'hsots' is not a valid attribute for a Play");
    }
}
