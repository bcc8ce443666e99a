//! The chat template: the GGUF's own `tokenizer.chat_template` (Jinja), rendered with minijinja
//! from the conversation in the shape Hugging Face templates expect (`messages`, `tools`,
//! `add_generation_prompt`, `bos_token`), and the tool-call format of the model's family, read
//! off the template: Hermes (`<tool_call>…</tool_call>`: Qwen2.5, Hermes, SmolLM3), Llama 3.1+
//! (`{"name": …, "parameters": …}`, after `<|python_tag|>` or alone) and Mistral
//! (`[TOOL_CALLS][…]`). A template that has no place for tools (SmolLM2's, Phi's, Gemma's) gets
//! the tools announced in the system message in the Hermes wording, which is what such small
//! models were tuned on when they were tuned for tools at all.
//!
//! Rendering is bounded: minijinja's fuel stops a template whose loops do not end, and a
//! template minijinja cannot compile or render is refused with the file and the construct.

use std::path::{Path, PathBuf};

use cairn_agent::model::{Message, ModelRequest};
use minijinja::{Environment, ErrorKind, Value};
use serde_json::json;

use crate::error::LocalError;

/// Instructions minijinja may run for one rendering: a long conversation with tools takes tens of
/// thousands; a template that never ends hits this in about half a second.
const FUEL: u64 = 5_000_000;

/// How a model family writes tool calls.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Family {
    /// `<tool_call>{"name": …, "arguments": …}</tool_call>`.
    Hermes,
    /// `{"name": …, "parameters": …}`, optionally after `<|python_tag|>`.
    Llama3,
    /// `[TOOL_CALLS][{"name": …, "arguments": …}]`.
    Mistral,
}

impl Family {
    /// What starts a call in the model's output (the grammar's trigger).
    pub fn trigger(self) -> &'static str {
        match self {
            Self::Hermes => "<tool_call>",
            Self::Llama3 => "{\"name\"",
            Self::Mistral => "[TOOL_CALLS]",
        }
    }
    /// The key the family puts the arguments under.
    pub fn arguments_key(self) -> &'static str {
        match self {
            Self::Llama3 => "parameters",
            Self::Hermes | Self::Mistral => "arguments",
        }
    }
}

/// A compiled chat template and what it says about the model.
pub struct ChatTemplate {
    env: Environment<'static>,
    family: Family,
    /// Whether the template renders `tools` itself.
    native_tools: bool,
    file: PathBuf,
    bos: String,
    eos: String,
}

/// ChatML, for a file without a template (llama.cpp assumes the same).
const CHATML: &str = "{% for message in messages %}{{ '<|im_start|>' + message['role'] + '\n' + message['content'] + '<|im_end|>' + '\n' }}{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}";

impl ChatTemplate {
    /// Compiles `source` (the file's template, or ChatML when it has none).
    pub fn new(
        source: Option<&str>,
        file: &Path,
        bos: &str,
        eos: &str,
    ) -> Result<Self, LocalError> {
        let source = source.unwrap_or(CHATML).to_owned();
        let family = if source.contains("[TOOL_CALLS]") {
            Family::Mistral
        } else if source.contains("<tool_call>") {
            Family::Hermes
        } else if source.contains("<|python_tag|>") || source.contains("\"parameters\"") {
            Family::Llama3
        } else {
            Family::Hermes
        };
        // A template that mentions tools but none of the formats above is treated as one
        // without tools: cairn announces them itself, in the Hermes wording.
        let native_tools = source.contains("tools")
            && (source.contains("[TOOL_CALLS]")
                || source.contains("<tool_call>")
                || source.contains("<|python_tag|>")
                || source.contains("\"parameters\""));
        let mut env = Environment::new();
        env.set_fuel(Some(FUEL));
        env.set_unknown_method_callback(minijinja_contrib::pycompat::unknown_method_callback);
        env.add_function(
            "raise_exception",
            |message: String| -> Result<Value, minijinja::Error> {
                Err(minijinja::Error::new(ErrorKind::InvalidOperation, message))
            },
        );
        // Llama 3's templates date the system prompt; a fixed date keeps prompts repeatable
        // (and the prompt cache warm across days).
        env.add_function("strftime_now", |_format: String| "26 Jul 2024".to_owned());
        env.add_filter("tojson", tojson);
        env.add_template_owned("chat", generation_blocks_as_ifs(&source))
            .map_err(|e| template_error(file, &e))?;
        Ok(Self {
            env,
            family,
            native_tools,
            file: file.to_owned(),
            bos: bos.to_owned(),
            eos: eos.to_owned(),
        })
    }

    pub fn family(&self) -> Family {
        self.family
    }

    /// The prompt for `messages` (a suffix of the request's, after trimming), with `note` added
    /// to the system message, ending where the model's answer starts.
    pub fn render(
        &self,
        request: &ModelRequest,
        messages: &[Message],
        note: Option<&str>,
    ) -> Result<String, LocalError> {
        let mut system = request.system.clone();
        if let Some(note) = note {
            system.push_str("\n\n");
            system.push_str(note);
        }
        if !self.native_tools && !request.tools.is_empty() {
            system.push_str(&hermes_tools(request));
        }
        let mut out = Vec::new();
        if !system.is_empty() {
            out.push(json!({"role": "system", "content": system}));
        }
        for message in messages {
            out.push(self.message(message));
        }
        // Plain templates have no tool role: results go back as a user turn, as Qwen renders.
        if !self.native_tools {
            out = merge_tool_results(out);
        }
        let tools: Vec<serde_json::Value> = if self.native_tools {
            request
                .tools
                .iter()
                .map(|t| {
                    json!({"type": "function", "function": {
                        "name": t.name, "description": t.description, "parameters": t.input_schema}})
                })
                .collect()
        } else {
            Vec::new()
        };
        match self.render_messages(&out, &tools) {
            // Gemma's templates (and others) raise on a system turn: its text goes first in the
            // first user turn instead, as llama.cpp and Hugging Face's own examples do for them.
            Err(e) if e.kind() == ErrorKind::InvalidOperation => {
                let merged =
                    system_into_first_user(&out).ok_or_else(|| template_error(&self.file, &e))?;
                self.render_messages(&merged, &tools)
                    .map_err(|_| template_error(&self.file, &e))
            }
            other => other.map_err(|e| template_error(&self.file, &e)),
        }
    }

    fn render_messages(
        &self,
        messages: &[serde_json::Value],
        tools: &[serde_json::Value],
    ) -> Result<String, minijinja::Error> {
        let template = self.env.get_template("chat")?;
        let ctx = minijinja::context! {
            messages => Value::from(minijinja::value::Serde(messages)),
            tools => if tools.is_empty() { Value::from(()) } else { Value::from(minijinja::value::Serde(tools)) },
            add_generation_prompt => true,
            bos_token => self.bos.clone(),
            eos_token => self.eos.clone(),
            tools_in_user_message => false,
        };
        template.render(ctx)
    }

    fn message(&self, message: &Message) -> serde_json::Value {
        match message {
            Message::User { text, .. } => json!({"role": "user", "content": text}),
            Message::Assistant { text, tool_calls } if self.native_tools => {
                let calls: Vec<serde_json::Value> = tool_calls
                    .iter()
                    .map(|c| {
                        json!({"id": short_id(&c.id), "type": "function", "function": {
                            "name": c.name, "arguments": arguments_value(&c.arguments)}})
                    })
                    .collect();
                if calls.is_empty() {
                    json!({"role": "assistant", "content": text})
                } else {
                    json!({"role": "assistant", "content": text, "tool_calls": calls})
                }
            }
            Message::Assistant { text, tool_calls } => {
                let mut content = text.clone();
                for c in tool_calls {
                    if !content.is_empty() && !content.ends_with('\n') {
                        content.push('\n');
                    }
                    content.push_str(&format!(
                        "<tool_call>\n{{\"name\": {}, \"arguments\": {}}}\n</tool_call>",
                        serde_json::Value::String(c.name.clone()),
                        arguments_value(&c.arguments)
                    ));
                }
                json!({"role": "assistant", "content": content})
            }
            Message::Tool {
                call_id,
                name,
                content,
                ..
            } => {
                json!({"role": "tool", "tool_call_id": short_id(call_id), "name": name, "content": content})
            }
        }
    }
}

/// The arguments as the JSON object the model wrote, or as a string when they were not JSON.
fn arguments_value(arguments: &str) -> serde_json::Value {
    serde_json::from_str::<serde_json::Value>(arguments)
        .unwrap_or_else(|_| serde_json::Value::String(arguments.to_owned()))
}

/// Mistral's templates refuse ids that are not nine letters or digits; every template accepts
/// those, so every id is written so (the same id always gives the same nine characters).
fn short_id(id: &str) -> String {
    if id.len() == 9 && id.chars().all(|c| c.is_ascii_alphanumeric()) {
        return id.to_owned();
    }
    // FNV-1a, in base 36.
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in id.bytes() {
        h = (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
    }
    const DIGITS: &[u8] = b"0123456789abcdefghijklmnopqrstuvwxyz";
    (0..9)
        .map(|_| {
            let c = DIGITS[(h % 36) as usize] as char;
            h /= 36;
            c
        })
        .collect()
}

/// Consecutive tool results as one user turn of `<tool_response>` blocks.
fn merge_tool_results(messages: Vec<serde_json::Value>) -> Vec<serde_json::Value> {
    let mut out: Vec<serde_json::Value> = Vec::new();
    let mut open = false;
    for m in messages {
        if m["role"] == "tool" {
            let block = format!(
                "<tool_response>\n{}\n</tool_response>",
                m["content"].as_str().unwrap_or_default()
            );
            match out.last_mut() {
                Some(last) if open => {
                    let joined =
                        format!("{}\n{block}", last["content"].as_str().unwrap_or_default());
                    last["content"] = serde_json::Value::String(joined);
                }
                _ => out.push(json!({"role": "user", "content": block})),
            }
            open = true;
        } else {
            out.push(m);
            open = false;
        }
    }
    out
}

/// The tools in the wording of Qwen2.5's and Hermes' templates.
fn hermes_tools(request: &ModelRequest) -> String {
    let mut out = String::from(
        "\n\n# Tools\n\nYou may call one or more functions to assist with the user query.\n\n\
         You are provided with function signatures within <tools></tools> XML tags:\n<tools>",
    );
    for tool in &request.tools {
        out.push_str(&format!(
            "\n{{\"type\": \"function\", \"function\": {{\"name\": {}, \"description\": {}, \"parameters\": {}}}}}",
            serde_json::Value::String(tool.name.clone()),
            serde_json::Value::String(tool.description.clone()),
            tool.input_schema
        ));
    }
    out.push_str(
        "\n</tools>\n\nFor each function call, return a json object with function name and \
         arguments within <tool_call></tool_call> XML tags:\n<tool_call>\n\
         {\"name\": <function-name>, \"arguments\": <args-json-object>}\n</tool_call>",
    );
    out
}

/// Jinja's `tojson` as Hugging Face's templates use it: `ensure_ascii` off, `indent` honoured.
fn tojson(value: Value, kwargs: minijinja::value::Kwargs) -> Result<Value, minijinja::Error> {
    let indent: Option<usize> = kwargs.get("indent")?;
    let _: Option<bool> = kwargs.get("ensure_ascii")?;
    let _: Option<bool> = kwargs.get("sort_keys")?;
    kwargs.assert_all_used()?;
    let json = serde_json::to_value(&value)
        .map_err(|e| minijinja::Error::new(ErrorKind::InvalidOperation, e.to_string()))?;
    let text = match indent {
        Some(n) => {
            let indent = " ".repeat(n);
            let mut buf = Vec::new();
            let formatter = serde_json::ser::PrettyFormatter::with_indent(indent.as_bytes());
            let mut ser = serde_json::Serializer::with_formatter(&mut buf, formatter);
            serde::Serialize::serialize(&json, &mut ser)
                .map_err(|e| minijinja::Error::new(ErrorKind::InvalidOperation, e.to_string()))?;
            String::from_utf8_lossy(&buf).into_owned()
        }
        // Python's json.dumps separators: ", " and ": ".
        None => python_json(&json),
    };
    Ok(Value::from_safe_string(text))
}

/// JSON as Python's `json.dumps` writes it by default, which is what models saw in training.
fn python_json(value: &serde_json::Value) -> String {
    match value {
        serde_json::Value::Array(items) => format!(
            "[{}]",
            items.iter().map(python_json).collect::<Vec<_>>().join(", ")
        ),
        serde_json::Value::Object(map) => format!(
            "{{{}}}",
            map.iter()
                .map(|(k, v)| format!(
                    "{}: {}",
                    serde_json::Value::String(k.clone()),
                    python_json(v)
                ))
                .collect::<Vec<_>>()
                .join(", ")
        ),
        other => other.to_string(),
    }
}

/// A template error naming the file, the construct and where it is.
/// `messages` with the leading system turn's text put before the first user turn's, or `None`
/// when there is no system turn to move.
fn system_into_first_user(messages: &[serde_json::Value]) -> Option<Vec<serde_json::Value>> {
    let (first, rest) = messages.split_first()?;
    if first["role"] != "system" {
        return None;
    }
    let system = first["content"].as_str().unwrap_or_default();
    let mut out = rest.to_vec();
    match out.iter_mut().find(|m| m["role"] == "user") {
        Some(user) => {
            let text = user["content"].as_str().unwrap_or_default();
            user["content"] = json!(format!("{system}\n\n{text}"));
        }
        None => out.insert(0, json!({"role": "user", "content": system})),
    }
    Some(out)
}

/// Hugging Face's `{% generation %}…{% endgeneration %}` marks the assistant's tokens for
/// training masks and renders its body unchanged; minijinja has no such statement, so each tag
/// becomes `{% if true %}`/`{% endif %}`, keeping the tags' whitespace control.
fn generation_blocks_as_ifs(source: &str) -> String {
    let mut out = String::with_capacity(source.len());
    let mut rest = source;
    while let Some(start) = rest.find("{%") {
        let Some(len) = rest[start..].find("%}") else {
            break;
        };
        let tag = &rest[start..start + len + 2];
        let inner =
            tag[2..tag.len() - 2].trim_matches(|c: char| c == '-' || c == '+' || c.is_whitespace());
        out.push_str(&rest[..start]);
        match inner {
            "generation" => out.push_str(&tag.replacen("generation", "if true", 1)),
            "endgeneration" => out.push_str(&tag.replacen("endgeneration", "endif", 1)),
            _ => out.push_str(tag),
        }
        rest = &rest[start + len + 2..];
    }
    out.push_str(rest);
    out
}

fn template_error(file: &Path, e: &minijinja::Error) -> LocalError {
    let construct = match e.kind() {
        ErrorKind::OutOfFuel => {
            format!("it did not finish within {FUEL} steps (a loop that does not end?)")
        }
        ErrorKind::InvalidOperation if e.detail().is_some() => {
            format!(
                "it refused the conversation: {}",
                e.detail().unwrap_or_default()
            )
        }
        _ => e.to_string(),
    };
    let line = e
        .line()
        .map(|l| format!(" at line {l}"))
        .unwrap_or_default();
    LocalError::Template {
        path: file.to_owned(),
        detail: format!("{construct}{line}"),
    }
}

#[allow(clippy::unwrap_used, clippy::panic)]
#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generation_blocks_render_their_body() {
        let source = "{%- for m in messages %}{% generation -%} [{{ m.content }}] {%- endgeneration %}{% endfor %}";
        let t = ChatTemplate::new(Some(source), Path::new("t.gguf"), "", "").unwrap();
        let request = ModelRequest {
            system: String::new(),
            messages: vec![Message::User {
                text: "hi".into(),
                images: vec![],
            }],
            tools: vec![],
        };
        assert_eq!(t.render(&request, &request.messages, None).unwrap(), "[hi]");
    }

    #[test]
    fn a_template_that_refuses_a_system_turn_gets_it_in_the_first_user_turn() {
        let source = "{% if messages[0]['role'] == 'system' %}{{ raise_exception('System role not supported') }}{% endif %}{% for m in messages %}<{{ m.role }}>{{ m.content }}{% endfor %}";
        let t = ChatTemplate::new(Some(source), Path::new("t.gguf"), "", "").unwrap();
        let request = ModelRequest {
            system: "Be brief.".into(),
            messages: vec![Message::User {
                text: "hi".into(),
                images: vec![],
            }],
            tools: vec![],
        };
        assert_eq!(
            t.render(&request, &request.messages, None).unwrap(),
            "<user>Be brief.\n\nhi"
        );
        // A refusal that moving the system text does not cure is reported as the template's.
        let t = ChatTemplate::new(
            Some("{{ raise_exception('no') }}"),
            Path::new("t.gguf"),
            "",
            "",
        )
        .unwrap();
        let e = t
            .render(&request, &request.messages, None)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("t.gguf") && e.contains("refused the conversation: no"),
            "{e}"
        );
    }

    #[test]
    fn ids_are_nine_alphanumerics_and_stable() {
        let a = short_id("call_1");
        assert_eq!(a.len(), 9);
        assert!(a.chars().all(|c| c.is_ascii_alphanumeric()));
        assert_eq!(a, short_id("call_1"));
        assert_ne!(a, short_id("call_2"));
        assert_eq!(short_id("abcDEF123"), "abcDEF123");
    }

    #[test]
    fn python_json_has_python_separators() {
        assert_eq!(
            python_json(&json!({"a": [1, "x"], "b": {"c": null}})),
            r#"{"a": [1, "x"], "b": {"c": null}}"#
        );
    }

    #[test]
    fn a_template_that_never_ends_is_refused_naming_the_file() {
        let t = ChatTemplate::new(
            Some(
                "{% for i in range(100000) %}{% for j in range(100000) %}x{% endfor %}{% endfor %}",
            ),
            Path::new("/m/loop.gguf"),
            "",
            "",
        )
        .unwrap();
        let request = ModelRequest {
            system: String::new(),
            messages: vec![],
            tools: vec![],
        };
        let e = t.render(&request, &[], None).unwrap_err().to_string();
        assert!(e.contains("/m/loop.gguf"), "{e}");
        assert!(e.contains("did not finish"), "{e}");
    }

    #[test]
    fn a_template_minijinja_cannot_compile_names_the_construct() {
        let e = ChatTemplate::new(
            Some("{% trans %}x{% endtrans %}"),
            Path::new("/m/g.gguf"),
            "",
            "",
        )
        .err()
        .unwrap()
        .to_string();
        assert!(e.contains("/m/g.gguf"), "{e}");
        assert!(e.contains("unknown statement trans"), "{e}");
    }
}
