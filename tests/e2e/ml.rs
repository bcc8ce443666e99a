//! The AI/ML tools through the real binary: a tool that asks the model sends its own request
//! (no tools, the file's text), its answer goes back to the agent, and its tokens count in the
//! turn.

use serde_json::json;

use cairn_test_support::{Format, Reply};

use crate::support::{Editor, Sandbox, text};

#[test]
fn chat_summarize_text_asks_the_model_on_its_own_and_counts_the_tokens() {
    let sb = Sandbox::new(
        Format::OpenAi,
        vec![
            Reply::tool_call(
                "summarize_text",
                json!({"path": "minutes.md", "max_words": 30}),
            )
            .with_usage(100, 10),
            // The tool's own request.
            Reply::text("The team chose Postgres and ships on 3 March.").with_usage(40, 8),
            Reply::text("They chose Postgres; release on 3 March.").with_usage(150, 12),
        ],
    );
    sb.write(
        "minutes.md",
        "# Minutes\n\nAfter a long debate the team chose Postgres over MySQL.\n\
         The release ships on 3 March.\n",
    );
    let ws = sb.ws();
    let out = sb.run(
        &[
            "chat",
            "-w",
            ws.to_str().unwrap(),
            "--yes",
            "summarise minutes.md",
        ],
        &[],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(
        text(&out.stdout).trim(),
        "They chose Postgres; release on 3 March."
    );
    let requests = sb.model.requests();
    assert_eq!(requests.len(), 3, "{requests:#?}");
    let own = &requests[1].body;
    assert!(own.get("tools").is_none(), "{own}");
    assert!(
        own["messages"][0]["content"]
            .as_str()
            .unwrap()
            .contains("You summarise"),
        "{own}"
    );
    assert!(
        own["messages"][1]["content"]
            .as_str()
            .unwrap()
            .contains("chose Postgres over MySQL"),
        "{own}"
    );
    let last = requests[2].body.to_string();
    assert!(
        last.contains("The team chose Postgres and ships on 3 March."),
        "{last}"
    );
    // 100 + 40 + 150 in, 10 + 8 + 12 out.
    assert!(
        text(&out.stderr).contains("[1 tool calls, 290 tokens in, 30 out]"),
        "{}",
        text(&out.stderr)
    );
}

/// Semantic search from the editor: the agent's `semantic_search` over the workspace's files
/// finds the function a question describes, and the model reads file and lines.
#[test]
fn semantic_search_from_the_editor_finds_the_code_a_question_describes() {
    if !cairn_test_support::gate(
        "CAIRN_MODEL_TESTS",
        "(and lay the model with scripts/embedding-model)",
    ) {
        return;
    }
    let sb = Sandbox::new(
        Format::OpenAi,
        vec![
            Reply::tool_call(
                "semantic_search",
                json!({"query": "where do we retry failed uploads?", "limit": 3}),
            ),
            Reply::text("In src/transfer.rs, `send_with_backoff`."),
        ],
    );
    sb.write(
        "src/transfer.rs",
        "/// Sends the file to the bucket, trying again after a failure.\n\
         pub fn send_with_backoff(client: &Client, file: &Path) -> Result<(), Error> {\n\
         \x20   let mut delay = Duration::from_millis(200);\n\
         \x20   for attempt in 0..5 {\n\
         \x20       match client.put_object(file) {\n\
         \x20           Ok(()) => return Ok(()),\n\
         \x20           Err(e) if attempt < 4 => { sleep(delay); delay *= 2; }\n\
         \x20           Err(e) => return Err(e),\n\
         \x20       }\n\
         \x20   }\n\
         \x20   unreachable!()\n\
         }\n",
    );
    sb.write(
        "src/colors.rs",
        "/// Mixes two colours half and half.\npub fn blend(a: Rgb, b: Rgb) -> Rgb {\n    Rgb((a.0 + b.0) / 2, (a.1 + b.1) / 2, (a.2 + b.2) / 2)\n}\n",
    );
    sb.write(
        "docs/style.md",
        "# Style\n\nUse British spelling in comments and keep lines under 100 characters.\n",
    );
    let hf_home = std::env::var("HF_HOME")
        .unwrap_or_else(|_| format!("{}/.cache/huggingface", std::env::var("HOME").unwrap()));
    let mut ed = Editor::spawn(&sb, &[("HF_HOME", hf_home.as_str())]);
    ed.initialize(&sb, json!({}), false);
    let (run, _) = ed.chat(json!({"message": "where do we retry failed uploads?"}));
    let events = ed.finish(&run);
    let result = events
        .iter()
        .find(|e| e["kind"] == "toolResult")
        .unwrap_or_else(|| panic!("{events:#?}"));
    let shown = result["content"].as_str().unwrap();
    assert_eq!(result["isError"], false, "{shown}");
    // The retrying function comes first, with its lines.
    let first = shown
        .find("src/")
        .map(|at| &shown[at..])
        .unwrap_or_default();
    assert!(first.starts_with("src/transfer.rs"), "{shown}");
    assert!(shown.contains("send_with_backoff"), "{shown}");
    let last = sb.model.requests().last().unwrap().body.to_string();
    assert!(last.contains("src/transfer.rs"), "{last}");
}
