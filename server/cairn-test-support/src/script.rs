//! The script: what the scripted model answers, one [`Reply`] per model request.
//!
//! Replies are plain data so a script can live in a JSON file (see the `scripted-model`
//! binary) as well as in test code.

use serde::{Deserialize, Serialize};

/// One scripted answer to one model request.
#[derive(Clone, Debug, Default, PartialEq, Deserialize, Serialize)]
#[serde(rename_all = "camelCase", default)]
pub struct Reply {
    /// Text the model streams. With a mid-stream fault, the part streamed before the fault.
    pub text: String,
    /// Tool calls, all in this one response (parallel calls when more than one).
    pub tool_calls: Vec<ScriptedToolCall>,
    /// Pause between streamed chunks, so tests can observe streaming or cancel mid-answer.
    pub chunk_delay_ms: u64,
    /// Make this reply fail instead of answering normally.
    pub fault: Option<Fault>,
    /// Token counts to report; when absent, counts are derived from the sizes involved.
    pub usage: Option<ScriptedUsage>,
    /// The provider refuses: the response ends with OpenAI's `content_filter` finish reason or
    /// Anthropic's `refusal` stop reason.
    pub refused: bool,
}

/// Token counts the scripted model reports.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ScriptedUsage {
    pub input_tokens: u64,
    pub output_tokens: u64,
}

/// One tool call in a scripted reply.
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ScriptedToolCall {
    /// Call id; generated (`call_N` / `toolu_N`) when absent.
    #[serde(default)]
    pub id: Option<String>,
    pub name: String,
    /// Arguments. A JSON string value is sent as the raw argument text, which lets a script
    /// produce invalid JSON the way real models sometimes do.
    #[serde(default = "empty_object")]
    pub arguments: serde_json::Value,
}

fn empty_object() -> serde_json::Value {
    serde_json::Value::Object(serde_json::Map::new())
}

impl ScriptedToolCall {
    pub fn new(name: impl Into<String>, arguments: serde_json::Value) -> Self {
        Self {
            id: None,
            name: name.into(),
            arguments,
        }
    }

    /// The argument text as it goes on the wire.
    pub(crate) fn raw_arguments(&self) -> String {
        match &self.arguments {
            serde_json::Value::String(raw) => raw.clone(),
            other => other.to_string(),
        }
    }
}

/// A way for a reply to go wrong.
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[serde(tag = "kind", rename_all = "camelCase")]
pub enum Fault {
    /// Answer with this HTTP status and body (and a `Retry-After` header when given).
    #[serde(rename_all = "camelCase")]
    Status {
        status: u16,
        #[serde(default)]
        body: String,
        #[serde(default)]
        retry_after: Option<String>,
    },
    /// Answer 200 `text/event-stream` whose events are not JSON.
    Garbage,
    /// Stream the reply's text, then drop the connection without finishing the response.
    CloseMidStream,
    /// Stream the reply's text, then send nothing more until the client goes away.
    StallMidStream,
}

impl Reply {
    /// A plain text answer.
    pub fn text(text: impl Into<String>) -> Self {
        Self {
            text: text.into(),
            ..Self::default()
        }
    }

    /// A refusal: `text` (maybe empty), then the provider's refusal as the finish reason.
    pub fn refusal(text: impl Into<String>) -> Self {
        Self {
            text: text.into(),
            refused: true,
            ..Self::default()
        }
    }

    /// An answer that is one tool call.
    pub fn tool_call(name: impl Into<String>, arguments: serde_json::Value) -> Self {
        Self {
            tool_calls: vec![ScriptedToolCall::new(name, arguments)],
            ..Self::default()
        }
    }

    /// An answer with several tool calls in one response (parallel tool calls).
    pub fn tool_calls<N: Into<String>>(calls: Vec<(N, serde_json::Value)>) -> Self {
        let tool_calls = calls
            .into_iter()
            .map(|(name, args)| ScriptedToolCall::new(name, args))
            .collect();
        Self {
            tool_calls,
            ..Self::default()
        }
    }

    /// Add a tool call to this answer.
    pub fn with_tool_call(mut self, name: impl Into<String>, arguments: serde_json::Value) -> Self {
        self.tool_calls.push(ScriptedToolCall::new(name, arguments));
        self
    }

    /// Give the (last added) tool call an explicit id.
    pub fn with_call_id(mut self, id: impl Into<String>) -> Self {
        if let Some(call) = self.tool_calls.last_mut() {
            call.id = Some(id.into());
        }
        self
    }

    /// Set the text streamed with (before) the tool calls or the fault.
    pub fn with_text(mut self, text: impl Into<String>) -> Self {
        self.text = text.into();
        self
    }

    pub fn with_delay_ms(mut self, ms: u64) -> Self {
        self.chunk_delay_ms = ms;
        self
    }

    pub fn with_usage(mut self, input_tokens: u64, output_tokens: u64) -> Self {
        self.usage = Some(ScriptedUsage {
            input_tokens,
            output_tokens,
        });
        self
    }

    /// Answer with an HTTP error status and body.
    pub fn status(status: u16, body: impl Into<String>) -> Self {
        let fault = Fault::Status {
            status,
            body: body.into(),
            retry_after: None,
        };
        Self {
            fault: Some(fault),
            ..Self::default()
        }
    }

    /// Add a `Retry-After` header to a [`Reply::status`] reply; no effect on other replies.
    pub fn retry_after(mut self, value: impl Into<String>) -> Self {
        if let Some(Fault::Status { retry_after, .. }) = &mut self.fault {
            *retry_after = Some(value.into());
        }
        self
    }

    /// Answer 200 with event-stream data that is not JSON.
    pub fn garbage() -> Self {
        Self {
            fault: Some(Fault::Garbage),
            ..Self::default()
        }
    }

    /// Stream `partial_text`, then drop the connection.
    pub fn close_mid_stream(partial_text: impl Into<String>) -> Self {
        Self {
            text: partial_text.into(),
            fault: Some(Fault::CloseMidStream),
            ..Self::default()
        }
    }

    /// Stream `partial_text`, then go silent with the connection open.
    pub fn stall(partial_text: impl Into<String>) -> Self {
        Self {
            text: partial_text.into(),
            fault: Some(Fault::StallMidStream),
            ..Self::default()
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn replies_load_from_camel_case_json() {
        let json = r#"[
            {"text": "hi"},
            {"toolCalls": [{"name": "read_file", "arguments": {"path": "a"}}], "chunkDelayMs": 5},
            {"fault": {"kind": "status", "status": 429, "retryAfter": "1"}},
            {"text": "part", "fault": {"kind": "stallMidStream"}},
            {"text": "x", "usage": {"inputTokens": 3, "outputTokens": 4}}
        ]"#;
        let replies: Vec<Reply> = serde_json::from_str(json).unwrap();
        assert_eq!(replies[0], Reply::text("hi"));
        assert_eq!(
            replies[1],
            Reply::tool_call("read_file", serde_json::json!({"path": "a"})).with_delay_ms(5)
        );
        assert_eq!(replies[2], Reply::status(429, "").retry_after("1"));
        assert_eq!(replies[3], Reply::stall("part"));
        assert_eq!(replies[4], Reply::text("x").with_usage(3, 4));
    }

    #[test]
    fn string_arguments_are_sent_raw() {
        let call = ScriptedToolCall::new("f", serde_json::json!("{not json"));
        assert_eq!(call.raw_arguments(), "{not json");
        let call = ScriptedToolCall::new("f", serde_json::json!({"a": 1}));
        assert_eq!(call.raw_arguments(), r#"{"a":1}"#);
    }
}
