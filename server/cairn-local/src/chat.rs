//! The chat format: a conversation rendered in ChatML (`<|im_start|>role … <|im_end|>`, the
//! template of Qwen2 and SmolLM2) with tools announced as Qwen and Hermes do, and the model's
//! `<tool_call>{"name": …, "arguments": …}</tool_call>` blocks parsed back into tool calls while
//! its text streams.

use cairn_agent::model::{Message, ModelRequest, ToolCallRequest};

const OPEN: &str = "<tool_call>";
const CLOSE: &str = "</tool_call>";

/// The system turn: the agent's system prompt, then the tools in the wording the Qwen2.5 and
/// Hermes templates use (so the model sees what it was trained on).
pub fn system_turn(request: &ModelRequest, note: Option<&str>) -> String {
    let mut system = request.system.clone();
    if let Some(note) = note {
        system.push_str("\n\n");
        system.push_str(note);
    }
    if !request.tools.is_empty() {
        system.push_str(
            "\n\n# Tools\n\nYou may call one or more functions to assist with the user query.\n\n\
             You are provided with function signatures within <tools></tools> XML tags:\n<tools>",
        );
        for tool in &request.tools {
            // Written by hand: the key order is the template's whatever serde_json's map is.
            system.push_str(&format!(
                "\n{{\"type\": \"function\", \"function\": {{\"name\": {}, \"description\": {}, \"parameters\": {}}}}}",
                serde_json::Value::String(tool.name.clone()),
                serde_json::Value::String(tool.description.clone()),
                tool.input_schema
            ));
        }
        system.push_str(
            "\n</tools>\n\nFor each function call, return a json object with function name and \
             arguments within <tool_call></tool_call> XML tags:\n<tool_call>\n\
             {\"name\": <function-name>, \"arguments\": <args-json-object>}\n</tool_call>",
        );
    }
    format!("<|im_start|>system\n{system}<|im_end|>\n")
}

/// One message as ChatML; consecutive tool results share one `user` turn, as Qwen's template
/// renders them, so `first_of_results` says whether this one opens it and `last_of_results`
/// whether it closes it.
pub fn message_turn(message: &Message, first_of_results: bool, last_of_results: bool) -> String {
    match message {
        Message::User { text, .. } => format!("<|im_start|>user\n{text}<|im_end|>\n"),
        Message::Assistant { text, tool_calls } => {
            let mut out = format!("<|im_start|>assistant\n{text}");
            for call in tool_calls {
                let arguments = match serde_json::from_str::<serde_json::Value>(&call.arguments) {
                    Ok(value) => value.to_string(),
                    Err(_) => serde_json::Value::String(call.arguments.clone()).to_string(),
                };
                if !out.ends_with('\n') {
                    out.push('\n');
                }
                out.push_str(&format!(
                    "{OPEN}\n{{\"name\": {}, \"arguments\": {arguments}}}\n{CLOSE}",
                    serde_json::Value::String(call.name.clone())
                ));
            }
            out.push_str("<|im_end|>\n");
            out
        }
        Message::Tool { content, .. } => {
            let mut out = String::new();
            if first_of_results {
                out.push_str("<|im_start|>user");
            }
            out.push_str(&format!("\n<tool_response>\n{content}\n</tool_response>"));
            if last_of_results {
                out.push_str("<|im_end|>\n");
            }
            out
        }
    }
}

/// The turns of `messages`, each rendered, in order (tool results grouped as above).
pub fn turns(messages: &[Message]) -> Vec<String> {
    let is_tool = |m: Option<&Message>| matches!(m, Some(Message::Tool { .. }));
    messages
        .iter()
        .enumerate()
        .map(|(i, m)| {
            let first = i == 0 || !is_tool(messages.get(i - 1));
            let last = !is_tool(messages.get(i + 1));
            message_turn(m, first, last)
        })
        .collect()
}

/// What the model starts its answer after.
pub const ASSISTANT_START: &str = "<|im_start|>assistant\n";

/// A piece of the model's output as the agent sees it.
#[derive(Debug, Clone, PartialEq)]
pub enum Piece {
    Text(String),
    Call(ToolCallRequest),
}

/// Splits streamed output into text and tool calls. Text is passed on as soon as it cannot be
/// the start of a `<tool_call>` tag; a block is parsed when it closes (or when the output ends).
#[derive(Debug, Default)]
pub struct CallParser {
    pending: String,
    in_call: bool,
    calls: usize,
}

impl CallParser {
    pub fn push(&mut self, text: &str) -> Vec<Piece> {
        self.pending.push_str(text);
        let mut out = Vec::new();
        loop {
            if self.in_call {
                let Some(end) = self.pending.find(CLOSE) else {
                    break;
                };
                let body = self.pending[..end].to_owned();
                self.pending.drain(..end + CLOSE.len());
                self.in_call = false;
                out.extend(self.parse(&body));
            } else if let Some(start) = self.pending.find(OPEN) {
                let text = self.pending[..start].to_owned();
                if !text.is_empty() {
                    out.push(Piece::Text(text));
                }
                self.pending.drain(..start + OPEN.len());
                self.in_call = true;
            } else {
                // Keep back a tail that could still grow into `<tool_call>`.
                let keep = (1..OPEN.len())
                    .rev()
                    .find(|&n| {
                        self.pending.len() >= n
                            && self.pending.is_char_boundary(self.pending.len() - n)
                            && OPEN.starts_with(&self.pending[self.pending.len() - n..])
                    })
                    .unwrap_or(0);
                let split = self.pending.len() - keep;
                if split > 0 {
                    out.push(Piece::Text(self.pending[..split].to_owned()));
                    self.pending.drain(..split);
                }
                break;
            }
        }
        out
    }

    /// The output ended: an unclosed block is parsed as it stands; held-back text is released.
    pub fn finish(&mut self) -> Vec<Piece> {
        let rest = std::mem::take(&mut self.pending);
        if self.in_call {
            self.in_call = false;
            self.parse(&rest)
        } else if rest.is_empty() {
            Vec::new()
        } else {
            vec![Piece::Text(rest)]
        }
    }

    fn next_id(&mut self) -> String {
        self.calls += 1;
        format!("call_{}", self.calls)
    }

    /// A block's JSON: one call object, or a list of them (SmolLM2 writes lists). What cannot be
    /// read still becomes a call, named as well as it can be, whose arguments the agent will
    /// refuse as invalid JSON, so the model hears what was wrong and can try again.
    fn parse(&mut self, body: &str) -> Vec<Piece> {
        let body = body.trim();
        let value: Result<serde_json::Value, _> = serde_json::from_str(body);
        let items = match value {
            Ok(serde_json::Value::Array(items)) => items,
            Ok(item @ serde_json::Value::Object(_)) => vec![item],
            _ => return vec![Piece::Call(self.malformed(body))],
        };
        items
            .into_iter()
            .map(|item| {
                let name = item.get("name").and_then(|n| n.as_str()).map(str::to_owned);
                let arguments = item
                    .get("arguments")
                    .or_else(|| item.get("parameters"))
                    .cloned()
                    .unwrap_or_else(|| serde_json::json!({}));
                // Some models write the arguments as a JSON string holding the object.
                let arguments = match arguments {
                    serde_json::Value::String(s) => s,
                    other => other.to_string(),
                };
                match name {
                    Some(name) if !name.is_empty() => Piece::Call(ToolCallRequest {
                        id: self.next_id(),
                        name,
                        arguments,
                    }),
                    _ => Piece::Call(self.malformed(&item.to_string())),
                }
            })
            .collect()
    }

    fn malformed(&mut self, body: &str) -> ToolCallRequest {
        // The name the model meant, if a `"name": "…"` can be found in the broken text.
        let name = body
            .split("\"name\"")
            .nth(1)
            .and_then(|rest| rest.split('"').nth(1))
            .filter(|n| !n.is_empty() && n.len() < 128)
            .unwrap_or(MALFORMED)
            .to_owned();
        ToolCallRequest {
            id: self.next_id(),
            name,
            arguments: format!("(unreadable tool call: {body})"),
        }
    }
}

/// The name given to a tool call whose name could not be read; no tool has it, so the agent
/// answers the model that the call was not understood.
pub const MALFORMED: &str = "malformed_tool_call";

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::panic)]
mod tests {
    use super::*;

    fn run(chunks: &[&str]) -> Vec<Piece> {
        let mut parser = CallParser::default();
        let mut out = Vec::new();
        for chunk in chunks {
            out.extend(parser.push(chunk));
        }
        out.extend(parser.finish());
        // Merge adjacent text, as the agent concatenates deltas.
        let mut merged: Vec<Piece> = Vec::new();
        for piece in out {
            match (merged.last_mut(), piece) {
                (Some(Piece::Text(a)), Piece::Text(b)) => a.push_str(&b),
                (_, piece) => merged.push(piece),
            }
        }
        merged
    }

    fn call(name: &str, arguments: &str, id: &str) -> Piece {
        Piece::Call(ToolCallRequest {
            id: id.into(),
            name: name.into(),
            arguments: arguments.into(),
        })
    }

    #[test]
    fn a_qwen_call_split_across_tokens_is_parsed() {
        // As Qwen2.5-1.5B-Instruct answers with a tool (recorded with llama.cpp).
        let out = run(&[
            "I'll read it.\n<",
            "tool",
            "_call>\n{\"name\": \"read_file\", \"arguments\": {\"path\": \"src/",
            "main.rs\"}}\n</tool_call>",
        ]);
        assert_eq!(
            out,
            vec![
                Piece::Text("I'll read it.\n".into()),
                call("read_file", r#"{"path":"src/main.rs"}"#, "call_1"),
            ]
        );
    }

    #[test]
    fn a_smollm_list_gives_two_calls_and_text_that_only_looks_like_a_tag_passes() {
        let out = run(&[
            "a < b and <tool",
            "s> stay text. <tool_call>[{\"name\": \"a\", \"arguments\": {}}, {\"name\": \"b\", \"arguments\": {\"x\": 1}}]</tool_call>",
        ]);
        assert_eq!(
            out,
            vec![
                Piece::Text("a < b and <tools> stay text. ".into()),
                call("a", "{}", "call_1"),
                call("b", r#"{"x":1}"#, "call_2"),
            ]
        );
    }

    #[test]
    fn a_broken_call_becomes_one_the_agent_refuses_with_a_reason() {
        let out = run(&["<tool_call>{\"name\": \"read_file\", \"arguments\": {\"path\": "]);
        let [Piece::Call(c)] = out.as_slice() else {
            panic!("{out:?}")
        };
        assert_eq!(c.name, "read_file");
        assert!(serde_json::from_str::<serde_json::Value>(&c.arguments).is_err());
        let out = run(&["<tool_call>not json at all</tool_call> done"]);
        assert!(
            matches!(&out[0], Piece::Call(c) if c.name == MALFORMED),
            "{out:?}"
        );
        assert_eq!(out[1], Piece::Text(" done".into()));
    }

    #[test]
    fn tool_results_share_one_user_turn_and_calls_render_as_trained() {
        let messages = vec![
            Message::User {
                text: "hi".into(),
                images: vec![],
            },
            Message::Assistant {
                text: String::new(),
                tool_calls: vec![
                    ToolCallRequest {
                        id: "1".into(),
                        name: "a".into(),
                        arguments: "{\"x\":1}".into(),
                    },
                    ToolCallRequest {
                        id: "2".into(),
                        name: "b".into(),
                        arguments: "{}".into(),
                    },
                ],
            },
            Message::Tool {
                call_id: "1".into(),
                name: "a".into(),
                content: "one".into(),
                is_error: false,
            },
            Message::Tool {
                call_id: "2".into(),
                name: "b".into(),
                content: "two".into(),
                is_error: false,
            },
        ];
        assert_eq!(
            turns(&messages).concat(),
            "<|im_start|>user\nhi<|im_end|>\n\
             <|im_start|>assistant\n<tool_call>\n{\"name\": \"a\", \"arguments\": {\"x\":1}}\n</tool_call>\n\
             <tool_call>\n{\"name\": \"b\", \"arguments\": {}}\n</tool_call><|im_end|>\n\
             <|im_start|>user\n<tool_response>\none\n</tool_response>\n<tool_response>\ntwo\n</tool_response><|im_end|>\n"
        );
    }
}
