//! The scripted model as a raw HTTP client sees it: wire shapes, faults, recording.

#![allow(clippy::unwrap_used)]

use std::time::Duration;

use cairn_test_support::{Format, Reply, ScriptedModel};
use serde_json::{Value, json};

/// The `data:` payloads of an SSE body, in order.
fn data_lines(body: &str) -> Vec<String> {
    body.lines()
        .filter_map(|l| l.strip_prefix("data: "))
        .map(str::to_owned)
        .collect()
}

async fn post(url: String, body: Value) -> reqwest::Response {
    reqwest::Client::builder()
        .no_proxy()
        .build()
        .unwrap()
        .post(url)
        .json(&body)
        .send()
        .await
        .unwrap()
}

#[tokio::test]
async fn openai_streams_chunks_like_openai() {
    let reply =
        Reply::tool_calls(vec![("a", json!({"x": 1})), ("b", json!("{bad"))]).with_text("hello");
    let model = ScriptedModel::start(Format::OpenAi, vec![reply])
        .await
        .unwrap();
    let body = json!({"model": "m", "stream": true, "stream_options": {"include_usage": true},
                      "messages": [{"role": "user", "content": "hi"}]});
    let response = post(
        format!("{}/chat/completions", model.base_url()),
        body.clone(),
    )
    .await;
    assert_eq!(response.status(), 200);
    assert_eq!(response.headers()["content-type"], "text/event-stream");
    let lines = data_lines(&response.text().await.unwrap());
    assert_eq!(lines.last().unwrap(), "[DONE]");
    let chunks: Vec<Value> = lines[..lines.len() - 1]
        .iter()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(chunks[0]["choices"][0]["delta"]["role"], "assistant");
    let text: String = chunks
        .iter()
        .filter_map(|c| c["choices"][0]["delta"]["content"].as_str())
        .collect();
    assert_eq!(text, "hello");
    let args = |index: u64| -> String {
        chunks
            .iter()
            .filter_map(|c| c["choices"][0]["delta"]["tool_calls"][0].as_object())
            .filter(|call| call["index"] == index)
            .filter_map(|call| call["function"]["arguments"].as_str())
            .collect()
    };
    assert_eq!(args(0), r#"{"x":1}"#);
    assert_eq!(args(1), "{bad");
    let finish = &chunks[chunks.len() - 2];
    assert_eq!(finish["choices"][0]["finish_reason"], "tool_calls");
    assert!(
        chunks[chunks.len() - 1]["usage"]["prompt_tokens"]
            .as_u64()
            .unwrap()
            > 0
    );

    let recorded = model.requests();
    assert_eq!(recorded.len(), 1);
    assert_eq!(recorded[0].path, "/v1/chat/completions");
    assert_eq!(recorded[0].body, body);
    assert_eq!(model.remaining(), 0);

    // Exhausted scripts answer 500 so tests notice.
    let response = post(format!("{}/chat/completions", model.base_url()), body).await;
    assert_eq!(response.status(), 500);
    assert!(
        response
            .text()
            .await
            .unwrap()
            .contains("scripted model: script exhausted")
    );
}

#[tokio::test]
async fn openai_answers_non_streaming_requests_with_json() {
    let model = ScriptedModel::start(Format::OpenAi, vec![Reply::text("hi")])
        .await
        .unwrap();
    let body = json!({"model": "m", "messages": [{"role": "user", "content": "x"}]});
    let response = post(format!("{}/chat/completions", model.base_url()), body).await;
    let value: Value = response.json().await.unwrap();
    assert_eq!(value["choices"][0]["message"]["content"], "hi");
    let models = reqwest::get(format!("{}/models", model.base_url()))
        .await
        .unwrap();
    assert_eq!(models.status(), 200);
}

#[tokio::test]
async fn anthropic_streams_message_events() {
    let reply = Reply::tool_call("read", json!({"path": "a.rs"}))
        .with_text("ok")
        .with_usage(7, 9);
    let model = ScriptedModel::start(Format::Anthropic, vec![reply])
        .await
        .unwrap();
    let body = json!({"model": "m", "stream": true, "max_tokens": 10,
                      "messages": [{"role": "user", "content": [{"type": "text", "text": "hi"}]}]});
    let response = post(format!("{}/v1/messages", model.base_url()), body).await;
    assert_eq!(response.status(), 200);
    let text = response.text().await.unwrap();
    let events: Vec<&str> = text
        .lines()
        .filter_map(|l| l.strip_prefix("event: "))
        .collect();
    assert_eq!(events.first(), Some(&"message_start"));
    assert_eq!(events.last(), Some(&"message_stop"));
    let values: Vec<Value> = data_lines(&text)
        .iter()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let tool_start = values
        .iter()
        .find(|v| v["content_block"]["type"] == "tool_use")
        .unwrap();
    assert_eq!(tool_start["content_block"]["name"], "read");
    let json: String = values
        .iter()
        .filter_map(|v| v["delta"]["partial_json"].as_str())
        .collect();
    assert_eq!(json, r#"{"path":"a.rs"}"#);
    let delta = values
        .iter()
        .find(|v| v["type"] == "message_delta")
        .unwrap();
    assert_eq!(delta["delta"]["stop_reason"], "tool_use");
    assert_eq!(delta["usage"]["output_tokens"], 9);
}

#[tokio::test]
async fn status_faults_carry_retry_after_and_are_recorded() {
    let replies = vec![Reply::status(429, r#"{"error":{"message":"slow down"}}"#).retry_after("1")];
    let model = ScriptedModel::start(Format::Anthropic, replies)
        .await
        .unwrap();
    let response = post(format!("{}/v1/messages", model.base_url()), json!({})).await;
    assert_eq!(response.status(), 429);
    assert_eq!(response.headers()["retry-after"], "1");
    assert_eq!(model.requests().len(), 1);
}

#[tokio::test]
async fn keyed_scripts_follow_the_first_user_message() {
    let keyed = vec![
        ("alpha".to_owned(), vec![Reply::text("A")]),
        ("beta".to_owned(), vec![Reply::text("B")]),
    ];
    let model = ScriptedModel::start_keyed(Format::OpenAi, keyed)
        .await
        .unwrap();
    let ask = |prompt: &str| {
        json!({"model": "m", "messages": [{"role": "system", "content": "alpha"},
                                          {"role": "user", "content": prompt}]})
    };
    let url = format!("{}/chat/completions", model.base_url());
    let b: Value = post(url.clone(), ask("say beta"))
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(b["choices"][0]["message"]["content"], "B");
    let a: Value = post(url.clone(), ask("say alpha"))
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(a["choices"][0]["message"]["content"], "A");
    assert_eq!(post(url, ask("say beta")).await.status(), 500);
}

#[tokio::test]
async fn a_client_leaving_a_stalled_stream_is_noticed() {
    let model = ScriptedModel::start(Format::OpenAi, vec![Reply::stall("par")])
        .await
        .unwrap();
    let body = json!({"model": "m", "stream": true, "messages": []});
    let mut response = post(format!("{}/chat/completions", model.base_url()), body).await;
    assert!(response.chunk().await.unwrap().is_some());
    drop(response);
    for _ in 0..100 {
        if model.dropped_responses() == 1 {
            return;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    panic!("the server did not notice the client leaving");
}
