//! The checkers: whether a task's result (the files of its copy and the agent's answer) is what
//! the task asked for. Every checker of a task is run and every failure reported, so a failed
//! task says all that is wrong with it. Files are read only inside the copy (a symlink out of it
//! is a failure, not a read), and `tests` runs the task's own code only in a sandbox, never on
//! this host, over a harness the agent could not shape beyond the paths the task lets it change,
//! and passes only on the runner's own report of the expected count of passed tests.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use cairn_sandbox::{Ending, RunOptions, Sandbox};
use cairn_workspace::Workspace;
use tokio_util::sync::CancellationToken;

use super::runners::{GO_MAIN, RUNNER_DIR, RUNNER_FILES, Report, go_report, lay_go_main};
use super::task::{Check, Fact, Runner, Task, relative};

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
/// First come the task's own bounds: no change outside its `changes`, and, when it judges the
/// answer, no answer longer than its cap. The `tests` checkers run over a clean harness built
/// from the task (see [`harness`]); `sandbox` runs them, and without one they are skipped.
pub async fn check_task(
    task: &Task,
    copy: &Path,
    answer: &str,
    sandbox: Option<&Arc<Sandbox>>,
    cancel: &CancellationToken,
) -> Vec<Checked> {
    let mut out = Vec::new();
    let original = task.workspace();
    out.push(Checked {
        kind: "changes",
        verdict: match outside_changes(task, &original, copy) {
            Ok(()) => Verdict::Pass,
            Err(why) => Verdict::Fail(why),
        },
    });
    if task.checks.iter().any(is_answer) {
        let chars = answer.chars().count();
        out.push(Checked {
            kind: "answer_length",
            verdict: if chars > task.max_answer_chars {
                Verdict::Fail(format!(
                    "the answer has {chars} characters, more than the task's {}",
                    task.max_answer_chars
                ))
            } else {
                Verdict::Pass
            },
        });
    }
    for check in task.checks.iter().filter(|c| !is_tests(c)) {
        out.push(Checked {
            kind: check.kind(),
            verdict: check_one(check, &task.dir, &original, copy, answer),
        });
    }
    let tests: Vec<&Check> = task.checks.iter().filter(|c| is_tests(c)).collect();
    if tests.is_empty() {
        return out;
    }
    // The harness lives as long as its tests run; `Err` says why it could not be laid.
    let stage = tempfile::Builder::new()
        .prefix("cairn-eval-harness-")
        .tempdir()
        .map_err(|e| format!("cannot make the harness's directory: {e}"))
        .and_then(|stage| harness(task, &original, copy, stage.path()).map(|()| stage));
    for check in tests {
        let Check::Tests {
            runner,
            start,
            count,
        } = check
        else {
            continue;
        };
        let verdict = match (&stage, sandbox) {
            (Err(e), _) => Verdict::Fail(e.clone()),
            (Ok(_), None) => Verdict::Skipped("no sandbox".into()),
            (Ok(stage), Some(sandbox)) => {
                run_tests(sandbox, task, stage.path(), *runner, start, *count, cancel).await
            }
        };
        out.push(Checked {
            kind: check.kind(),
            verdict,
        });
    }
    out
}

fn is_tests(check: &Check) -> bool {
    matches!(check, Check::Tests { .. })
}

fn is_answer(check: &Check) -> bool {
    matches!(
        check,
        Check::AnswerContains { .. } | Check::AnswerMatches { .. }
    )
}

/// What running code leaves behind (bytecode, tool caches): neither a change nor part of a
/// harness.
fn is_artefact(rel: &Path) -> bool {
    rel.components().any(|c| is_cache(c.as_os_str())) || rel.extension().is_some_and(|e| e == "pyc")
}

/// Every file (and symlink) under `root`, as paths relative to it; a symlink is listed, never
/// followed.
fn files_under(root: &Path) -> Result<BTreeMap<PathBuf, bool>, String> {
    fn walk(root: &Path, dir: &Path, out: &mut BTreeMap<PathBuf, bool>) -> Result<(), String> {
        let entries = std::fs::read_dir(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        for entry in entries {
            let entry = entry.map_err(|e| format!("{}: {e}", dir.display()))?;
            let kind = entry.file_type().map_err(|e| e.to_string())?;
            let path = entry.path();
            let rel = path.strip_prefix(root).unwrap_or(&path).to_path_buf();
            if kind.is_dir() {
                walk(root, &path, out)?;
            } else {
                out.insert(rel, kind.is_symlink());
            }
        }
        Ok(())
    }
    let mut out = BTreeMap::new();
    if root.is_dir() {
        walk(root, root, &mut out)?;
    }
    Ok(out)
}

/// The paths that differ between the workspace the task gave and the result (created, edited,
/// deleted, or made a symlink), artefacts left out.
fn changed_paths(original: &Path, copy: &Path) -> Result<Vec<PathBuf>, String> {
    let before = files_under(original)?;
    let after = files_under(copy)?;
    let mut changed = Vec::new();
    for rel in before
        .keys()
        .chain(after.keys().filter(|k| !before.contains_key(*k)))
    {
        if is_artefact(rel) {
            continue;
        }
        let same = match (before.get(rel), after.get(rel)) {
            (Some(false), Some(false)) => {
                std::fs::read(original.join(rel)).ok() == std::fs::read(copy.join(rel)).ok()
            }
            _ => false,
        };
        if !same {
            changed.push(rel.clone());
        }
    }
    Ok(changed)
}

/// Fails when the result changed a path the task's `changes` does not allow.
fn outside_changes(task: &Task, original: &Path, copy: &Path) -> Result<(), String> {
    let outside: Vec<String> = changed_paths(original, copy)?
        .into_iter()
        .filter(|rel| !task.changes.is_match(rel))
        .map(|rel| rel.display().to_string())
        .collect();
    if outside.is_empty() {
        return Ok(());
    }
    let allowed = if task.changes_shown.is_empty() {
        "the task changes nothing".to_owned()
    } else {
        format!("the task may change only {}", task.changes_shown.join(", "))
    };
    let shown: Vec<&str> = outside.iter().take(5).map(String::as_str).collect();
    let more = outside.len().saturating_sub(shown.len());
    Err(format!(
        "changed outside the task's paths: {}{} ({allowed})",
        shown.join(", "),
        if more > 0 {
            format!(" and {more} more")
        } else {
            String::new()
        }
    ))
}

/// Lays the harness the tests run over into `stage`: the workspace as the task gave it, then
/// from the result only the paths `changes` allows (created and edited files taken, deleted
/// ones removed; symlinks and artefacts never), then `check/`, then cairn's runner. So a test
/// the agent deleted, skipped or edited outside its paths runs as written, a hook file it
/// planted where it may not change anything is not there, and no bytecode of its own is read.
fn harness(task: &Task, original: &Path, copy: &Path, stage: &Path) -> Result<(), String> {
    copy_tree(original, stage).map_err(|e| format!("cannot copy the workspace: {e}"))?;
    for rel in changed_paths(original, copy)? {
        if !task.changes.is_match(&rel) {
            continue;
        }
        let (from, to) = (copy.join(&rel), stage.join(&rel));
        match std::fs::symlink_metadata(&from) {
            Ok(meta) if meta.is_file() => {
                if let Some(parent) = to.parent() {
                    std::fs::create_dir_all(parent)
                        .map_err(|e| format!("{}: {e}", rel.display()))?;
                }
                std::fs::copy(&from, &to).map_err(|e| format!("{}: {e}", rel.display()))?;
            }
            // Deleted (or turned into a symlink, which is not followed): gone from the harness.
            _ => {
                if to.is_file() {
                    std::fs::remove_file(&to).map_err(|e| format!("{}: {e}", rel.display()))?;
                }
            }
        }
    }
    let hidden = task.dir.join("check");
    if hidden.is_dir() {
        copy_tree(&hidden, stage).map_err(|e| format!("cannot lay in check/: {e}"))?;
    }
    let runner = stage.join(RUNNER_DIR);
    if runner.exists() {
        std::fs::remove_dir_all(&runner).map_err(|e| format!("{RUNNER_DIR}: {e}"))?;
    }
    std::fs::create_dir_all(&runner).map_err(|e| format!("{RUNNER_DIR}: {e}"))?;
    for (name, text) in RUNNER_FILES {
        std::fs::write(runner.join(name), text).map_err(|e| format!("{RUNNER_DIR}: {e}"))?;
    }
    Ok(())
}

/// The runner's test files under `start`, relative to the harness: first those that come from
/// the task (`check/`, its workspace outside `changes`, or a path an `unchanged` checker keeps),
/// which run, so `count` is exact; then the rest (the agent's own), which never run.
fn harness_tests(
    task: &Task,
    stage: &Path,
    start: &str,
    runner: Runner,
) -> Result<(Vec<PathBuf>, Vec<PathBuf>), String> {
    let hidden = files_under(&task.dir.join("check"))?;
    let (mut ours, mut theirs) = (Vec::new(), Vec::new());
    for (rel, symlink) in files_under(&stage.join(start))? {
        // `start = "."` names the root: no `./` in the paths the globs match.
        let rel: PathBuf = Path::new(start)
            .join(rel)
            .components()
            .filter(|c| !matches!(c, std::path::Component::CurDir))
            .collect();
        let is_test = rel
            .file_name()
            .and_then(|n| n.to_str())
            .is_some_and(|n| runner.is_test_file(n));
        if !is_test || is_artefact(&rel) || rel.starts_with(RUNNER_DIR) {
            continue;
        }
        // A file at cairn's own `TestMain` path is never the task's.
        let ours_by_name = rel.file_name().is_none_or(|n| n != GO_MAIN);
        if !symlink
            && ours_by_name
            && (hidden.contains_key(&rel) || !task.changes.is_match(&rel) || protected(task, &rel))
        {
            ours.push(rel);
        } else {
            theirs.push(rel);
        }
    }
    if ours.is_empty() {
        return Err(format!("no test files of the task under {start}/"));
    }
    Ok((ours, theirs))
}

/// Whether an `unchanged` checker of the task keeps `rel` as the workspace had it.
fn protected(task: &Task, rel: &Path) -> bool {
    task.checks.iter().any(|c| match c {
        Check::Unchanged { paths } => paths.iter().any(|p| rel.starts_with(p)),
        _ => false,
    })
}

/// Runs the harness's tests in a sandbox of the runner's runtime (the harness read-only, no
/// network) and judges the runner's report, not the exit status.
async fn run_tests(
    sandbox: &Arc<Sandbox>,
    task: &Task,
    stage: &Path,
    runner: Runner,
    start: &str,
    count: u32,
    cancel: &CancellationToken,
) -> Verdict {
    let tests = harness_tests(task, stage, start, runner).and_then(|(ours, theirs)| {
        // Go compiles every test file of a package: the agent's own are taken out.
        if runner == Runner::Go {
            for rel in &theirs {
                std::fs::remove_file(stage.join(rel))
                    .map_err(|e| format!("{}: {e}", rel.display()))?;
            }
        }
        Ok(ours)
    });
    let tests = match tests {
        Ok(t) => t,
        Err(e) => return Verdict::Fail(e),
    };
    let packages = if runner == Runner::Go {
        match lay_go_main(stage, &tests) {
            Ok(dirs) => dirs.len(),
            Err(e) => return Verdict::Fail(e),
        }
    } else {
        0
    };
    let nonce = uuid::Uuid::new_v4().simple().to_string();
    let (argv, stdin) = runner.command(start, &tests, &nonce);
    let run = async {
        let ws = Arc::new(Workspace::new(vec![stage.to_path_buf()]).map_err(|e| e.to_string())?);
        let image = sandbox
            .image_for(runner.runtime())
            .await
            .map_err(|e| e.to_string())?;
        let mount = sandbox.workspace_mount(&ws, false).await?;
        let options = RunOptions {
            network: false,
            workspace: Some(mount),
            working_dir: Some(cairn_sandbox::engine::WORKSPACE_DIR.to_owned()),
        };
        sandbox
            .run_program(&image, argv, stdin, options, cancel)
            .await
            .map_err(|e| e.to_string())
    };
    let output = match run.await {
        Ok(output) => output,
        Err(e) => return Verdict::Fail(format!("the tests could not run: {e}")),
    };
    let ending = match output.ending {
        Ending::Exited(code) => format!("exited {code}"),
        Ending::Timeout => "hit the sandbox's time limit".into(),
        Ending::OutOfMemory => "ran out of memory".into(),
        Ending::ProcessLimit => "hit the process limit".into(),
        Ending::Cancelled => "was cancelled".into(),
    };
    if runner == Runner::Go {
        let mut report = go_report(&output.stdout, &nonce, packages);
        if let Some(error) = &mut report.error {
            *error = format!("the test run {ending}; {error} {}", tail(&output.stderr));
        }
        return judge(&report, count);
    }
    let prefix = format!("{nonce} ");
    let line = output
        .stdout
        .lines()
        .rev()
        .find_map(|l| l.strip_prefix(&prefix));
    let Some(line) = line else {
        return Verdict::Fail(format!(
            "the test run {ending} without the runner's report ({count} tests expected): {}",
            tail(&format!("{}\n{}", output.stdout, output.stderr))
        ));
    };
    match serde_json::from_str::<Report>(line) {
        Ok(report) => judge(&report, count),
        Err(e) => Verdict::Fail(format!("the runner's report does not parse: {e}")),
    }
}

/// Passed only when exactly `count` tests ran and passed, and nothing failed, errored or was
/// skipped.
fn judge(report: &Report, count: u32) -> Verdict {
    if let Some(error) = &report.error {
        return Verdict::Fail(format!("the test run broke off: {error}"));
    }
    if let Some((id, trace)) = report.failed.first() {
        let more = report.failed.len() - 1;
        return Verdict::Fail(format!(
            "{} of the tests failed{}: {id}: {}",
            report.failed.len(),
            if more > 0 { " (the first shown)" } else { "" },
            tail(trace)
        ));
    }
    if let Some((id, why)) = report.skipped.first() {
        return Verdict::Fail(format!(
            "{} tests were skipped ({id}: {why}); every test must run",
            report.skipped.len()
        ));
    }
    let passed = u32::try_from(report.passed.len()).unwrap_or(u32::MAX);
    if passed != count {
        return Verdict::Fail(format!(
            "{passed} tests ran and passed, the task has {count}"
        ));
    }
    Verdict::Pass
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
        Check::AnswerContains { facts, absent } => {
            let missing: Vec<String> = facts
                .iter()
                .filter(|f| !answer_holds(answer, f))
                .map(Fact::describe)
                .collect();
            let present: Vec<String> = absent
                .iter()
                .filter(|f| answer_holds(answer, f))
                .map(Fact::describe)
                .collect();
            match (missing.is_empty(), present.is_empty()) {
                (true, true) => Ok(()),
                (false, true) => Err(format!("the answer lacks {}", missing.join(", "))),
                (true, false) => Err(format!(
                    "the answer holds {}, which is wrong",
                    present.join(", ")
                )),
                (false, false) => Err(format!(
                    "the answer lacks {} and holds {}, which is wrong",
                    missing.join(", "),
                    present.join(", ")
                )),
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
        Check::Tests { .. } => Err("tests are run by check_task".into()),
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
