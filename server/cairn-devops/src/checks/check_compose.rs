//! `check_compose`: a Compose file validated against the Compose specification's schema
//! (check-jsonschema's vendored copy, in a sandbox), and its variables checked against `.env`.
//!
//! `.env` holds secrets and is a protected path. It is read only when the call asks
//! (`env_file`), which declares it so that the agent asks the user first; then only the
//! variable NAMES are kept (values are dropped as each line is read), and malformed lines are
//! reported by line number alone. Nothing of `.env` reaches the linter's container, where it
//! is masked like every protected file.

use std::collections::{BTreeMap, BTreeSet};

use cairn_toolkit::{CallContext, Category, Effect, JsonSchema, Paths, Tool};
use rmcp::model::CallToolResult;
use serde::Deserialize;
use serde_json::Value;

use super::{Finding, Severity, outcome, report, run, string, tool_failure};
use crate::DevOps;

/// The `check_compose` tool.
pub struct CheckCompose;

/// Arguments of `check_compose`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// The Compose file (`compose.yaml`, `docker-compose.yml`), relative to the workspace root.
    path: String,
    /// Also read the variable names (never the values) of the `.env` beside it, and check it
    /// for malformed lines and duplicate keys; the user is asked first, as `.env` is protected.
    #[serde(default)]
    env_file: bool,
}

impl Tool for CheckCompose {
    type Host = DevOps;
    type Args = Args;
    const NAME: &'static str = "check_compose";
    const TITLE: &'static str = "Check a Compose file";
    const DESCRIPTION: &'static str = "Validate a Docker Compose file against the Compose specification's schema in a sandbox, and its ${VARIABLES}: used but defined nowhere; with env_file, also against the names in .env (malformed lines, duplicate keys). Values of .env are never read out or shown.";
    const CATEGORY: Category = Category::Devops;
    const EFFECT: Effect = Effect::Read;
    const AGENT_ONLY: bool = false;
    const NEEDS_WORKSPACE: bool = true;

    fn paths(args: &Args) -> Paths {
        let p = Paths::read(args.path.clone());
        if args.env_file {
            p.and_read(env_path(&args.path))
        } else {
            p
        }
    }

    async fn call(host: &DevOps, args: Args, cx: CallContext) -> CallToolResult {
        outcome(check(host, args, &cx).await)
    }
}

/// The `.env` beside a Compose file, as Compose finds it.
fn env_path(compose: &str) -> String {
    match compose.rsplit_once('/') {
        Some((dir, _)) => format!("{dir}/.env"),
        None => ".env".to_owned(),
    }
}

async fn check(host: &DevOps, args: Args, cx: &CallContext) -> Result<CallToolResult, String> {
    let files = super::workspace_files(host, std::slice::from_ref(&args.path), false).await?;
    let ws = host
        .workspace
        .clone()
        .ok_or("no workspace folder is open")?;
    let compose = files[0].clone();
    let env = env_path(&compose);
    let (compose_text, env_read) = {
        let (compose, env, want_env) = (compose.clone(), env.clone(), args.env_file);
        cairn_workspace::off_thread(&ws, move |ws| -> Result<_, String> {
            let path = ws.resolve(&compose).map_err(|e| e.to_string())?;
            let (text, _) = ws.read_text(&path).map_err(|e| e.to_string())?;
            if !want_env {
                return Ok((text, None));
            }
            let env_path = ws.resolve(&env).map_err(|e| e.to_string())?;
            match ws.read_text(&env_path) {
                // Names only: the text is dropped here, inside this closure.
                Ok((env_text, _)) => Ok((text, Some(Ok(env_names(&env_text))))),
                Err(cairn_workspace::ScopeError::NotFound { .. }) => Ok((text, Some(Err(())))),
                Err(e) => Err(format!("{env}: {e}")),
            }
        })
        .await??
    };

    let args = super::schema_args("vendor.compose-spec", std::slice::from_ref(&compose));
    let run = run(host, super::SCHEMA_SCRIPT, args, None, cx).await?;
    let Some(json) = serde_json::from_str::<Value>(&run.stdout).ok() else {
        return Ok(tool_failure("check-jsonschema", &run));
    };
    let mut findings = Vec::new();
    for e in json["parse_errors"].as_array().into_iter().flatten() {
        findings.push(Finding {
            file: compose.clone(),
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

    let mut notes = Vec::new();
    let defined: BTreeSet<String> = match &env_read {
        Some(Ok(names)) => {
            for line in &names.malformed {
                findings.push(Finding {
                    file: env.clone(),
                    line: *line,
                    col: 1,
                    severity: Severity::Error,
                    code: "env-malformed".into(),
                    message:
                        "the line is not NAME=value (its content is not shown: .env holds secrets)"
                            .into(),
                });
            }
            for (name, lines) in &names.duplicates {
                findings.push(Finding {
                    file: env.clone(),
                    line: lines.last().copied().unwrap_or(0),
                    col: 1,
                    severity: Severity::Warning,
                    code: "env-duplicate".into(),
                    message: format!(
                        "{name} is set more than once (lines {}); the last one wins",
                        lines
                            .iter()
                            .map(u64::to_string)
                            .collect::<Vec<_>>()
                            .join(", ")
                    ),
                });
            }
            names.names.clone()
        }
        Some(Err(())) => {
            notes.push(format!("note: there is no {env}"));
            BTreeSet::new()
        }
        None => BTreeSet::new(),
    };
    for used in variables(&compose_text) {
        if defined.contains(&used.name) || used.has_default {
            continue;
        }
        findings.push(Finding {
            file: compose.clone(),
            line: used.line,
            col: used.col,
            severity: if used.required {
                Severity::Error
            } else {
                Severity::Warning
            },
            code: "undefined-variable".into(),
            message: format!(
                "${{{}}} is not defined{}; Compose {}",
                used.name,
                if env_read.is_some() { " in .env" } else { "" },
                if used.required {
                    "stops with an error unless the shell sets it"
                } else {
                    "substitutes an empty string unless the shell sets it"
                }
            ),
        });
    }
    if env_read.is_none() && findings.iter().any(|f| f.code == "undefined-variable") {
        notes.push(
            "note: .env was not read; pass env_file: true to count its variables (the user is asked, and only names are read)".into(),
        );
    }
    let mut checked = files;
    if matches!(env_read, Some(Ok(_))) {
        checked.push(env);
    }
    let version = format!("{} with the Compose specification schema", run.version);
    Ok(report(&version, &checked, findings, &notes))
}

/// What `.env` tells, without its values.
#[derive(Debug, Default, PartialEq)]
struct EnvNames {
    names: BTreeSet<String>,
    /// Line numbers of lines that are not `NAME=value`.
    malformed: Vec<u64>,
    /// Names set more than once, with every line.
    duplicates: BTreeMap<String, Vec<u64>>,
}

/// The names `.env` defines, as Compose reads it: `NAME=value`, optionally after `export `,
/// blank lines and `#` comments skipped, quoted values possibly over several lines.
fn env_names(text: &str) -> EnvNames {
    let mut out = EnvNames::default();
    let mut lines_of: BTreeMap<String, Vec<u64>> = BTreeMap::new();
    let mut open_quote: Option<char> = None;
    for (i, raw) in text.lines().enumerate() {
        let n = i as u64 + 1;
        if let Some(q) = open_quote {
            if closes(raw, q) {
                open_quote = None;
            }
            continue;
        }
        let line = raw.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let line = line.strip_prefix("export ").unwrap_or(line).trim_start();
        let Some((name, value)) = line.split_once('=') else {
            out.malformed.push(n);
            continue;
        };
        let name = name.trim_end();
        let valid = name
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
            && name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-'));
        if !valid {
            out.malformed.push(n);
            continue;
        }
        let value = value.trim_start();
        if let Some(q) = value.chars().next().filter(|c| *c == '"' || *c == '\'')
            && !closes(&value[1..], q)
        {
            open_quote = Some(q);
        }
        out.names.insert(name.to_owned());
        lines_of.entry(name.to_owned()).or_default().push(n);
    }
    out.duplicates = lines_of.into_iter().filter(|(_, l)| l.len() > 1).collect();
    out
}

/// Whether `s` holds the closing `quote` (not backslash-escaped).
fn closes(s: &str, quote: char) -> bool {
    let mut escaped = false;
    for c in s.chars() {
        if escaped {
            escaped = false;
        } else if c == '\\' {
            escaped = true;
        } else if c == quote {
            return true;
        }
    }
    false
}

/// One use of a variable in a Compose file.
#[derive(Debug, PartialEq)]
struct Use {
    name: String,
    line: u64,
    col: u64,
    /// `${X:-d}` or `${X-d}`: a default applies when it is not set.
    has_default: bool,
    /// `${X:?msg}` or `${X?msg}`: Compose stops when it is not set.
    required: bool,
}

/// The variables a Compose file interpolates (`$X`, `${X}`, `${X:-d}`, `${X:?e}`), each name
/// once (its first use), `$$` escapes and comment lines skipped.
fn variables(text: &str) -> Vec<Use> {
    let mut out: Vec<Use> = Vec::new();
    let is_name_start = |c: u8| c.is_ascii_alphabetic() || c == b'_';
    let is_name = |c: u8| c.is_ascii_alphanumeric() || c == b'_';
    for (i, line) in text.lines().enumerate() {
        if line.trim_start().starts_with('#') {
            continue;
        }
        let b = line.as_bytes();
        let mut j = 0;
        while j < b.len() {
            if b[j] != b'$' {
                j += 1;
                continue;
            }
            let col = j as u64 + 1;
            match b.get(j + 1) {
                Some(b'$') => j += 2,
                Some(b'{') => {
                    let start = j + 2;
                    let mut k = start;
                    while k < b.len() && is_name(b[k]) {
                        k += 1;
                    }
                    if k > start && is_name_start(b[start]) {
                        let rest = &line[k..];
                        let has_default = rest.starts_with(":-") || rest.starts_with('-');
                        let required = rest.starts_with(":?") || rest.starts_with('?');
                        push(&mut out, &line[start..k], i, col, has_default, required);
                    }
                    j = k.max(j + 1);
                }
                Some(&c) if is_name_start(c) => {
                    let start = j + 1;
                    let mut k = start;
                    while k < b.len() && is_name(b[k]) {
                        k += 1;
                    }
                    push(&mut out, &line[start..k], i, col, false, false);
                    j = k;
                }
                _ => j += 1,
            }
        }
    }
    out
}

fn push(out: &mut Vec<Use>, name: &str, line: usize, col: u64, has_default: bool, required: bool) {
    match out.iter_mut().find(|u| u.name == name) {
        // A name with a default in one place may lack it in another: the strictest use counts.
        Some(u) => {
            u.has_default &= has_default;
            u.required |= required;
        }
        None => out.push(Use {
            name: name.to_owned(),
            line: line as u64 + 1,
            col,
            has_default,
            required,
        }),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use super::*;

    #[test]
    fn variables_are_found_with_their_forms() {
        let text = "services:\n  web:\n    image: \"app:${TAG:-latest}\"\n    # ${COMMENTED}\n    command: echo $$HOME $USER ${DB_PASSWORD:?set it}\n";
        let v = variables(text);
        let names: Vec<_> = v.iter().map(|u| u.name.as_str()).collect();
        assert_eq!(names, ["TAG", "USER", "DB_PASSWORD"]);
        assert!(v[0].has_default && !v[0].required);
        assert_eq!((v[1].line, v[1].col), (5, 26));
        assert!(v[2].required);
    }

    #[test]
    fn env_names_keep_no_values_and_see_malformed_and_duplicate_lines() {
        let text = "# comment\nA=1\nexport B=\"two\nlines\"\nnot a line\nA=3\n1BAD=x\n";
        let e = env_names(text);
        assert_eq!(e.names.iter().cloned().collect::<Vec<_>>(), ["A", "B"]);
        assert_eq!(e.malformed, [5, 7]);
        assert_eq!(e.duplicates.get("A"), Some(&vec![2, 6]));
    }
}
