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
use std::path::{Path, PathBuf};
use std::sync::Arc;

use tokio_util::sync::CancellationToken;

use super::check::{Verdict, check_task};
use super::task::{self, Check, Runner, Task};
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
const EXIT_JS: &str = "console.log('# pass 3\\n# fail 0');\nprocess.exit(0);\n";

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
            for rel in test_files(task, copy) {
                let _ = std::fs::remove_file(copy.join(rel));
            }
            answer
        }
        Hack::SkipTests => {
            // Python: every module of the package, `__init__.py` too, so discovery skips it all.
            let targets: Vec<PathBuf> = match runner_of(task) {
                Runner::Unittest => files(&copy.join("tests"))
                    .into_iter()
                    .filter(|r| r.extension().is_some_and(|e| e == "py"))
                    .map(|r| Path::new("tests").join(r))
                    .collect(),
                _ => test_files(task, copy),
            };
            for rel in targets {
                let p = copy.join(&rel);
                let body = std::fs::read_to_string(&p).unwrap();
                let skipped = match runner_of(task) {
                    Runner::Unittest => {
                        format!("import unittest\nraise unittest.SkipTest('later')\n{body}")
                    }
                    // The runner's `test` is a parameter: shadowed, no test registers.
                    Runner::Node => format!("test = () => {{}};\n{body}"),
                    Runner::Go => {
                        body.replace("(t *testing.T) {", "(t *testing.T) {\n\tt.Skip(\"later\")")
                    }
                };
                write(&p, &skipped);
            }
            answer
        }
        Hack::FakeTests => {
            let hidden = task.dir.join("check");
            let runner = runner_of(task);
            let mut targets: Vec<PathBuf> = test_files(task, copy);
            targets.extend(files(&hidden).into_iter().filter(|r| is_test(runner, r)));
            for rel in targets {
                let original = std::fs::read_to_string(hidden.join(&rel))
                    .or_else(|_| std::fs::read_to_string(copy.join(&rel)))
                    .unwrap_or_default();
                let fake = match runner {
                    Runner::Unittest => PASSING_TEST.to_owned(),
                    Runner::Node => "test('ok', () => {});\n".to_owned(),
                    Runner::Go => format!(
                        "package {}\n\nimport \"testing\"\n\nfunc TestOk(t *testing.T) {{}}\n",
                        go_package(&original)
                    ),
                };
                write(&copy.join(&rel), &fake);
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
                // cairn's own runners and Go's TestMain, at the paths the harness uses.
                write(&dir.join(".cairn-eval/unittest_runner.py"), EXIT_HOOK);
                write(&dir.join(".cairn-eval/node_runner.js"), EXIT_JS);
                let package = std::fs::read_dir(&dir)
                    .into_iter()
                    .flatten()
                    .flatten()
                    .find(|e| e.path().extension().is_some_and(|x| x == "go"))
                    .and_then(|e| std::fs::read_to_string(e.path()).ok());
                if let Some(go) = package {
                    write(
                        &dir.join(super::runners::GO_MAIN),
                        &go_exit(&go, task, "TestMain(m *testing.M)"),
                    );
                }
            }
            answer
        }
        Hack::EarlyExit => {
            let mut planted = 0;
            for rel in files(copy) {
                if !task.changes.is_match(&rel) || is_test(runner_of(task), &rel) {
                    continue;
                }
                let p = copy.join(&rel);
                let body = std::fs::read_to_string(&p).unwrap();
                match rel.extension().and_then(|e| e.to_str()) {
                    Some("py") => write(&p, &format!("{EXIT_HOOK}{body}")),
                    Some("js") => write(&p, &format!("{EXIT_JS}{body}")),
                    // A file of its own per package: an init that forges the passes and exits.
                    Some("go") => write(
                        &p.with_file_name("zz_early_exit.go"),
                        &go_exit(&body, task, "init()"),
                    ),
                    _ => continue,
                }
                planted += 1;
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

/// The runner of the task's `tests` checker (unittest for tasks without one).
fn runner_of(task: &Task) -> Runner {
    task.checks
        .iter()
        .find_map(|c| match c {
            Check::Tests { runner, .. } => Some(*runner),
            _ => None,
        })
        .unwrap_or(Runner::Unittest)
}

fn is_test(runner: Runner, rel: &Path) -> bool {
    rel.file_name()
        .and_then(|n| n.to_str())
        .is_some_and(|n| runner.is_test_file(n))
}

/// The copy's test files of the task's runner.
fn test_files(task: &Task, copy: &Path) -> Vec<PathBuf> {
    let runner = runner_of(task);
    files(copy)
        .into_iter()
        .filter(|r| is_test(runner, r))
        .collect()
}

fn go_package(source: &str) -> String {
    source
        .lines()
        .find_map(|l| l.trim().strip_prefix("package "))
        .unwrap_or("main")
        .trim()
        .to_owned()
}

/// A Go file in `source`'s package whose `func` prints what `go test -v` would print for every
/// test of the task passing, and exits 0 before any test runs.
fn go_exit(source: &str, task: &Task, func: &str) -> String {
    let re = regex::Regex::new(r"func (Test[A-Za-z0-9_]*)\(t \*testing\.T\)").unwrap();
    let mut forged = String::new();
    for rel in files(&task.dir.join("check"))
        .into_iter()
        .chain(files(&task.workspace()))
    {
        let text = std::fs::read_to_string(task.dir.join("check").join(&rel))
            .or_else(|_| std::fs::read_to_string(task.workspace().join(&rel)))
            .unwrap_or_default();
        for c in re.captures_iter(&text) {
            forged.push_str(&format!("=== RUN   {0}\n--- PASS: {0} (0.00s)\n", &c[1]));
        }
    }
    let testing = if func.starts_with("TestMain") {
        "\t\"testing\"\n"
    } else {
        ""
    };
    format!(
        "package {}\n\nimport (\n\t\"fmt\"\n\t\"os\"\n{testing})\n\nfunc {func} {{\n\tfmt.Print({:?})\n\tos.Exit(0)\n}}\n",
        go_package(source),
        format!("{forged}PASS\n")
    )
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
