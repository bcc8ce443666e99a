//! Dense ranking with the real embedder over a handful of tools.
//!
//! Needs the model in the Hugging Face cache (`scripts/embedding-model`), so it runs only with
//! `CAIRN_MODEL_TESTS=1`; otherwise it says why it skipped and passes.

use cairn_select::catalog::Tool;
use cairn_select::embed::{Embedder, ModelSpec};
use cairn_select::rank::{Index, Strategy};

fn model_tests_enabled() -> bool {
    cairn_test_support::gate(
        "CAIRN_MODEL_TESTS",
        "to run the embedding model tests (after scripts/embedding-model)",
    )
}

fn tool(name: &str, description: &str) -> Tool {
    Tool {
        id: name.to_owned(),
        server: "test".to_owned(),
        name: name.to_owned(),
        description: description.to_owned(),
        input_schema: serde_json::json!({}),
    }
}

#[test]
fn dense_ranking_puts_the_matching_tool_first() -> anyhow::Result<()> {
    if !model_tests_enabled() {
        return Ok(());
    }
    let tools = [
        tool("get_weather", "Current weather and forecast for a city"),
        tool("send_email", "Send an email message to a recipient"),
        tool(
            "create_calendar_event",
            "Add a meeting to the user's calendar",
        ),
        tool(
            "convert_currency",
            "Convert an amount between currencies at today's rate",
        ),
        tool("read_file", "Read the contents of a file from disk"),
    ];
    let texts: Vec<String> = tools.iter().map(Tool::retrieval_text).collect();
    let embedder = Embedder::load(ModelSpec::default())?;
    let index = Index::build(&embedder, &texts)?;
    let cases = [
        ("Will it rain in Paris tomorrow?", 0),
        ("Write to Bob and tell him I'm late", 1),
        ("Schedule a meeting with the team on Monday", 2),
        ("How many yen is 50 euros?", 3),
        ("Open the file notes.txt and show me its contents", 4),
    ];
    for (query, want) in cases {
        let top = index.top_k(&embedder, query, Strategy::Dense, 3)?;
        assert_eq!(top.first(), Some(&want), "{query}: {top:?}");
        assert_eq!(top.len(), 3);
        // Hybrid still finds it among the first two, even where BM25 shares no word with it.
        let hybrid = index.top_k(&embedder, query, Strategy::Hybrid, 2)?;
        assert!(hybrid.contains(&want), "{query}: hybrid {hybrid:?}");
    }
    Ok(())
}
