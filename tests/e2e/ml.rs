//! The AI/ML tools through the real binary: a tool that asks the model sends its own request
//! (no tools, the file's text), its answer goes back to the agent, and its tokens count in the
//! turn.

use serde_json::json;

use cairn_test_support::{Format, Reply};

use crate::support::{Sandbox, text};

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
