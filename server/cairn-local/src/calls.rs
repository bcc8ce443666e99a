//! The model's tool calls, parsed back while its text streams, in its family's format
//! ([`Family`]): Hermes `<tool_call>{…}</tool_call>` blocks, Mistral's `[TOOL_CALLS][…]`, and
//! Llama 3's `{"name": …, "parameters": …}` (after `<|python_tag|>`, or as the whole answer).

use cairn_agent::model::ToolCallRequest;

use crate::template::Family;

/// What ends a Hermes call.
const CLOSE: &str = "</tool_call>";

/// A piece of the model's output as the agent sees it.
#[derive(Debug, Clone, PartialEq)]
pub enum Piece {
    Text(String),
    Call(ToolCallRequest),
}

/// Splits streamed output into text and tool calls. Text is passed on as soon as it cannot be
/// the start of the family's call marker; a call is parsed when it closes (Hermes) or when the
/// output ends (Mistral and Llama 3 write calls last).
#[derive(Debug)]
pub struct CallParser {
    family: Family,
    pending: String,
    in_call: bool,
    /// Whether any text was passed on (a Llama 3 answer that starts with `{` may be a call).
    said: bool,
    calls: usize,
}

impl Default for CallParser {
    fn default() -> Self {
        Self::new(Family::Hermes)
    }
}

impl CallParser {
    pub fn new(family: Family) -> Self {
        Self {
            family,
            pending: String::new(),
            in_call: false,
            said: false,
            calls: 0,
        }
    }

    fn open(&self) -> &'static str {
        match self.family {
            Family::Hermes => "<tool_call>",
            Family::Mistral => "[TOOL_CALLS]",
            Family::Llama3 => "<|python_tag|>",
        }
    }

    pub fn push(&mut self, text: &str) -> Vec<Piece> {
        self.pending.push_str(text);
        let open = self.open();
        let mut out = Vec::new();
        loop {
            if self.in_call {
                if self.family != Family::Hermes {
                    break;
                }
                let Some(end) = self.pending.find(CLOSE) else {
                    break;
                };
                let body = self.pending[..end].to_owned();
                self.pending.drain(..end + CLOSE.len());
                self.in_call = false;
                out.extend(self.parse(&body));
            } else if let Some(start) = self.pending.find(open) {
                let text = self.pending[..start].to_owned();
                if !text.is_empty() {
                    self.said = true;
                    out.push(Piece::Text(text));
                }
                self.pending.drain(..start + open.len());
                self.in_call = true;
            } else if self.family == Family::Llama3
                && !self.said
                && self.pending.trim_start().starts_with('{')
            {
                // Llama 3 answers a call with the bare object: held until the end.
                self.in_call = true;
            } else if self.family == Family::Llama3 && !self.said && self.pending.trim().is_empty()
            {
                break;
            } else {
                // Keep back a tail that could still grow into `<tool_call>`.
                let keep = (1..open.len())
                    .rev()
                    .find(|&n| {
                        self.pending.len() >= n
                            && self.pending.is_char_boundary(self.pending.len() - n)
                            && open.starts_with(&self.pending[self.pending.len() - n..])
                    })
                    .unwrap_or(0);
                let split = self.pending.len() - keep;
                if split > 0 {
                    self.said = true;
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
            let body = rest.trim();
            // A Llama 3 answer that only looked like JSON is text after all.
            if self.family == Family::Llama3 && !body.contains("\"name\"") {
                return vec![Piece::Text(rest)];
            }
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
        // Llama 3 may end a call with `<|eom_id|>`'s text or a `;` between calls.
        let body = body.trim_end_matches(';').trim();
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
                // OpenAI's nesting, which some fine-tunes copy.
                let item = item.get("function").cloned().unwrap_or(item);
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

#[allow(clippy::unwrap_used, clippy::panic)]
#[cfg(test)]
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
    fn mistral_and_llama3_calls_are_parsed_and_their_text_passes() {
        let mut p = CallParser::new(Family::Mistral);
        let mut out = p.push("Let me look.[TOOL_");
        out.extend(p.push("CALLS][{\"name\": \"read_file\", \"arguments\": {\"path\": \"a\"}}]"));
        out.extend(p.finish());
        assert_eq!(
            out,
            vec![
                Piece::Text("Let me look.".into()),
                call("read_file", r#"{"path":"a"}"#, "call_1")
            ]
        );
        let mut p = CallParser::new(Family::Llama3);
        let mut out = p.push("{\"name\": \"grep\", ");
        out.extend(p.push("\"parameters\": {\"pattern\": \"x\"}}"));
        out.extend(p.finish());
        assert_eq!(out, vec![call("grep", r#"{"pattern":"x"}"#, "call_1")]);
        let mut p = CallParser::new(Family::Llama3);
        let mut out = p.push("<|python_tag|>{\"name\": \"a\", \"parameters\": {}}");
        out.extend(p.finish());
        assert_eq!(out, vec![call("a", "{}", "call_1")]);
        let mut p = CallParser::new(Family::Llama3);
        let mut out = p.push("{ braces } are text");
        out.extend(p.finish());
        assert_eq!(out, vec![Piece::Text("{ braces } are text".into())]);
    }
}
