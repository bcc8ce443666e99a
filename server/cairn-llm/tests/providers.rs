//! Both providers against the scripted model server over real loopback HTTP.
//!
//! Every scenario runs once per wire format (see `for_both_formats!` at the end).

#![allow(clippy::unwrap_used)]

use std::sync::Arc;
use std::time::{Duration, Instant};

use cairn_agent::model::{
    Message, ModelClient, ModelError, ModelEvent, ModelRequest, ToolCallRequest, ToolSpec, Usage,
};
use cairn_llm::{ApiKey, ProviderKind, ProviderSettings};
use cairn_test_support::{Format, Reply, ScriptedModel};
use futures::StreamExt;
use serde_json::{Value, json};

fn settings(format: Format, base_url: String) -> ProviderSettings {
    let kind = match format {
        Format::OpenAi => ProviderKind::OpenAiCompatible,
        Format::Anthropic => ProviderKind::Anthropic,
    };
    let mut settings = ProviderSettings::new(kind, "test-model", base_url);
    settings.api_key_setting = "TEST_API_KEY".to_owned();
    settings.max_retries = 2;
    settings.retry_base_delay = Duration::from_millis(5);
    settings.connect_timeout = Duration::from_secs(2);
    settings.idle_timeout = Duration::from_secs(5);
    settings.max_tokens = 1000;
    settings
}

fn client_for(model: &ScriptedModel, format: Format) -> Arc<dyn ModelClient> {
    cairn_llm::client(settings(format, model.base_url())).unwrap()
}

fn ask(text: &str) -> ModelRequest {
    ModelRequest {
        system: String::new(),
        messages: vec![Message::User {
            text: text.into(),
            images: Vec::new(),
        }],
        tools: vec![],
    }
}

/// Runs one request to the end: every event, then the error that ended it, if any.
async fn run(
    client: &dyn ModelClient,
    request: ModelRequest,
) -> (Vec<ModelEvent>, Option<ModelError>) {
    let mut stream = match client.stream(request).await {
        Ok(stream) => stream,
        Err(error) => return (Vec::new(), Some(error)),
    };
    let mut events = Vec::new();
    while let Some(item) = stream.next().await {
        match item {
            Ok(event) => events.push(event),
            Err(error) => {
                assert!(stream.next().await.is_none(), "an error ends the stream");
                return (events, Some(error));
            }
        }
    }
    (events, None)
}

async fn start(format: Format, replies: Vec<Reply>) -> (ScriptedModel, Arc<dyn ModelClient>) {
    let model = ScriptedModel::start(format, replies).await.unwrap();
    let client = client_for(&model, format);
    (model, client)
}

fn text_of(events: &[ModelEvent]) -> String {
    events
        .iter()
        .filter_map(|e| {
            if let ModelEvent::TextDelta(t) = e {
                Some(t.as_str())
            } else {
                None
            }
        })
        .collect()
}

fn calls_of(events: &[ModelEvent]) -> Vec<ToolCallRequest> {
    events
        .iter()
        .filter_map(|e| {
            if let ModelEvent::ToolCall(c) = e {
                Some(c.clone())
            } else {
                None
            }
        })
        .collect()
}

fn stop_reason(format: Format, tools: bool) -> Option<String> {
    Some(match (format, tools) {
        (Format::OpenAi, false) => "stop".to_owned(),
        (Format::OpenAi, true) => "tool_calls".to_owned(),
        (Format::Anthropic, false) => "end_turn".to_owned(),
        (Format::Anthropic, true) => "tool_use".to_owned(),
    })
}

async fn streams_text(format: Format) {
    let (_model, client) = start(format, vec![Reply::text("Hello, streaming world!")]).await;
    let (events, error) = run(&*client, ask("hi")).await;
    assert_eq!(error, None);
    assert_eq!(text_of(&events), "Hello, streaming world!");
    let deltas = events
        .iter()
        .filter(|e| matches!(e, ModelEvent::TextDelta(_)))
        .count();
    assert!(deltas > 1, "text arrives in pieces: {events:?}");
    assert_eq!(
        events.last(),
        Some(&ModelEvent::Finished {
            stop_reason: stop_reason(format, false)
        })
    );
}

async fn single_tool_call(format: Format) {
    let reply = Reply::tool_call(
        "read_file",
        json!({"path": "src/main.rs", "lines": [1, 20]}),
    )
    .with_call_id("call-1")
    .with_text("Let me look.");
    let (_model, client) = start(format, vec![reply]).await;
    let (events, error) = run(&*client, ask("read it")).await;
    assert_eq!(error, None);
    assert_eq!(text_of(&events), "Let me look.");
    let calls = calls_of(&events);
    assert_eq!(calls.len(), 1);
    assert_eq!(calls[0].id, "call-1");
    assert_eq!(calls[0].name, "read_file");
    let args: Value = serde_json::from_str(&calls[0].arguments).unwrap();
    assert_eq!(args, json!({"path": "src/main.rs", "lines": [1, 20]}));
    assert_eq!(
        events.last(),
        Some(&ModelEvent::Finished {
            stop_reason: stop_reason(format, true)
        })
    );
}

async fn parallel_tool_calls(format: Format) {
    let reply = Reply::tool_calls(vec![
        ("grep", json!({"pattern": "fn main", "path": "."})),
        ("broken", json!("{\"path\": \"unterminated")),
    ]);
    let (_model, client) = start(format, vec![reply]).await;
    let (events, error) = run(&*client, ask("search")).await;
    assert_eq!(error, None);
    let calls = calls_of(&events);
    assert_eq!(calls.len(), 2, "{events:?}");
    assert_eq!(calls[0].name, "grep");
    assert_eq!(
        serde_json::from_str::<Value>(&calls[0].arguments).unwrap(),
        json!({"pattern": "fn main", "path": "."})
    );
    assert_eq!(calls[1].name, "broken");
    assert_eq!(
        calls[1].arguments, "{\"path\": \"unterminated",
        "invalid JSON passes through raw"
    );
    assert_ne!(calls[0].id, calls[1].id);
}

async fn reports_usage(format: Format) {
    let (_model, client) = start(format, vec![Reply::text("counted").with_usage(11, 22)]).await;
    let (events, error) = run(&*client, ask("count")).await;
    assert_eq!(error, None);
    let usage: Vec<&ModelEvent> = events
        .iter()
        .filter(|e| matches!(e, ModelEvent::Usage(_)))
        .collect();
    assert_eq!(
        usage,
        vec![&ModelEvent::Usage(Usage {
            input_tokens: 11,
            output_tokens: 22
        })]
    );
}

async fn honours_retry_after(format: Format) {
    // Retry-After 0 wins over a long backoff.
    let replies = vec![
        Reply::status(429, r#"{"error":{"message":"rate limited"}}"#).retry_after("0"),
        Reply::text("ok"),
    ];
    let model = ScriptedModel::start(format, replies).await.unwrap();
    let mut slow = settings(format, model.base_url());
    slow.retry_base_delay = Duration::from_secs(20);
    let client = cairn_llm::client(slow).unwrap();
    let started = Instant::now();
    let (events, error) = run(&*client, ask("hi")).await;
    assert_eq!(error, None);
    assert_eq!(text_of(&events), "ok");
    assert!(started.elapsed() < Duration::from_secs(5));
    assert_eq!(model.requests().len(), 2);

    // Retry-After 1 is waited for although backoff would be quicker.
    let replies = vec![
        Reply::status(429, "slow down").retry_after("1"),
        Reply::text("ok"),
    ];
    let (model, client) = start(format, replies).await;
    let started = Instant::now();
    let (events, error) = run(&*client, ask("hi")).await;
    assert_eq!(error, None);
    assert_eq!(text_of(&events), "ok");
    assert!(started.elapsed() >= Duration::from_millis(900));
    assert_eq!(model.requests().len(), 2);
}

async fn gives_up_after_max_retries(format: Format) {
    let unavailable = || Reply::status(503, r#"{"error":{"message":"upstream is down"}}"#);
    let (model, client) = start(
        format,
        vec![
            unavailable(),
            unavailable(),
            unavailable(),
            Reply::text("never"),
        ],
    )
    .await;
    let (_, error) = run(&*client, ask("hi")).await;
    match error {
        Some(ModelError::Http {
            status: 503,
            message,
            ..
        }) => assert!(message.contains("upstream is down"), "{message}"),
        other => panic!("expected HTTP 503, got {other:?}"),
    }
    assert_eq!(model.requests().len(), 3, "first try and max_retries = 2");
    assert_eq!(model.remaining(), 1);
}

async fn unauthorized_names_the_setting(format: Format) {
    let (model, client) = start(
        format,
        vec![Reply::status(
            401,
            r#"{"error":{"message":"invalid x-api-key"}}"#,
        )],
    )
    .await;
    let (_, error) = run(&*client, ask("hi")).await;
    let error = error.unwrap();
    assert!(
        matches!(&error, ModelError::Auth { status: 401, setting, .. } if setting == "TEST_API_KEY"),
        "{error:?}"
    );
    assert!(error.to_string().contains("TEST_API_KEY"));
    assert_eq!(model.requests().len(), 1, "auth failures are not retried");
}

async fn missing_model(format: Format) {
    let replies = vec![
        Reply::status(404, r#"{"error":{"message":"no such thing"}}"#),
        Reply::status(
            400,
            r#"{"error":{"message":"The model `test-model` does not exist"}}"#,
        ),
        Reply::status(400, r#"{"error":{"message":"max_tokens too large"}}"#),
    ];
    let (_model, client) = start(format, replies).await;
    for _ in 0..2 {
        let (_, error) = run(&*client, ask("hi")).await;
        assert!(
            matches!(&error, Some(ModelError::ModelNotFound { model, .. }) if model == "test-model"),
            "{error:?}"
        );
    }
    let (_, error) = run(&*client, ask("hi")).await;
    assert!(
        matches!(&error, Some(ModelError::Http { status: 400, .. })),
        "{error:?}"
    );
}

async fn garbage_is_malformed(format: Format) {
    let (_model, client) = start(format, vec![Reply::garbage()]).await;
    let (_, error) = run(&*client, ask("hi")).await;
    match error {
        Some(ModelError::Malformed { detail, .. }) => {
            assert!(detail.contains("{not json"), "{detail}");
            assert!(detail.len() < 400, "short excerpt: {detail}");
        }
        other => panic!("expected Malformed, got {other:?}"),
    }
}

async fn closed_mid_stream_is_truncated(format: Format) {
    let (_model, client) = start(format, vec![Reply::close_mid_stream("partial answer")]).await;
    let (events, error) = run(&*client, ask("hi")).await;
    assert_eq!(text_of(&events), "partial answer");
    assert!(
        !events
            .iter()
            .any(|e| matches!(e, ModelEvent::Finished { .. }))
    );
    assert!(
        matches!(error, Some(ModelError::Truncated { .. })),
        "{error:?}"
    );
}

async fn stall_is_detected(format: Format) {
    let model = ScriptedModel::start(format, vec![Reply::stall("I was saying")])
        .await
        .unwrap();
    let mut quick = settings(format, model.base_url());
    quick.idle_timeout = Duration::from_millis(300);
    let client = cairn_llm::client(quick).unwrap();
    let started = Instant::now();
    let (events, error) = run(&*client, ask("hi")).await;
    assert_eq!(text_of(&events), "I was saying");
    assert!(
        matches!(error, Some(ModelError::Stalled { .. })),
        "{error:?}"
    );
    assert!(started.elapsed() < Duration::from_secs(3));
    // Giving up on a stall closes the connection.
    let deadline = Instant::now() + Duration::from_secs(3);
    while model.dropped_responses() == 0 && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(model.dropped_responses(), 1);
}

async fn dropping_the_stream_aborts_the_request(format: Format) {
    let long = "word ".repeat(200);
    let (model, client) = start(format, vec![Reply::text(long).with_delay_ms(20)]).await;
    let mut stream = client.stream(ask("hi")).await.unwrap();
    assert!(stream.next().await.is_some());
    drop(stream);
    let deadline = Instant::now() + Duration::from_secs(3);
    while model.dropped_responses() == 0 && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(
        model.dropped_responses(),
        1,
        "the server saw the connection close"
    );
}

fn round_trip_request() -> ModelRequest {
    ModelRequest {
        system: "You are cairn.".into(),
        messages: vec![
            Message::User {
                text: "What is in a.txt?".into(),
                images: Vec::new(),
            },
            Message::Assistant {
                text: "Reading.".into(),
                tool_calls: vec![
                    ToolCallRequest {
                        id: "c1".into(),
                        name: "read_file".into(),
                        arguments: r#"{"path":"a.txt"}"#.into(),
                    },
                    ToolCallRequest {
                        id: "c2".into(),
                        name: "read_file".into(),
                        arguments: "{oops".into(),
                    },
                ],
            },
            Message::Tool {
                call_id: "c1".into(),
                name: "read_file".into(),
                content: "hello".into(),
                is_error: false,
            },
            Message::Tool {
                call_id: "c2".into(),
                name: "read_file".into(),
                content: "invalid arguments".into(),
                is_error: true,
            },
        ],
        tools: vec![ToolSpec {
            name: "read_file".into(),
            description: "Read a file in the workspace.".into(),
            input_schema: json!({"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}),
        }],
    }
}

async fn request_shape(format: Format) {
    let model = ScriptedModel::start(format, vec![Reply::text("It says hello.")])
        .await
        .unwrap();
    let mut keyed = settings(format, model.base_url());
    keyed.api_key = Some(ApiKey::new("sk-test-secret"));
    let client = cairn_llm::client(keyed).unwrap();
    let (_, error) = run(&*client, round_trip_request()).await;
    assert_eq!(error, None);
    let recorded = model.requests();
    assert_eq!(recorded.len(), 1);
    let request = &recorded[0];
    assert_eq!(request.method, "POST");
    let schema =
        json!({"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]});
    let expected = match format {
        Format::OpenAi => {
            assert_eq!(request.path, "/v1/chat/completions");
            assert_eq!(
                request.header("authorization"),
                Some("Bearer sk-test-secret")
            );
            json!({
                "model": "test-model", "stream": true, "stream_options": {"include_usage": true},
                "max_tokens": 1000,
                "messages": [
                    {"role": "system", "content": "You are cairn."},
                    {"role": "user", "content": "What is in a.txt?"},
                    {"role": "assistant", "content": "Reading.", "tool_calls": [
                        {"id": "c1", "type": "function", "function": {"name": "read_file", "arguments": "{\"path\":\"a.txt\"}"}},
                        {"id": "c2", "type": "function", "function": {"name": "read_file", "arguments": "{oops"}},
                    ]},
                    {"role": "tool", "tool_call_id": "c1", "content": "hello"},
                    {"role": "tool", "tool_call_id": "c2", "content": "Error: invalid arguments"},
                ],
                "tools": [{"type": "function", "function": {
                    "name": "read_file", "description": "Read a file in the workspace.", "parameters": schema,
                }}],
            })
        }
        Format::Anthropic => {
            assert_eq!(request.path, "/v1/messages");
            assert_eq!(request.header("x-api-key"), Some("sk-test-secret"));
            assert_eq!(request.header("anthropic-version"), Some("2023-06-01"));
            assert_eq!(request.header("authorization"), None);
            json!({
                "model": "test-model", "stream": true, "max_tokens": 1000, "system": "You are cairn.",
                "messages": [
                    {"role": "user", "content": [{"type": "text", "text": "What is in a.txt?"}]},
                    {"role": "assistant", "content": [
                        {"type": "text", "text": "Reading."},
                        {"type": "tool_use", "id": "c1", "name": "read_file", "input": {"path": "a.txt"}},
                        {"type": "tool_use", "id": "c2", "name": "read_file", "input": {}},
                    ]},
                    {"role": "user", "content": [
                        {"type": "tool_result", "tool_use_id": "c1", "content": "hello"},
                        {"type": "tool_result", "tool_use_id": "c2", "content": "invalid arguments", "is_error": true},
                    ]},
                ],
                "tools": [{"name": "read_file", "description": "Read a file in the workspace.", "input_schema": schema}],
            })
        }
    };
    assert_eq!(request.body, expected);
}

async fn no_key_on_loopback_sends_no_auth(format: Format) {
    let (model, client) = start(format, vec![Reply::text("hi")]).await;
    let (_, error) = run(&*client, ask("hi")).await;
    assert_eq!(error, None);
    let request = &model.requests()[0];
    assert_eq!(request.header("authorization"), None);
    assert_eq!(request.header("x-api-key"), None);
}

async fn refused_connection(format: Format) {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    drop(listener);
    let base = match format {
        Format::OpenAi => format!("http://127.0.0.1:{port}/v1"),
        Format::Anthropic => format!("http://127.0.0.1:{port}"),
    };
    let client = cairn_llm::client(settings(format, base)).unwrap();
    let (_, error) = run(&*client, ask("hi")).await;
    match error {
        Some(ModelError::Connect { url, .. }) => assert!(url.contains(&port.to_string()), "{url}"),
        other => panic!("expected Connect, got {other:?}"),
    }
}

async fn remote_without_key_is_not_configured(format: Format) {
    let result = cairn_llm::client(settings(format, "https://models.example.com/v1".into()));
    match result {
        Err(error @ ModelError::NotConfigured { .. }) => {
            assert!(error.to_string().contains("TEST_API_KEY"))
        }
        Err(other) => panic!("expected NotConfigured, got {other:?}"),
        Ok(_) => panic!("expected NotConfigured, got a client"),
    }
}

async fn probe_lists_models(format: Format) {
    let model = ScriptedModel::start(format, vec![]).await.unwrap();
    let mut probe_settings = settings(format, model.base_url());
    probe_settings.model = "scripted-model".into();
    let summary = cairn_llm::probe(&probe_settings).await.unwrap();
    assert!(
        summary.contains("1 models listed") && summary.contains("among them"),
        "{summary}"
    );
    let path = &model.requests()[0].path;
    assert!(path == "/v1/models", "{path}");
}

async fn errors_never_contain_the_key(format: Format) {
    let model = ScriptedModel::start(format, vec![Reply::status(500, "boom sk-not-echoed")])
        .await
        .unwrap();
    let mut keyed = settings(format, model.base_url());
    keyed.api_key = Some(ApiKey::new("sk-very-secret"));
    keyed.max_retries = 0;
    let client = cairn_llm::client(keyed).unwrap();
    let (_, error) = run(&*client, ask("hi")).await;
    let error = error.unwrap();
    assert!(!format!("{error} {error:?}").contains("sk-very-secret"));
    assert!(client.describe().contains("test-model"));
}

macro_rules! for_both_formats {
    ($($name:ident),* $(,)?) => {
        mod openai {
            $(#[tokio::test] async fn $name() { super::$name(cairn_test_support::Format::OpenAi).await })*
        }
        mod anthropic {
            $(#[tokio::test] async fn $name() { super::$name(cairn_test_support::Format::Anthropic).await })*
        }
    };
}

for_both_formats!(
    streams_text,
    single_tool_call,
    parallel_tool_calls,
    reports_usage,
    honours_retry_after,
    gives_up_after_max_retries,
    unauthorized_names_the_setting,
    missing_model,
    garbage_is_malformed,
    closed_mid_stream_is_truncated,
    stall_is_detected,
    dropping_the_stream_aborts_the_request,
    request_shape,
    no_key_on_loopback_sends_no_auth,
    refused_connection,
    remote_without_key_is_not_configured,
    probe_lists_models,
    errors_never_contain_the_key,
);
