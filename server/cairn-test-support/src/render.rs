//! Renders a [`Reply`] in a provider's wire format: SSE event sequences for streaming
//! requests, one JSON document for non-streaming ones.
//!
//! Text and argument fragments are deliberately split small, as real providers do, so a
//! client's reassembly is exercised on every test.

use serde_json::{Value, json};

use crate::script::{Reply, ScriptedToolCall};

/// Characters per streamed text fragment.
const TEXT_PIECE: usize = 4;
/// Characters per streamed tool-argument fragment.
const ARGS_PIECE: usize = 5;

/// Facts about the request a rendering depends on.
pub(crate) struct Context {
    pub model: String,
    /// Sequence number of this reply, to make ids unique across a script.
    pub seq: usize,
    pub include_usage: bool,
    pub request_bytes: usize,
}

impl Context {
    fn usage(&self, reply: &Reply) -> (u64, u64) {
        match reply.usage {
            Some(u) => (u.input_tokens, u.output_tokens),
            None => {
                let args: usize = reply
                    .tool_calls
                    .iter()
                    .map(|c| c.raw_arguments().len())
                    .sum();
                let output = (reply.text.len() + args) / 4 + 1;
                ((self.request_bytes / 4 + 1) as u64, output as u64)
            }
        }
    }

    fn call_id(&self, prefix: &str, call: &ScriptedToolCall, index: usize) -> String {
        call.id
            .clone()
            .unwrap_or_else(|| format!("{prefix}_{}_{index}", self.seq))
    }
}

/// Split on character boundaries into pieces of at most `size` characters.
pub(crate) fn pieces(text: &str, size: usize) -> Vec<String> {
    let chars: Vec<char> = text.chars().collect();
    chars
        .chunks(size.max(1))
        .map(|c| c.iter().collect())
        .collect()
}

fn data(value: &Value) -> String {
    format!("data: {value}\n\n")
}

fn event(name: &str, value: &Value) -> String {
    format!("event: {name}\ndata: {value}\n\n")
}

/// OpenAI `chat.completion.chunk` events for `reply`, up to and including `[DONE]`.
/// With `partial`, only the role and text chunks (what is sent before a mid-stream fault).
pub(crate) fn openai_stream(reply: &Reply, ctx: &Context, partial: bool) -> Vec<String> {
    let id = format!("chatcmpl-scripted-{}", ctx.seq);
    let chunk = |choices: Value| {
        json!({
            "id": id, "object": "chat.completion.chunk", "created": 1_700_000_000u64,
            "model": ctx.model, "choices": choices,
        })
    };
    let delta = |delta: Value| chunk(json!([{"index": 0, "delta": delta, "finish_reason": null}]));

    let mut out = vec![data(&delta(json!({"role": "assistant", "content": ""})))];
    for piece in pieces(&reply.text, TEXT_PIECE) {
        out.push(data(&delta(json!({"content": piece}))));
    }
    if partial {
        return out;
    }
    for (index, call) in reply.tool_calls.iter().enumerate() {
        let head = json!({"tool_calls": [{
            "index": index, "id": ctx.call_id("call", call, index), "type": "function",
            "function": {"name": call.name, "arguments": ""},
        }]});
        out.push(data(&delta(head)));
        for piece in pieces(&call.raw_arguments(), ARGS_PIECE) {
            let more = json!({"tool_calls": [{"index": index, "function": {"arguments": piece}}]});
            out.push(data(&delta(more)));
        }
    }
    let finish = if reply.refused {
        "content_filter"
    } else if reply.tool_calls.is_empty() {
        "stop"
    } else {
        "tool_calls"
    };
    out.push(data(&chunk(
        json!([{"index": 0, "delta": {}, "finish_reason": finish}]),
    )));
    if ctx.include_usage {
        let (input, output) = ctx.usage(reply);
        let mut usage = chunk(json!([]));
        usage["usage"] = json!({
            "prompt_tokens": input, "completion_tokens": output, "total_tokens": input + output,
        });
        out.push(data(&usage));
    }
    out.push("data: [DONE]\n\n".to_owned());
    out
}

/// A non-streaming OpenAI `chat.completion`.
pub(crate) fn openai_json(reply: &Reply, ctx: &Context) -> Value {
    let (input, output) = ctx.usage(reply);
    let mut message = json!({"role": "assistant", "content": reply.text});
    if !reply.tool_calls.is_empty() {
        let calls: Vec<Value> = reply
            .tool_calls
            .iter()
            .enumerate()
            .map(|(index, call)| {
                json!({
                    "id": ctx.call_id("call", call, index), "type": "function",
                    "function": {"name": call.name, "arguments": call.raw_arguments()},
                })
            })
            .collect();
        message["tool_calls"] = Value::Array(calls);
    }
    let finish = if reply.refused {
        "content_filter"
    } else if reply.tool_calls.is_empty() {
        "stop"
    } else {
        "tool_calls"
    };
    json!({
        "id": format!("chatcmpl-scripted-{}", ctx.seq), "object": "chat.completion",
        "created": 1_700_000_000u64, "model": ctx.model,
        "choices": [{"index": 0, "message": message, "finish_reason": finish}],
        "usage": {"prompt_tokens": input, "completion_tokens": output, "total_tokens": input + output},
    })
}

/// Anthropic message events for `reply`, up to and including `message_stop`.
/// With `partial`, only the start and the text deltas (what is sent before a mid-stream fault).
pub(crate) fn anthropic_stream(reply: &Reply, ctx: &Context, partial: bool) -> Vec<String> {
    let (input, output) = ctx.usage(reply);
    let mut out = vec![event(
        "message_start",
        &json!({"type": "message_start", "message": {
            "id": format!("msg_scripted_{}", ctx.seq), "type": "message", "role": "assistant",
            "model": ctx.model, "content": [], "stop_reason": null, "stop_sequence": null,
            "usage": {"input_tokens": input, "output_tokens": 1},
        }}),
    )];
    out.push(event("ping", &json!({"type": "ping"})));
    let mut index = 0usize;
    if !reply.text.is_empty() || partial {
        out.push(event(
            "content_block_start",
            &json!({"type": "content_block_start", "index": index,
                    "content_block": {"type": "text", "text": ""}}),
        ));
        for piece in pieces(&reply.text, TEXT_PIECE) {
            out.push(event(
                "content_block_delta",
                &json!({"type": "content_block_delta", "index": index,
                        "delta": {"type": "text_delta", "text": piece}}),
            ));
        }
        if partial {
            return out;
        }
        out.push(event(
            "content_block_stop",
            &json!({"type": "content_block_stop", "index": index}),
        ));
        index += 1;
    }
    for (n, call) in reply.tool_calls.iter().enumerate() {
        out.push(event(
            "content_block_start",
            &json!({"type": "content_block_start", "index": index, "content_block": {
                "type": "tool_use", "id": ctx.call_id("toolu", call, n), "name": call.name,
                "input": {},
            }}),
        ));
        for piece in pieces(&call.raw_arguments(), ARGS_PIECE) {
            out.push(event(
                "content_block_delta",
                &json!({"type": "content_block_delta", "index": index,
                        "delta": {"type": "input_json_delta", "partial_json": piece}}),
            ));
        }
        out.push(event(
            "content_block_stop",
            &json!({"type": "content_block_stop", "index": index}),
        ));
        index += 1;
    }
    let stop = if reply.refused {
        "refusal"
    } else if reply.tool_calls.is_empty() {
        "end_turn"
    } else {
        "tool_use"
    };
    out.push(event(
        "message_delta",
        &json!({"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": null},
                "usage": {"output_tokens": output}}),
    ));
    out.push(event("message_stop", &json!({"type": "message_stop"})));
    out
}

/// A non-streaming Anthropic message.
pub(crate) fn anthropic_json(reply: &Reply, ctx: &Context) -> Value {
    let (input, output) = ctx.usage(reply);
    let mut content = Vec::new();
    if !reply.text.is_empty() {
        content.push(json!({"type": "text", "text": reply.text}));
    }
    for (n, call) in reply.tool_calls.iter().enumerate() {
        // Invalid scripted arguments cannot be an object; Anthropic would never send them.
        let input: Value = serde_json::from_str(&call.raw_arguments()).unwrap_or(json!({}));
        content.push(json!({
            "type": "tool_use", "id": ctx.call_id("toolu", call, n), "name": call.name,
            "input": input,
        }));
    }
    let stop = if reply.refused {
        "refusal"
    } else if reply.tool_calls.is_empty() {
        "end_turn"
    } else {
        "tool_use"
    };
    json!({
        "id": format!("msg_scripted_{}", ctx.seq), "type": "message", "role": "assistant",
        "model": ctx.model, "content": content, "stop_reason": stop, "stop_sequence": null,
        "usage": {"input_tokens": input, "output_tokens": output},
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pieces_respect_char_boundaries() {
        assert_eq!(pieces("héllo wörld", 4), vec!["héll", "o wö", "rld"]);
        assert!(pieces("", 4).is_empty());
    }
}
