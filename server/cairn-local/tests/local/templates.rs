//! Real models' chat templates (from llama.cpp's collection, laid by `scripts/llama-cpp-fixtures`)
//! rendered by cairn: a conversation with tools, a call and its result comes out in each family's
//! own markup, and the call the template writes for the model's past turn parses back with that
//! family's parser, arguments intact. Runs with `CAIRN_TOKENIZER_TESTS=1`.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::PathBuf;

use cairn_agent::model::{Message, ModelRequest, ToolCallRequest, ToolSpec};
use cairn_local::{CallParser, ChatTemplate, Family, Piece};
use serde_json::json;

fn templates() -> Option<PathBuf> {
    if !cairn_test_support::gate::gate(
        "CAIRN_TOKENIZER_TESTS",
        "after `scripts/llama-cpp-fixtures` (and CAIRN_LLAMA_FIXTURES if not the default) to render real chat templates",
    ) {
        return None;
    }
    let dir = std::env::var_os("CAIRN_LLAMA_FIXTURES")
        .map(PathBuf::from)
        .or_else(|| {
            std::env::var_os("HOME")
                .map(|h| PathBuf::from(h).join(".cache/cairn/llama-cpp-fixtures"))
        })
        .unwrap()
        .join("templates");
    assert!(
        dir.is_dir(),
        "{} is missing: run scripts/llama-cpp-fixtures",
        dir.display()
    );
    Some(dir)
}

const QUESTION: &str = "What does src/lib.rs start with?";

const ARGUMENTS: &str = r#"{"path": "src/lib.rs", "limit": 40}"#;

fn question() -> ModelRequest {
    ModelRequest {
        system: "You are cairn, a coding agent.".into(),
        messages: vec![Message::User {
            text: QUESTION.into(),
            images: vec![],
        }],
        tools: vec![ToolSpec {
            name: "read_file".into(),
            description: "Reads a file of the workspace.".into(),
            input_schema: json!({
                "type": "object",
                "properties": {
                    "path": {"type": "string", "description": "relative to the workspace"},
                    "limit": {"type": "integer"}
                },
                "required": ["path"]
            }),
        }],
    }
}

/// The question, the model's call (id as cairn's agent makes them), and the call's result.
fn answered() -> ModelRequest {
    let mut request = question();
    request.messages.push(Message::Assistant {
        text: String::new(),
        tool_calls: vec![ToolCallRequest {
            id: "call_0123456789abcdef".into(),
            name: "read_file".into(),
            arguments: ARGUMENTS.into(),
        }],
    });
    request.messages.push(Message::Tool {
        call_id: "call_0123456789abcdef".into(),
        name: "read_file".into(),
        content: "//! The crate's docs.\npub mod engine;".into(),
        is_error: false,
    });
    request
}

struct Case {
    file: &'static str,
    family: Family,
    bos: &'static str,
    eos: &'static str,
    /// What must be in the prompt: the tools' section, the call, the result's wrapping.
    markup: &'static [&'static str],
}

const CASES: &[Case] = &[
    Case {
        file: "Qwen-Qwen2.5-7B-Instruct.jinja",
        family: Family::Hermes,
        bos: "",
        eos: "<|im_end|>",
        markup: &[
            "<tools>",
            "</tools>",
            "<tool_call>",
            "<tool_response>",
            "<|im_start|>assistant\n",
        ],
    },
    Case {
        file: "NousResearch-Hermes-3-Llama-3.1-8B-tool_use.jinja",
        family: Family::Hermes,
        bos: "<|begin_of_text|>",
        eos: "<|im_end|>",
        markup: &["<tools>", "<tool_call>", "<tool_response>"],
    },
    Case {
        file: "meta-llama-Llama-3.1-8B-Instruct.jinja",
        family: Family::Llama3,
        bos: "<|begin_of_text|>",
        eos: "<|eot_id|>",
        markup: &[
            "<|start_header_id|>system<|end_header_id|>",
            "\"parameters\"",
            "<|start_header_id|>ipython<|end_header_id|>",
            "<|start_header_id|>assistant<|end_header_id|>\n\n",
        ],
    },
    Case {
        file: "meta-llama-Llama-3.2-3B-Instruct.jinja",
        family: Family::Llama3,
        bos: "<|begin_of_text|>",
        eos: "<|eot_id|>",
        markup: &["<|start_header_id|>ipython<|end_header_id|>"],
    },
    Case {
        file: "mistralai-Mistral-Nemo-Instruct-2407.jinja",
        family: Family::Mistral,
        bos: "<s>",
        eos: "</s>",
        markup: &[
            "[AVAILABLE_TOOLS]",
            "[/AVAILABLE_TOOLS]",
            "[TOOL_CALLS]",
            "[TOOL_RESULTS]",
        ],
    },
];

/// Everything the parser makes of `text` streamed in small pieces, as the model streams it.
fn parse(family: Family, text: &str) -> Vec<Piece> {
    let mut parser = CallParser::new(family);
    let mut out = Vec::new();
    let chars: Vec<char> = text.chars().collect();
    for chunk in chars.chunks(3) {
        out.extend(parser.push(&chunk.iter().collect::<String>()));
    }
    out.extend(parser.finish());
    out
}

#[test]
fn real_templates_render_tools_calls_and_results_in_their_familys_markup() {
    let Some(dir) = templates() else { return };
    for case in CASES {
        let path = dir.join(case.file);
        let source = std::fs::read_to_string(&path).unwrap();
        let template = ChatTemplate::new(Some(&source), &path, case.bos, case.eos)
            .unwrap_or_else(|e| panic!("{}: {e}", case.file));
        assert_eq!(template.family(), case.family, "{}", case.file);

        let asked = question();
        let before = template
            .render(&asked, &asked.messages, None)
            .unwrap_or_else(|e| panic!("{}: {e}", case.file));
        let request = answered();
        let after = template
            .render(&request, &request.messages, None)
            .unwrap_or_else(|e| panic!("{}: {e}", case.file));

        for needle in case.markup {
            assert!(
                after.contains(needle),
                "{}: no {needle:?} in\n{after}",
                case.file
            );
        }
        // The tool is described with its schema, and the result is in the prompt.
        for needle in ["read_file", "relative to the workspace", "pub mod engine;"] {
            assert!(
                after.contains(needle),
                "{}: no {needle:?} in\n{after}",
                case.file
            );
        }

        // The system message is there when the model is asked. (Mistral's templates put it into
        // the last user turn only, so after a tool result it is gone: the template's own rule,
        // the same in Hugging Face's rendering, left as it is.)
        assert!(
            before.contains("You are cairn"),
            "{}: no system message in\n{before}",
            case.file
        );

        // The model's own past call, as the template shows it to the model, parses back with the
        // family's parser. It follows the question and the generation prompt the model answered
        // (what follows the question in the question's own prompt).
        let asked_at = |prompt: &str| prompt.rfind(QUESTION).map(|i| i + QUESTION.len());
        let generation_prompt = &before[asked_at(&before).unwrap()..];
        let turn = after[asked_at(&after).unwrap()..]
            .strip_prefix(generation_prompt)
            .unwrap_or_else(|| {
                panic!(
                    "{}: the call does not follow the generation prompt {generation_prompt:?}:\n{after}",
                    case.file
                )
            });
        let end = turn
            .find(case.eos)
            .unwrap_or_else(|| panic!("{}: no {} after the call in {turn:?}", case.file, case.eos));
        let call_text = &turn[..end];
        let pieces = parse(case.family, call_text);
        let calls: Vec<&ToolCallRequest> = pieces
            .iter()
            .filter_map(|p| match p {
                Piece::Call(c) => Some(c),
                Piece::Text(_) => None,
            })
            .collect();
        assert_eq!(
            calls.len(),
            1,
            "{}: {call_text:?} gave {pieces:?}",
            case.file
        );
        assert_eq!(calls[0].name, "read_file", "{}", case.file);
        let arguments: serde_json::Value = serde_json::from_str(&calls[0].arguments).unwrap();
        assert_eq!(
            arguments,
            serde_json::from_str::<serde_json::Value>(ARGUMENTS).unwrap(),
            "{}",
            case.file
        );
        let said: String = pieces
            .iter()
            .filter_map(|p| match p {
                Piece::Text(t) => Some(t.as_str()),
                Piece::Call(_) => None,
            })
            .collect();
        assert!(
            said.trim().is_empty(),
            "{}: text around the call: {said:?}",
            case.file
        );
    }
}

#[test]
fn a_template_without_tools_gets_them_in_the_system_message() {
    let Some(dir) = templates() else { return };
    // Phi-3.5's template has no place for tools: cairn announces them in the Hermes wording, and
    // the result goes back as a user turn.
    let path = dir.join("microsoft-Phi-3.5-mini-instruct.jinja");
    let source = std::fs::read_to_string(&path).unwrap();
    let template = ChatTemplate::new(Some(&source), &path, "<s>", "<|endoftext|>").unwrap();
    assert_eq!(template.family(), Family::Hermes);
    let request = answered();
    let prompt = template.render(&request, &request.messages, None).unwrap();
    let system = prompt.find("<|system|>").expect("a system turn");
    let tools = prompt.find("<tools>").expect("the tools announced");
    let question = prompt.find("What does src/lib.rs start with?").unwrap();
    assert!(system < tools && tools < question, "{prompt}");
    assert!(prompt.contains("<tool_response>"), "{prompt}");
    assert!(prompt.ends_with("<|assistant|>\n"), "{prompt}");
}

#[test]
fn every_template_of_a_family_cairn_parses_renders() {
    let Some(dir) = templates() else { return };
    // All of llama.cpp's collection: each renders, or is refused with the file and the construct;
    // none panics, none runs away. The three families' own files must render.
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "jinja"))
        .collect();
    files.sort();
    assert!(files.len() > 30, "{} templates", files.len());
    let (mut rendered, mut refused) = (0, Vec::new());
    for path in &files {
        let source = std::fs::read_to_string(path).unwrap();
        let request = answered();
        let result = ChatTemplate::new(Some(&source), path, "<s>", "</s>")
            .and_then(|t| t.render(&request, &request.messages, None));
        match result {
            Ok(prompt) => {
                assert!(
                    prompt.contains("What does src/lib.rs start with?"),
                    "{}",
                    path.display()
                );
                rendered += 1;
            }
            Err(e) => {
                let message = e.to_string();
                assert!(message.contains(&path.display().to_string()), "{message}");
                refused.push(format!(
                    "{}: {message}",
                    path.file_name().unwrap().to_string_lossy()
                ));
            }
        }
    }
    eprintln!(
        "{rendered} of {} rendered; refused:\n{}",
        files.len(),
        refused.join("\n")
    );
    for case in CASES {
        assert!(
            !refused.iter().any(|r| r.starts_with(case.file)),
            "{refused:?}"
        );
    }
    // Most of the collection renders; what does not is refused with a reason, never a panic.
    assert!(
        rendered * 4 >= files.len() * 3,
        "{rendered} of {}: {refused:#?}",
        files.len()
    );
}
