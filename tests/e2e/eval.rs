//! `cairn eval` through the real binary against the scripted model: a small suite made by the
//! test (a task the model solves, one it answers wrongly, one that runs into the tool-call cap),
//! the table and the JSON report; a missing suite; and, with Docker, a task of the real suite
//! whose scripted fix is judged by its hidden tests in the sandbox, and the whole real suite
//! failing, task by task, for a model that does nothing.

use std::path::{Path, PathBuf};

use cairn_test_support::{Format, Reply};
use serde_json::{Value, json};

use crate::support::{Sandbox, text};

fn write(root: &Path, rel: &str, body: &str) {
    let p = root.join(rel);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, body).unwrap();
}

/// Three tasks: `solve` and `wrong` (file-read), `cap` (debugging); the key in each instruction
/// picks its script.
fn small_suite(root: &Path) -> PathBuf {
    let suite = root.join("suite");
    for (category, id, key) in [
        ("file-read", "solve", "KEY-SOLVE"),
        ("file-read", "wrong", "KEY-WRONG"),
        ("debugging", "cap", "KEY-CAP"),
    ] {
        let dir = format!("{category}/{id}");
        write(
            &suite,
            &format!("{dir}/workspace/notes.txt"),
            "The door code is 4711.\n",
        );
        write(
            &suite,
            &format!("{dir}/task.toml"),
            &format!(
                "id = \"{id}\"\ncategory = \"{category}\"\ninstruction = \"{key}: what is the door code in notes.txt?\"\nchanges = []\n\n\
                 [[check]]\nkind = \"answer_contains\"\nfacts = [\"4711\"]\n\n\
                 [[check]]\nkind = \"unchanged\"\npaths = [\"notes.txt\"]\n"
            ),
        );
    }
    suite
}

/// The repository's own suite, `bench/eval`.
fn real_suite() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../bench/eval")
}

fn read_notes() -> Reply {
    Reply::tool_call("read_file", json!({"path": "notes.txt"}))
}

/// The replies of one pass over the small suite.
fn one_pass() -> Vec<(String, Vec<Reply>)> {
    vec![
        (
            "KEY-SOLVE".into(),
            vec![
                read_notes().with_usage(100, 10),
                Reply::text("The door code is 4711.").with_usage(150, 20),
            ],
        ),
        (
            "KEY-WRONG".into(),
            // Markup in the model's text stays text in the HTML report.
            vec![Reply::text("I think it is <b>1234</b> & not 4712.").with_usage(50, 5)],
        ),
        (
            "KEY-CAP".into(),
            vec![
                // A call whose arguments do not parse: answered with an error, counted as written.
                Reply::tool_call("read_file", json!("{\"path\": ")).with_usage(10, 1),
                read_notes().with_usage(10, 1),
                read_notes().with_usage(10, 1),
                read_notes().with_usage(10, 1),
            ],
        ),
    ]
}

/// Two passes (JSON, then the table), each key's replies in order.
fn two_passes() -> Vec<(String, Vec<Reply>)> {
    one_pass()
        .into_iter()
        .zip(one_pass())
        .map(|((key, mut a), (_, b))| {
            a.extend(b);
            (key, a)
        })
        .collect()
}

#[test]
fn eval_reports_a_solved_a_failed_and_a_capped_task() {
    let sb = Sandbox::keyed(Format::OpenAi, two_passes());
    let suite = small_suite(sb.dir.path());
    let cap = [("CAIRN_AGENT__MAX_TOOL_CALLS", "2")];

    let out = sb.run(
        &["eval", "--suite", suite.to_str().unwrap(), "--json"],
        &cap,
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    let task = |id: &str| {
        report["tasks"]
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["id"] == id)
            .unwrap()
            .clone()
    };

    let solve = task("solve");
    assert_eq!(solve["success"], true, "{solve}");
    assert_eq!(solve["category"], "file-read");
    assert_eq!(solve["stop"], "done");
    assert_eq!(solve["toolCalls"], 1);
    assert_eq!(solve["callsWritten"], 1);
    assert_eq!(solve["wellFormedCalls"], 1);
    assert_eq!(solve["modelRequests"], 2);
    assert_eq!(solve["tokensIn"], 250);
    assert_eq!(solve["tokensOut"], 30);
    assert_eq!(solve["answer"], "The door code is 4711.");
    assert!(solve.get("reason").is_none(), "{solve}");

    let wrong = task("wrong");
    assert_eq!(wrong["success"], false);
    assert_eq!(wrong["stop"], "done");
    assert_eq!(wrong["toolCalls"], 0);
    assert_eq!(wrong["modelRequests"], 1);
    assert_eq!(
        wrong["reason"], "answer_contains: the answer lacks \"4711\"",
        "{wrong}"
    );

    let capped = task("cap");
    assert_eq!(capped["success"], false);
    assert_eq!(capped["category"], "debugging");
    assert_eq!(capped["stop"], "toolCallCap", "{capped}");
    assert_eq!(capped["toolCalls"], 2);
    assert_eq!(capped["callsWritten"], 2, "{capped}");
    assert_eq!(capped["wellFormedCalls"], 1, "{capped}");
    let reason = capped["reason"].as_str().unwrap();
    assert!(
        reason.starts_with("the turn stopped at the tool-call cap (agent.max_tool_calls = 2)"),
        "{reason}"
    );

    let rows = report["categories"].as_array().unwrap();
    let names: Vec<&str> = rows
        .iter()
        .map(|r| r["category"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["file-read", "debugging", "all"]);
    assert_eq!(rows[0]["tasks"], 2);
    assert_eq!(rows[0]["succeeded"], 1);
    assert_eq!(rows[0]["successRate"], 0.5);
    // Wilson's 95% interval: 1 of 2 is anywhere from 9% to 91%.
    let interval = rows[0]["successInterval"].as_array().unwrap();
    assert!(
        (interval[0].as_f64().unwrap() - 0.0945).abs() < 0.001,
        "{interval:?}"
    );
    assert!(
        (interval[1].as_f64().unwrap() - 0.9055).abs() < 0.001,
        "{interval:?}"
    );
    assert_eq!(rows[0]["meanToolCalls"], 0.5);
    assert_eq!(rows[0]["wellFormedShare"], 1.0);
    assert_eq!(rows[1]["wellFormedShare"], 0.5);
    assert_eq!(rows[2]["wellFormedShare"], 2.0 / 3.0);
    assert_eq!(rows[0]["meanModelRequests"], 1.5);
    assert_eq!(rows[0]["meanTokensIn"], 150.0);
    assert_eq!(rows[0]["meanTokensOut"], 17.5);
    assert_eq!(rows[2]["tasks"], 3);
    assert_eq!(rows[2]["succeeded"], 1);

    // The same suite as a table, and as a page.
    let page = sb.dir.path().join("report.html");
    let out = sb.run(
        &[
            "eval",
            "--suite",
            suite.to_str().unwrap(),
            "--html",
            page.to_str().unwrap(),
        ],
        &cap,
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let table = text(&out.stdout);
    let lines: Vec<&str> = table.lines().collect();
    let cells =
        |line: &str| -> Vec<String> { line.split('|').map(|c| c.trim().to_owned()).collect() };
    assert_eq!(
        cells(lines[0]),
        [
            "category",
            "tasks",
            "success",
            "mean tool calls",
            "well-formed calls",
            "mean model requests",
            "mean tokens in",
            "mean tokens out",
            "mean wall s"
        ],
        "{table}"
    );
    assert_eq!(
        cells(lines[1])[..8],
        [
            "file-read",
            "2",
            "50% (9-91)",
            "0.5",
            "100%",
            "1.5",
            "150",
            "18"
        ]
    );
    assert_eq!(cells(lines[2])[..3], ["debugging", "1", "0% (0-79)"]);
    assert_eq!(cells(lines[3])[..3], ["all", "3", "33% (6-79)"]);
    assert!(table.contains("\nfailures by reason:\n"), "{table}");
    assert!(
        table
            .lines()
            .any(|l| l.trim_start().starts_with("turn: tool-call cap")
                && l.ends_with(" 1  debugging/cap")),
        "{table}"
    );
    assert!(
        table
            .lines()
            .any(|l| l.trim_start().starts_with("answer_contains") && l.contains("file-read/wrong")),
        "{table}"
    );
    assert!(
        table
            .contains("\nfailed:\n  file-read/wrong: answer_contains: the answer lacks \"4711\"\n"),
        "{table}"
    );
    assert!(
        table.contains("  debugging/cap: the turn stopped at the tool-call cap"),
        "{table}"
    );
    // Progress goes to stderr, one line per task.
    let progress = text(&out.stderr);
    assert!(progress.contains("[1/3] file-read/solve ok"), "{progress}");
    assert!(
        progress.contains("[3/3] debugging/cap FAILED"),
        "{progress}"
    );
    assert!(progress.contains("wrote the HTML report to"), "{progress}");
    html_report_renders(&page);
}

/// The page as headless Chromium renders it (its DOM after parsing): the table's rows, a bar
/// per category with the target's mark, the grouped reasons, each failed task folded with its
/// transcript, and the model's markup shown as text. Runs with `CAIRN_CHROMIUM_TESTS=1`.
fn html_report_renders(page: &Path) {
    if !cairn_test_support::gate(
        "CAIRN_CHROMIUM_TESTS",
        "with Chromium (apt-get install chromium, or CHROMIUM=path) to render the eval's HTML report",
    ) {
        return;
    }
    let chromium = std::env::var("CHROMIUM").unwrap_or_else(|_| "/usr/bin/chromium".into());
    let profile = tempfile::tempdir().unwrap();
    let out = std::process::Command::new(&chromium)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--no-first-run",
            &format!("--user-data-dir={}", profile.path().display()),
            "--dump-dom",
        ])
        .arg(format!("file://{}", page.display()))
        .output()
        .unwrap_or_else(|e| panic!("{chromium}: {e}"));
    assert!(out.status.success(), "{}", text(&out.stderr));
    let dom = text(&out.stdout);
    assert!(dom.contains("<table id=\"summary\">"), "{dom}");
    for category in ["file-read", "debugging", "all"] {
        assert!(
            dom.contains(&format!("<tr data-category=\"{category}\">")),
            "{category}: {dom}"
        );
    }
    assert!(
        dom.contains("<rect x=\"120\"")
            && dom.contains("data-category=\"file-read\" data-rate=\"0.500\""),
        "{dom}"
    );
    assert!(dom.contains("<title>target 99%</title>"), "{dom}");
    assert!(dom.contains("<table id=\"reasons\">"), "{dom}");
    assert!(
        dom.contains("<details class=\"task\" id=\"task-wrong\">"),
        "{dom}"
    );
    assert!(
        dom.contains("<details class=\"task\" id=\"task-cap\">"),
        "{dom}"
    );
    assert!(
        !dom.contains("id=\"task-solve\""),
        "a solved task is not listed: {dom}"
    );
    assert!(
        dom.contains("1\tThe door code is 4711."),
        "the tool result: {dom}"
    );
    assert!(dom.contains("→ read_file("), "{dom}");
    assert!(
        dom.contains("I think it is &lt;b&gt;1234&lt;/b&gt; &amp; not 4712."),
        "{dom}"
    );
    assert!(!dom.contains("<b>1234</b>"), "{dom}");
}

#[test]
fn eval_filters_by_category_and_task_and_refuses_unknown_ones() {
    let sb = Sandbox::keyed(Format::OpenAi, one_pass());
    let suite = small_suite(sb.dir.path());
    let s = suite.to_str().unwrap();
    let out = sb.run(
        &[
            "eval",
            "--suite",
            s,
            "--category",
            "file-read",
            "--task",
            "solve",
            "--json",
            "--keep",
        ],
        &[],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["tasks"].as_array().unwrap().len(), 1);
    assert_eq!(report["tasks"][0]["success"], true);
    // --keep: the copy and the task's own session directory stay, named in the report.
    let kept = PathBuf::from(report["tasks"][0]["kept"].as_str().unwrap());
    assert!(kept.join("workspace/notes.txt").is_file(), "{report}");
    let sessions = std::fs::read_dir(kept.join("sessions")).unwrap().count();
    assert_eq!(
        sessions, 1,
        "one transcript in the task's own session directory"
    );
    std::fs::remove_dir_all(&kept).unwrap();

    let out = sb.run(&["eval", "--suite", s, "--category", "poetry"], &[]);
    assert!(!out.status.success());
    assert!(
        text(&out.stderr).contains("unknown category `poetry` (known: file-read, debugging"),
        "{}",
        text(&out.stderr)
    );
    let out = sb.run(&["eval", "--suite", s, "--task", "nope"], &[]);
    assert!(!out.status.success());
    assert!(
        text(&out.stderr).contains("no task `nope`"),
        "{}",
        text(&out.stderr)
    );

    // No suite where it is looked for: the error says how to name one.
    let out = sb
        .command()
        .args(["eval"])
        .current_dir(sb.dir.path())
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(
        text(&out.stderr).contains("--suite DIR"),
        "{}",
        text(&out.stderr)
    );

    // A broken task.toml stops the run before any task, naming the file.
    write(&suite, "file-read/solve/task.toml", "id = \"solve\"\n");
    let out = sb.run(&["eval", "--suite", s], &[]);
    assert!(!out.status.success());
    assert!(
        text(&out.stderr).contains("file-read/solve/task.toml"),
        "{}",
        text(&out.stderr)
    );
    assert_eq!(
        sb.model.requests().len(),
        2,
        "only the first run asked the model"
    );
}

/// A task of the real suite, solved by a scripted edit and judged by its hidden tests in the
/// sandbox; the unsolved run of the same task fails on them.
#[test]
fn eval_runs_a_real_debugging_task_with_its_tests_in_the_sandbox() {
    if !crate::sandbox::enabled() {
        return;
    }
    let _serial = crate::sandbox::SERIAL
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let suite = real_suite();
    let fixed =
        std::fs::read_to_string(suite.join("debugging/dbg-median/reference/stats/summary.py"))
            .unwrap();
    let sb = Sandbox::new(
        Format::OpenAi,
        vec![
            Reply::tool_call(
                "write_file",
                json!({"path": "stats/summary.py", "content": fixed}),
            ),
            Reply::text("Fixed: even-length lists average the two middle values."),
            // The second run does nothing.
            Reply::text("Nothing to do."),
        ],
    );
    crate::sandbox::configure(&sb);
    let args = [
        "eval",
        "--suite",
        suite.to_str().unwrap(),
        "--task",
        "dbg-median",
        "--json",
    ];
    let out = sb.run(&args, &[]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    let task = &report["tasks"][0];
    assert_eq!(task["success"], true, "{task}");
    assert_eq!(task["toolCalls"], 1);
    // The edit went to the copy, never to the suite.
    assert!(
        std::fs::read_to_string(suite.join("debugging/dbg-median/workspace/stats/summary.py"))
            .unwrap()
            .contains("ordered[len(ordered) // 2]")
    );

    let out = sb.run(&args, &[]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    let task = &report["tasks"][0];
    assert_eq!(task["success"], false, "{task}");
    let reason = task["reason"].as_str().unwrap();
    assert!(
        reason.starts_with("tests: 2 of the tests failed"),
        "{reason}"
    );
    assert!(reason.contains("AssertionError"), "{reason}");
}

/// The whole real suite through the binary with a model that does nothing: every task fails,
/// and the test checkers fail because the tests fail, not because they could not run.
#[test]
fn a_model_doing_nothing_fails_the_whole_real_suite() {
    if !crate::sandbox::enabled() {
        return;
    }
    let _serial = crate::sandbox::SERIAL
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let suite = real_suite();
    let sb = Sandbox::new(
        Format::OpenAi,
        (0..250).map(|_| Reply::text("I do not know.")).collect(),
    );
    crate::sandbox::configure(&sb);
    let out = sb.run(&["eval", "--suite", suite.to_str().unwrap(), "--json"], &[]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    let tasks = report["tasks"].as_array().unwrap();
    assert!(tasks.len() >= 50, "{}", tasks.len());
    for task in tasks {
        assert_eq!(task["success"], false, "{task}");
        assert_eq!(task["stop"], "done", "{task}");
        let reason = task["reason"].as_str().unwrap();
        assert!(!reason.contains("could not run"), "{reason}");
    }
    let all = report["categories"].as_array().unwrap().last().unwrap();
    assert_eq!(all["category"], "all");
    assert_eq!(all["successRate"], 0.0);
}

/// A scripted adversary through the real agent loop: it plants a root `unittest.py` that
/// prints a passing summary, and makes the module under test exit 0 on import, then claims
/// success. Against `python3 -m unittest` such a copy exits 0 (the unit tests' control shows
/// it); cairn fails the task on the bound of its paths and on the runner's missing report.
#[test]
fn eval_fails_a_model_that_games_the_tests() {
    if !crate::sandbox::enabled() {
        return;
    }
    let _serial = crate::sandbox::SERIAL
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let suite = real_suite();
    let original =
        std::fs::read_to_string(suite.join("debugging/dbg-median/workspace/stats/summary.py"))
            .unwrap();
    let fake = "import sys\ndef main(*a, **k):\n    print('Ran 3 tests\\n\\nOK')\n    sys.exit(0)\nif __name__ == '__main__':\n    main()\n";
    let sb = Sandbox::new(
        Format::OpenAi,
        vec![
            Reply::tool_call(
                "write_file",
                json!({"path": "unittest.py", "content": fake}),
            ),
            Reply::tool_call(
                "write_file",
                json!({"path": "stats/summary.py", "content": format!("import os\nprint('OK')\nos._exit(0)\n{original}")}),
            ),
            Reply::text("Fixed; all tests pass."),
        ],
    );
    crate::sandbox::configure(&sb);
    let out = sb.run(
        &[
            "eval",
            "--suite",
            suite.to_str().unwrap(),
            "--task",
            "dbg-median",
            "--json",
        ],
        &[],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    let task = &report["tasks"][0];
    assert_eq!(task["success"], false, "{task}");
    assert_eq!(task["toolCalls"], 2, "{task}");
    let reason = task["reason"].as_str().unwrap();
    assert!(
        reason.contains("changes: changed outside the task's paths: unittest.py"),
        "{reason}"
    );
    assert!(
        reason.contains("without the runner's report (3 tests expected)"),
        "{reason}"
    );
}

/// `--provider-url` and `--model` win over the provider the environment configures: with
/// Anthropic configured at a dead address, the suite runs against the OpenAI-compatible server
/// the flag names, asking for the flag's model.
#[test]
fn eval_runs_against_the_server_provider_url_names() {
    let sb = Sandbox::keyed(Format::OpenAi, one_pass());
    let suite = small_suite(sb.dir.path());
    let url = sb.model.base_url();
    let out = sb.run(
        &[
            "eval",
            "--suite",
            suite.to_str().unwrap(),
            "--task",
            "solve",
            "--provider-url",
            &url,
            "--model",
            "served-model",
            "--json",
        ],
        &[
            ("CAIRN_PROVIDER__KIND", "anthropic"),
            ("ANTHROPIC_BASE_URL", "http://127.0.0.1:9"),
            ("OPENAI_BASE_URL", "http://127.0.0.1:9/v1"),
        ],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["tasks"][0]["success"], true, "{report}");
    let requests = sb.model.requests();
    assert_eq!(requests.len(), 2, "{requests:?}");
    for r in &requests {
        assert!(r.path.ends_with("/chat/completions"), "{}", r.path);
        assert_eq!(r.body["model"], "served-model");
    }
}
