//! Checks of the files DevOps lives in, each by the real linter in a sandbox container (the
//! sandbox limits, the workspace read-only with its protected files masked, no network).
//!
//! Every tool here runs one fixed script of ours in a fresh container of the devops image
//! (`[sandbox] images.devops`, default [`DEFAULT_IMAGE`], built by `scripts/sandbox-images`);
//! the model's paths reach it only as arguments after `--`-style positional parameters, never
//! as script text. The script prints the linter's version first, then its machine output, which
//! the tool parses into one uniform list of [`Finding`]s.

pub(crate) mod check_ansible;
pub(crate) mod check_ci_workflow;
pub(crate) mod check_compose;
pub(crate) mod check_kubernetes;
pub(crate) mod check_systemd_unit;
pub(crate) mod check_terraform;
pub(crate) mod lint_dockerfile;
pub(crate) mod lint_shell;
pub(crate) mod lint_yaml;

use cairn_sandbox::engine::WORKSPACE_DIR;
use cairn_sandbox::{Ending, RunOptions};
use cairn_toolkit::CallContext;
use cairn_toolkit::reply::{error, text};
use cairn_workspace::EntryKind;
use rmcp::model::CallToolResult;

use crate::DevOps;

/// The image the checks run in when `[sandbox] images.devops` is not set.
pub const DEFAULT_IMAGE: &str = "cairn-test/devops:1";
/// Most findings listed; the rest are counted.
const MAX_FINDINGS: usize = 200;
/// Most files one call checks.
const MAX_FILES: usize = 100;
/// Longest message shown for one finding, in characters.
const MAX_MESSAGE: usize = 400;
/// Marks the version line the scripts print before the linter's output.
const VERSION_MARK: &str = "@@version ";

/// How bad a finding is, on one scale for every linter.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Severity {
    Error,
    Warning,
    Info,
    Style,
}

impl Severity {
    fn word(self) -> &'static str {
        match self {
            Severity::Error => "error",
            Severity::Warning => "warning",
            Severity::Info => "info",
            Severity::Style => "style",
        }
    }

    /// A linter's level word on this scale (unknown words are warnings).
    pub(crate) fn parse(level: &str) -> Severity {
        match level.to_ascii_lowercase().as_str() {
            "error" | "err" | "fatal" | "critical" => Severity::Error,
            "info" | "note" | "information" => Severity::Info,
            "style" | "ignore" => Severity::Style,
            _ => Severity::Warning,
        }
    }
}

/// One problem a linter reported.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Finding {
    /// Workspace-relative path.
    pub file: String,
    /// 1-based; 0 when the linter gives no position.
    pub line: u64,
    pub col: u64,
    pub severity: Severity,
    /// The linter's rule (`SC2086`, `DL3007`, `key-duplicates`), or a kind when it has none.
    pub code: String,
    pub message: String,
}

impl Finding {
    fn line_text(&self) -> String {
        let mut message: String = self
            .message
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ");
        if message.chars().count() > MAX_MESSAGE {
            message = message.chars().take(MAX_MESSAGE).collect::<String>() + "…";
        }
        format!(
            "{}:{}:{} {} {} {}",
            self.file,
            self.line,
            self.col,
            self.severity.word(),
            if self.code.is_empty() {
                "-"
            } else {
                &self.code
            },
            message
        )
    }
}

/// The paths a call names, checked to be inside the workspace's first root (the one mounted)
/// and to be files (or directories where `dirs` allows), as the container sees them: relative
/// to its working directory, the workspace.
pub(crate) async fn workspace_files(
    host: &DevOps,
    requested: &[String],
    dirs: bool,
) -> Result<Vec<String>, String> {
    let ws = host
        .workspace
        .as_ref()
        .ok_or("no workspace folder is open, so there is no file to check")?;
    if requested.is_empty() {
        return Err("name at least one file to check (`paths`)".into());
    }
    if requested.len() > MAX_FILES {
        return Err(format!(
            "{} paths asked; one call checks at most {MAX_FILES}: split the call",
            requested.len()
        ));
    }
    let requested = requested.to_vec();
    cairn_workspace::off_thread(ws, move |ws| {
        let root = ws.resolve(".").map_err(|e| e.to_string())?;
        let mut out = Vec::new();
        for asked in &requested {
            let path = ws.resolve(asked).map_err(|e| e.to_string())?;
            if path.root() != root.as_path() {
                return Err(format!(
                    "{asked} is in another workspace folder than the first one ({}); only the \
                     first is mounted for the checks",
                    root.as_path().display()
                ));
            }
            let stat = ws.stat(&path).map_err(|e| format!("{asked}: {e}"))?;
            match stat.kind {
                EntryKind::File => {}
                EntryKind::Dir if dirs => {}
                EntryKind::Dir => {
                    return Err(format!("{asked} is a directory; name the files to check"));
                }
                _ => return Err(format!("{asked} is not a regular file")),
            }
            let rel = path.relative().display().to_string();
            out.push(if rel.is_empty() { ".".to_owned() } else { rel });
        }
        Ok(out)
    })
    .await?
}

/// What one run of a check script gave.
#[derive(Debug)]
pub(crate) struct Run {
    /// The linter and its version, as the script printed it.
    pub version: String,
    pub exit: i64,
    pub stdout: String,
    pub stderr: String,
}

/// Runs `script` (ours, fixed) with `args` as its positional parameters in a fresh container
/// of the devops image, the workspace mounted read-only at its working directory.
pub(crate) async fn run(
    host: &DevOps,
    script: &str,
    args: Vec<String>,
    stdin: Option<Vec<u8>>,
    cx: &CallContext,
) -> Result<Run, String> {
    let ws = host
        .workspace
        .as_ref()
        .ok_or("no workspace folder is open, so there is no file to check")?;
    let image = host
        .sandbox
        .config()
        .images
        .get("devops")
        .cloned()
        .unwrap_or_else(|| DEFAULT_IMAGE.to_owned());
    let engine = host.sandbox.engine().await.map_err(|e| e.to_string())?;
    engine.check_image("devops", &image).await.map_err(|e| {
        format!(
            "{e}; the checks need the linters' image: build it with `scripts/sandbox-images` \
             or name one in `[sandbox] images.devops`"
        )
    })?;
    let mount = host.sandbox.workspace_mount(ws, false).await?;
    let mut argv = vec![
        "sh".to_owned(),
        "-c".to_owned(),
        script.to_owned(),
        "check".to_owned(),
    ];
    argv.extend(args);
    let options = RunOptions {
        network: false,
        workspace: Some(mount),
        working_dir: Some(WORKSPACE_DIR.to_owned()),
    };
    let report = host
        .sandbox
        .run_program(&image, argv, stdin, options, &cx.cancel)
        .await
        .map_err(|e| e.to_string())?;
    let limits = host.sandbox.limits();
    let exit = match report.ending {
        Ending::Exited(code) => code,
        Ending::Timeout => {
            return Err(format!(
                "the check was stopped at the {} s time limit (sandbox.timeout_secs) without a \
                 result; check fewer or smaller files",
                limits.timeout.as_secs()
            ));
        }
        Ending::OutOfMemory => {
            return Err(format!(
                "the check used more than the {} MiB memory limit (sandbox.memory_mib) and was \
                 stopped; a file may expand hugely (YAML anchors) — check it alone or fix it",
                limits.memory_bytes / (1024 * 1024)
            ));
        }
        Ending::ProcessLimit => {
            return Err("the check reached the sandbox's process limit and was stopped".into());
        }
        Ending::Cancelled => return Err("cancelled by the user".into()),
    };
    if report.truncated {
        return Err(format!(
            "the linter's output passed the {} bytes limit (sandbox.output_max_bytes); check \
             fewer files at a time",
            limits.output_max_bytes
        ));
    }
    let (version, stdout) = match report.stdout.strip_prefix(VERSION_MARK) {
        Some(rest) => match rest.split_once('\n') {
            Some((v, out)) => (v.trim().to_owned(), out.to_owned()),
            None => (rest.trim().to_owned(), String::new()),
        },
        None => ("unknown version".to_owned(), report.stdout.clone()),
    };
    Ok(Run {
        version,
        exit,
        stdout,
        stderr: report.stderr,
    })
}

/// The linter failed itself (not a finding): its exit and what it said.
pub(crate) fn tool_failure(what: &str, run: &Run) -> CallToolResult {
    let said = cairn_toolkit::table::cut(
        if run.stderr.trim().is_empty() {
            run.stdout.trim()
        } else {
            run.stderr.trim()
        },
        2000,
    );
    error(format!(
        "{what} ({}) failed with exit code {} without a usable result:\n{said}",
        run.version, run.exit
    ))
}

/// The uniform answer: one line per finding (`file:line:col severity code message`, errors
/// first), capped, then the summary line.
pub(crate) fn report(
    version: &str,
    checked: &[String],
    mut findings: Vec<Finding>,
    notes: &[String],
) -> CallToolResult {
    findings.sort_by(|a, b| {
        (a.severity, &a.file, a.line, a.col).cmp(&(b.severity, &b.file, b.line, b.col))
    });
    findings.dedup();
    let count = |s: Severity| findings.iter().filter(|f| f.severity == s).count();
    let (errors, warnings) = (count(Severity::Error), count(Severity::Warning));
    let others = findings.len() - errors - warnings;
    let mut out = String::new();
    for f in findings.iter().take(MAX_FINDINGS) {
        out.push_str(&f.line_text());
        out.push('\n');
    }
    if findings.len() > MAX_FINDINGS {
        out.push_str(&format!(
            "… {} more findings not shown (at most {MAX_FINDINGS}); check fewer files to see them\n",
            findings.len() - MAX_FINDINGS
        ));
    }
    for note in notes {
        out.push_str(note);
        out.push('\n');
    }
    let files = if checked.len() == 1 {
        checked[0].clone()
    } else {
        format!("{} files", checked.len())
    };
    let plural = |n: usize, word: &str| format!("{n} {word}{}", if n == 1 { "" } else { "s" });
    out.push_str(&format!(
        "{}, {}{} in {files} ({version})",
        plural(errors, "error"),
        plural(warnings, "warning"),
        if others > 0 {
            format!(", {}", plural(others, "note"))
        } else {
            String::new()
        },
    ));
    text(out)
}

/// A container path as the model knows it: relative to the workspace.
pub(crate) fn relative(path: &str) -> String {
    let p = path.strip_prefix("./").unwrap_or(path);
    match p.strip_prefix(WORKSPACE_DIR) {
        Some(rest) => rest.trim_start_matches('/').to_owned(),
        None => p.to_owned(),
    }
}

/// A JSON number as a line or column (0 when missing).
pub(crate) fn num(v: &serde_json::Value) -> u64 {
    v.as_u64().unwrap_or(0)
}

/// A JSON string field, or empty.
pub(crate) fn string(v: &serde_json::Value) -> String {
    v.as_str().unwrap_or_default().to_owned()
}

/// The driver that adds lines and columns to check-jsonschema's report (Python, in the image).
pub(crate) const SCHEMA_LINES: &str = include_str!("schema_lines.py");

/// The script that runs check-jsonschema with a built-in schema and passes its report through
/// [`SCHEMA_LINES`]; its arguments: that driver, the schema's name, then the files.
pub(crate) const SCHEMA_SCRIPT: &str = "export HOME=/tmp XDG_CACHE_HOME=/tmp; d=$1; schema=$2; shift 2; printf '@@version %s\\n' \"$(check-jsonschema --version 2>&1 | head -n 1)\"; check-jsonschema --builtin-schema \"$schema\" --output-format json -- \"$@\" >/tmp/report.json; rc=$?; python3 -c \"$d\" /tmp/report.json; exit $rc";

/// A schema error of check-jsonschema's report as a finding.
pub(crate) fn schema_finding(e: &serde_json::Value) -> Finding {
    Finding {
        file: relative(&string(&e["filename"])),
        line: num(&e["line"]),
        col: num(&e["col"]),
        severity: Severity::Error,
        code: "schema".into(),
        message: schema_message(e),
    }
}

/// A check-jsonschema error as one message: where, what, and its deepest best match.
pub(crate) fn schema_message(e: &serde_json::Value) -> String {
    let mut m = format!("at {}: {}", string(&e["path"]), string(&e["message"]));
    let best = &e["best_deep_match"];
    if best.is_object() && best["message"] != e["message"] {
        m.push_str(&format!(
            " (closest: at {}: {})",
            string(&best["path"]),
            string(&best["message"])
        ));
    }
    m
}

/// The arguments of [`SCHEMA_SCRIPT`] for `schema` over `files`.
pub(crate) fn schema_args(schema: &str, files: &[String]) -> Vec<String> {
    let mut args = vec![SCHEMA_LINES.to_owned(), schema.to_owned()];
    args.extend(files.iter().cloned());
    args
}

/// The tool's outcome: the result, or the message of what stopped it as an error.
pub(crate) fn outcome(result: Result<CallToolResult, String>) -> CallToolResult {
    result.unwrap_or_else(error)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use super::*;

    fn f(file: &str, line: u64, severity: Severity) -> Finding {
        Finding {
            file: file.into(),
            line,
            col: 1,
            severity,
            code: "X1".into(),
            message: "a  message\nover lines".into(),
        }
    }

    fn body(r: &CallToolResult) -> String {
        r.content
            .iter()
            .filter_map(|c| c.as_text().map(|t| t.text.clone()))
            .collect()
    }

    #[test]
    fn the_report_lists_errors_first_one_line_each_then_the_summary() {
        let r = report(
            "lint 1.0",
            &["a".into(), "b".into()],
            vec![
                f("b", 2, Severity::Warning),
                f("a", 9, Severity::Error),
                f("a", 1, Severity::Style),
            ],
            &[],
        );
        assert_eq!(
            body(&r),
            "a:9:1 error X1 a message over lines\nb:2:1 warning X1 a message over lines\na:1:1 style X1 a message over lines\n1 error, 1 warning, 1 note in 2 files (lint 1.0)"
        );
    }

    #[test]
    fn the_report_is_capped_and_says_so() {
        let many: Vec<Finding> = (0..MAX_FINDINGS as u64 + 5)
            .map(|i| f("a", i, Severity::Warning))
            .collect();
        let text = body(&report("v", &["a".into()], many, &[]));
        assert_eq!(text.lines().count(), MAX_FINDINGS + 2);
        assert!(text.contains("… 5 more findings not shown"), "{text}");
        assert!(text.ends_with("0 errors, 205 warnings in a (v)"), "{text}");
    }

    #[test]
    fn container_paths_become_workspace_paths() {
        assert_eq!(relative("/workspace/a/b.sh"), "a/b.sh");
        assert_eq!(relative("./a.sh"), "a.sh");
        assert_eq!(relative("a.sh"), "a.sh");
    }
}

#[cfg(test)]
mod schema_tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    /// What the catalog test asks of every tool, here for the checks alone (it needs no binary):
    /// no unknown fields, a description on every field, enums as plain strings.
    #[test]
    fn every_check_has_a_closed_schema_with_described_fields() {
        let checks: Vec<_> = crate::DEVOPS_TOOLS
            .iter()
            .map(|e| e.info())
            .filter(|i| i.tool.name.starts_with("lint_") || i.tool.name.starts_with("check_"))
            .collect();
        assert_eq!(checks.len(), 9);
        for info in checks {
            let name = info.tool.name.to_string();
            let schema = serde_json::Value::Object((*info.tool.input_schema).clone());
            assert_eq!(schema["additionalProperties"], false, "{name}");
            for (field, p) in schema["properties"].as_object().unwrap() {
                assert!(
                    p["description"].as_str().is_some_and(|d| !d.is_empty()),
                    "{name}.{field} has no description: {schema:#}"
                );
            }
            assert!(
                info.tool.description.as_deref().unwrap_or("").len() > 20,
                "{name}"
            );
        }
    }
}
