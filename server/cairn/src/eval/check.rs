//! The checkers: whether a task's result (the files of its copy and the agent's answer) is what
//! the task asked for. Every checker of a task is run and every failure reported, so a failed
//! task says all that is wrong with it. Files are read only inside the copy (a symlink out of it
//! is a failure, not a read), and `command` runs the task's own code only in a sandbox, never on
//! this host.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use cairn_sandbox::{Ending, RunOptions, Sandbox};
use cairn_workspace::Workspace;
use tokio_util::sync::CancellationToken;

use super::task::{Check, Fact, Task, relative};

/// What one checker decided.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    Pass,
    Fail(String),
    /// Not run (a `command` without a sandbox, in the suite's own tests).
    Skipped(String),
}

/// One checker's verdict, with its kind.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Checked {
    pub kind: &'static str,
    pub verdict: Verdict,
}

/// Runs every checker of `task` over `copy` (the task's workspace after the run) and `answer`.
/// `check/` is laid into `copy` after the file checkers and before the commands, so the agent
/// never saw those files and the file checkers judge only what the agent left. `sandbox` runs
/// the commands; without one they are skipped.
pub async fn check_task(
    task: &Task,
    copy: &Path,
    answer: &str,
    sandbox: Option<&Arc<Sandbox>>,
    cancel: &CancellationToken,
) -> Vec<Checked> {
    let mut out = Vec::new();
    let original = task.workspace();
    for check in task.checks.iter().filter(|c| !is_command(c)) {
        out.push(Checked {
            kind: check.kind(),
            verdict: check_one(check, &task.dir, &original, copy, answer),
        });
    }
    let commands: Vec<&Check> = task.checks.iter().filter(|c| is_command(c)).collect();
    if commands.is_empty() {
        return out;
    }
    let hidden = task.dir.join("check");
    let laid = if hidden.is_dir() {
        copy_tree(&hidden, copy).map_err(|e| format!("cannot lay in check/: {e}"))
    } else {
        Ok(())
    };
    for check in commands {
        let Check::Command { argv, runtime } = check else {
            continue;
        };
        let verdict = match (&laid, sandbox) {
            (Err(e), _) => Verdict::Fail(e.clone()),
            (Ok(()), None) => Verdict::Skipped("no sandbox".into()),
            (Ok(()), Some(sandbox)) => run_command(sandbox, copy, runtime, argv, cancel).await,
        };
        out.push(Checked {
            kind: check.kind(),
            verdict,
        });
    }
    out
}

fn is_command(check: &Check) -> bool {
    matches!(check, Check::Command { .. })
}

fn check_one(
    check: &Check,
    task_dir: &Path,
    original: &Path,
    copy: &Path,
    answer: &str,
) -> Verdict {
    match check_inner(check, task_dir, original, copy, answer) {
        Ok(()) => Verdict::Pass,
        Err(why) => Verdict::Fail(why),
    }
}

fn check_inner(
    check: &Check,
    task_dir: &Path,
    original: &Path,
    copy: &Path,
    answer: &str,
) -> Result<(), String> {
    match check {
        Check::AnswerContains { facts } => {
            let missing: Vec<String> = facts
                .iter()
                .filter(|f| !answer_holds(answer, f))
                .map(Fact::describe)
                .collect();
            if missing.is_empty() {
                Ok(())
            } else {
                Err(format!("the answer lacks {}", missing.join(", ")))
            }
        }
        Check::AnswerMatches { pattern } => {
            let re = regex::Regex::new(pattern).map_err(|e| format!("bad pattern: {e}"))?;
            if re.is_match(answer) {
                Ok(())
            } else {
                Err(format!("the answer does not match /{pattern}/"))
            }
        }
        Check::FileContains { path, text } => {
            let content = read(copy, path)?;
            let missing: Vec<String> = text
                .iter()
                .filter(|f| {
                    !f.alternatives()
                        .iter()
                        .any(|a| content.contains(a.as_str()))
                })
                .map(Fact::describe)
                .collect();
            if missing.is_empty() {
                Ok(())
            } else {
                Err(format!("{path} lacks {}", missing.join(", ")))
            }
        }
        Check::FileLacks { path, text } => {
            let content = read(copy, path)?;
            let found: Vec<String> = text
                .iter()
                .filter(|t| content.contains(t.as_str()))
                .map(|t| format!("{t:?}"))
                .collect();
            if found.is_empty() {
                Ok(())
            } else {
                Err(format!("{path} still holds {}", found.join(", ")))
            }
        }
        Check::FileEquals {
            path,
            text,
            same_as,
        } => {
            let content = read(copy, path)?;
            let expected = match (text, same_as) {
                (Some(text), _) => text.clone(),
                (None, Some(other)) => read(task_dir, other)?,
                (None, None) => return Err("nothing to compare with".into()),
            };
            if normalize(&content) == normalize(&expected) {
                Ok(())
            } else {
                Err(format!("{path} differs from the expected text"))
            }
        }
        Check::FileAbsent { path } => match inside(copy, path)? {
            Some(p) if p.exists() => Err(format!("{path} still exists")),
            _ => Ok(()),
        },
        Check::FileExists { path } => match inside(copy, path)? {
            Some(p) if p.is_file() => Ok(()),
            _ => Err(format!("{path} does not exist")),
        },
        Check::Unchanged { paths } => {
            let mut changed = Vec::new();
            for path in paths {
                let rel = relative(path)?;
                if let Err(why) = same_tree(&original.join(rel), copy, rel) {
                    changed.push(why);
                }
            }
            if changed.is_empty() {
                Ok(())
            } else {
                Err(changed.join("; "))
            }
        }
        Check::Command { .. } => Err("a command is run by check_task".into()),
    }
}

/// Whether `fact` occurs in `answer`, ignoring case, and not as part of a longer word or number
/// (`42` is not in `1420` nor in `42.5`, `auth` not in `oauth`), so a fact cannot be matched by
/// accident; a number may touch letters (`v2.4.0` holds `2.4.0`, `8443/tcp` holds `8443`).
pub fn answer_holds(answer: &str, fact: &Fact) -> bool {
    let answer: Vec<char> = answer.to_lowercase().chars().collect();
    fact.alternatives().iter().any(|alt| {
        let needle: Vec<char> = alt.to_lowercase().chars().collect();
        if needle.is_empty() || needle.len() > answer.len() {
            return false;
        }
        (0..=answer.len() - needle.len()).any(|start| {
            let end = start + needle.len();
            answer[start..end] == needle[..]
                && !joined_before(&answer, start, needle[0])
                && !joined_after(&answer, end, needle[needle.len() - 1])
        })
    })
}

/// A character of a word or an identifier (`auth_sessions` is one word).
fn is_word(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// Whether the text before `start` continues the word or number that starts with `first`.
fn joined_before(text: &[char], start: usize, first: char) -> bool {
    if start == 0 || !is_word(first) {
        return false;
    }
    let prev = text[start - 1];
    // A number is continued only by digits (`v2.4.0` holds `2.4.0`); a word by word characters.
    if first.is_ascii_digit() {
        if prev.is_ascii_digit() {
            return true;
        }
    } else if is_word(prev) {
        return true;
    }
    // `1,234` and `3.5`: a separator between digits joins them into one number.
    first.is_ascii_digit()
        && matches!(prev, '.' | ',')
        && start >= 2
        && text[start - 2].is_ascii_digit()
}

/// Whether the text from `end` continues the word or number that ends with `last`.
fn joined_after(text: &[char], end: usize, last: char) -> bool {
    if end >= text.len() || !is_word(last) {
        return false;
    }
    let next = text[end];
    if last.is_ascii_digit() {
        if next.is_ascii_digit() {
            return true;
        }
    } else if is_word(next) {
        return true;
    }
    last.is_ascii_digit()
        && matches!(next, '.' | ',')
        && text.get(end + 1).is_some_and(char::is_ascii_digit)
}

/// Line ends and trailing newlines do not count in `file_equals`.
fn normalize(text: &str) -> String {
    text.replace("\r\n", "\n").trim_end_matches('\n').to_owned()
}

/// `path` under `root`, when it resolves inside `root`; `None` when it does not exist.
fn inside(root: &Path, path: &str) -> Result<Option<PathBuf>, String> {
    let joined = root.join(relative(path)?);
    if std::fs::symlink_metadata(&joined).is_err() {
        return Ok(None);
    }
    let real = std::fs::canonicalize(&joined).map_err(|e| format!("{path}: {e}"))?;
    let base = std::fs::canonicalize(root).map_err(|e| format!("{}: {e}", root.display()))?;
    if real.starts_with(&base) {
        Ok(Some(real))
    } else {
        Err(format!("{path} leads out of the workspace"))
    }
}

fn read(root: &Path, path: &str) -> Result<String, String> {
    let Some(real) = inside(root, path)? else {
        return Err(format!("{path} does not exist"));
    };
    let bytes = std::fs::read(&real).map_err(|e| format!("cannot read {path}: {e}"))?;
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}

/// Whether `rel` in `copy` is as `original` (a file or a directory tree) had it.
fn same_tree(original: &Path, copy: &Path, rel: &Path) -> Result<(), String> {
    let shown = rel.display();
    let Some(now) = inside(copy, &rel.to_string_lossy())? else {
        return Err(format!("{shown} was removed"));
    };
    if original.is_dir() {
        if !now.is_dir() {
            return Err(format!("{shown} is no longer a directory"));
        }
        let names = |dir: &Path| -> Result<Vec<std::ffi::OsString>, String> {
            let mut names = std::fs::read_dir(dir)
                .map_err(|e| format!("{}: {e}", dir.display()))?
                .filter_map(|e| e.ok().map(|e| e.file_name()))
                .collect::<Vec<_>>();
            names.sort();
            Ok(names)
        };
        let (before, after) = (names(original)?, names(&now)?);
        if let Some(extra) = after.iter().find(|n| !before.contains(n) && !is_cache(n)) {
            return Err(format!("{shown} gained {}", extra.to_string_lossy()));
        }
        for name in before {
            same_tree(&original.join(&name), copy, &rel.join(&name))?;
        }
        return Ok(());
    }
    let a = std::fs::read(original).map_err(|e| format!("{}: {e}", original.display()))?;
    let b = std::fs::read(&now).map_err(|e| format!("{shown}: {e}"))?;
    if a == b {
        Ok(())
    } else {
        Err(format!("{shown} was changed"))
    }
}

/// Caches that running the project's code leaves (the agent running the tests writes them):
/// a directory that gained one is still unchanged.
fn is_cache(name: &std::ffi::OsStr) -> bool {
    matches!(
        name.to_str(),
        Some("__pycache__" | ".pytest_cache" | ".mypy_cache" | ".ruff_cache")
    )
}

/// Copies the tree `from` into `to` (files overwrite); a symlink in a suite is refused, so a
/// task cannot point a checker or the agent at a file outside it.
pub fn copy_tree(from: &Path, to: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(to)?;
    for entry in std::fs::read_dir(from)? {
        let entry = entry?;
        let kind = entry.file_type()?;
        let target = to.join(entry.file_name());
        if kind.is_symlink() {
            return Err(std::io::Error::other(format!(
                "{} is a symlink; a task holds plain files",
                entry.path().display()
            )));
        } else if kind.is_dir() {
            copy_tree(&entry.path(), &target)?;
        } else {
            std::fs::copy(entry.path(), &target)?;
        }
    }
    Ok(())
}

/// Runs `argv` in a sandbox of `runtime` over `copy` (read-only, no network).
async fn run_command(
    sandbox: &Arc<Sandbox>,
    copy: &Path,
    runtime: &str,
    argv: &[String],
    cancel: &CancellationToken,
) -> Verdict {
    let shown = argv.join(" ");
    let run = async {
        let ws = Arc::new(Workspace::new(vec![copy.to_path_buf()]).map_err(|e| e.to_string())?);
        let image = sandbox
            .image_for(runtime)
            .await
            .map_err(|e| e.to_string())?;
        let mount = sandbox.workspace_mount(&ws, false).await?;
        let options = RunOptions {
            network: false,
            workspace: Some(mount),
            working_dir: Some(cairn_sandbox::engine::WORKSPACE_DIR.to_owned()),
        };
        sandbox
            .run_program(&image, argv.to_vec(), None, options, cancel)
            .await
            .map_err(|e| e.to_string())
    };
    let report = match run.await {
        Ok(report) => report,
        Err(e) => return Verdict::Fail(format!("`{shown}` could not run: {e}")),
    };
    let ending = match report.ending {
        Ending::Exited(0) => return Verdict::Pass,
        Ending::Exited(code) => format!("exited {code}"),
        Ending::Timeout => "hit the sandbox's time limit".into(),
        Ending::OutOfMemory => "ran out of memory".into(),
        Ending::ProcessLimit => "hit the process limit".into(),
        Ending::Cancelled => "was cancelled".into(),
    };
    Verdict::Fail(format!(
        "`{shown}` {ending}: {}",
        tail(&format!("{}\n{}", report.stdout, report.stderr))
    ))
}

/// The last lines of a program's output, enough to see which test failed, on one line.
fn tail(output: &str) -> String {
    let lines: Vec<&str> = output.lines().filter(|l| !l.trim().is_empty()).collect();
    let start = lines.len().saturating_sub(4);
    let joined = lines[start..].join(" | ");
    if joined.chars().count() > 300 {
        let cut: String = joined.chars().rev().take(300).collect();
        format!("…{}", cut.chars().rev().collect::<String>())
    } else {
        joined
    }
}
