//! Anthropic messages: the request body and the streamed event decoder.
//!
//! The API wants strictly shaped history: tool results as `tool_result` blocks in a user
//! message, tool inputs as JSON objects, no empty text blocks. The mapping below makes any
//! provider-neutral history fit, rather than failing a turn over an old message.

use std::collections::BTreeMap;

use cairn_agent::model::{Message, ModelError, ModelEvent, ModelRequest, ToolCallRequest, Usage};
use serde_json::{Value, json};

use crate::excerpt::excerpt;
use crate::key::ApiKey;
use crate::sse::SseEvent;
use crate::wire::{Decoder, Endpoints, RequestOptions, WireFormat};

/// Sent when the settings say 0 (no limit): the API requires some `max_tokens`.
const DEFAULT_MAX_TOKENS: u32 = 8192;

/// The Anthropic messages API.
pub(crate) struct Anthropic;

impl WireFormat for Anthropic {
    fn name(&self) -> &'static str {
        "anthropic"
    }

    fn default_key_setting(&self) -> &'static str {
        "ANTHROPIC_API_KEY"
    }

    fn serves_claude(&self) -> bool {
        true
    }

    fn endpoints(&self, base: &str) -> Endpoints {
        // Tolerate a base that already ends in `/v1`, a common copy-paste.
        let root = base.strip_suffix("/v1").unwrap_or(base);
        Endpoints {
            chat: format!("{root}/v1/messages"),
            models: format!("{root}/v1/models"),
        }
    }

    fn key_header(&self, key: &ApiKey) -> (&'static str, String) {
        ("x-api-key", key.expose().to_owned())
    }

    fn fixed_headers(&self) -> &'static [(&'static str, &'static str)] {
        &[("anthropic-version", "2023-06-01")]
    }

    fn request_body(&self, options: RequestOptions<'_>, request: &ModelRequest) -> Value {
        request_body(options, request)
    }

    fn decoder(&self) -> Box<dyn Decoder> {
        Box::new(StreamDecoder::new(self.name()))
    }
}

pub(crate) fn request_body(options: RequestOptions<'_>, request: &ModelRequest) -> Value {
    let mut messages: Vec<(&str, Vec<Value>)> = Vec::new();
    // Consecutive messages of one role are merged into one: tool results that follow each
    // other become one user message, as the API expects after parallel tool calls.
    let mut push = |role: &'static str, blocks: Vec<Value>| {
        if blocks.is_empty() {
            return;
        }
        match messages.last_mut() {
            Some((last, content)) if *last == role => content.extend(blocks),
            _ => messages.push((role, blocks)),
        }
    };
    for message in &request.messages {
        match message {
            Message::User { text, images } => {
                let mut blocks: Vec<Value> = images
                    .iter()
                    .map(|image| {
                        json!({"type": "image", "source": {"type": "base64",
                               "media_type": image.mime_type, "data": image.data}})
                    })
                    .collect();
                blocks.extend(text_block(text));
                push("user", blocks);
            }
            Message::Assistant { text, tool_calls } => {
                let mut blocks = text_block(text);
                for call in tool_calls {
                    // `input` must be an object; arguments the model got wrong become `{}`
                    // so the conversation goes on and the tool result explains the error.
                    let input = serde_json::from_str::<Value>(&call.arguments)
                        .ok()
                        .filter(Value::is_object)
                        .unwrap_or_else(|| json!({}));
                    blocks.push(json!({"type": "tool_use", "id": call.id, "name": call.name, "input": input}));
                }
                push("assistant", blocks);
            }
            Message::Tool {
                call_id,
                content,
                is_error,
                ..
            } => {
                let mut block =
                    json!({"type": "tool_result", "tool_use_id": call_id, "content": content});
                if *is_error {
                    block["is_error"] = json!(true);
                }
                push("user", vec![block]);
            }
        }
    }
    let messages: Vec<Value> = messages
        .into_iter()
        .map(|(role, content)| json!({"role": role, "content": content}))
        .collect();
    let max_tokens = if options.max_tokens == 0 {
        DEFAULT_MAX_TOKENS
    } else {
        options.max_tokens
    };
    let mut body = json!({
        "model": options.model,
        "max_tokens": max_tokens,
        "messages": messages,
        "stream": true,
    });
    if !request.system.is_empty() {
        body["system"] = json!(request.system);
    }
    if !request.tools.is_empty() {
        let tools: Vec<Value> = request
            .tools
            .iter()
            .map(|t| json!({"name": t.name, "description": t.description, "input_schema": t.input_schema}))
            .collect();
        body["tools"] = Value::Array(tools);
    }
    body
}

/// The API rejects empty text blocks, so empty text is no block at all.
fn text_block(text: &str) -> Vec<Value> {
    if text.is_empty() {
        Vec::new()
    } else {
        vec![json!({"type": "text", "text": text})]
    }
}

struct ToolBlock {
    id: String,
    name: String,
    json: String,
    /// The `input` given at block start; used when no `input_json_delta` follows.
    start_input: Value,
}

pub(crate) struct StreamDecoder {
    provider: &'static str,
    tools: BTreeMap<u64, ToolBlock>,
    usage: Usage,
    usage_seen: bool,
    stop_reason: Option<String>,
    done: bool,
}

impl StreamDecoder {
    pub fn new(provider: &'static str) -> Self {
        Self {
            provider,
            tools: BTreeMap::new(),
            usage: Usage::default(),
            usage_seen: false,
            stop_reason: None,
            done: false,
        }
    }

    fn emit_tool(&mut self, index: u64, out: &mut Vec<ModelEvent>) {
        if let Some(block) = self.tools.remove(&index) {
            let arguments = if block.json.trim().is_empty() {
                if block.start_input.is_object() {
                    block.start_input.to_string()
                } else {
                    "{}".to_owned()
                }
            } else {
                block.json
            };
            out.push(ModelEvent::ToolCall(ToolCallRequest {
                id: block.id,
                name: block.name,
                arguments,
            }));
        }
    }

    fn read_usage(&mut self, usage: Option<&Value>) {
        let Some(usage) = usage.filter(|u| u.is_object()) else {
            return;
        };
        let count = |key: &str| usage.get(key).and_then(Value::as_u64);
        // Cached prompt tokens are input too; Anthropic reports them apart.
        let input = [
            "input_tokens",
            "cache_creation_input_tokens",
            "cache_read_input_tokens",
        ]
        .iter()
        .filter_map(|k| count(k))
        .reduce(|a, b| a + b);
        if let Some(input) = input {
            self.usage.input_tokens = input;
        }
        // `output_tokens` is cumulative, so the latest value is the total.
        if let Some(output) = count("output_tokens") {
            self.usage.output_tokens = output;
        }
        self.usage_seen = true;
    }
}

impl Decoder for StreamDecoder {
    fn event(&mut self, event: &SseEvent, out: &mut Vec<ModelEvent>) -> Result<(), ModelError> {
        let data: Value =
            serde_json::from_str(event.data.trim()).map_err(|e| ModelError::Malformed {
                provider: self.provider.to_owned(),
                detail: format!("{e} in `{}`", excerpt(&event.data)),
            })?;
        let kind = data
            .get("type")
            .and_then(Value::as_str)
            .or(event.event.as_deref())
            .unwrap_or("");
        let index = data.get("index").and_then(Value::as_u64).unwrap_or(0);
        match kind {
            "message_start" => self.read_usage(data.pointer("/message/usage")),
            "content_block_start" => {
                let block = data.get("content_block").unwrap_or(&Value::Null);
                match block.get("type").and_then(Value::as_str) {
                    Some("tool_use") => {
                        let field = |key: &str| {
                            block
                                .get(key)
                                .and_then(Value::as_str)
                                .unwrap_or("")
                                .to_owned()
                        };
                        let tool = ToolBlock {
                            id: field("id"),
                            name: field("name"),
                            json: String::new(),
                            start_input: block.get("input").cloned().unwrap_or(Value::Null),
                        };
                        self.tools.insert(index, tool);
                    }
                    Some("text") => {
                        if let Some(text) = block
                            .get("text")
                            .and_then(Value::as_str)
                            .filter(|t| !t.is_empty())
                        {
                            out.push(ModelEvent::TextDelta(text.to_owned()));
                        }
                    }
                    _ => {}
                }
            }
            "content_block_delta" => {
                let delta = data.get("delta").unwrap_or(&Value::Null);
                match delta.get("type").and_then(Value::as_str) {
                    Some("text_delta") => {
                        if let Some(text) = delta
                            .get("text")
                            .and_then(Value::as_str)
                            .filter(|t| !t.is_empty())
                        {
                            out.push(ModelEvent::TextDelta(text.to_owned()));
                        }
                    }
                    Some("input_json_delta") => {
                        let piece = delta
                            .get("partial_json")
                            .and_then(Value::as_str)
                            .unwrap_or("");
                        if let Some(tool) = self.tools.get_mut(&index) {
                            tool.json.push_str(piece);
                        }
                    }
                    // Thinking and signature deltas are not part of the answer.
                    _ => {}
                }
            }
            "content_block_stop" => self.emit_tool(index, out),
            "message_delta" => {
                if let Some(reason) = data.pointer("/delta/stop_reason").and_then(Value::as_str) {
                    self.stop_reason = Some(reason.to_owned());
                }
                self.read_usage(data.get("usage"));
            }
            "message_stop" => self.done = true,
            "error" => {
                let kind = data
                    .pointer("/error/type")
                    .and_then(Value::as_str)
                    .unwrap_or("");
                let message = data
                    .pointer("/error/message")
                    .and_then(Value::as_str)
                    .map_or_else(|| excerpt(&data.to_string()), excerpt);
                let status = if kind == "overloaded_error" { 529 } else { 500 };
                return Err(ModelError::Http {
                    provider: self.provider.to_owned(),
                    status,
                    message,
                });
            }
            // `ping` and event types added later.
            _ => {}
        }
        Ok(())
    }

    fn done(&self) -> bool {
        self.done
    }

    fn finish(&mut self, out: &mut Vec<ModelEvent>) -> bool {
        // A stop reason means the answer was complete even if `message_stop` was lost.
        if !self.done && self.stop_reason.is_none() {
            return false;
        }
        let open: Vec<u64> = self.tools.keys().copied().collect();
        for index in open {
            self.emit_tool(index, out);
        }
        if self.usage_seen {
            out.push(ModelEvent::Usage(self.usage));
        }
        out.push(ModelEvent::Finished {
            stop_reason: self.stop_reason.take(),
        });
        true
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use cairn_agent::model::ToolSpec;

    #[test]
    fn history_maps_to_strict_blocks() {
        let settings =
            crate::ProviderSettings::new(crate::ProviderKind::Anthropic, "m", "http://localhost");
        let call = |id: &str, args: &str| ToolCallRequest {
            id: id.into(),
            name: "f".into(),
            arguments: args.into(),
        };
        let request = ModelRequest {
            system: String::new(),
            messages: vec![
                Message::User {
                    text: "go".into(),
                    images: Vec::new(),
                },
                Message::Assistant {
                    text: String::new(),
                    tool_calls: vec![call("a", "{bad"), call("b", "[1]")],
                },
                Message::Tool {
                    call_id: "a".into(),
                    name: "f".into(),
                    content: "bad args".into(),
                    is_error: true,
                },
                Message::Tool {
                    call_id: "b".into(),
                    name: "f".into(),
                    content: "ok".into(),
                    is_error: false,
                },
                Message::User {
                    text: "more".into(),
                    images: Vec::new(),
                },
            ],
            tools: vec![ToolSpec {
                name: "f".into(),
                description: "d".into(),
                input_schema: json!({}),
            }],
        };
        let body = request_body(settings.request_options(), &request);
        assert!(body.get("system").is_none());
        assert_eq!(
            body["messages"],
            json!([
                {"role": "user", "content": [{"type": "text", "text": "go"}]},
                {"role": "assistant", "content": [
                    {"type": "tool_use", "id": "a", "name": "f", "input": {}},
                    {"type": "tool_use", "id": "b", "name": "f", "input": {}},
                ]},
                {"role": "user", "content": [
                    {"type": "tool_result", "tool_use_id": "a", "content": "bad args", "is_error": true},
                    {"type": "tool_result", "tool_use_id": "b", "content": "ok"},
                    {"type": "text", "text": "more"},
                ]},
            ])
        );
    }

    #[test]
    fn tool_without_deltas_uses_start_input() {
        let mut decoder = StreamDecoder::new("anthropic");
        let mut out = Vec::new();
        for data in [
            r#"{"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"t","name":"now","input":{}}}"#,
            r#"{"type":"content_block_stop","index":0}"#,
            r#"{"type":"message_delta","delta":{"stop_reason":"tool_use"},"usage":{"output_tokens":2}}"#,
        ] {
            decoder
                .event(
                    &SseEvent {
                        event: None,
                        data: data.into(),
                    },
                    &mut out,
                )
                .unwrap();
        }
        assert!(decoder.finish(&mut out));
        assert_eq!(
            out,
            vec![
                ModelEvent::ToolCall(ToolCallRequest {
                    id: "t".into(),
                    name: "now".into(),
                    arguments: "{}".into()
                }),
                ModelEvent::Usage(Usage {
                    input_tokens: 0,
                    output_tokens: 2
                }),
                ModelEvent::Finished {
                    stop_reason: Some("tool_use".into())
                },
            ]
        );
    }

    #[test]
    fn overloaded_errors_are_http_529() {
        let mut decoder = StreamDecoder::new("anthropic");
        let data = r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#;
        let error = decoder.event(
            &SseEvent {
                event: Some("error".into()),
                data: data.into(),
            },
            &mut Vec::new(),
        );
        assert!(matches!(error, Err(ModelError::Http { status: 529, .. })));
    }
}
