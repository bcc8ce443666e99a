//! The VS Code extension's `editors/vscode/src/protocol.ts` agrees with the `cairn/` definitions
//! in `protocol.rs`: the same method names, and for every params and result shape the same field
//! names as the server puts on the wire.
//!
//! The Rust side is a sample of each shape, serialized: every struct literal below names every
//! field (no `..Default::default()`) and fills every optional one, so a field added in Rust fails
//! to compile here until it is added to its sample, and then fails this test until `protocol.ts`
//! has it too. Each sample is typed by its method's definition (`R::Params`, `R::Result`), so the
//! table cannot pair a method with the wrong shape.

#![allow(clippy::expect_used)]

use std::collections::BTreeSet;

use cairn_agent::events::{ApprovalState, StopReason};
use cairn_agent::model::{Message, Usage};
use cairn_agent::policy::{ApprovalAnswer, Decision};
use cairn_agent::sessions::{Record, SessionSummary};
use cairn_agent::tools::Effect;
use cairn_agent::{Mode, RunEvent};
use cairn_lsp::protocol::*;
use cairn_mcp::{ServerPrompt, ServerResource};
use serde::Serialize;
use serde_json::{Value, json};
use tower_lsp_server::ls_types::notification::Notification;
use tower_lsp_server::ls_types::request::Request;
use tower_lsp_server::ls_types::{Position, Range, Uri};

fn protocol_ts() -> String {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../editors/vscode/src/protocol.ts"
    );
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("reading {path}: {e}"))
}

/// The text between the `{` that starts at or after `from` and its matching `}`.
fn braced(text: &str, from: usize) -> &str {
    let open = from + text[from..].find('{').expect("an opening brace");
    let mut depth = 0;
    for (i, c) in text[open..].char_indices() {
        match c {
            '{' => depth += 1,
            '}' => {
                depth -= 1;
                if depth == 0 {
                    return &text[open + 1..open + i];
                }
            }
            _ => {}
        }
    }
    panic!("unbalanced braces after byte {from}");
}

/// The field names of `interface NAME { ... }`, nested object types left out.
fn ts_fields(ts: &str, name: &str) -> BTreeSet<String> {
    let head = format!("interface {name} {{");
    let at = ts
        .find(&head)
        .unwrap_or_else(|| panic!("protocol.ts has no `interface {name}`"));
    fields_of(braced(ts, at))
}

/// The field names of the member of the `RunEvent` union whose `kind` is `kind`.
fn ts_event_fields(ts: &str, kind: &str) -> BTreeSet<String> {
    let union = ts
        .find("export type RunEvent")
        .expect("protocol.ts has `export type RunEvent`");
    let tag = format!("kind: \"{kind}\"");
    let at = union
        + ts[union..]
            .find(&tag)
            .unwrap_or_else(|| panic!("the RunEvent union has no member with {tag}"));
    let open = ts[..at].rfind('{').expect("the member's opening brace");
    fields_of(braced(ts, open))
}

/// The names before `:` (or `?:`) at the top level of an object type's body.
fn fields_of(body: &str) -> BTreeSet<String> {
    let mut fields = BTreeSet::new();
    let mut depth = 0;
    let mut word = String::new();
    let mut chars = body.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '{' | '(' | '<' => depth += 1,
            '}' | ')' | '>' => depth -= 1,
            _ => {}
        }
        if depth == 0 && (c.is_alphanumeric() || c == '_') {
            word.push(c);
            continue;
        }
        if depth == 0 && !word.is_empty() {
            let mut rest = c;
            if rest == '?' {
                rest = chars.peek().copied().unwrap_or(' ');
            }
            if rest == ':' {
                fields.insert(std::mem::take(&mut word));
            }
        }
        word.clear();
    }
    fields
}

/// The method names in `export const Methods = { ... }`.
fn ts_methods(ts: &str) -> BTreeSet<String> {
    let at = ts
        .find("export const Methods")
        .expect("protocol.ts has `export const Methods`");
    braced(ts, at)
        .split('"')
        .filter(|s| s.starts_with("cairn/"))
        .map(str::to_string)
        .collect()
}

/// The keys of `value` (an object), or of every object in it (an array of samples, for enums).
fn keys(value: &Value) -> BTreeSet<String> {
    match value {
        Value::Object(map) => map.keys().cloned().collect(),
        Value::Array(items) => items.iter().flat_map(keys).collect(),
        other => panic!("a sample that is not an object: {other}"),
    }
}

/// One shape to compare: a serialized sample and the TypeScript interface it must match.
struct Shape {
    what: String,
    sample: Value,
    ts: &'static str,
}

fn shape(what: impl Into<String>, sample: impl Serialize, ts: &'static str) -> Shape {
    Shape {
        what: what.into(),
        sample: serde_json::to_value(sample).expect("a sample serializes"),
        ts,
    }
}

/// A request's params and result, each with its interface (`None`: the method takes none).
fn request<R: Request>(
    params: R::Params,
    ts_params: Option<&'static str>,
    result: R::Result,
    ts_result: &'static str,
) -> (&'static str, Vec<Shape>) {
    let mut shapes = vec![shape(format!("{} result", R::METHOD), result, ts_result)];
    if let Some(ts) = ts_params {
        shapes.push(shape(format!("{} params", R::METHOD), params, ts));
    }
    (R::METHOD, shapes)
}

fn uri() -> Uri {
    "file:///work/notes.txt".parse().expect("a URI")
}

fn range() -> Range {
    Range::new(Position::new(0, 0), Position::new(1, 2))
}

fn summary() -> SessionSummary {
    SessionSummary {
        session_id: "s".into(),
        title: "t".into(),
        runs: 1,
        updated: 2,
    }
}

fn records() -> Vec<Record> {
    vec![
        Record::Run {
            run_id: "r".into(),
            mode: "agent".into(),
            started: 1,
        },
        Record::Message {
            run_id: "r".into(),
            message: Message::User {
                text: "hi".into(),
                images: Vec::new(),
            },
        },
        Record::Compaction {
            run_id: "r".into(),
            drop: 2,
            summary: "s".into(),
            turns: 1,
            tokens_before: 2,
            tokens_after: 1,
        },
        Record::End {
            run_id: "r".into(),
            usage: Usage::default(),
            tool_calls: 0,
            outcome: "done".into(),
        },
    ]
}

fn tool_entry() -> ToolEntry {
    ToolEntry {
        name: "read_file".into(),
        description: "d".into(),
        category: "files".into(),
        effect: Effect::Read,
        agent_only: false,
        policy: Decision::Allow,
        selected: true,
        input_schema: json!({"type": "object"}),
    }
}

fn resource() -> ServerResource {
    ServerResource {
        server: "s".into(),
        uri: "u".into(),
        name: "n".into(),
        description: Some("d".into()),
        mime_type: Some("text/plain".into()),
        template: false,
    }
}

fn prompt() -> ServerPrompt {
    ServerPrompt {
        server: "s".into(),
        name: "n".into(),
        description: Some("d".into()),
        arguments: vec![json!({"name": "a"})],
    }
}

/// Every `cairn/` method with the shapes its definition names.
fn methods() -> Vec<(&'static str, Vec<Shape>)> {
    let chat = ChatParams {
        message: "hello".into(),
        session_id: Some("s".into()),
        mode: Some(Mode::Agent),
        context: Some(ChatContext {
            uri: uri(),
            range: Some(range()),
        }),
        attachments: Some(vec![ResourceRef {
            server: "s".into(),
            uri: "u".into(),
        }]),
    };
    let approve = ApproveParams {
        approval_id: "a".into(),
        run_id: "r".into(),
        call_id: "c".into(),
        tool: "edit_file".into(),
        arguments: json!({}),
        args_hash: "h".into(),
        reason: "why".into(),
        description: "d".into(),
        options: vec![ApprovalAnswer::AllowOnce],
        protected_paths: vec![".env".into()],
    };
    let approved = ApproveResult {
        approval_id: "a".into(),
        run_id: "r".into(),
        call_id: "c".into(),
        decision: ApprovalAnswer::Deny,
    };
    let elicit = ElicitParams {
        server: "s".into(),
        message: "m".into(),
        requested_schema: json!({}),
    };
    let elicited = ElicitResult {
        action: "accept".into(),
        content: Some(json!({})),
    };
    let mut chat_shapes = request::<ChatRequest>(
        chat.clone(),
        Some("ChatParams"),
        ChatResult {
            run_id: "r".into(),
            session_id: "s".into(),
        },
        "ChatResult",
    );
    chat_shapes
        .1
        .push(shape("cairn/chat context", chat.context, "ChatContext"));
    chat_shapes.1.push(shape(
        "cairn/chat attachment",
        chat.attachments.unwrap_or_default().first(),
        "ResourceRef",
    ));
    let mut sessions = request::<SessionsRequest>(
        Some(SessionsParams {
            session_id: Some("s".into()),
        }),
        Some("SessionsParams"),
        SessionsResult::List {
            sessions: vec![summary()],
        },
        "SessionList",
    );
    sessions.1.push(shape(
        "cairn/sessions transcript",
        SessionsResult::Transcript {
            session_id: "s".into(),
            records: records(),
        },
        "SessionTranscript",
    ));
    sessions
        .1
        .push(shape("a session summary", summary(), "SessionSummary"));
    sessions
        .1
        .push(shape("a session record", records(), "SessionRecord"));
    let mut tools = request::<ToolsRequest>(
        Some(ToolsParams {
            session_id: Some("s".into()),
        }),
        Some("ToolsParams"),
        ToolsResult {
            tools: vec![tool_entry()],
        },
        "ToolsResult",
    );
    tools.1.push(shape("a tool", tool_entry(), "ToolInfo"));
    let mut resources = request::<McpResourcesRequest>(
        None,
        None,
        McpResourcesResult {
            resources: vec![resource()],
        },
        "McpResourcesResult",
    );
    resources
        .1
        .push(shape("an MCP resource", resource(), "McpResource"));
    let mut prompts = request::<McpPromptsRequest>(
        None,
        None,
        McpPromptsResult {
            prompts: vec![prompt()],
        },
        "McpPromptsResult",
    );
    prompts
        .1
        .push(shape("an MCP prompt", prompt(), "McpPrompt"));
    let turn = CheckpointTurn {
        turn: 1,
        run_id: "r".into(),
        message: "m".into(),
        files: vec!["src/a.rs".into()],
    };
    let mut checkpoints = request::<CheckpointsRequest>(
        CheckpointsParams {
            session_id: "s".into(),
        },
        Some("CheckpointsParams"),
        CheckpointsResult {
            turns: vec![turn.clone()],
        },
        "CheckpointsResult",
    );
    checkpoints
        .1
        .push(shape("a checkpoint turn", turn, "CheckpointTurn"));
    let problem = RewindProblem {
        path: "src/b.rs".into(),
        reason: "changed since cairn wrote it".into(),
    };
    let mut rewind = request::<RewindRequest>(
        RewindParams {
            session_id: "s".into(),
            turn: 1,
        },
        Some("RewindParams"),
        RewindResult {
            restored: vec!["src/a.rs".into()],
            conflicts: vec![problem.clone()],
            failed: vec![problem.clone()],
        },
        "RewindResult",
    );
    rewind
        .1
        .push(shape("a file not restored", problem, "RewindProblem"));
    let rule = RuleEntry {
        path: "/w/AGENTS.md".into(),
        bytes: 10,
        included: 10,
        truncated: false,
    };
    let mut context = request::<ContextRequest>(
        Some(ContextParams { uri: Some(uri()) }),
        Some("ContextParams"),
        ContextResult {
            rules: vec![rule.clone()],
            max_bytes: 16384,
        },
        "ContextResult",
    );
    context.1.push(shape("a rules file", rule, "ContextRule"));
    vec![
        chat_shapes,
        checkpoints,
        rewind,
        context,
        request::<CompactRequest>(
            CompactParams {
                session_id: "s".into(),
            },
            Some("CompactParams"),
            CompactResult {
                compacted: true,
                turns: Some(1),
                tokens_before: Some(2),
                tokens_after: Some(1),
                reason: Some("r".into()),
            },
            "CompactResult",
        ),
        request::<CancelRequest>(
            CancelParams { run_id: "r".into() },
            Some("CancelParams"),
            CancelResult { cancelled: true },
            "CancelResult",
        ),
        sessions,
        tools,
        request::<ApproveRequest>(approve, Some("ApproveParams"), approved, "ApproveResult"),
        request::<ElicitRequest>(elicit, Some("ElicitParams"), elicited, "ElicitResult"),
        resources,
        prompts,
        // `runId` plus the agent's event, flattened: the TypeScript side is a union over the
        // event kinds, checked by `every_run_event_kind_has_its_typescript_member`.
        (RunEventNotification::METHOD, Vec::new()),
        // A JSON value built by the MCP bridge (`mcp::status_json`), not a struct here.
        (McpStatusNotification::METHOD, Vec::new()),
        // The diagnostics themselves are LSP's `Diagnostic`, not a shape of ours.
        (
            DiagnosticsNotification::METHOD,
            vec![shape(
                "cairn/diagnostics params",
                DiagnosticsParams {
                    uri: uri(),
                    diagnostics: Vec::new(),
                },
                "DiagnosticsParams",
            )],
        ),
    ]
}

#[test]
fn the_typescript_methods_are_the_rust_methods() {
    let ts = ts_methods(&protocol_ts());
    let rust: BTreeSet<String> = METHODS.iter().map(|m| m.to_string()).collect();
    assert_eq!(
        ts, rust,
        "`Methods` in editors/vscode/src/protocol.ts must list exactly the methods of protocol.rs"
    );
}

#[test]
fn every_method_is_compared() {
    let compared: BTreeSet<&str> = methods().iter().map(|(m, _)| *m).collect();
    let all: BTreeSet<&str> = METHODS.iter().copied().collect();
    assert_eq!(
        compared, all,
        "each `cairn/` method needs its row in `methods()`"
    );
}

#[test]
fn every_typescript_interface_has_the_rust_fields() {
    let ts = protocol_ts();
    let mut wrong = Vec::new();
    for (_, shapes) in methods() {
        for s in shapes {
            let rust = keys(&s.sample);
            let script = ts_fields(&ts, s.ts);
            if rust != script {
                wrong.push(format!(
                    "{} (interface {}): only in Rust {:?}, only in TypeScript {:?}",
                    s.what,
                    s.ts,
                    rust.difference(&script).collect::<Vec<_>>(),
                    script.difference(&rust).collect::<Vec<_>>(),
                ));
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "editors/vscode/src/protocol.ts disagrees with protocol.rs:\n{}",
        wrong.join("\n")
    );
}

#[test]
fn the_event_base_is_the_run_id() {
    assert_eq!(
        ts_fields(&protocol_ts(), "EventBase"),
        BTreeSet::from(["runId".to_string()])
    );
}

#[test]
fn every_run_event_kind_has_its_typescript_member() {
    // One sample per variant, every optional field filled; the match makes a new variant fail to
    // compile here until it has a sample.
    let samples = [
        RunEvent::Text { delta: "d".into() },
        RunEvent::ToolCall {
            call_id: "c".into(),
            name: "n".into(),
            arguments: json!({}),
        },
        RunEvent::Approval {
            call_id: "c".into(),
            name: "n".into(),
            state: ApprovalState::Answered,
            answer: Some(ApprovalAnswer::AllowOnce),
            reason: "r".into(),
        },
        RunEvent::ToolResult {
            call_id: "c".into(),
            is_error: false,
            content: "c".into(),
            images: vec![cairn_agent::events::Image {
                mime_type: "image/png".into(),
                data: "AA==".into(),
            }],
        },
        RunEvent::Edit {
            call_id: "c".into(),
            uri: "u".into(),
            applied: false,
            reason: Some("r".into()),
        },
        RunEvent::Done {
            usage: Usage::default(),
            tool_calls: 1,
            stopped: Some(StopReason::Cancelled),
        },
        RunEvent::Error {
            message: "m".into(),
        },
        RunEvent::Plan {
            call_id: "c".into(),
            steps: vec![cairn_agent::events::PlanStep {
                title: "t".into(),
                state: cairn_agent::events::StepState::Done,
            }],
        },
        RunEvent::SubAgent {
            call_id: "c".into(),
            event: Box::new(RunEvent::Text { delta: "d".into() }),
        },
        RunEvent::Hook {
            stage: cairn_agent::events::HookStage::PreTool,
            command: "c".into(),
            call_id: Some("c".into()),
            outcome: cairn_agent::events::HookOutcome::Denied,
            message: "m".into(),
        },
        RunEvent::Compacted {
            turns: 1,
            tokens_before: 2,
            tokens_after: 1,
            summary: "s".into(),
        },
    ];
    for sample in &samples {
        match sample {
            RunEvent::Text { .. }
            | RunEvent::ToolCall { .. }
            | RunEvent::Approval { .. }
            | RunEvent::ToolResult { .. }
            | RunEvent::Edit { .. }
            | RunEvent::Done { .. }
            | RunEvent::Error { .. }
            | RunEvent::Plan { .. }
            | RunEvent::SubAgent { .. }
            | RunEvent::Hook { .. }
            | RunEvent::Compacted { .. } => {}
        }
    }
    let ts = protocol_ts();
    let mut wrong = Vec::new();
    for sample in samples {
        let params = serde_json::to_value(RunEventParams {
            run_id: "r".into(),
            event: sample,
        })
        .expect("an event serializes");
        let kind = params["kind"].as_str().expect("a kind").to_string();
        let mut rust = keys(&params);
        // `runId` is the union's common part, `EventBase`, checked on its own.
        rust.remove("runId");
        let script = ts_event_fields(&ts, &kind);
        if rust != script {
            wrong.push(format!("{kind}: Rust {rust:?}, TypeScript {script:?}"));
        }
    }
    assert!(
        wrong.is_empty(),
        "the RunEvent union in editors/vscode/src/protocol.ts disagrees with the events:\n{}",
        wrong.join("\n")
    );
}
