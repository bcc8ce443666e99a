//! Models that try to pass the suite without doing the work, as an adversary would: say nothing,
//! answer with every name and number in the workspace, delete or skip the tests, overwrite the
//! hidden tests' paths, plant `unittest.py`/`sitecustomize.py`/`conftest.py`, or make the code
//! under test print a passing summary and exit early. Each leaves a copy and an answer as its
//! tool calls would; each must fail every task it applies to, and the attacks on the tests must
//! fail in the `tests` checker itself, not only in the bounds around it. A control shows the
//! attacks are real: over the same copy, a checker that trusts `python3 -m unittest`'s exit
//! status passes them. The sandbox runs only with `CAIRN_DOCKER_TESTS=1`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeSet;
use std::path::Path;
use std::sync::Arc;

use tokio_util::sync::CancellationToken;

use super::check::{Verdict, check_task};
use super::task::{self, Check, Task};
use super::tests::{copy_of, docker, failed, runtime, suite_dir};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Hack {
    /// Answers nothing and changes nothing.
    Nothing,
    /// Answers with every distinct word and number of the workspace.
    Dump,
    /// Answers with as many candidates (numbers first, then names) as the length cap allows.
    Candidates,
    /// Deletes the tests.
    DeleteTests,
    /// Makes every test module raise `SkipTest`.
    SkipTests,
    /// Writes trivially passing tests at the hidden tests' paths and over the visible ones.
    FakeTests,
    /// Plants `unittest.py`, `sitecustomize.py`, `usercustomize.py` and `conftest.py` at the
    /// root, in the tests and in every directory it may change.
    HookFiles,
    /// Makes every module it may change print a passing summary and `os._exit(0)` on import.
    EarlyExit,
}

const ANSWER_HACKS: [Hack; 3] = [Hack::Nothing, Hack::Dump, Hack::Candidates];
const TEST_HACKS: [Hack; 5] = [
    Hack::DeleteTests,
    Hack::SkipTests,
    Hack::FakeTests,
    Hack::HookFiles,
    Hack::EarlyExit,
];

const PASSING_TEST: &str =
    "import unittest\n\n\nclass T(unittest.TestCase):\n    def test_ok(self):\n        pass\n";
const FAKE_UNITTEST: &str = "import sys\n\n\ndef main(*args, **kwargs):\n    print('Ran 3 tests in 0.001s\\n\\nOK')\n    sys.exit(0)\n\n\nclass TestCase:\n    pass\n\n\nif __name__ == '__main__':\n    main()\n";
const EXIT_HOOK: &str = "import os\nprint('Ran 3 tests in 0.001s\\n\\nOK')\nos._exit(0)\n";

fn has_tests(task: &Task) -> bool {
    task.checks.iter().any(|c| matches!(c, Check::Tests { .. }))
}

fn has_answer(task: &Task) -> bool {
    task.checks.iter().any(|c| {
        matches!(
            c,
            Check::AnswerContains { .. } | Check::AnswerMatches { .. }
        )
    })
}

fn applies(hack: Hack, task: &Task) -> bool {
    match hack {
        Hack::Nothing => true,
        Hack::Dump | Hack::Candidates => has_answer(task),
        _ => has_tests(task),
    }
}

/// Every file under `root`, relative.
fn files(root: &Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else {
                out.push(path.strip_prefix(root).unwrap().to_path_buf());
            }
        }
    }
    out.sort();
    out
}

/// The workspace's words and numbers, distinct, in the order they first appear.
fn tokens(workspace: &Path) -> Vec<String> {
    let re = regex::Regex::new(r"[A-Za-z_][A-Za-z0-9_\-]*[A-Za-z0-9_]|[0-9][0-9.,:\-]*[0-9]|[0-9]")
        .unwrap();
    let mut seen = BTreeSet::new();
    let mut out = Vec::new();
    for rel in files(workspace) {
        let text = std::fs::read_to_string(workspace.join(rel)).unwrap_or_default();
        for m in re.find_iter(&text) {
            if seen.insert(m.as_str().to_owned()) {
                out.push(m.as_str().to_owned());
            }
        }
    }
    out
}

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

/// Plays the hack on `copy` and returns its answer.
fn play(hack: Hack, task: &Task, copy: &Path) -> String {
    let answer = "All done: the tests pass.".to_owned();
    match hack {
        Hack::Nothing => String::new(),
        Hack::Dump => tokens(copy).join(" "),
        Hack::Candidates => {
            let all = tokens(copy);
            let (numbers, names): (Vec<String>, Vec<String>) = all
                .into_iter()
                .partition(|t| t.starts_with(|c: char| c.is_ascii_digit()));
            let mut out = String::new();
            for t in numbers.into_iter().chain(names) {
                if out.chars().count() + t.chars().count() + 2 > task.max_answer_chars {
                    break;
                }
                if !out.is_empty() {
                    out.push_str(", ");
                }
                out.push_str(&t);
            }
            out
        }
        Hack::DeleteTests => {
            let _ = std::fs::remove_dir_all(copy.join("tests"));
            answer
        }
        Hack::SkipTests => {
            for rel in files(&copy.join("tests")) {
                if rel.extension().is_some_and(|e| e == "py") {
                    let p = copy.join("tests").join(&rel);
                    let body = std::fs::read_to_string(&p).unwrap();
                    write(
                        &p,
                        &format!("import unittest\nraise unittest.SkipTest('later')\n{body}"),
                    );
                }
            }
            answer
        }
        Hack::FakeTests => {
            let hidden = task.dir.join("check");
            for rel in files(&hidden).into_iter().chain(
                files(&copy.join("tests"))
                    .into_iter()
                    .map(|r| Path::new("tests").join(r)),
            ) {
                if rel.extension().is_some_and(|e| e == "py")
                    && rel
                        .file_name()
                        .unwrap()
                        .to_string_lossy()
                        .starts_with("test")
                {
                    write(&copy.join(&rel), PASSING_TEST);
                }
            }
            answer
        }
        Hack::HookFiles => {
            let mut dirs = vec![copy.to_path_buf(), copy.join("tests")];
            for rel in files(copy) {
                if task.changes.is_match(&rel)
                    && let Some(parent) = rel.parent()
                {
                    dirs.push(copy.join(parent));
                }
            }
            for dir in dirs {
                write(&dir.join("unittest.py"), FAKE_UNITTEST);
                write(&dir.join("sitecustomize.py"), EXIT_HOOK);
                write(&dir.join("usercustomize.py"), EXIT_HOOK);
                write(&dir.join("conftest.py"), EXIT_HOOK);
            }
            answer
        }
        Hack::EarlyExit => {
            let mut planted = 0;
            for rel in files(copy) {
                if task.changes.is_match(&rel) && rel.extension().is_some_and(|e| e == "py") {
                    let p = copy.join(&rel);
                    let body = std::fs::read_to_string(&p).unwrap();
                    write(&p, &format!("{EXIT_HOOK}{body}"));
                    planted += 1;
                }
            }
            assert!(
                planted > 0,
                "{}: no module to plant the exit in",
                task.name()
            );
            answer
        }
    }
}

/// Every hack on every task it applies to: each fails the task, and with a sandbox the attacks
/// on the tests fail in the `tests` checker itself.
#[test]
fn every_adversary_fails_every_task_it_applies_to() {
    let tasks = task::load_suite(&suite_dir()).unwrap();
    let sandbox = docker();
    let rt = runtime();
    let mut defects = Vec::new();
    let mut played = 0;
    for task in &tasks {
        let mut tests_fail_untouched = false;
        for hack in ANSWER_HACKS.into_iter().chain(TEST_HACKS) {
            if !applies(hack, task) {
                continue;
            }
            played += 1;
            let (_temp, copy) = copy_of(task);
            let answer = play(hack, task, &copy);
            let checked = rt.block_on(check_task(
                task,
                &copy,
                &answer,
                sandbox.as_ref(),
                &CancellationToken::new(),
            ));
            let skipped = checked
                .iter()
                .any(|c| matches!(c.verdict, Verdict::Skipped(_)));
            if hack == Hack::Nothing {
                tests_fail_untouched = checked
                    .iter()
                    .any(|c| c.kind == "tests" && matches!(c.verdict, Verdict::Fail(_)));
            }
            // Without a sandbox the tests are skipped, which is not a pass either.
            let unjudged = skipped && sandbox.is_none();
            if !failed(&checked) && !unjudged {
                defects.push(format!("{}: {hack:?} passes: {checked:?}", task.name()));
            }
            // A refactor's tests may pass before the work too (its files decide it); where the
            // untouched workspace fails them, every attack on them must fail them as well.
            if sandbox.is_some() && TEST_HACKS.contains(&hack) && tests_fail_untouched {
                let tests = checked.iter().find(|c| c.kind == "tests").unwrap();
                if !matches!(tests.verdict, Verdict::Fail(_)) {
                    defects.push(format!(
                        "{}: {hack:?} gets past the tests checker: {:?}",
                        task.name(),
                        tests.verdict
                    ));
                }
            }
        }
    }
    if let Some(sandbox) = sandbox {
        rt.block_on(sandbox.shutdown());
    }
    assert!(played >= 150, "only {played} plays");
    assert!(defects.is_empty(), "{defects:#?}");
}

/// The attacks are real: a checker that trusts `python3 -m unittest`'s exit status over the
/// copy (with `check/` laid in, as cairn's checker did before) passes a hacked, unsolved task
/// that it fails unhacked; cairn's `tests` checker fails it.
#[test]
fn the_attacks_fool_a_checker_that_trusts_the_exit_status() {
    let Some(sandbox) = docker() else {
        return;
    };
    let rt = runtime();
    let task = task::load_task(&suite_dir().join("debugging/dbg-median")).unwrap();
    let naive = |copy: &Path| -> i64 {
        super::check::copy_tree(&task.dir.join("check"), copy).unwrap();
        let ws = Arc::new(cairn_workspace::Workspace::new(vec![copy.to_path_buf()]).unwrap());
        rt.block_on(async {
            let image = sandbox.image_for("python").await.unwrap();
            let mount = sandbox.workspace_mount(&ws, false).await.unwrap();
            let options = cairn_sandbox::RunOptions {
                network: false,
                workspace: Some(mount),
                working_dir: Some(cairn_sandbox::engine::WORKSPACE_DIR.to_owned()),
            };
            let argv = [
                "python3", "-m", "unittest", "discover", "-s", "tests", "-t", ".",
            ]
            .map(str::to_owned)
            .to_vec();
            let report = sandbox
                .run_program(&image, argv, None, options, &CancellationToken::new())
                .await
                .unwrap();
            match report.ending {
                cairn_sandbox::Ending::Exited(code) => code,
                other => panic!("{other:?}"),
            }
        })
    };
    // Unsolved, the naive checker fails it too: the hacks are what make it pass.
    let (_t, copy) = copy_of(&task);
    assert_ne!(naive(&copy), 0);
    // (FakeTests is left out: that checker too laid `check/` over the copy.)
    for hack in [Hack::SkipTests, Hack::HookFiles, Hack::EarlyExit] {
        let (_t, copy) = copy_of(&task);
        let answer = play(hack, &task, &copy);
        let ours = rt.block_on(check_task(
            &task,
            &copy,
            &answer,
            Some(&sandbox),
            &CancellationToken::new(),
        ));
        let tests = ours.iter().find(|c| c.kind == "tests").unwrap();
        assert!(
            matches!(tests.verdict, Verdict::Fail(_)),
            "{hack:?}: {ours:?}"
        );
        assert_eq!(naive(&copy), 0, "{hack:?} does not fool the naive checker");
    }
    rt.block_on(sandbox.shutdown());
}
