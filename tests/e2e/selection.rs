//! Tool selection through the real binary: each model request carries the core tools, a ranked
//! few and `tool_search` instead of the whole catalog; the filter runs through the configured
//! provider; `cairn select` and `cairn doctor` report, and the editor is told when the embedding
//! model is missing. Without the model (these tests' home has none) ranking is lexical; the test
//! with the model is gated by `CAIRN_MODEL_TESTS=1`.

use std::process::{Output, Stdio};

use cairn_test_support::{Format, Reply};
use serde_json::{Value, json};

use crate::support::{Editor, Sandbox};

const FILTER_MARKER: &str = "[cairn tool filter]";

fn run(sb: &Sandbox, args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut cmd = sb.command();
    cmd.args(args).stdin(Stdio::null());
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.output().unwrap()
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// The tool names an OpenAI-format request offered.
fn offered(body: &Value) -> Vec<String> {
    body["tools"]
        .as_array()
        .map(|tools| {
            tools
                .iter()
                .filter_map(|t| t["function"]["name"].as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default()
}

/// How many tools `cairn tools list` shows for the workspace.
fn catalog_size(sb: &Sandbox) -> usize {
    let ws = sb.ws();
    let out = run(
        sb,
        &["tools", "list", "--json", "-w", ws.to_str().unwrap()],
        &[],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let tools: Value = serde_json::from_slice(&out.stdout).unwrap();
    tools.as_array().unwrap().len()
}

#[test]
fn each_request_carries_a_selection_and_tool_search_pulls_in_more() {
    let sb = Sandbox::new(
        Format::OpenAi,
        vec![
            Reply::tool_call(
                "tool_search",
                json!({"query": "show what changed in a commit"}),
            ),
            Reply::text("Here is what changed."),
        ],
    );
    let ws = sb.ws();
    let out = run(
        &sb,
        &[
            "chat",
            "-w",
            ws.to_str().unwrap(),
            "--yes",
            "list the commit history of this repository",
        ],
        &[],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout).trim(), "Here is what changed.");
    let requests = sb.model.requests();
    assert_eq!(
        requests.len(),
        2,
        "no filter request: it is off in these tests"
    );
    let first = offered(&requests[0].body);
    let all = catalog_size(&sb);
    // Core tools (chat mode: edit_file is agent-only), at most 10 chosen, and tool_search.
    for core in ["read_file", "list_directory", "grep", "find_files"] {
        assert!(
            first.contains(&core.to_owned()),
            "{core} missing: {first:?}"
        );
    }
    assert!(!first.contains(&"edit_file".to_owned()), "{first:?}");
    assert!(first.contains(&"git_log".to_owned()), "{first:?}");
    assert_eq!(first.last().map(String::as_str), Some("tool_search"));
    assert!(first.len() <= 4 + 10 + 1, "{first:?}");
    assert!(
        all > 40 && first.len() < all / 2,
        "{} of {all}",
        first.len()
    );

    // tool_search answered with tools, and exactly those are offered from the next step on.
    let second = &requests[1].body;
    let found: String = second["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "tool")
        .filter_map(|m| m["content"].as_str())
        .collect();
    assert!(found.contains("available from your next step"), "{found}");
    let names: Vec<&str> = found
        .lines()
        .filter_map(|l| l.strip_prefix("- "))
        .filter_map(|l| l.split(':').next())
        .collect();
    assert!(!names.is_empty(), "{found}");
    assert!(names.contains(&"git_show"), "{found}");
    let second_offered = offered(second);
    for name in &names {
        assert!(
            second_offered.contains(&name.to_string()),
            "{name} was found but not offered: {second_offered:?}"
        );
    }
}

#[test]
fn the_filter_asks_the_provider_and_narrows_the_candidates() {
    let sb = Sandbox::keyed(
        Format::OpenAi,
        vec![
            (
                FILTER_MARKER.to_owned(),
                vec![Reply::text("[\"git_log\", \"send_all_secrets\"]")],
            ),
            (String::new(), vec![Reply::text("Three commits.")]),
        ],
    );
    let ws = sb.ws();
    let out = run(
        &sb,
        &[
            "chat",
            "-w",
            ws.to_str().unwrap(),
            "--yes",
            "list the commit history of this repository",
        ],
        &[("CAIRN_SELECTION__FILTER", "true")],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout).trim(), "Three commits.");
    let requests = sb.model.requests();
    assert_eq!(requests.len(), 2);
    let filter = &requests[0].body;
    let prompt = filter["messages"].to_string();
    assert!(prompt.contains("Candidate tools"), "{prompt}");
    assert!(prompt.contains("git_log"), "{prompt}");
    assert!(
        offered(filter).is_empty(),
        "the filter request offers no tools"
    );
    // The filter's pick, less the name it made up, after the core tools.
    assert_eq!(
        offered(&requests[1].body),
        [
            "read_file",
            "list_directory",
            "grep",
            "find_files",
            "git_log",
            "tool_search"
        ]
    );
}

#[test]
fn without_the_model_select_and_doctor_say_how_to_get_it_and_keywords_still_choose() {
    let sb = Sandbox::new(Format::OpenAi, vec![]);
    let ws = sb.ws();
    let out = run(
        &sb,
        &[
            "select",
            "-w",
            ws.to_str().unwrap(),
            "--no-filter",
            "--json",
            "list the commit history",
        ],
        &[],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr).contains("scripts/embedding-model"),
        "{}",
        text(&out.stderr)
    );
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    let names: Vec<&str> = report["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|t| t["name"].as_str())
        .collect();
    assert!(names.contains(&"git_log"), "{report}");
    assert!(report["lexicalOnly"].is_string(), "{report}");
    let offered = report["tokens"]["offered"].as_u64().unwrap();
    let catalog = report["tokens"]["catalog"].as_u64().unwrap();
    assert!(offered > 0 && offered * 2 < catalog, "{report}");
    assert_eq!(
        sb.model.requests().len(),
        0,
        "no filter request with --no-filter"
    );

    let out = run(&sb, &["doctor"], &[]);
    let stdout = text(&out.stdout);
    assert!(
        stdout.contains("note tool selection") && stdout.contains("scripts/embedding-model"),
        "{stdout}"
    );
}

#[test]
fn the_editor_is_told_when_the_model_is_missing_and_chat_still_works() {
    let sb = Sandbox::new(Format::OpenAi, vec![Reply::text("Hello.")]);
    let mut ed = Editor::spawn(&sb, &[]);
    ed.initialize(&sb, json!({}), false);
    let warning = ed.pump_until(
        |ed| {
            ed.notifications
                .iter()
                .find(|n| {
                    n["method"] == "window/showMessage"
                        && n["params"]["message"]
                            .as_str()
                            .unwrap_or_default()
                            .contains("keywords only")
                })
                .cloned()
        },
        "a warning about the missing model",
    );
    let message = warning["params"]["message"].as_str().unwrap();
    assert!(message.contains("scripts/embedding-model"), "{message}");
    assert_eq!(warning["params"]["type"], 2, "a warning, not an error");
    let (run, _) = ed.chat(json!({"message": "hi"}));
    let events = ed.finish(&run);
    assert_eq!(crate::support::text_of(&events), "Hello.");
    ed.shutdown();
}

/// With the real model (laid by `scripts/embedding-model`): dense ranking, no keyword note.
#[test]
fn with_the_model_select_ranks_by_meaning() {
    if std::env::var("CAIRN_MODEL_TESTS").as_deref() != Ok("1") {
        eprintln!(
            "skipped: set CAIRN_MODEL_TESTS=1 (and lay the model with scripts/embedding-model)"
        );
        return;
    }
    let sb = Sandbox::new(Format::OpenAi, vec![]);
    let ws = sb.ws();
    let hf_home = std::env::var("HF_HOME")
        .unwrap_or_else(|_| format!("{}/.cache/huggingface", std::env::var("HOME").unwrap()));
    let cache = sb.dir.path().join("embeddings");
    let out = run(
        &sb,
        &[
            "select",
            "-w",
            ws.to_str().unwrap(),
            "--no-filter",
            "--json",
            "who wrote this line and when",
        ],
        &[
            ("HF_HOME", hf_home.as_str()),
            ("CAIRN_CACHE_DIR", cache.to_str().unwrap()),
        ],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(report["lexicalOnly"].is_null(), "{report}");
    let names: Vec<&str> = report["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|t| t["name"].as_str())
        .collect();
    assert!(names.contains(&"git_blame"), "{report}");
    // The catalog's embeddings were cached on disk for the next process.
    let cached: u64 = std::fs::read_dir(&cache)
        .unwrap()
        .filter_map(Result::ok)
        .map(|e| e.metadata().unwrap().len())
        .sum();
    assert!(cached > 40 * 384 * 4, "{cached} bytes cached");
}
