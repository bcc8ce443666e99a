//! The suite's own checks: every task of `bench/eval` loads, each category has enough tasks, a
//! model that does nothing (or only repeats the instruction) fails every task, and the task's
//! reference solution passes it; plus the checkers' edge cases. The `command` checkers run only
//! with `CAIRN_DOCKER_TESTS=1` (the image is `CAIRN_TEST_IMAGE`, default
//! `cairn-test/runtime:2`).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use tokio_util::sync::CancellationToken;

use super::check::{self, Checked, Verdict, answer_holds, check_task};
use super::task::{self, Category, Check, Fact, Task};

pub(super) fn suite_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../bench/eval")
}

pub(super) fn docker() -> Option<Arc<cairn_sandbox::Sandbox>> {
    if !cairn_test_support::gate(
        "CAIRN_DOCKER_TESTS",
        "with a running Docker engine to run the suite's command checkers",
    ) {
        return None;
    }
    let image =
        std::env::var("CAIRN_TEST_IMAGE").unwrap_or_else(|_| "cairn-test/runtime:2".to_owned());
    let mut config = cairn_config::SandboxConfig {
        pool_size: 0,
        ..Default::default()
    };
    for image_of in config.images.values_mut() {
        *image_of = image.clone();
    }
    Some(cairn_sandbox::Sandbox::new(config))
}

pub(super) fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
}

/// A fresh copy of the task's workspace, as the runner makes it.
pub(super) fn copy_of(task: &Task) -> (tempfile::TempDir, PathBuf) {
    let temp = tempfile::tempdir().unwrap();
    let copy = temp.path().join("workspace");
    check::copy_tree(&task.workspace(), &copy).unwrap();
    (temp, copy)
}

pub(super) fn failed(checked: &[Checked]) -> bool {
    checked
        .iter()
        .any(|c| matches!(c.verdict, Verdict::Fail(_)))
}

#[test]
fn every_task_loads_each_category_has_twenty_and_three_languages_run() {
    let tasks = task::load_suite(&suite_dir()).unwrap();
    let mut per: BTreeMap<Category, usize> = BTreeMap::new();
    for t in &tasks {
        *per.entry(t.category).or_default() += 1;
    }
    for c in Category::ALL {
        let n = per.get(&c).copied().unwrap_or(0);
        assert!(n >= 20, "{} has {n} tasks", c.id());
    }
    // Python, JavaScript and Go among the tasks' tests, the refactors and features each.
    for c in [Category::Refactor, Category::Feature] {
        let runners: std::collections::BTreeSet<String> = tasks
            .iter()
            .filter(|t| t.category == c)
            .flat_map(|t| &t.checks)
            .filter_map(|k| match k {
                Check::Tests { runner, .. } => Some(format!("{runner:?}")),
                _ => None,
            })
            .collect();
        assert_eq!(runners.len(), 3, "{}: {runners:?}", c.id());
    }
    // load_suite refuses duplicate ids; this says it again where a reader looks.
    let mut ids: Vec<&str> = tasks.iter().map(|t| t.id.as_str()).collect();
    ids.sort_unstable();
    ids.dedup();
    assert_eq!(ids.len(), tasks.len());
}

#[test]
fn a_model_doing_nothing_fails_every_task() {
    let tasks = task::load_suite(&suite_dir()).unwrap();
    let sandbox = docker();
    let rt = runtime();
    let mut defects = Vec::new();
    for task in &tasks {
        // Doing nothing, and doing nothing but repeating the instruction.
        for answer in ["", task.instruction.as_str()] {
            let (_temp, copy) = copy_of(task);
            let checked = rt.block_on(check_task(
                task,
                &copy,
                answer,
                sandbox.as_ref(),
                &CancellationToken::new(),
            ));
            let skipped = checked
                .iter()
                .any(|c| matches!(c.verdict, Verdict::Skipped(_)));
            if !failed(&checked) && !skipped {
                defects.push(format!("{} passes with answer {answer:?}", task.name()));
            }
        }
    }
    if let Some(sandbox) = sandbox {
        rt.block_on(sandbox.shutdown());
    }
    assert!(defects.is_empty(), "{defects:#?}");
}

#[test]
fn the_reference_solution_passes_every_task() {
    let tasks = task::load_suite(&suite_dir()).unwrap();
    let sandbox = docker();
    let rt = runtime();
    let mut defects = Vec::new();
    for task in &tasks {
        let (_temp, copy) = copy_of(task);
        let reference = task.dir.join("reference");
        if reference.is_dir() {
            check::copy_tree(&reference, &copy).unwrap();
        }
        for path in &task.reference_removes {
            let p = copy.join(path);
            if p.is_dir() {
                std::fs::remove_dir_all(&p).unwrap();
            } else {
                std::fs::remove_file(&p).unwrap();
            }
        }
        let answer = task.reference_answer.clone().unwrap_or_default();
        let checked = rt.block_on(check_task(
            task,
            &copy,
            &answer,
            sandbox.as_ref(),
            &CancellationToken::new(),
        ));
        let failures: Vec<String> = checked
            .iter()
            .filter_map(|c| match &c.verdict {
                Verdict::Fail(why) => Some(format!("{}: {why}", c.kind)),
                _ => None,
            })
            .collect();
        if !failures.is_empty() {
            defects.push(format!("{}: {}", task.name(), failures.join("; ")));
        }
    }
    if let Some(sandbox) = sandbox {
        rt.block_on(sandbox.shutdown());
    }
    assert!(defects.is_empty(), "{defects:#?}");
}

#[test]
fn a_fact_matches_whole_words_and_numbers_only() {
    let fact = |s: &str| Fact::One(s.to_owned());
    assert!(answer_holds("It listens on port 8443.", &fact("8443")));
    assert!(answer_holds("**8443**", &fact("8443")));
    assert!(!answer_holds("port 18443", &fact("8443")));
    assert!(!answer_holds("42.5 seconds", &fact("42")));
    assert!(!answer_holds("1,234 rows", &fact("234")));
    assert!(answer_holds("rows: 234, then more", &fact("234")));
    assert!(answer_holds(
        "the AUTH_SESSIONS table",
        &fact("auth_sessions")
    ));
    assert!(!answer_holds("auth_sessions_old", &fact("auth_sessions")));
    assert!(answer_holds(
        "Forty-Two",
        &Fact::Any(vec!["42".into(), "forty-two".into()])
    ));
    assert!(!answer_holds("", &fact("x")));
    // A number may touch letters; a word may not.
    assert!(answer_holds("in v2.4.0-rc", &fact("2.4.0")));
    assert!(answer_holds("8443/tcp", &fact("8443")));
    assert!(!answer_holds("via oauth", &fact("auth")));
    // A fact that starts or ends with punctuation needs no boundary there.
    assert!(answer_holds("x-2.4.0-", &fact("-2.4.0-")));
}

fn write(dir: &Path, rel: &str, text: &str) {
    let p = dir.join(rel);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, text).unwrap();
}

#[test]
fn a_bad_task_file_is_an_error_naming_it() {
    let temp = tempfile::tempdir().unwrap();
    let dir = temp.path().join("t1");
    std::fs::create_dir_all(dir.join("workspace")).unwrap();
    let cases = [
        (
            "id = \"t1\"\ncategory = \"file-read\"\ninstruction = \"x\"\nchanges = []\n",
            "at least one",
        ),
        (
            "id = \"t1\"\ncategory = \"nope\"\ninstruction = \"x\"\nchanges = []\n",
            "unknown variant",
        ),
        (
            "id = \"t1\"\ncategory = \"file-read\"\ninstruction = \"x\"\nchanges = []\n[[check]]\nkind = \"answer_contains\"\nfacts = [\"a\"]\nfact = [\"b\"]\n",
            "unknown field",
        ),
        (
            "id = \"t1\"\ncategory = \"file-read\"\ninstruction = \"x\"\nchanges = []\n[[check]]\nkind = \"file_exists\"\npath = \"../x\"\n",
            "without `..`",
        ),
        (
            "id = \"t1\"\ncategory = \"file-read\"\ninstruction = \"x\"\nchanges = []\n[[check]]\nkind = \"answer_matches\"\npattern = \".*\"\n",
            "matches an empty answer",
        ),
        (
            "id = \"t2\"\ncategory = \"file-read\"\ninstruction = \"x\"\nchanges = []\n[[check]]\nkind = \"file_exists\"\npath = \"a\"\n",
            "differs from its directory",
        ),
        (
            "id = \"t1\"\ncategory = \"file-read\"\ninstruction = \"x\"\nchanges = []\n[[check]]\nkind = \"answer_contains\"\nfacts = []\n",
            "at least one fact",
        ),
        (
            "id = \"t1\"\ncategory = \"file-read\"\ninstruction = \"x\"\n[[check]]\nkind = \"answer_contains\"\nfacts = [\"a\"]\n",
            "missing field `changes`",
        ),
        (
            "id = \"t1\"\ncategory = \"file-read\"\ninstruction = \"x\"\nchanges = [\"../x\"]\n[[check]]\nkind = \"answer_contains\"\nfacts = [\"a\"]\n",
            "changes: path `../x`",
        ),
        (
            "id = \"t1\"\ncategory = \"file-read\"\ninstruction = \"x\"\nchanges = []\n[[check]]\nkind = \"answer_contains\"\nfacts = [\"a\"]\nabsent = [\"A\"]\n",
            "both needed and absent",
        ),
        (
            "id = \"t1\"\ncategory = \"debugging\"\ninstruction = \"x\"\nchanges = []\n[[check]]\nkind = \"tests\"\nrunner = \"unittest\"\ncount = 0\n",
            "a run of no tests proves nothing",
        ),
        (
            "id = \"t1\"\ncategory = \"debugging\"\ninstruction = \"x\"\nchanges = []\n[[check]]\nkind = \"command\"\nargv = [\"true\"]\n",
            "unknown variant `command`",
        ),
        ("not toml at all [", "task.toml"),
    ];
    for (text, expected) in cases {
        std::fs::write(dir.join("task.toml"), text).unwrap();
        let err = task::load_task(&dir).unwrap_err().to_string();
        assert!(err.contains("task.toml"), "{err}");
        assert!(err.contains(expected), "{expected:?} not in {err}");
    }
}

#[test]
fn the_file_checkers_judge_the_copy_against_the_workspace() {
    let temp = tempfile::tempdir().unwrap();
    let dir = temp.path().join("t");
    write(&dir, "workspace/a.txt", "alpha\n");
    write(&dir, "workspace/keep/b.txt", "beta\n");
    write(&dir, "check/expected.txt", "ALPHA\r\n");
    std::fs::write(
        dir.join("task.toml"),
        r#"id = "t"
category = "refactor"
instruction = "x"
changes = ["a.txt"]
[[check]]
kind = "file_equals"
path = "a.txt"
same_as = "check/expected.txt"
[[check]]
kind = "file_lacks"
path = "a.txt"
text = ["alpha"]
[[check]]
kind = "file_contains"
path = "a.txt"
text = [["ALPHA", "Alpha"]]
[[check]]
kind = "unchanged"
paths = ["keep"]
[[check]]
kind = "file_absent"
path = "gone.txt"
"#,
    )
    .unwrap();
    let task = task::load_task(&dir).unwrap();
    let rt = runtime();
    let run =
        |copy: &Path| rt.block_on(check_task(&task, copy, "", None, &CancellationToken::new()));
    let (_t, copy) = copy_of(&task);
    let untouched = run(&copy);
    assert_eq!(
        untouched
            .iter()
            .filter(|c| matches!(c.verdict, Verdict::Fail(_)))
            .count(),
        3,
        "{untouched:?}"
    );
    std::fs::write(copy.join("a.txt"), "ALPHA").unwrap();
    assert!(!failed(&run(&copy)));
    std::fs::write(copy.join("keep/new.txt"), "").unwrap();
    let gained = run(&copy);
    assert!(
        gained
            .iter()
            .any(|c| c.verdict == Verdict::Fail("keep gained new.txt".into())),
        "{gained:?}"
    );
    std::fs::remove_file(copy.join("keep/new.txt")).unwrap();
    // Running the tests leaves caches; they are not a change.
    std::fs::create_dir_all(copy.join("keep/__pycache__")).unwrap();
    assert!(!failed(&run(&copy)));
    std::fs::write(copy.join("gone.txt"), "").unwrap();
    assert!(failed(&run(&copy)));
    std::fs::remove_file(copy.join("gone.txt")).unwrap();
    // A symlink out of the copy is not followed.
    std::os::unix::fs::symlink("/etc/hostname", copy.join("a.txt.link")).unwrap();
    std::fs::remove_file(copy.join("a.txt")).unwrap();
    std::os::unix::fs::symlink("/etc/hostname", copy.join("a.txt")).unwrap();
    let escaped = run(&copy);
    assert!(
        escaped
            .iter()
            .any(|c| matches!(&c.verdict, Verdict::Fail(why) if why.contains("leads out"))),
        "{escaped:?}"
    );
}

#[test]
fn a_symlink_in_a_task_is_refused_when_copied() {
    let temp = tempfile::tempdir().unwrap();
    let from = temp.path().join("ws");
    std::fs::create_dir_all(&from).unwrap();
    std::os::unix::fs::symlink("/etc/passwd", from.join("p")).unwrap();
    let err = check::copy_tree(&from, &temp.path().join("to")).unwrap_err();
    assert!(err.to_string().contains("symlink"), "{err}");
}

#[test]
fn tests_without_a_sandbox_are_skipped_not_passed() {
    let temp = tempfile::tempdir().unwrap();
    let dir = temp.path().join("c");
    write(&dir, "workspace/tests/test_x.py", "");
    std::fs::write(
        dir.join("task.toml"),
        "id = \"c\"\ncategory = \"debugging\"\ninstruction = \"x\"\nchanges = []\n[[check]]\nkind = \"tests\"\nrunner = \"unittest\"\ncount = 1\n",
    )
    .unwrap();
    let task = task::load_task(&dir).unwrap();
    assert!(matches!(&task.checks[0], Check::Tests { start, count: 1, .. } if start == "tests"));
    let (_t, copy) = copy_of(&task);
    let checked = runtime().block_on(check_task(
        &task,
        &copy,
        "",
        None,
        &CancellationToken::new(),
    ));
    assert_eq!(super::failures(&checked), ["tests: not run (no sandbox)"]);
}

/// A fixture task of `runner`: `workspace/` as given, `check/` hidden, one change allowed.
fn runner_task(root: &Path, runner: &str, files: &[(&str, &str)], count: u32) -> Task {
    let dir = root.join(runner);
    for (rel, text) in files {
        write(&dir, rel, text);
    }
    let start = if runner == "go" { "." } else { "tests" };
    std::fs::write(
        dir.join("task.toml"),
        format!(
            "id = \"{runner}\"\ncategory = \"feature\"\ninstruction = \"x\"\nchanges = [\"src/**\", \"lib/**\", \"tests/mine*\"]\n[[check]]\nkind = \"tests\"\nrunner = \"{runner}\"\nstart = \"{start}\"\ncount = {count}\n"
        ),
    )
    .unwrap();
    task::load_task(&dir).unwrap()
}

/// Runs the task's checkers over its workspace with `edits` applied; the `tests` verdict.
fn tests_verdict(
    task: &Task,
    sandbox: &Arc<cairn_sandbox::Sandbox>,
    rt: &tokio::runtime::Runtime,
    edits: &[(&str, &str)],
) -> Verdict {
    let (_t, copy) = copy_of(task);
    for (rel, text) in edits {
        write(&copy, rel, text);
    }
    let checked = rt.block_on(check_task(
        task,
        &copy,
        "",
        Some(sandbox),
        &CancellationToken::new(),
    ));
    checked
        .into_iter()
        .find(|c| c.kind == "tests")
        .unwrap()
        .verdict
}

/// The Node and Go runners judge by their own report: the solution passes; the unsolved
/// workspace fails naming the test; a test file of the agent's does not count; code that prints
/// a passing summary and exits before the tests (Go's forged `-v` output included) fails.
#[test]
fn the_node_and_go_runners_pass_only_what_their_tests_pass() {
    let Some(sandbox) = docker() else {
        return;
    };
    let rt = runtime();
    let temp = tempfile::tempdir().unwrap();

    let node = runner_task(
        temp.path(),
        "node",
        &[
            (
                "workspace/src/add.js",
                "module.exports = { add: (a, b) => a - b };\n",
            ),
            (
                "check/tests/add.test.js",
                "const assert = require('node:assert/strict');\nconst { add } = require('../src/add');\ntest('adds', () => assert.equal(add(2, 3), 5));\ntest('adds later', async () => { await new Promise((r) => setTimeout(r, 5)); assert.equal(add(1, 1), 2); });\n",
            ),
        ],
        2,
    );
    let solved = ("src/add.js", "module.exports = { add: (a, b) => a + b };\n");
    assert_eq!(
        tests_verdict(&node, &sandbox, &rt, &[solved]),
        Verdict::Pass
    );
    let Verdict::Fail(why) = tests_verdict(&node, &sandbox, &rt, &[]) else {
        panic!("the unsolved task passes");
    };
    assert!(
        why.contains("adds") && why.contains("2 of the tests failed"),
        "{why}"
    );
    let extra = ("tests/mine.test.js", "test('mine', () => {});\n");
    assert_eq!(
        tests_verdict(&node, &sandbox, &rt, &[solved, extra]),
        Verdict::Pass
    );
    let exits = (
        "src/add.js",
        "console.log('# pass 2');\nprocess.exit(0);\nmodule.exports = { add: (a, b) => a + b };\n",
    );
    let Verdict::Fail(why) = tests_verdict(&node, &sandbox, &rt, &[exits]) else {
        panic!("an early exit passes");
    };
    assert!(why.contains("without the runner's report"), "{why}");

    let go = runner_task(
        temp.path(),
        "go",
        &[
            ("workspace/go.mod", "module example.com/m\n\ngo 1.19\n"),
            (
                "workspace/lib/add.go",
                "package lib\n\nfunc Add(a, b int) int { return a - b }\n",
            ),
            (
                "check/lib/add_test.go",
                "package lib\n\nimport \"testing\"\n\nfunc TestAdd(t *testing.T) {\n\tif Add(2, 3) != 5 {\n\t\tt.Fatal(\"2+3\")\n\t}\n}\n\nfunc TestAddZero(t *testing.T) {\n\tt.Run(\"zero\", func(t *testing.T) {\n\t\tif Add(0, 4) != 4 {\n\t\t\tt.Fatal(\"0+4\")\n\t\t}\n\t})\n}\n",
            ),
        ],
        2,
    );
    let solved = (
        "lib/add.go",
        "package lib\n\nfunc Add(a, b int) int { return a + b }\n",
    );
    assert_eq!(tests_verdict(&go, &sandbox, &rt, &[solved]), Verdict::Pass);
    let Verdict::Fail(why) = tests_verdict(&go, &sandbox, &rt, &[]) else {
        panic!("the unsolved Go task passes");
    };
    assert!(why.contains("TestAdd") && why.contains("2+3"), "{why}");
    // The agent's own test file would add a passing test (or a TestMain): it is taken out.
    let extra = (
        "lib/mine_test.go",
        "package lib\n\nimport \"testing\"\n\nfunc TestMine(t *testing.T) {}\n",
    );
    assert_eq!(
        tests_verdict(&go, &sandbox, &rt, &[solved, extra]),
        Verdict::Pass
    );
    let forged = (
        "lib/zz.go",
        "package lib\n\nimport (\n\t\"fmt\"\n\t\"os\"\n)\n\nfunc init() {\n\tfmt.Print(\"=== RUN   TestAdd\\n--- PASS: TestAdd (0.00s)\\n=== RUN   TestAddZero\\n--- PASS: TestAddZero (0.00s)\\nPASS\\n\")\n\tos.Exit(0)\n}\n",
    );
    let Verdict::Fail(why) = tests_verdict(&go, &sandbox, &rt, &[forged]) else {
        panic!("a forged Go summary passes");
    };
    assert!(why.contains("0 of 1 test packages ran to the end"), "{why}");
    // Without it, the forgery does fool `go test -json` itself: the passes are its events.
    rt.block_on(sandbox.shutdown());
}
