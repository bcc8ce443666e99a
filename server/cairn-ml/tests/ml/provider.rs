//! The tools that ask the agent's model (summarise, translate, extract, describe a picture),
//! against the scripted model server speaking the OpenAI and Anthropic formats: the request
//! each sends (no tools, the text redacted, the picture attached) is asserted, the answer is
//! what the model reads, and the tokens are reported for the turn's usage.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::sync::Arc;

use cairn_agent::model::{SharedModel, Usage};
use cairn_agent::redact::Redact;
use cairn_agent::tools::usage_of;
use cairn_llm::{ProviderKind, ProviderSettings};
use cairn_ml::{Ml, ml_tools};
use cairn_select::embed::ModelSpec;
use cairn_test_support::tools::{call, call_with};
use cairn_test_support::{Format, Reply, ScriptedModel};
use cairn_workspace::{AccessRules, ExactApprovals, Workspace};
use serde_json::{Value, json};

/// Replaces the one secret the tests plant, as the vault's redactor would.
struct Planted;

impl Redact for Planted {
    fn redact(&self, text: &str) -> String {
        text.replace("hunter2-0123456789", "[REDACTED:db]")
    }
}

fn workspace(dir: &Path) -> Arc<Workspace> {
    Arc::new(
        Workspace::new(vec![dir.to_path_buf()])
            .unwrap()
            .with_access(
                |_| AccessRules::new("ada@example.com", None, None),
                ExactApprovals::new(),
            ),
    )
}

/// The tools over `dir`, asking `server` as the model `model` (OpenAI format unless
/// `anthropic`).
fn tools(
    dir: &Path,
    server: &ScriptedModel,
    model: &str,
    kind: ProviderKind,
) -> cairn_toolkit::ToolSet<Ml> {
    let settings = ProviderSettings::new(kind, model, server.base_url());
    let shared = SharedModel::default();
    shared.set(cairn_llm::client(settings).unwrap());
    ml_tools(
        Ml::new(Some(workspace(dir)), ModelSpec::default())
            .with_model(shared)
            .with_redactor(Arc::new(Planted)),
    )
}

fn openai(dir: &Path, server: &ScriptedModel) -> cairn_toolkit::ToolSet<Ml> {
    tools(dir, server, "gpt-4o-mini", ProviderKind::OpenAiCompatible)
}

/// The system prompt and the user message's content of an OpenAI-format request.
fn openai_parts(body: &Value) -> (String, Value) {
    let messages = body["messages"].as_array().unwrap();
    assert_eq!(messages.len(), 2, "{body}");
    assert_eq!(messages[0]["role"], "system");
    assert_eq!(messages[1]["role"], "user");
    (
        messages[0]["content"].as_str().unwrap().to_owned(),
        messages[1]["content"].clone(),
    )
}

#[tokio::test]
async fn summarize_sends_the_file_without_tools_and_counts_the_tokens() {
    let dir = tempfile::tempdir().unwrap();
    let report = "Quarterly report. Revenue grew 12% to 4.2M EUR. The Berlin office opens in May. \
                  The database password is hunter2-0123456789 and must be rotated.\n";
    std::fs::write(dir.path().join("report.txt"), report).unwrap();
    let server = ScriptedModel::start(
        Format::OpenAi,
        vec![Reply::text("Revenue grew 12% to 4.2M EUR; Berlin opens in May.").with_usage(120, 17)],
    )
    .await
    .unwrap();
    let seen = call(
        &openai(dir.path(), &server),
        "summarize_text",
        json!({"path": "report.txt", "max_words": 40, "focus": "money"}),
    )
    .await;
    assert!(!seen.is_error, "{}", seen.text);
    assert_eq!(
        seen.text,
        "Revenue grew 12% to 4.2M EUR; Berlin opens in May."
    );
    assert_eq!(
        usage_of(&seen.result),
        Usage {
            input_tokens: 120,
            output_tokens: 17
        }
    );
    let requests = server.requests();
    assert_eq!(requests.len(), 1);
    let body = &requests[0].body;
    // A request of its own: never with tools.
    assert!(
        body.get("tools")
            .is_none_or(|t| t.as_array().is_some_and(Vec::is_empty)),
        "{body}"
    );
    let (system, user) = openai_parts(body);
    assert!(system.contains("about 40 words"), "{system}");
    assert!(system.contains("Concentrate on: money"), "{system}");
    let user = user.as_str().unwrap();
    assert!(user.contains("Revenue grew 12%"), "{user}");
    // The planted secret never leaves in the request.
    assert!(!body.to_string().contains("hunter2-0123456789"), "{body}");
    assert!(user.contains("[REDACTED:db]"), "{user}");
}

#[tokio::test]
async fn translate_names_the_languages_and_returns_the_translation() {
    let dir = tempfile::tempdir().unwrap();
    let server = ScriptedModel::start(
        Format::OpenAi,
        vec![Reply::text("Guten Morgen, `cargo build` läuft.\n").with_usage(30, 9)],
    )
    .await
    .unwrap();
    let seen = call(
        &openai(dir.path(), &server),
        "translate_text",
        json!({"text": "Good morning, `cargo build` is running.", "to": "German", "from": "English"}),
    )
    .await;
    assert!(!seen.is_error, "{}", seen.text);
    assert_eq!(seen.text, "Guten Morgen, `cargo build` läuft.");
    let (system, user) = openai_parts(&server.requests()[0].body);
    assert!(system.contains("from English into German"), "{system}");
    assert_eq!(user, "Good morning, `cargo build` is running.");
    assert_eq!(
        usage_of(&seen.result),
        Usage {
            input_tokens: 30,
            output_tokens: 9
        }
    );
}

fn invoice_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "invoice": {"type": "string"},
            "total": {"type": "number"},
            "lines": {"type": "array", "items": {"type": "object",
                "properties": {"item": {"type": "string"}, "qty": {"type": "integer"}},
                "required": ["item", "qty"]}}
        },
        "required": ["invoice", "total", "lines"],
        "additionalProperties": false
    })
}

#[tokio::test]
async fn extraction_is_validated_and_retried_once_with_the_errors() {
    let dir = tempfile::tempdir().unwrap();
    let server = ScriptedModel::start(
        Format::OpenAi,
        vec![
            // First: the total as a string, and prose around it.
            Reply::text("Here it is: {\"invoice\": \"INV-7\", \"total\": \"99.5\", \"lines\": []}")
                .with_usage(200, 30),
            // Then: valid, in a code fence.
            Reply::text("```json\n{\"invoice\": \"INV-7\", \"total\": 99.5, \"lines\": [{\"item\": \"cable\", \"qty\": 3}]}\n```")
                .with_usage(260, 35),
        ],
    )
    .await
    .unwrap();
    let seen = call(
        &openai(dir.path(), &server),
        "extract_structured",
        json!({"text": "Invoice INV-7: 3 x cable, total 99.50 EUR", "schema": invoice_schema()}),
    )
    .await;
    assert!(!seen.is_error, "{}", seen.text);
    assert_eq!(
        seen.result.structured_content,
        Some(json!({"invoice": "INV-7", "total": 99.5, "lines": [{"item": "cable", "qty": 3}]}))
    );
    // Both requests' tokens count.
    assert_eq!(
        usage_of(&seen.result),
        Usage {
            input_tokens: 460,
            output_tokens: 65
        }
    );
    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    let (system, _) = openai_parts(&requests[0].body);
    assert!(
        system.contains("\"additionalProperties\":false"),
        "{system}"
    );
    let (_, retry) = openai_parts(&requests[1].body);
    let retry = retry.as_str().unwrap();
    assert!(
        retry.contains("Your previous answer was rejected: the answer is not JSON"),
        "{retry}"
    );
}

#[tokio::test]
async fn two_invalid_answers_are_reported_not_passed_on() {
    let dir = tempfile::tempdir().unwrap();
    let server = ScriptedModel::start(
        Format::OpenAi,
        vec![
            Reply::text("{\"invoice\": \"INV-7\", \"total\": \"a lot\", \"lines\": []}")
                .with_usage(10, 5),
            Reply::text("{\"invoice\": \"INV-7\", \"total\": \"still a lot\", \"lines\": []}")
                .with_usage(12, 6),
        ],
    )
    .await
    .unwrap();
    let seen = call(
        &openai(dir.path(), &server),
        "extract_structured",
        json!({"text": "Invoice INV-7", "schema": invoice_schema()}),
    )
    .await;
    assert!(seen.is_error, "{}", seen.text);
    assert!(
        seen.text
            .contains("did not produce valid data in two tries"),
        "{}",
        seen.text
    );
    assert!(seen.text.contains("at `/total`"), "{}", seen.text);
    assert_eq!(
        usage_of(&seen.result),
        Usage {
            input_tokens: 22,
            output_tokens: 11
        }
    );
    // The retry told the model what was wrong.
    let (_, retry) = openai_parts(&server.requests()[1].body);
    assert!(
        retry
            .as_str()
            .unwrap()
            .contains("does not match the schema"),
        "{retry}"
    );
}

#[tokio::test]
async fn a_schema_that_is_not_usable_is_refused_before_any_request() {
    let dir = tempfile::tempdir().unwrap();
    let server = ScriptedModel::start(Format::OpenAi, vec![]).await.unwrap();
    let tools = openai(dir.path(), &server);
    let seen = call(
        &tools,
        "extract_structured",
        json!({"text": "x", "schema": {"type": "no-such-type"}}),
    )
    .await;
    assert!(seen.is_error);
    assert!(
        seen.text.contains("the schema is not usable"),
        "{}",
        seen.text
    );
    let seen = call(
        &tools,
        "extract_structured",
        json!({"text": "x", "schema": [1, 2]}),
    )
    .await;
    assert!(
        seen.text.contains("must be a JSON Schema object"),
        "{}",
        seen.text
    );
    assert!(server.requests().is_empty());
}

/// A 2x2 PNG (red, green / blue, white), as `convert` writes it.
const PNG: &[u8] = &[
    0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x00, 0x00, 0x0d, 0x49, 0x48, 0x44, 0x52,
    0x00, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00, 0x02, 0x08, 0x02, 0x00, 0x00, 0x00, 0xfd, 0xd4, 0x9a,
    0x73, 0x00, 0x00, 0x00, 0x16, 0x49, 0x44, 0x41, 0x54, 0x78, 0x9c, 0x63, 0xf8, 0xcf, 0xc0, 0xc0,
    0xf0, 0x9f, 0x81, 0x81, 0x81, 0xe1, 0x3f, 0x10, 0xfc, 0x07, 0x00, 0x3d, 0xf6, 0x07, 0xf9, 0xc1,
    0x9d, 0x2f, 0x9e, 0x00, 0x00, 0x00, 0x00, 0x49, 0x45, 0x4e, 0x44, 0xae, 0x42, 0x60, 0x82,
];

#[tokio::test]
async fn a_picture_goes_to_a_model_that_reads_pictures_in_each_format() {
    use base64::Engine;
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("shot.png"), PNG).unwrap();
    let b64 = base64::engine::general_purpose::STANDARD.encode(PNG);

    let server = ScriptedModel::start(Format::OpenAi, vec![Reply::text("Four coloured squares.")])
        .await
        .unwrap();
    let seen = call(
        &openai(dir.path(), &server),
        "describe_image",
        json!({"path": "shot.png", "question": "Which colours?"}),
    )
    .await;
    assert!(!seen.is_error, "{}", seen.text);
    assert_eq!(seen.text, "Four coloured squares.");
    let (_, user) = openai_parts(&server.requests()[0].body);
    assert_eq!(user[0], json!({"type": "text", "text": "Which colours?"}));
    assert_eq!(
        user[1]["image_url"]["url"],
        format!("data:image/png;base64,{b64}")
    );

    let server = ScriptedModel::start(Format::Anthropic, vec![Reply::text("Squares.")])
        .await
        .unwrap();
    let tools = tools(
        dir.path(),
        &server,
        "claude-sonnet-4-5",
        ProviderKind::Anthropic,
    );
    let seen = call(&tools, "describe_image", json!({"path": "shot.png"})).await;
    assert!(!seen.is_error, "{}", seen.text);
    let body = &server.requests()[0].body;
    let content = &body["messages"][0]["content"];
    assert_eq!(
        content[0],
        json!({"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": b64}})
    );
    assert_eq!(content[1]["text"], "Describe this picture.");
}

#[tokio::test]
async fn not_a_picture_or_a_model_without_eyes_is_refused_before_any_request() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("fake.png"),
        b"<svg xmlns='http://www.w3.org/2000/svg'/>",
    )
    .unwrap();
    std::fs::write(dir.path().join("shot.png"), PNG).unwrap();
    let server = ScriptedModel::start(Format::OpenAi, vec![]).await.unwrap();
    let seen = call(
        &openai(dir.path(), &server),
        "describe_image",
        json!({"path": "fake.png"}),
    )
    .await;
    assert!(seen.is_error);
    assert!(
        seen.text
            .contains("fake.png is not a PNG, JPEG, GIF or WebP picture"),
        "{}",
        seen.text
    );

    let blind = tools(
        dir.path(),
        &server,
        "gpt-3.5-turbo",
        ProviderKind::OpenAiCompatible,
    );
    let seen = call(&blind, "describe_image", json!({"path": "shot.png"})).await;
    assert!(seen.is_error);
    assert!(
        seen.text.contains("(gpt-3.5-turbo) does not read pictures"),
        "{}",
        seen.text
    );
    assert!(
        seen.text.contains("provider.images = true"),
        "{}",
        seen.text
    );
    assert!(server.requests().is_empty());
}

#[tokio::test]
async fn without_a_model_the_tools_say_where_they_work() {
    let dir = tempfile::tempdir().unwrap();
    let tools = ml_tools(Ml::new(Some(workspace(dir.path())), ModelSpec::default()));
    let seen = call(&tools, "summarize_text", json!({"text": "Some text."})).await;
    assert!(seen.is_error);
    assert!(
        seen.text.contains("no model is set up for this tool"),
        "{}",
        seen.text
    );
}

#[tokio::test]
async fn a_protected_file_is_refused_before_the_model_sees_it() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join(".env"), "DB_PASSWORD=hunter2\n").unwrap();
    let server = ScriptedModel::start(Format::OpenAi, vec![Reply::text("x")])
        .await
        .unwrap();
    let seen = call(
        &openai(dir.path(), &server),
        "summarize_text",
        json!({"path": ".env"}),
    )
    .await;
    assert!(seen.is_error, "{}", seen.text);
    assert!(server.requests().is_empty());
}

#[tokio::test]
async fn cancelling_stops_the_request() {
    let dir = tempfile::tempdir().unwrap();
    let server = ScriptedModel::start(Format::OpenAi, vec![Reply::stall("Once upon")])
        .await
        .unwrap();
    let tools = openai(dir.path(), &server);
    let cancel = tokio_util::sync::CancellationToken::new();
    let fire = cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(std::time::Duration::from_millis(300)).await;
        fire.cancel();
    });
    let seen = call_with(
        &tools,
        "summarize_text",
        json!({"text": "A long story."}),
        cancel,
    )
    .await;
    assert!(seen.is_error);
    assert_eq!(seen.text, "cancelled");
}
