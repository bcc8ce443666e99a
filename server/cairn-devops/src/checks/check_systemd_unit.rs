//! `check_systemd_unit`: systemd unit files checked by `systemd-analyze verify` in a sandbox,
//! with a suggestion for each unknown key from the keys systemd itself lists.

use cairn_toolkit::{CallContext, Category, Effect, JsonSchema, Paths, Tool};
use rmcp::model::CallToolResult;
use serde::Deserialize;

use super::{Finding, Severity, outcome, relative, report, run, tool_failure};
use crate::DevOps;

/// The `check_systemd_unit` tool.
pub struct CheckSystemdUnit;

/// Arguments of `check_systemd_unit`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// Unit files (`*.service`, `*.timer`, `*.socket`, `*.mount`, ...), relative to the
    /// workspace root.
    paths: Vec<String>,
}

/// `verify` in the user manager's mode: the system mode needs a writable `/run`, which a
/// sandbox has not; the unit file parser is the same. Then the configuration items systemd
/// knows, for the suggestions.
const SCRIPT: &str = "export XDG_RUNTIME_DIR=/tmp/run HOME=/tmp; mkdir -p /tmp/run; printf '@@version %s\\n' \"$(systemd-analyze --version 2>&1 | head -n 1)\"; systemd-analyze --user verify --man=no -- \"$@\" 2>&1; echo \"@@exit $?\"; echo '@@items'; /lib/systemd/systemd --dump-configuration-items 2>/dev/null";

impl Tool for CheckSystemdUnit {
    type Host = DevOps;
    type Args = Args;
    const NAME: &'static str = "check_systemd_unit";
    const TITLE: &'static str = "Check systemd units";
    const DESCRIPTION: &'static str = "Check systemd unit files with `systemd-analyze verify` in a sandbox: unknown sections and keys (with a suggested spelling), bad values, missing dependencies, non-absolute or missing ExecStart programs (looked up in the sandbox, not on the target machine). Read-only, no network.";
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
    let argv = files.iter().map(|f| format!("./{f}")).collect();
    let run = run(host, SCRIPT, argv, None, cx).await?;
    let Some((output, rest)) = run.stdout.split_once("@@exit ") else {
        return Ok(tool_failure("systemd-analyze", &run));
    };
    let (status, items) = rest.split_once("@@items").unwrap_or((rest, ""));
    let known = known_items(items);
    let findings: Vec<Finding> = output
        .lines()
        .filter_map(|l| parse(l, &files, &known))
        .collect();
    if status.trim() != "0" && findings.is_empty() {
        return Ok(tool_failure("systemd-analyze", &run));
    }
    Ok(report(&run.version, &files, findings, &[]))
}

/// `(section, key)` for each item of `systemd --dump-configuration-items`.
fn known_items(dump: &str) -> Vec<(String, String)> {
    let mut section = String::new();
    let mut out = Vec::new();
    for line in dump.lines() {
        if let Some(s) = line.strip_prefix('[').and_then(|l| l.strip_suffix(']')) {
            section = s.to_owned();
        } else if let Some((key, _)) = line.split_once('=')
            && !key.is_empty()
            && key.bytes().all(|b| b.is_ascii_alphanumeric())
        {
            out.push((section.clone(), key.to_owned()));
        }
    }
    out
}

/// One line of `systemd-analyze verify`: `file:line: message` or `unit: message`.
fn parse(line: &str, files: &[String], known: &[(String, String)]) -> Option<Finding> {
    let line = line.trim();
    if line.is_empty() {
        return None;
    }
    let (place, message) = line.split_once(": ")?;
    let (file, line_no) = match place.rsplit_once(':') {
        Some((f, n)) if n.bytes().all(|b| b.is_ascii_digit()) && !n.is_empty() => {
            (relative(f), n.parse().unwrap_or(0))
        }
        // A unit name: the checked file with that name.
        _ => (
            files
                .iter()
                .find(|f| f.rsplit('/').next() == Some(place))
                .cloned()
                .unwrap_or_else(|| relative(place)),
            0,
        ),
    };
    let mut message = message.to_owned();
    let mut severity = Severity::Error;
    let mut code = "verify".to_owned();
    if let Some(rest) = message.strip_prefix("Unknown key '") {
        code = "unknown-key".into();
        severity = Severity::Warning;
        if let Some((key, tail)) = rest.split_once("' in section [")
            && let Some((section, _)) = tail.split_once(']')
            && let Some(better) = suggest(key, section, known)
        {
            message = format!("{message} Did you mean {better}?");
        }
    } else if message.starts_with("Unknown section") {
        code = "unknown-section".into();
        severity = Severity::Warning;
    } else if message.contains("is not executable") {
        code = "exec-missing".into();
        severity = Severity::Info;
        message.push_str(" (looked up in the checking sandbox, not on the target machine)");
    } else if message.contains("ignoring") {
        code = "bad-value".into();
        severity = Severity::Warning;
    }
    Some(Finding {
        file,
        line: line_no,
        col: 0,
        severity,
        code,
        message,
    })
}

/// The known key of `section` closest to `key` (case or at most two edits away).
fn suggest(key: &str, section: &str, known: &[(String, String)]) -> Option<String> {
    known
        .iter()
        .filter(|(s, _)| s == section)
        .map(|(_, k)| {
            let d = if k.eq_ignore_ascii_case(key) {
                0
            } else {
                distance(&k.to_ascii_lowercase(), &key.to_ascii_lowercase())
            };
            (d, k)
        })
        .filter(|(d, _)| *d <= 2)
        .min()
        .map(|(_, k)| k.clone())
}

/// Levenshtein distance, with an adjacent swap counted as one edit (`ExecStrat`).
fn distance(a: &str, b: &str) -> usize {
    let (a, b): (Vec<char>, Vec<char>) = (a.chars().collect(), b.chars().collect());
    let mut d = vec![vec![0usize; b.len() + 1]; a.len() + 1];
    for (i, row) in d.iter_mut().enumerate() {
        row[0] = i;
    }
    for (j, cell) in d[0].iter_mut().enumerate() {
        *cell = j;
    }
    for i in 1..=a.len() {
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut v = (d[i - 1][j] + 1)
                .min(d[i][j - 1] + 1)
                .min(d[i - 1][j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                v = v.min(d[i - 2][j - 2] + 1);
            }
            d[i][j] = v;
        }
    }
    d[a.len()][b.len()]
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use super::*;

    #[test]
    fn lines_are_read_and_typos_suggested() {
        let known =
            known_items("[Unit]\nDescription=STRING\n[Service]\nExecStart=PATH\nRestart=X\n");
        let files = vec!["units/app.service".to_owned()];
        let f = parse(
            "/workspace/units/app.service:4: Unknown key 'ExecStrat' in section [Service], ignoring.",
            &files,
            &known,
        )
        .unwrap();
        assert_eq!((f.file.as_str(), f.line), ("units/app.service", 4));
        assert!(
            f.message.ends_with("Did you mean ExecStart?"),
            "{}",
            f.message
        );
        let g = parse(
            "app.service: Command /usr/bin/x is not executable: No such file or directory",
            &files,
            &known,
        )
        .unwrap();
        assert_eq!(
            (g.file.as_str(), g.severity),
            ("units/app.service", Severity::Info)
        );
    }
}
