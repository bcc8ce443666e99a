//! OpenAI-compatible chat completions: the request body and the streamed chunk decoder.
//!
//! Written against OpenAI's format; the differences seen in Ollama, vLLM, llama.cpp and
//! OpenRouter (missing ids or indexes, usage inside the finish chunk, no `[DONE]`) are
//! tolerated rather than special-cased.

use std::collections::BTreeMap;

use cairn_agent::model::{Message, ModelError, ModelEvent, ModelRequest, ToolCallRequest, Usage};
use serde_json::{Value, json};

use crate::excerpt::excerpt;
use crate::key::ApiKey;
use crate::sse::SseEvent;
use crate::wire::{Decoder, Endpoints, RequestOptions, WireFormat};

/// The OpenAI-compatible chat completions API.
pub(crate) struct OpenAi;

impl WireFormat for OpenAi {
    fn name(&self) -> &'static str {
        "openai-compatible"
    }

    fn default_key_setting(&self) -> &'static str {
        "OPENAI_API_KEY"
    }

    fn endpoints(&self, base: &str) -> Endpoints {
        Endpoints {
            chat: format!("{base}/chat/completions"),
            models: format!("{base}/models"),
        }
    }

    fn key_header(&self, key: &ApiKey) -> (&'static str, String) {
        ("authorization", format!("Bearer {}", key.expose()))
    }

    fn request_body(&self, options: RequestOptions<'_>, request: &ModelRequest) -> Value {
        request_body(options, request)
    }

    fn decoder(&self) -> Box<dyn Decoder> {
        Box::new(StreamDecoder::new(self.name()))
    }
}

pub(crate) fn request_body(options: RequestOptions<'_>, request: &ModelRequest) -> Value {
    let mut messages = Vec::new();
    if !request.system.is_empty() {
        messages.push(json!({"role": "system", "content": request.system}));
    }
    for message in &request.messages {
        messages.push(match message {
            Message::User { text, images } if images.is_empty() => {
                json!({"role": "user", "content": text})
            }
            Message::User { text, images } => {
                let mut parts = vec![json!({"type": "text", "text": text})];
                parts.extend(images.iter().map(|image| {
                    let url = format!("data:{};base64,{}", image.mime_type, image.data);
                    json!({"type": "image_url", "image_url": {"url": url}})
                }));
                json!({"role": "user", "content": parts})
            }
            Message::Assistant { text, tool_calls } if tool_calls.is_empty() => {
                json!({"role": "assistant", "content": text})
            }
            Message::Assistant { text, tool_calls } => {
                let calls: Vec<Value> = tool_calls
                    .iter()
                    .map(|call| {
                        // Sent as produced, even when not valid JSON: the model should see
                        // what it wrote, and the tool result explains what was wrong.
                        json!({"id": call.id, "type": "function",
                               "function": {"name": call.name, "arguments": call.arguments}})
                    })
                    .collect();
                let content = if text.is_empty() {
                    Value::Null
                } else {
                    json!(text)
                };
                json!({"role": "assistant", "content": content, "tool_calls": calls})
            }
            Message::Tool {
                call_id,
                content,
                is_error,
                ..
            } => {
                // The format has no error flag, so a failure is said in the content.
                let content = if *is_error {
                    format!("Error: {content}")
                } else {
                    content.clone()
                };
                json!({"role": "tool", "tool_call_id": call_id, "content": content})
            }
        });
    }
    let mut body = json!({
        "model": options.model,
        "messages": messages,
        "stream": true,
        "stream_options": {"include_usage": true},
    });
    if options.max_tokens > 0 {
        body["max_tokens"] = json!(options.max_tokens);
    }
    if !request.tools.is_empty() {
        let tools: Vec<Value> = request
            .tools
            .iter()
            .map(|tool| {
                json!({"type": "function", "function": {
                    "name": tool.name, "description": tool.description,
                    "parameters": tool.input_schema,
                }})
            })
            .collect();
        body["tools"] = Value::Array(tools);
    }
    body
}

#[derive(Default)]
struct PartialCall {
    id: String,
    name: String,
    arguments: String,
}

pub(crate) struct StreamDecoder {
    provider: &'static str,
    calls: BTreeMap<u64, PartialCall>,
    last_index: u64,
    stop_reason: Option<String>,
    finish_seen: bool,
    done: bool,
    usage: Option<Usage>,
}

impl StreamDecoder {
    pub fn new(provider: &'static str) -> Self {
        Self {
            provider,
            calls: BTreeMap::new(),
            last_index: 0,
            stop_reason: None,
            finish_seen: false,
            done: false,
            usage: None,
        }
    }

    fn malformed(&self, detail: String) -> ModelError {
        ModelError::Malformed {
            provider: self.provider.to_owned(),
            detail,
        }
    }

    fn flush_calls(&mut self, out: &mut Vec<ModelEvent>) {
        for (index, call) in std::mem::take(&mut self.calls) {
            let id = if call.id.is_empty() {
                format!("call_{index}")
            } else {
                call.id
            };
            // An argument-less call may arrive with no argument text at all.
            let arguments = if call.arguments.trim().is_empty() {
                "{}".to_owned()
            } else {
                call.arguments
            };
            out.push(ModelEvent::ToolCall(ToolCallRequest {
                id,
                name: call.name,
                arguments,
            }));
        }
    }

    fn tool_call_delta(&mut self, delta: &Value) {
        let id = delta
            .get("id")
            .and_then(Value::as_str)
            .filter(|id| !id.is_empty());
        let index = match delta.get("index").and_then(Value::as_u64) {
            Some(index) => index,
            // Without an index, a new id starts a new call and anything else continues one.
            None => match id {
                Some(id) if self.calls.get(&self.last_index).is_some_and(|c| c.id != id) => {
                    self.calls.keys().next_back().map_or(0, |k| k + 1)
                }
                _ => self.last_index,
            },
        };
        self.last_index = index;
        let call = self.calls.entry(index).or_default();
        if let Some(id) = id {
            call.id = id.to_owned();
        }
        let function = delta.get("function");
        if let Some(name) = function.and_then(|f| f.get("name")).and_then(Value::as_str)
            && call.name.is_empty()
        {
            call.name = name.to_owned();
        }
        if let Some(args) = function
            .and_then(|f| f.get("arguments"))
            .and_then(Value::as_str)
        {
            call.arguments.push_str(args);
        }
    }
}

impl Decoder for StreamDecoder {
    fn event(&mut self, event: &SseEvent, out: &mut Vec<ModelEvent>) -> Result<(), ModelError> {
        let data = event.data.trim();
        if data == "[DONE]" {
            self.done = true;
            return Ok(());
        }
        let chunk: Value = serde_json::from_str(data)
            .map_err(|e| self.malformed(format!("{e} in `{}`", excerpt(data))))?;
        if let Some(error) = chunk.get("error").filter(|e| !e.is_null()) {
            let message = error
                .get("message")
                .and_then(Value::as_str)
                .map_or_else(|| excerpt(&error.to_string()), excerpt);
            let status = error
                .get("code")
                .and_then(Value::as_u64)
                .and_then(|c| u16::try_from(c).ok());
            return Err(ModelError::Http {
                provider: self.provider.to_owned(),
                status: status.unwrap_or(500),
                message,
            });
        }
        if let Some(usage) = chunk.get("usage").filter(|u| u.is_object()) {
            let count = |key: &str| usage.get(key).and_then(Value::as_u64).unwrap_or(0);
            self.usage = Some(Usage {
                input_tokens: count("prompt_tokens"),
                output_tokens: count("completion_tokens"),
            });
        }
        let Some(choice) = chunk
            .get("choices")
            .and_then(Value::as_array)
            .and_then(|c| c.first())
        else {
            return Ok(());
        };
        if let Some(delta) = choice.get("delta") {
            if let Some(text) = delta.get("content").and_then(Value::as_str)
                && !text.is_empty()
            {
                out.push(ModelEvent::TextDelta(text.to_owned()));
            }
            if let Some(calls) = delta.get("tool_calls").and_then(Value::as_array) {
                for call in calls {
                    self.tool_call_delta(call);
                }
            }
        }
        if let Some(reason) = choice.get("finish_reason").and_then(Value::as_str) {
            self.flush_calls(out);
            self.stop_reason = Some(reason.to_owned());
            self.finish_seen = true;
        }
        Ok(())
    }

    fn done(&self) -> bool {
        self.done
    }

    fn finish(&mut self, out: &mut Vec<ModelEvent>) -> bool {
        if !self.done && !self.finish_seen {
            return false;
        }
        self.flush_calls(out);
        // Emitted once at the end: some servers repeat usage, and the agent adds them up.
        if let Some(usage) = self.usage.take() {
            out.push(ModelEvent::Usage(usage));
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

    /// Decodes the `data:` payloads in order and checks the events produced in total.
    #[track_caller]
    fn check(data: &[&str], expected: &[ModelEvent]) {
        let mut decoder = StreamDecoder::new("openai-compatible");
        let mut out = Vec::new();
        for d in data {
            decoder
                .event(
                    &SseEvent {
                        event: None,
                        data: (*d).to_owned(),
                    },
                    &mut out,
                )
                .unwrap();
        }
        assert!(decoder.finish(&mut out));
        assert_eq!(out, expected);
    }

    fn call(id: &str, name: &str, arguments: &str) -> ModelEvent {
        ModelEvent::ToolCall(ToolCallRequest {
            id: id.into(),
            name: name.into(),
            arguments: arguments.into(),
        })
    }

    #[test]
    fn calls_without_index_or_id_are_assembled() {
        check(
            &[
                r#"{"choices":[{"delta":{"tool_calls":[{"function":{"name":"a","arguments":"{\"x\""}}]}}]}"#,
                r#"{"choices":[{"delta":{"tool_calls":[{"function":{"arguments":":1}"}}]}}]}"#,
                r#"{"choices":[{"delta":{},"finish_reason":"tool_calls"}],"usage":{"prompt_tokens":3,"completion_tokens":4}}"#,
            ],
            &[
                call("call_0", "a", r#"{"x":1}"#),
                ModelEvent::Usage(Usage {
                    input_tokens: 3,
                    output_tokens: 4,
                }),
                ModelEvent::Finished {
                    stop_reason: Some("tool_calls".into()),
                },
            ],
        );
    }

    #[test]
    fn argument_less_calls_get_an_empty_object() {
        check(
            &[
                r#"{"choices":[{"delta":{"tool_calls":[{"index":0,"id":"c1","function":{"name":"now"}}]}}]}"#,
                r#"{"choices":[{"delta":{},"finish_reason":"tool_calls"}]}"#,
                "[DONE]",
            ],
            &[
                call("c1", "now", "{}"),
                ModelEvent::Finished {
                    stop_reason: Some("tool_calls".into()),
                },
            ],
        );
    }

    #[test]
    fn null_content_and_empty_choices_are_skipped() {
        check(
            &[
                r#"{"choices":[{"delta":{"content":null,"role":"assistant"}}]}"#,
                r#"{"choices":[]}"#,
                r#"{"choices":[{"delta":{"content":"hi"},"finish_reason":"stop"}]}"#,
            ],
            &[
                ModelEvent::TextDelta("hi".into()),
                ModelEvent::Finished {
                    stop_reason: Some("stop".into()),
                },
            ],
        );
    }

    #[test]
    fn error_chunks_become_errors() {
        let mut decoder = StreamDecoder::new("openai-compatible");
        let event = SseEvent {
            event: None,
            data: r#"{"error":{"message":"overloaded","code":503}}"#.into(),
        };
        let error = decoder.event(&event, &mut Vec::new()).unwrap_err();
        assert!(
            matches!(error, ModelError::Http { status: 503, .. }),
            "{error:?}"
        );
    }
}
