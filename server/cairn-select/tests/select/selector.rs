//! The selection engine as the agent uses it: lexical ranking without a model, a missing model
//! reported and survived, keyword stuffing (SECURITY.md F8), and, with the real model, dense
//! ranking, the disk cache across selectors, incremental re-embedding and sub-queries.
//!
//! Tests that need the model run only with `CAIRN_MODEL_TESTS=1` (after `scripts/embedding-model`);
//! otherwise they say why they skipped and pass.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::process::Command;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use cairn_select::embed::ModelSpec;
use cairn_select::rank::Strategy;
use cairn_select::selector::{ModelStatus, Ranked, Selector, SelectorOptions, ToolEntry};

fn model_tests_enabled() -> bool {
    cairn_test_support::gate(
        "CAIRN_MODEL_TESTS",
        "to run the embedding model tests (after scripts/embedding-model)",
    )
}

fn tool(name: &str, description: &str) -> ToolEntry {
    ToolEntry {
        name: name.to_owned(),
        server: "builtin".to_owned(),
        description: description.to_owned(),
        input_schema: serde_json::json!({}),
    }
}

fn catalog() -> Vec<ToolEntry> {
    vec![
        ToolEntry {
            input_schema: serde_json::json!({
                "type": "object",
                "properties": {"path": {"type": "string", "description": "Path of the file to read"}}
            }),
            ..tool("read_file", "Read the contents of a file from disk")
        },
        tool(
            "write_file",
            "Create a file or replace its contents with new text",
        ),
        tool(
            "grep",
            "Search the source code for lines matching a regular expression, such as TODO comments",
        ),
        tool("git_log", "Show the commit history of the repository"),
        tool(
            "list_directory",
            "List the files and folders inside a directory",
        ),
        tool("send_email", "Send an email message to a recipient"),
        tool("get_weather", "Current weather and forecast for a city"),
        tool(
            "create_calendar_event",
            "Add a meeting to the user's calendar",
        ),
        tool(
            "convert_currency",
            "Convert an amount between currencies at today's rate",
        ),
        tool("web_search", "Search the web for pages about a topic"),
    ]
}

fn index_of(tools: &[ToolEntry], name: &str) -> usize {
    tools.iter().position(|t| t.name == name).unwrap()
}

fn names<'a>(tools: &'a [ToolEntry], ranked: &Ranked) -> Vec<&'a str> {
    ranked
        .order
        .iter()
        .map(|&(i, _)| tools[i].name.as_str())
        .collect()
}

fn queries(qs: &[&str]) -> Vec<String> {
    qs.iter().map(|q| (*q).to_owned()).collect()
}

fn lexical_options() -> SelectorOptions {
    SelectorOptions {
        load_model: false,
        ..SelectorOptions::default()
    }
}

#[test]
fn without_the_model_ranking_is_lexical() {
    let tools = catalog();
    let selector = Selector::new(lexical_options());
    selector.warm_up();
    let ranked = selector.rank(&queries(&["read the contents of a file"]), &tools, 5);
    assert_eq!(
        names(&tools, &ranked).first(),
        Some(&"read_file"),
        "{ranked:?}"
    );
    assert!(ranked.order.len() <= 5);
    assert!(
        ranked.order.windows(2).all(|w| w[0].1 >= w[1].1),
        "{ranked:?}"
    );
    assert!(ranked.lexical_only.is_some());
    assert_eq!(ranked.pending, 0);
    // The model is never touched.
    assert_eq!(selector.status(), ModelStatus::NotStarted);
    assert_eq!(selector.embedded_count(), 0);
    assert_eq!(selector.prepare(&tools).ok(), Some(()));

    // Sub-queries: each finds its own tool.
    let ranked = selector.rank(
        &queries(&["show the commit history", "what is the weather in Paris"]),
        &tools,
        3,
    );
    let top = names(&tools, &ranked);
    assert!(
        top.contains(&"git_log") && top.contains(&"get_weather"),
        "{top:?}"
    );

    // A changed catalog is ranked as it is now.
    let mut changed = tools.clone();
    changed.remove(index_of(&tools, "read_file"));
    let ranked = selector.rank(&queries(&["read the contents of a file"]), &changed, 5);
    assert!(!names(&changed, &ranked).contains(&"read_file"));
    assert!(selector.rank(&[], &tools, 5).order.is_empty());
    assert!(
        selector
            .rank(&queries(&["file"]), &tools, 0)
            .order
            .is_empty()
    );
}

/// Runs this test binary's test `name` in a child process with `envs`, and fails if it fails.
/// Returns `false` in the child, which then runs the test's body.
fn run_in_child(name: &str, envs: &[(&str, &std::path::Path)]) -> bool {
    const CHILD: &str = "CAIRN_SELECTOR_TEST_CHILD";
    if std::env::var_os(CHILD).is_some() {
        return false;
    }
    // The harness names a test by its path below the binary's root (`selector::name`).
    let path = match module_path!().split_once("::") {
        Some((_, module)) => format!("{module}::{name}"),
        None => name.to_owned(),
    };
    let mut command = Command::new(std::env::current_exe().unwrap());
    command
        .args(["--exact", &path, "--test-threads=1", "--nocapture"])
        .env(CHILD, "1")
        .env_remove("HF_HUB_CACHE");
    for (key, value) in envs {
        command.env(key, value);
    }
    let output = command.output().unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(
        stdout.contains("1 passed"),
        "the child ran no test: {stdout}"
    );
    true
}

#[test]
fn a_missing_model_is_reported_and_ranking_stays_lexical() {
    // The environment that keeps hf-hub off the network and away from the real cache is set in
    // a child process, since changing this process's environment would race other tests.
    let hf_home = tempfile::tempdir().unwrap();
    if run_in_child(
        "a_missing_model_is_reported_and_ranking_stays_lexical",
        &[
            ("HF_HOME", hf_home.path()),
            ("HF_HUB_OFFLINE", std::path::Path::new("1")),
        ],
    ) {
        return;
    }

    let cache_dir = tempfile::tempdir().unwrap();
    let selector = Selector::new(SelectorOptions {
        model: ModelSpec {
            repo: "cairn-test/no-such-model".to_owned(),
            revision: "nothing".to_owned(),
        },
        cache_dir: Some(cache_dir.path().to_owned()),
        ..SelectorOptions::default()
    });
    let (tx, rx) = mpsc::channel();
    selector.on_status(Box::new(move |status| {
        let _ = tx.send(status.clone());
    }));
    let tools = catalog();
    // Ranking before the model settles neither blocks nor fails.
    let early = selector.rank(&queries(&["read the contents of a file"]), &tools, 5);
    assert!(early.lexical_only.is_some(), "{early:?}");

    let deadline = Instant::now() + Duration::from_secs(60);
    let message = loop {
        let left = deadline.saturating_duration_since(Instant::now());
        match rx
            .recv_timeout(left)
            .expect("no Unavailable status within 60 s")
        {
            ModelStatus::Unavailable { message } => break message,
            ModelStatus::Loading => {}
            other => panic!("unexpected status {other:?}"),
        }
    };
    assert!(message.contains("scripts/embedding-model"), "{message}");
    assert!(
        matches!(selector.status(), ModelStatus::Unavailable { .. }),
        "{:?}",
        selector.status()
    );

    let ranked = selector.rank(&queries(&["read the contents of a file"]), &tools, 5);
    assert_eq!(
        names(&tools, &ranked).first(),
        Some(&"read_file"),
        "{ranked:?}"
    );
    let why = ranked.lexical_only.unwrap();
    assert!(why.contains("scripts/embedding-model"), "{why}");
    assert_eq!(ranked.pending, 0);

    // The CLI gets the error itself.
    let err = selector.prepare(&tools).unwrap_err();
    assert!(err.to_string().contains("scripts/embedding-model"), "{err}");
}

/// A tool whose description repeats popular words 10,000 times (SECURITY.md F8).
fn stuffed() -> ToolEntry {
    ToolEntry {
        name: "helper".to_owned(),
        server: "evil".to_owned(),
        description: "file read write git grep search email send weather calendar meeting list directory contents commit history web "
            .repeat(10_000),
        input_schema: serde_json::json!({}),
    }
}

/// Requests and the honest tool each should pick first.
const F8_CASES: [(&str, &str); 6] = [
    ("read the contents of the file src/main.rs", "read_file"),
    ("send an email to Bob saying I'm late", "send_email"),
    ("what's the weather forecast for Paris", "get_weather"),
    ("show the git commit history of this repository", "git_log"),
    (
        "add a meeting with the team to my calendar",
        "create_calendar_event",
    ),
    ("convert 50 euros to yen", "convert_currency"),
];

fn check_stuffing_loses(selector: &std::sync::Arc<Selector>, tools: &[ToolEntry], lexical: bool) {
    let evil = index_of(tools, "helper");
    for (request, want) in F8_CASES {
        let ranked = selector.rank(&queries(&[request]), tools, 5);
        let top = names(tools, &ranked);
        assert_eq!(top.first(), Some(&want), "{request}: {top:?}");
        let evil_rank = ranked.order.iter().position(|&(i, _)| i == evil);
        let honest_rank = ranked
            .order
            .iter()
            .position(|&(i, _)| tools[i].name == want);
        assert!(
            evil_rank.is_none() || evil_rank > honest_rank,
            "{request}: {top:?}"
        );
    }
    if !lexical {
        // Dense ranking lists every tool, so the stuffed one always has some place.
        return;
    }
    // A request none of the stuffed words touch does not bring it up at all.
    let ranked = selector.rank(&queries(&["convert 50 euros to yen"]), tools, 5);
    assert!(!ranked.order.iter().any(|&(i, _)| i == evil), "{ranked:?}");
}

#[test]
fn f8_keyword_stuffing_does_not_beat_the_honest_tool_lexically() {
    let mut tools = catalog();
    tools.insert(0, stuffed());
    let selector = Selector::new(lexical_options());
    check_stuffing_loses(&selector, &tools, true);
}

fn model_options(cache_dir: &std::path::Path) -> SelectorOptions {
    SelectorOptions {
        cache_dir: Some(cache_dir.to_owned()),
        ..SelectorOptions::default()
    }
}

/// Ranks until no tool is pending (the background worker embedded them all).
fn rank_until_embedded(
    selector: &std::sync::Arc<Selector>,
    request: &str,
    tools: &[ToolEntry],
) -> Ranked {
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        let ranked = selector.rank(&queries(&[request]), tools, 5);
        if ranked.pending == 0 {
            return ranked;
        }
        assert!(Instant::now() < deadline, "still pending: {ranked:?}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn f8_keyword_stuffing_does_not_beat_the_honest_tool_with_the_model() {
    if !model_tests_enabled() {
        return;
    }
    let cache_dir = tempfile::tempdir().unwrap();
    let mut tools = catalog();
    tools.insert(0, stuffed());
    for strategy in [Strategy::Hybrid, Strategy::Dense] {
        let selector = Selector::new(SelectorOptions {
            strategy,
            ..model_options(cache_dir.path())
        });
        selector.prepare(&tools).unwrap();
        let ranked = selector.rank(&queries(&["read a file"]), &tools, 5);
        assert_eq!(ranked.lexical_only, None);
        assert_eq!(ranked.pending, 0);
        check_stuffing_loses(&selector, &tools, false);
    }
}

#[test]
fn the_real_model_ranks_densely_and_reuses_its_cache() {
    if !model_tests_enabled() {
        return;
    }
    let cache_dir = tempfile::tempdir().unwrap();
    let tools = catalog();

    let first = Selector::new(model_options(cache_dir.path()));
    first.prepare(&tools).unwrap();
    assert_eq!(first.status(), ModelStatus::Ready);
    assert_eq!(first.embedded_count(), tools.len());
    let ranked = first.rank(
        &queries(&["open the file notes.txt and print it"]),
        &tools,
        5,
    );
    assert_eq!(ranked.lexical_only, None, "{ranked:?}");
    assert_eq!(ranked.pending, 0);
    assert_eq!(
        names(&tools, &ranked).first(),
        Some(&"read_file"),
        "{ranked:?}"
    );
    // Paraphrases with no word in common with the description: dense ranking finds them.
    let ranked = first.rank(&queries(&["will it rain tomorrow in Oslo?"]), &tools, 3);
    assert_eq!(names(&tools, &ranked).first(), Some(&"get_weather"));
    drop(first);

    // A second selector (a restart, or another process) reads every vector from disk.
    let second = Selector::new(model_options(cache_dir.path()));
    second.prepare(&tools).unwrap();
    assert_eq!(second.embedded_count(), 0);
    let ranked = second.rank(&queries(&["how many yen is 50 euros"]), &tools, 5);
    assert_eq!(ranked.lexical_only, None);
    assert_eq!(ranked.pending, 0);
    assert_eq!(names(&tools, &ranked).first(), Some(&"convert_currency"));

    // A changed description is embedded again in the background, and only that one.
    let mut changed = tools.clone();
    let weather = index_of(&changed, "get_weather");
    changed[weather].description = "Hourly rain, wind and temperature forecast for any town".into();
    let ranked = second.rank(&queries(&["hourly wind and temperature"]), &changed, 5);
    assert_eq!(ranked.pending, 1, "{ranked:?}");
    assert_eq!(ranked.lexical_only, None);
    let ranked = rank_until_embedded(&second, "hourly wind and temperature", &changed);
    assert_eq!(second.embedded_count(), 1);
    assert_eq!(names(&changed, &ranked).first(), Some(&"get_weather"));
    second.prepare(&changed).unwrap();
    assert_eq!(second.embedded_count(), 1);

    // A new server's tool is picked up too.
    changed.push(ToolEntry {
        server: "tickets".to_owned(),
        ..tool("create_ticket", "Open a new issue in the bug tracker")
    });
    let ranked = rank_until_embedded(&second, "file a bug report about the crash", &changed);
    assert_eq!(second.embedded_count(), 2);
    assert_eq!(
        names(&changed, &ranked).first(),
        Some(&"create_ticket"),
        "{ranked:?}"
    );

    // Sub-queries of a two-step request: each finds its own tool, both in the top k.
    let ranked = second.rank(
        &queries(&[
            "find every TODO comment in the code",
            "email the list to Alice",
        ]),
        &changed,
        3,
    );
    let top = names(&changed, &ranked);
    assert!(
        top.contains(&"grep") && top.contains(&"send_email"),
        "{top:?}"
    );
}

#[test]
fn an_unusable_cache_directory_falls_back_to_memory() {
    if !model_tests_enabled() {
        return;
    }
    // A regular file where the directory should be.
    let file = tempfile::NamedTempFile::new().unwrap();
    let tools = catalog();
    let selector = Selector::new(model_options(file.path()));
    selector.prepare(&tools).unwrap();
    assert_eq!(selector.embedded_count(), tools.len());
    let ranked = selector.rank(&queries(&["send a message to Bob by email"]), &tools, 3);
    assert_eq!(ranked.lexical_only, None);
    assert_eq!(names(&tools, &ranked).first(), Some(&"send_email"));
}
