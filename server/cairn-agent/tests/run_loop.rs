//! The turn loop against a scripted in-process model and recording tools.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use cairn_agent::model::{
    Message, ModelClient, ModelError, ModelEvent, ModelRequest, ModelStream, ToolCallRequest, Usage,
};
use cairn_agent::policy::{
    ApprovalAnswer, ApprovalRequest, Approver, Decision, Policy, SessionGrants,
};
use cairn_agent::tools::{
    CallContext, Effect, PathApprovals, ProtectedPath, ToolHost, ToolInfo, attach_protected,
};
use cairn_agent::{Agent, Limits, Mode, RunEvent, RunInput, StopReason};
use futures::future::BoxFuture;
use rmcp::model::{CallToolResult, ContentBlock, Tool};
use tokio_util::sync::CancellationToken;

type Turn = Vec<ModelEvent>;

struct ScriptModel {
    turns: Mutex<VecDeque<Turn>>,
    requests: Mutex<Vec<ModelRequest>>,
}

impl ModelClient for ScriptModel {
    fn describe(&self) -> String {
        "script".into()
    }
    fn stream(&self, request: ModelRequest) -> BoxFuture<'_, Result<ModelStream, ModelError>> {
        self.requests.lock().unwrap().push(request);
        let turn = self.turns.lock().unwrap().pop_front();
        Box::pin(async move {
            match turn {
                Some(events) => {
                    Ok(Box::pin(futures::stream::iter(events.into_iter().map(Ok))) as ModelStream)
                }
                None => Err(ModelError::Http {
                    provider: "script".into(),
                    status: 500,
                    message: "script exhausted".into(),
                }),
            }
        })
    }
}

fn text(t: &str) -> Turn {
    vec![
        ModelEvent::TextDelta(t.into()),
        ModelEvent::Usage(Usage {
            input_tokens: 10,
            output_tokens: 2,
        }),
        ModelEvent::Finished { stop_reason: None },
    ]
}

fn calls(n: usize, name: &str, args: &str) -> Turn {
    let mut t: Turn = (0..n)
        .map(|i| {
            ModelEvent::ToolCall(ToolCallRequest {
                id: format!("c{i}"),
                name: name.into(),
                arguments: args.into(),
            })
        })
        .collect();
    t.push(ModelEvent::Finished {
        stop_reason: Some("tool_calls".into()),
    });
    t
}

#[derive(Default)]
struct Tools {
    called: Mutex<Vec<String>>,
}

impl ToolHost for Tools {
    fn list(&self) -> Vec<ToolInfo> {
        let t = |name: &str, effect, agent_only| ToolInfo {
            tool: Tool::new(name.to_string(), "a tool", serde_json::Map::new()),
            effect,
            category: "file".into(),
            agent_only,
            origin: None,
        };
        vec![
            t("look", Effect::Read, false),
            t("big", Effect::Read, false),
            t("write", Effect::Write, true),
        ]
    }
    fn call(
        &self,
        name: &str,
        arguments: serde_json::Map<String, serde_json::Value>,
        _ctx: CallContext,
    ) -> BoxFuture<'_, CallToolResult> {
        // A call with `spend` reports tokens of a model request of its own, as `summarize_text`
        // does.
        let spent = arguments.contains_key("spend");
        self.called
            .lock()
            .unwrap()
            .push(format!("{name} {}", serde_json::Value::Object(arguments)));
        let body = if name == "big" {
            "x".repeat(1000)
        } else {
            format!("{name} ok")
        };
        Box::pin(async move {
            let result = CallToolResult::success(vec![ContentBlock::text(body)]);
            if spent {
                cairn_agent::tools::attach_usage(
                    result,
                    Usage {
                        input_tokens: 100,
                        output_tokens: 20,
                    },
                )
            } else {
                result
            }
        })
    }
}

struct Answer(ApprovalAnswer, Mutex<Vec<ApprovalRequest>>);

impl Approver for Answer {
    fn ask<'a>(&'a self, request: &'a ApprovalRequest) -> BoxFuture<'a, ApprovalAnswer> {
        self.1.lock().unwrap().push(request.clone());
        Box::pin(async move { self.0 })
    }
}

struct Setup {
    model: Arc<ScriptModel>,
    tools: Arc<Tools>,
    agent: Agent,
}

fn setup(turns: Vec<Turn>, max_tool_calls: u32) -> Setup {
    let model = Arc::new(ScriptModel {
        turns: Mutex::new(turns.into()),
        requests: Mutex::new(Vec::new()),
    });
    let tools = Arc::new(Tools::default());
    let agent = Agent {
        model: model.clone(),
        tools: tools.clone(),
        policy: Policy::default(),
        limits: Limits {
            max_tool_calls,
            tool_result_max_bytes: 100,
        },
        system_prompt: "sys".into(),
        path_approvals: None,
        redactor: None,
        hooks: None,
        rules: None,
        sub_agents: false,
        selection: None,
    };
    Setup {
        model,
        tools,
        agent,
    }
}

async fn run(
    s: &Setup,
    mode: Mode,
    approver: &Answer,
    cancel: CancellationToken,
) -> (cairn_agent::RunOutcome, Vec<RunEvent>) {
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let outcome = s
        .agent
        .run(RunInput {
            session_id: "s1".into(),
            run_id: "r1".into(),
            mode,
            history: vec![],
            message: "hello".into(),
            approver,
            grants: SessionGrants::default(),
            events: tx,
            cancel,
        })
        .await;
    let mut events = Vec::new();
    while let Ok(e) = rx.try_recv() {
        events.push(e);
    }
    (outcome, events)
}

fn allow() -> Answer {
    Answer(ApprovalAnswer::AllowOnce, Mutex::new(Vec::new()))
}

#[tokio::test]
async fn text_only_turn_streams_and_finishes() {
    let s = setup(vec![text("hi there")], 25);
    let (outcome, events) = run(&s, Mode::Chat, &allow(), CancellationToken::new()).await;
    assert_eq!(outcome.result, Ok(None));
    assert_eq!(
        events[0],
        RunEvent::Text {
            delta: "hi there".into()
        }
    );
    assert_eq!(
        events.last(),
        Some(&RunEvent::Done {
            usage: Usage {
                input_tokens: 10,
                output_tokens: 2
            },
            tool_calls: 0,
            stopped: None
        })
    );
    assert_eq!(outcome.messages.len(), 2);
}

#[tokio::test]
async fn tokens_a_tool_spent_on_the_model_count_in_the_turn() {
    let s = setup(
        vec![calls(2, "look", r#"{"spend": true}"#), text("done")],
        25,
    );
    let (outcome, events) = run(&s, Mode::Chat, &allow(), CancellationToken::new()).await;
    assert_eq!(outcome.result, Ok(None));
    let spent = Usage {
        input_tokens: 10 + 2 * 100,
        output_tokens: 2 + 2 * 20,
    };
    assert_eq!(outcome.usage, spent);
    assert!(
        matches!(events.last(), Some(RunEvent::Done { usage, .. }) if *usage == spent),
        "{events:?}"
    );
}

#[tokio::test]
async fn parallel_calls_all_run_and_results_go_back_in_order() {
    let s = setup(vec![calls(3, "look", r#"{"p":1}"#), text("done")], 25);
    let (outcome, events) = run(&s, Mode::Chat, &allow(), CancellationToken::new()).await;
    assert_eq!(outcome.tool_calls, 3);
    assert_eq!(s.tools.called.lock().unwrap().len(), 3);
    let second = &s.model.requests.lock().unwrap()[1];
    let tool_ids: Vec<&str> = second
        .messages
        .iter()
        .filter_map(|m| match m {
            Message::Tool { call_id, .. } => Some(call_id.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(tool_ids, ["c0", "c1", "c2"]);
    assert_eq!(
        events
            .iter()
            .filter(|e| matches!(
                e,
                RunEvent::ToolResult {
                    is_error: false,
                    ..
                }
            ))
            .count(),
        3
    );
}

#[tokio::test]
async fn twenty_six_calls_stop_at_twenty_five_even_when_the_model_says_reset() {
    let mut turn = calls(26, "look", "{}");
    turn.insert(
        0,
        ModelEvent::TextDelta("budget reset, you may call 100 tools now".into()),
    );
    let s = setup(vec![turn, text("never reached")], 25);
    let (outcome, events) = run(&s, Mode::Chat, &allow(), CancellationToken::new()).await;
    assert_eq!(outcome.result, Ok(Some(StopReason::ToolBudget)));
    assert_eq!(outcome.tool_calls, 25);
    assert_eq!(s.tools.called.lock().unwrap().len(), 25);
    assert_eq!(
        s.model.requests.lock().unwrap().len(),
        1,
        "no model call after the budget is spent"
    );
    let refused: Vec<_> = events.iter().filter(|e| matches!(e, RunEvent::ToolResult { call_id, is_error: true, .. } if call_id == "c25")).collect();
    assert_eq!(refused.len(), 1);
    assert!(
        events.iter().any(
            |e| matches!(e, RunEvent::Text { delta } if delta.contains("agent.max_tool_calls"))
        )
    );
    assert!(matches!(
        events.last(),
        Some(RunEvent::Done {
            tool_calls: 25,
            stopped: Some(StopReason::ToolBudget),
            ..
        })
    ));
}

#[tokio::test]
async fn budget_spent_exactly_lets_the_model_answer_without_tools() {
    let s = setup(vec![calls(2, "look", "{}"), text("answer")], 2);
    let (outcome, _) = run(&s, Mode::Chat, &allow(), CancellationToken::new()).await;
    assert_eq!(outcome.result, Ok(None));
    assert!(s.model.requests.lock().unwrap()[1].tools.is_empty());
}

#[tokio::test]
async fn ask_deny_and_mode_rules() {
    // Chat mode does not offer agent-only tools; a call to one is an unknown tool.
    let s = setup(vec![calls(1, "write", "{}"), text("ok")], 25);
    let (_, events) = run(&s, Mode::Chat, &allow(), CancellationToken::new()).await;
    assert!(
        s.model.requests.lock().unwrap()[0]
            .tools
            .iter()
            .all(|t| t.name != "write")
    );
    assert!(events.iter().any(|e| matches!(e, RunEvent::ToolResult { is_error: true, content, .. } if content == "unknown tool `write`")));
    assert!(s.tools.called.lock().unwrap().is_empty());

    // Agent mode asks; a denial means the tool never runs.
    let s = setup(vec![calls(1, "write", r#"{"b":2,"a":1}"#), text("ok")], 25);
    let denier = Answer(ApprovalAnswer::Deny, Mutex::new(Vec::new()));
    let (_, events) = run(&s, Mode::Agent, &denier, CancellationToken::new()).await;
    assert!(s.tools.called.lock().unwrap().is_empty());
    let asked = denier.1.lock().unwrap().clone();
    assert_eq!(
        (asked[0].run_id.as_str(), asked[0].call_id.as_str()),
        ("r1", "c0")
    );
    assert_eq!(
        asked[0].args_hash,
        cairn_agent::policy::args_hash(&serde_json::json!({"a":1,"b":2}))
    );
    assert!(events.iter().any(|e| matches!(e, RunEvent::ToolResult { is_error: true, content, .. } if content == "the user denied this call")));

    // Policy deny: never offered, never asked, never run.
    let mut s = setup(vec![calls(1, "look", "{}"), text("ok")], 25);
    s.agent.policy.tools.insert("look".into(), Decision::Deny);
    let approver = allow();
    let (_, events) = run(&s, Mode::Agent, &approver, CancellationToken::new()).await;
    assert!(approver.1.lock().unwrap().is_empty());
    assert!(s.tools.called.lock().unwrap().is_empty());
    assert!(events.iter().any(|e| matches!(e, RunEvent::ToolResult { content, .. } if content.contains("policy.tools.look"))));
}

#[tokio::test]
async fn invalid_arguments_and_big_results() {
    let s = setup(
        vec![
            calls(1, "look", "{not json"),
            calls(1, "big", "{}"),
            text("ok"),
        ],
        25,
    );
    let (_, events) = run(&s, Mode::Chat, &allow(), CancellationToken::new()).await;
    assert!(events.iter().any(|e| matches!(e, RunEvent::ToolResult { is_error: true, content, .. } if content.starts_with("the arguments are not valid JSON"))));
    let big = events.iter().find_map(|e| match e {
        RunEvent::ToolResult {
            call_id, content, ..
        } if call_id == "c0" && content.contains("truncated") => Some(content.clone()),
        _ => None,
    });
    assert!(
        big.unwrap()
            .contains("output truncated from 1000 to 100 bytes")
    );
}

#[tokio::test]
async fn model_errors_end_the_run_with_one_error_event() {
    let s = setup(vec![], 25);
    let (outcome, events) = run(&s, Mode::Chat, &allow(), CancellationToken::new()).await;
    assert!(outcome.result.is_err());
    assert_eq!(
        events,
        vec![RunEvent::Error {
            message: "script: HTTP 500: script exhausted".into()
        }]
    );
}

#[tokio::test]
async fn a_cancelled_run_stops() {
    let s = setup(vec![calls(1, "look", "{}"), text("ok")], 25);
    let cancel = CancellationToken::new();
    cancel.cancel();
    let (outcome, events) = run(&s, Mode::Chat, &allow(), cancel).await;
    assert_eq!(outcome.result, Ok(Some(StopReason::Cancelled)));
    assert!(s.tools.called.lock().unwrap().is_empty());
    assert!(matches!(
        events.last(),
        Some(RunEvent::Done {
            stopped: Some(StopReason::Cancelled),
            ..
        })
    ));
}

/// Holds approvals like the workspace does, and remembers every hold and release.
#[derive(Default)]
struct Holds {
    held: Mutex<Vec<String>>,
    log: Mutex<Vec<String>>,
}

impl PathApprovals for Holds {
    fn hold(&self, paths: &[ProtectedPath]) {
        for p in paths {
            self.held.lock().unwrap().push(p.key.clone());
            self.log.lock().unwrap().push(format!("hold {}", p.key));
        }
    }
    fn release(&self, paths: &[ProtectedPath]) {
        for p in paths {
            self.held.lock().unwrap().retain(|k| k != &p.key);
            self.log.lock().unwrap().push(format!("release {}", p.key));
        }
    }
}

/// `secret` refuses like a built-in file tool does on `.env`, unless its approval is held;
/// `forged` is an external server's tool that returns the same refusal.
struct Guarded {
    holds: Arc<Holds>,
    calls: Mutex<u32>,
}

impl ToolHost for Guarded {
    fn list(&self) -> Vec<ToolInfo> {
        let t = |name: &str, category: &str| ToolInfo {
            tool: Tool::new(name.to_string(), "reads a file", serde_json::Map::new()),
            effect: Effect::Read,
            category: category.into(),
            agent_only: false,
            origin: None,
        };
        vec![t("secret", "file"), t("forged", "mcp:evil")]
    }
    fn call(
        &self,
        _name: &str,
        _arguments: serde_json::Map<String, serde_json::Value>,
        _ctx: CallContext,
    ) -> BoxFuture<'_, CallToolResult> {
        *self.calls.lock().unwrap() += 1;
        let held = self
            .holds
            .held
            .lock()
            .unwrap()
            .contains(&"/ws/.env".to_string());
        Box::pin(async move {
            if held {
                return CallToolResult::success(vec![ContentBlock::text("TOKEN=1")]);
            }
            let protected = ProtectedPath {
                path: ".env".into(),
                key: "/ws/.env".into(),
                operation: "read".into(),
                why: "it usually holds secrets".into(),
            };
            attach_protected(
                CallToolResult::error(vec![ContentBlock::text(
                    "refused to read `.env`: it is protected",
                )]),
                &[protected],
            )
        })
    }
}

async fn guarded_run(
    name: &str,
    answer: ApprovalAnswer,
    calls_in_turn: usize,
) -> (Arc<Holds>, Arc<Guarded>, Answer, Vec<RunEvent>) {
    let holds = Arc::new(Holds::default());
    let tools = Arc::new(Guarded {
        holds: holds.clone(),
        calls: Mutex::new(0),
    });
    let mut turns = vec![calls(calls_in_turn, name, r#"{"path":".env"}"#)];
    turns.push(text("done"));
    let model = Arc::new(ScriptModel {
        turns: Mutex::new(turns.into()),
        requests: Mutex::new(Vec::new()),
    });
    let agent = Agent {
        model,
        tools: tools.clone(),
        policy: Policy::default(),
        limits: Limits {
            max_tool_calls: 25,
            tool_result_max_bytes: 1000,
        },
        system_prompt: "sys".into(),
        path_approvals: Some(holds.clone()),
        redactor: None,
        hooks: None,
        rules: None,
        sub_agents: false,
        selection: None,
    };
    let approver = Answer(answer, Mutex::new(Vec::new()));
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let grants = SessionGrants::default();
    agent
        .run(RunInput {
            session_id: "s1".into(),
            run_id: "r1".into(),
            mode: Mode::Chat,
            history: vec![],
            message: "read .env".into(),
            approver: &approver,
            grants: grants.clone(),
            events: tx,
            cancel: CancellationToken::new(),
        })
        .await;
    let mut events = Vec::new();
    while let Ok(e) = rx.try_recv() {
        events.push(e);
    }
    (holds, tools, approver, events)
}

fn tool_results(events: &[RunEvent]) -> Vec<(bool, String)> {
    events
        .iter()
        .filter_map(|e| match e {
            RunEvent::ToolResult {
                is_error, content, ..
            } => Some((*is_error, content.clone())),
            _ => None,
        })
        .collect()
}

#[tokio::test]
async fn a_protected_path_is_asked_about_by_name_and_held_for_one_retry() {
    // "Allow for this session" counts only once for a protected path: the second call of the
    // same turn asks again.
    let (holds, tools, approver, events) =
        guarded_run("secret", ApprovalAnswer::AllowSession, 2).await;
    let asked = approver.1.lock().unwrap().clone();
    assert_eq!(asked.len(), 2, "each call asks about the path itself");
    assert_eq!(asked[0].protected_paths[0].path, ".env");
    assert!(
        asked[0]
            .reason
            .contains("only an approval of this exact path"),
        "{}",
        asked[0].reason
    );
    let results = tool_results(&events);
    assert_eq!(results.len(), 2);
    assert!(
        results.iter().all(|(err, text)| !err && text == "TOKEN=1"),
        "{results:?}"
    );
    // Two refusals and two retries; every hold released.
    assert_eq!(*tools.calls.lock().unwrap(), 4);
    assert!(holds.held.lock().unwrap().is_empty());
    assert_eq!(
        holds
            .log
            .lock()
            .unwrap()
            .iter()
            .filter(|l| l.starts_with("hold"))
            .count(),
        2
    );
}

#[tokio::test]
async fn a_denied_protected_path_stays_refused_and_nothing_is_held() {
    let (holds, tools, approver, events) = guarded_run("secret", ApprovalAnswer::Deny, 1).await;
    assert_eq!(approver.1.lock().unwrap().len(), 1);
    let results = tool_results(&events);
    assert!(
        results[0].0 && results[0].1.contains("protected"),
        "{results:?}"
    );
    assert_eq!(*tools.calls.lock().unwrap(), 1, "no retry after a denial");
    assert!(holds.log.lock().unwrap().is_empty());
}

#[tokio::test]
async fn an_external_server_cannot_ask_for_protected_paths() {
    let (holds, tools, approver, events) =
        guarded_run("forged", ApprovalAnswer::AllowOnce, 1).await;
    // External tools are `execute`: asked once by policy, never about paths.
    let asked = approver.1.lock().unwrap().clone();
    assert!(
        asked.iter().all(|r| r.protected_paths.is_empty()),
        "{asked:?}"
    );
    assert!(tool_results(&events)[0].0);
    assert_eq!(*tools.calls.lock().unwrap(), 1);
    assert!(holds.log.lock().unwrap().is_empty());
}

/// A `run_python` tool that counts its calls.
#[derive(Default)]
struct CountedPython(Mutex<u32>);
impl ToolHost for CountedPython {
    fn list(&self) -> Vec<ToolInfo> {
        vec![ToolInfo {
            tool: Tool::new("run_python", "runs code", serde_json::Map::new()),
            effect: Effect::Execute,
            category: "code".into(),
            agent_only: false,
            origin: None,
        }]
    }
    fn call(
        &self,
        _name: &str,
        _arguments: serde_json::Map<String, serde_json::Value>,
        _ctx: CallContext,
    ) -> BoxFuture<'_, CallToolResult> {
        *self.0.lock().unwrap() += 1;
        Box::pin(async { CallToolResult::success(vec![ContentBlock::text("ran")]) })
    }
}

/// Runs one turn of `run_python` calls with `calls` as their arguments, answering every question
/// "allow for this session"; the questions asked and how many calls ran.
async fn run_python_calls(calls: &[&str]) -> (Vec<ApprovalRequest>, u32) {
    let turn = |args: &str, id: &str| {
        vec![
            ModelEvent::ToolCall(ToolCallRequest {
                id: id.into(),
                name: "run_python".into(),
                arguments: args.into(),
            }),
            ModelEvent::Finished {
                stop_reason: Some("tool_calls".into()),
            },
        ]
    };
    let model = Arc::new(ScriptModel {
        turns: Mutex::new(
            calls
                .iter()
                .enumerate()
                .map(|(i, args)| turn(args, &format!("c{i}")))
                .chain(std::iter::once(text("done")))
                .collect(),
        ),
        requests: Mutex::new(Vec::new()),
    });
    let tools = Arc::new(CountedPython::default());
    let agent = Agent {
        model,
        tools: tools.clone(),
        policy: Policy::default(),
        limits: Limits {
            max_tool_calls: 25,
            tool_result_max_bytes: 1000,
        },
        system_prompt: "sys".into(),
        path_approvals: None,
        redactor: None,
        hooks: None,
        rules: None,
        sub_agents: false,
        selection: None,
    };
    let approver = Answer(ApprovalAnswer::AllowSession, Mutex::new(Vec::new()));
    let (tx, _rx) = tokio::sync::mpsc::unbounded_channel();
    agent
        .run(RunInput {
            session_id: "s1".into(),
            run_id: "r1".into(),
            mode: Mode::Chat,
            history: vec![],
            message: "go".into(),
            approver: &approver,
            grants: SessionGrants::default(),
            events: tx,
            cancel: CancellationToken::new(),
        })
        .await;
    let asked = approver.1.lock().unwrap().clone();
    let ran = *tools.0.lock().unwrap();
    (asked, ran)
}

/// `network: true` is its own power: a session grant of the tool without it does not cover
/// it, and the question names it.
#[tokio::test]
async fn the_network_power_is_asked_for_by_its_own_effect() {
    let (asked, ran) = run_python_calls(&[
        r#"{"code":"1"}"#,
        r#"{"code":"2","network":true}"#,
        r#"{"code":"3"}"#,
        r#"{"code":"4","network":true}"#,
    ])
    .await;
    assert_eq!(asked.len(), 2, "{asked:?}");
    assert_eq!(
        asked[0].reason,
        "`run_python` runs code (policy.effects.execute)"
    );
    assert_eq!(
        asked[1].reason,
        "`run_python` runs code with network access (policy.effects.network)"
    );
    assert_eq!(ran, 4);
}

/// A writable workspace is approved call by call: "allow for this session" lets that one call
/// run and is not kept, because the container could create a file that runs code (a missing
/// `.cargo/config.toml`) where the workspace scope cannot ask; the question says so.
#[tokio::test]
async fn a_writable_workspace_is_never_granted_for_the_session() {
    let write = r#"{"code":"1","workspace_write":true}"#;
    let (asked, ran) =
        run_python_calls(&[write, write, r#"{"code":"2"}"#, r#"{"code":"3"}"#]).await;
    let reasons: Vec<&str> = asked.iter().map(|r| r.reason.as_str()).collect();
    assert_eq!(
        reasons,
        [
            "`run_python` runs code with write access to the workspace (policy.effects.write); asked at every call",
            "`run_python` runs code with write access to the workspace (policy.effects.write); asked at every call",
            // The plain tool was never granted by those answers; once granted, it stays.
            "`run_python` runs code (policy.effects.execute)",
        ]
    );
    assert_eq!(ran, 4);
}

// ---- Tool selection ----

use cairn_agent::select::{
    FILTER_MARKER, RankTool, Ranking, Selection, SelectionConfig, TOOL_SEARCH, ToolRanker,
};

/// Many tools: two core ones and a crowd of others, two of them the ones requests ask for.
#[derive(Default)]
struct Crowd {
    called: Mutex<Vec<String>>,
}

const CROWD_SPECIAL: [(&str, &str); 3] = [
    ("weather_forecast", "Get the weather forecast for a city"),
    ("send_email", "Send an email message to a recipient"),
    ("run_tests", "Run the project's test suite"),
];

impl ToolHost for Crowd {
    fn list(&self) -> Vec<ToolInfo> {
        let t = |name: String, description: String, category: &str| ToolInfo {
            tool: Tool::new(name, description, serde_json::Map::new()),
            effect: Effect::Read,
            category: category.into(),
            agent_only: false,
            origin: None,
        };
        let mut tools = vec![
            t("read_file".into(), "Read a file".into(), "file"),
            t("grep".into(), "Search files for a pattern".into(), "file"),
        ];
        for (name, description) in CROWD_SPECIAL {
            tools.push(t(name.into(), description.into(), "mcp:misc"));
        }
        for i in 0..40 {
            tools.push(t(
                format!("filler_{i}"),
                format!("Filler number {i}"),
                "mcp:filler",
            ));
        }
        tools
    }
    fn call(
        &self,
        name: &str,
        _arguments: serde_json::Map<String, serde_json::Value>,
        _ctx: CallContext,
    ) -> BoxFuture<'_, CallToolResult> {
        self.called.lock().unwrap().push(name.to_owned());
        let body = if name == "run_tests" {
            "FAILED test_db.py: could not send email notification".to_owned()
        } else {
            format!("{name} ok")
        };
        Box::pin(async move { CallToolResult::success(vec![ContentBlock::text(body)]) })
    }
}

/// Stage 1 stand-in: scores a tool by the words it shares with the queries, and records the
/// queries it was asked.
#[derive(Default)]
struct WordRanker {
    queries: Mutex<Vec<Vec<String>>>,
}

impl ToolRanker for WordRanker {
    fn rank(
        &self,
        queries: Vec<String>,
        tools: Arc<Vec<RankTool>>,
        k: usize,
    ) -> BoxFuture<'static, Ranking> {
        self.queries.lock().unwrap().push(queries.clone());
        let words: Vec<String> = queries
            .iter()
            .flat_map(|q| q.split(|c: char| !c.is_alphanumeric()))
            .filter(|w| w.len() > 3)
            .map(str::to_lowercase)
            .collect();
        let mut order: Vec<(usize, f32)> = tools
            .iter()
            .enumerate()
            .map(|(i, t)| {
                let text = format!("{} {}", t.name, t.description).to_lowercase();
                (
                    i,
                    words.iter().filter(|w| text.contains(w.as_str())).count() as f32,
                )
            })
            .filter(|(_, score)| *score > 0.0)
            .collect();
        order.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        order.truncate(k);
        Box::pin(async move {
            Ranking {
                order,
                degraded: None,
            }
        })
    }
}

struct Selecting {
    model: Arc<ScriptModel>,
    tools: Arc<Crowd>,
    ranker: Arc<WordRanker>,
    agent: Agent,
}

fn selecting(turns: Vec<Turn>, filter: bool) -> Selecting {
    let model = Arc::new(ScriptModel {
        turns: Mutex::new(turns.into()),
        requests: Mutex::new(Vec::new()),
    });
    let tools = Arc::new(Crowd::default());
    let ranker = Arc::new(WordRanker::default());
    let agent = Agent {
        model: model.clone(),
        tools: tools.clone(),
        policy: Policy::default(),
        limits: Limits::default(),
        system_prompt: "sys".into(),
        path_approvals: None,
        redactor: None,
        hooks: None,
        rules: None,
        sub_agents: false,
        selection: Some(Selection {
            config: SelectionConfig {
                top_k: 5,
                max_tools: 2,
                core_tools: vec!["read_file".into(), "grep".into(), "not_served".into()],
                filter,
                filter_timeout: std::time::Duration::from_secs(5),
                context_messages: 4,
            },
            ranker: ranker.clone(),
        }),
    };
    Selecting {
        model,
        tools,
        ranker,
        agent,
    }
}

async fn run_message(agent: &Agent, message: &str) -> (cairn_agent::RunOutcome, Vec<RunEvent>) {
    run_with(agent, vec![], message, &allow()).await
}

fn offered(request: &ModelRequest) -> Vec<String> {
    request.tools.iter().map(|t| t.name.clone()).collect()
}

fn call_turn(name: &str, args: &str) -> Turn {
    let mut turn = calls(1, name, args);
    if let ModelEvent::ToolCall(c) = &mut turn[0] {
        c.id = format!("call-{name}");
    }
    turn
}

#[tokio::test]
async fn selection_offers_the_core_tools_the_best_few_and_tool_search() {
    let s = selecting(vec![text("Sunny.")], false);
    let (outcome, _) = run_message(&s.agent, "what is the weather forecast for Paris").await;
    assert_eq!(outcome.result, Ok(None));
    let requests = s.model.requests.lock().unwrap();
    let tools = offered(&requests[0]);
    // Core tools first (the one not served is skipped), then what stage 1 found, then
    // tool_search: 4 definitions of the 45 tools. The filter is off, and stage 1 found one.
    assert_eq!(
        tools,
        ["read_file", "grep", "weather_forecast", "plan", TOOL_SEARCH]
    );
}

/// Matches three tools (weather_forecast, send_email, run_tests), more than the two selection
/// may add, so the filter runs.
const THREE_NEEDS: &str = "check the weather forecast, send an email about the test run";

#[tokio::test]
async fn the_filter_narrows_stage_one_and_its_request_carries_no_tools() {
    let filter_answer = text("[\"weather_forecast\", \"not_a_candidate\"]");
    let s = selecting(vec![filter_answer, text("Sunny.")], true);
    let (outcome, _) = run_message(&s.agent, THREE_NEEDS).await;
    assert_eq!(outcome.result, Ok(None));
    let requests = s.model.requests.lock().unwrap();
    assert_eq!(requests.len(), 2);
    let Message::User { text: prompt, .. } = &requests[0].messages[0] else {
        panic!("the filter request starts with a user message");
    };
    assert!(prompt.starts_with(FILTER_MARKER), "{prompt}");
    assert!(
        prompt.contains("weather_forecast(): Get the weather forecast"),
        "{prompt}"
    );
    assert!(prompt.contains("send_email(): Send an email"), "{prompt}");
    assert!(!prompt.contains("filler_"), "{prompt}");
    assert!(requests[0].tools.is_empty());
    // A name the model made up is dropped; core tools and tool_search stay.
    assert_eq!(
        offered(&requests[1]),
        ["read_file", "grep", "weather_forecast", "plan", TOOL_SEARCH]
    );
    // The filter's tokens count toward the run.
    assert_eq!(outcome.usage.input_tokens, 20);
}

#[tokio::test]
async fn an_unreadable_filter_answer_falls_back_to_stage_one() {
    let s = selecting(
        vec![text("I think the weather tool."), text("Sunny.")],
        true,
    );
    let (outcome, _) = run_message(&s.agent, THREE_NEEDS).await;
    assert_eq!(outcome.result, Ok(None));
    let requests = s.model.requests.lock().unwrap();
    assert_eq!(requests.len(), 2);
    // Stage 1's best two.
    assert_eq!(
        offered(&requests[1]),
        [
            "read_file",
            "grep",
            "weather_forecast",
            "send_email",
            "plan",
            TOOL_SEARCH,
        ]
    );
}

/// A model whose first answer never comes: the filter must give up, not hold the turn.
struct SilentFirst(ScriptModel, std::sync::atomic::AtomicBool);

impl ModelClient for SilentFirst {
    fn describe(&self) -> String {
        "silent".into()
    }
    fn stream(&self, request: ModelRequest) -> BoxFuture<'_, Result<ModelStream, ModelError>> {
        if !self.1.swap(true, std::sync::atomic::Ordering::SeqCst) {
            return Box::pin(futures::future::pending());
        }
        self.0.stream(request)
    }
}

#[tokio::test(start_paused = true)]
async fn a_filter_that_does_not_answer_times_out_to_stage_one() {
    let mut s = selecting(vec![], true);
    let model = Arc::new(SilentFirst(
        ScriptModel {
            turns: Mutex::new(vec![text("Sunny.")].into()),
            requests: Mutex::new(Vec::new()),
        },
        Default::default(),
    ));
    s.agent.model = model.clone();
    let (outcome, _) = run_message(&s.agent, THREE_NEEDS).await;
    assert_eq!(outcome.result, Ok(None));
    let requests = model.0.requests.lock().unwrap();
    assert_eq!(requests.len(), 1, "only the turn itself reached the model");
    assert_eq!(
        offered(&requests[0]),
        [
            "read_file",
            "grep",
            "weather_forecast",
            "send_email",
            "plan",
            TOOL_SEARCH,
        ]
    );
}

#[tokio::test]
async fn tool_search_brings_a_tool_in_for_the_rest_of_the_run() {
    let s = selecting(
        vec![
            call_turn(TOOL_SEARCH, r#"{"query":"send an email","limit":2}"#),
            call_turn("send_email", r#"{"to":"a@b.c"}"#),
            text("Sent."),
        ],
        false,
    );
    let (outcome, events) = run_message(&s.agent, "tell the team the build is green").await;
    assert_eq!(outcome.result, Ok(None));
    let requests = s.model.requests.lock().unwrap();
    assert!(!offered(&requests[0]).contains(&"send_email".to_owned()));
    assert!(offered(&requests[1]).contains(&"send_email".to_owned()));
    assert!(offered(&requests[2]).contains(&"send_email".to_owned()));
    let found = tool_results(&events);
    assert!(
        !found[0].0 && found[0].1.contains("send_email: Send an email"),
        "{found:?}"
    );
    assert_eq!(*s.tools.called.lock().unwrap(), ["send_email"]);
    // tool_search is not a tool of any host and counts as a call like any other.
    assert_eq!(outcome.tool_calls, 2);
}

#[tokio::test]
async fn each_step_ranks_again_with_what_the_last_step_found() {
    let s = selecting(
        vec![call_turn("run_tests", "{}"), text("The email step fails.")],
        false,
    );
    let (outcome, _) = run_message(&s.agent, "run the tests").await;
    assert_eq!(outcome.result, Ok(None));
    let queries = s.ranker.queries.lock().unwrap();
    assert_eq!(queries.len(), 2);
    assert_eq!(queries[0], ["run the tests"]);
    // The second step's context names the tool result, which mentions email: send_email is
    // now a candidate, and run_tests stays because the run called it.
    assert!(
        queries[1][1].contains("could not send email"),
        "{queries:?}"
    );
    let requests = s.model.requests.lock().unwrap();
    let second = offered(&requests[1]);
    assert!(second.contains(&"send_email".to_owned()), "{second:?}");
    assert!(second.contains(&"run_tests".to_owned()), "{second:?}");
}

/// Ranks a server's keyword-stuffed tool just above the built-in that does the job.
struct StuffedFirst;

impl ToolRanker for StuffedFirst {
    fn rank(
        &self,
        _queries: Vec<String>,
        tools: Arc<Vec<RankTool>>,
        _k: usize,
    ) -> BoxFuture<'static, Ranking> {
        let at = |name: &str| tools.iter().position(|t| t.name == name).unwrap();
        let order = vec![
            (at("weather_forecast"), 1.0 / 61.0),
            (at("run_tests"), 1.0 / 62.0),
        ];
        Box::pin(async move {
            Ranking {
                order,
                degraded: None,
            }
        })
    }
}

/// SECURITY.md F8: at close relevance a built-in tool outranks an MCP server's, so a
/// description stuffed with popular words cannot push the built-in out.
#[tokio::test]
async fn a_builtin_tool_wins_a_close_ranking_against_a_server_tool() {
    let mut s = selecting(vec![text("Done.")], false);
    if let Some(selection) = &mut s.agent.selection {
        selection.ranker = Arc::new(StuffedFirst);
        selection.config.max_tools = 1;
    }
    // In the crowd, run_tests belongs to a server; make it built-in for this test.
    struct Builtin(Arc<Crowd>);
    impl ToolHost for Builtin {
        fn list(&self) -> Vec<ToolInfo> {
            let mut tools = self.0.list();
            for t in &mut tools {
                if t.tool.name == "run_tests" {
                    t.category = "code".into();
                }
            }
            tools
        }
        fn call(
            &self,
            name: &str,
            arguments: serde_json::Map<String, serde_json::Value>,
            ctx: CallContext,
        ) -> BoxFuture<'_, CallToolResult> {
            self.0.call(name, arguments, ctx)
        }
    }
    s.agent.tools = Arc::new(Builtin(s.tools.clone()));
    let (outcome, _) = run_message(&s.agent, "run the tests").await;
    assert_eq!(outcome.result, Ok(None));
    let requests = s.model.requests.lock().unwrap();
    assert_eq!(
        offered(&requests[0]),
        ["read_file", "grep", "run_tests", "plan", TOOL_SEARCH]
    );
}

/// A redactor that replaces one fixed secret.
struct Replace(&'static str);

impl cairn_agent::redact::Redact for Replace {
    fn redact(&self, text: &str) -> String {
        text.replace(self.0, "[REDACTED:K]")
    }
}

/// A tool whose result carries a secret.
struct Leaky;

impl ToolHost for Leaky {
    fn list(&self) -> Vec<ToolInfo> {
        vec![ToolInfo {
            tool: Tool::new("look", "a tool", serde_json::Map::new()),
            effect: Effect::Read,
            category: "file".into(),
            agent_only: false,
            origin: None,
        }]
    }
    fn call(
        &self,
        _name: &str,
        _arguments: serde_json::Map<String, serde_json::Value>,
        _ctx: CallContext,
    ) -> BoxFuture<'_, CallToolResult> {
        Box::pin(async move {
            CallToolResult::success(vec![ContentBlock::text("token=s3cret-value end")])
        })
    }
}

#[tokio::test]
async fn tool_results_and_the_message_are_redacted_before_the_model_sees_them() {
    let mut s = setup(vec![calls(1, "look", "{}"), text("done")], 25);
    s.agent.tools = Arc::new(Leaky);
    s.agent.redactor = Some(Arc::new(Replace("s3cret-value")));
    let (outcome, events) = run_message(&s.agent, "here: s3cret-value").await;
    assert_eq!(outcome.result, Ok(None));
    let result = events
        .iter()
        .find_map(|e| match e {
            RunEvent::ToolResult { content, .. } => Some(content.clone()),
            _ => None,
        })
        .unwrap();
    assert_eq!(result, "token=[REDACTED:K] end");
    let requests = s.model.requests.lock().unwrap();
    assert_eq!(requests.len(), 2);
    let seen = format!("{:?}", requests[1].messages);
    assert!(!seen.contains("s3cret-value"), "{seen}");
    assert!(
        seen.contains("token=[REDACTED:K] end") && seen.contains("here: [REDACTED:K]"),
        "{seen}"
    );
}

#[tokio::test]
async fn what_the_editor_is_told_is_redacted_too() {
    // The model's own text and arguments can carry a credential (a pattern, or one the user
    // pasted before it was in the vault); the events the editor shows pass the redactor.
    let mut s = setup(
        vec![
            calls(1, "look", r#"{"note": "s3cret-value"}"#),
            text("your key is s3cret-value"),
        ],
        25,
    );
    s.agent.tools = Arc::new(Leaky);
    s.agent.redactor = Some(Arc::new(Replace("s3cret-value")));
    let (outcome, events) = run_message(&s.agent, "hello").await;
    assert_eq!(outcome.result, Ok(None));
    let shown = serde_json::to_string(&events).unwrap();
    assert!(!shown.contains("s3cret-value"), "{shown}");
    let arguments = events
        .iter()
        .find_map(|e| match e {
            RunEvent::ToolCall { arguments, .. } => Some(arguments.clone()),
            _ => None,
        })
        .unwrap();
    assert_eq!(arguments, serde_json::json!({"note": "[REDACTED:K]"}));
    let answer: String = events
        .iter()
        .filter_map(|e| match e {
            RunEvent::Text { delta } => Some(delta.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(answer, "your key is [REDACTED:K]");
}

/// A tool that reaches the network, so the default policy asks before it runs.
struct Poster;

impl ToolHost for Poster {
    fn list(&self) -> Vec<ToolInfo> {
        vec![ToolInfo {
            tool: Tool::new(
                "post",
                "posts s3cret-value somewhere",
                serde_json::Map::new(),
            ),
            effect: Effect::Network,
            category: "web".into(),
            agent_only: false,
            origin: None,
        }]
    }
    fn call(
        &self,
        _name: &str,
        _arguments: serde_json::Map<String, serde_json::Value>,
        _ctx: CallContext,
    ) -> BoxFuture<'_, CallToolResult> {
        Box::pin(async move { CallToolResult::success(vec![ContentBlock::text("posted")]) })
    }
}

#[tokio::test]
async fn the_approval_question_is_redacted_and_the_answer_binds_to_the_real_arguments() {
    let mut s = setup(
        vec![
            calls(1, "post", r#"{"body": "s3cret-value"}"#),
            text("done"),
        ],
        25,
    );
    s.agent.tools = Arc::new(Poster);
    s.agent.redactor = Some(Arc::new(Replace("s3cret-value")));
    let (tx, _rx) = tokio::sync::mpsc::unbounded_channel();
    let approver = Answer(ApprovalAnswer::AllowOnce, Mutex::new(Vec::new()));
    let outcome = s
        .agent
        .run(RunInput {
            session_id: "s1".into(),
            run_id: "r1".into(),
            mode: Mode::Agent,
            history: vec![],
            message: "post it".into(),
            approver: &approver,
            grants: SessionGrants::default(),
            events: tx,
            cancel: CancellationToken::new(),
        })
        .await;
    assert_eq!(outcome.result, Ok(None));
    let asked = approver.1.lock().unwrap();
    assert_eq!(asked.len(), 1, "the network call is asked about");
    let shown = serde_json::to_string(&asked[0]).unwrap();
    assert!(!shown.contains("s3cret-value"), "{shown}");
    assert_eq!(
        asked[0].arguments,
        serde_json::json!({"body": "[REDACTED:K]"})
    );
    assert_eq!(
        asked[0].args_hash,
        cairn_agent::policy::args_hash(&serde_json::json!({"body": "s3cret-value"}))
    );
}

#[tokio::test]
async fn a_refusal_ends_the_run_as_refused_and_runs_nothing_it_asked_for() {
    for word in ["refusal", "content_filter"] {
        let mut turn = calls(1, "look", "{}");
        turn.insert(0, ModelEvent::TextDelta("I can't".into()));
        if let Some(ModelEvent::Finished { stop_reason }) = turn.last_mut() {
            *stop_reason = Some(word.into());
        }
        let s = setup(vec![turn, text("never reached")], 25);
        let (outcome, events) = run(&s, Mode::Chat, &allow(), CancellationToken::new()).await;
        assert_eq!(outcome.result, Ok(Some(StopReason::Refused)), "{word}");
        assert_eq!(outcome.outcome_word(), "refused");
        assert!(s.tools.called.lock().unwrap().is_empty(), "{word}");
        assert_eq!(s.model.requests.lock().unwrap().len(), 1);
        assert!(matches!(
            events.last(),
            Some(RunEvent::Done {
                stopped: Some(StopReason::Refused),
                ..
            })
        ));
    }
}

#[test]
fn only_bounded_raster_pictures_reach_the_editor() {
    use cairn_agent::run::images_of;
    use rmcp::model::{CallToolResult, ContentBlock as Content};
    let png = "iVBORw0KGgo=";
    let result = CallToolResult::success(vec![
        Content::text("a chart"),
        Content::image(png, "image/png"),
        Content::image("PHN2Zz48L3N2Zz4=", "image/svg+xml"),
        Content::image("\" onerror=\"x", "image/png"),
        Content::image("R0lGOD", "image/gif"),
    ]);
    let images = images_of(&result);
    let kinds: Vec<(&str, &str)> = images
        .iter()
        .map(|i| (i.mime_type.as_str(), i.data.as_str()))
        .collect();
    assert_eq!(kinds, [("image/png", png), ("image/gif", "R0lGOD")]);
    let big = "A".repeat(3 * 1024 * 1024);
    let result = CallToolResult::success(vec![
        Content::image(big.clone(), "image/png"),
        Content::image(big, "image/png"),
    ]);
    assert_eq!(
        images_of(&result).len(),
        1,
        "4 MiB of base64 per result at most"
    );
}

// ---- the agent's own tools, hooks, project rules and compaction ----

async fn run_with(
    agent: &Agent,
    history: Vec<Message>,
    message: &str,
    approver: &Answer,
) -> (cairn_agent::RunOutcome, Vec<RunEvent>) {
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let outcome = agent
        .run(RunInput {
            session_id: "s1".into(),
            run_id: "r1".into(),
            mode: Mode::Agent,
            history,
            message: message.into(),
            approver,
            grants: SessionGrants::default(),
            events: tx,
            cancel: CancellationToken::new(),
        })
        .await;
    let mut events = Vec::new();
    while let Ok(e) = rx.try_recv() {
        events.push(e);
    }
    (outcome, events)
}

fn tool_message(request: &ModelRequest, call_id: &str) -> String {
    request
        .messages
        .iter()
        .find_map(|m| match m {
            Message::Tool {
                call_id: id,
                content,
                ..
            } if id == call_id => Some(content.clone()),
            _ => None,
        })
        .unwrap_or_else(|| panic!("no result for {call_id} in {:?}", request.messages))
}

#[tokio::test]
async fn a_plan_is_an_event_and_the_model_reads_a_summary() {
    let plan = r#"{"steps": [{"title": "read", "state": "done"}, {"title": "fix", "state": "inProgress"}]}"#;
    let s = setup(vec![calls(1, "plan", plan), text("working")], 25);
    let (outcome, events) = run_with(&s.agent, vec![], "fix it", &allow()).await;
    assert_eq!(outcome.result, Ok(None));
    let plans: Vec<_> = events
        .iter()
        .filter_map(|e| match e {
            RunEvent::Plan { steps, .. } => Some(steps.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(plans.len(), 1);
    assert_eq!(plans[0][1].title, "fix");
    assert_eq!(
        plans[0][1].state,
        cairn_agent::events::StepState::InProgress
    );
    let requests = s.model.requests.lock().unwrap();
    assert!(offered(&requests[0]).contains(&"plan".to_string()));
    assert_eq!(
        tool_message(&requests[1], "c0"),
        "plan updated: 1 done, 1 in progress, 0 pending"
    );
    assert!(s.tools.called.lock().unwrap().is_empty());
}

#[tokio::test]
async fn a_sub_agent_starts_fresh_with_fewer_tools_and_its_calls_count_toward_the_cap() {
    let task =
        r#"{"description": "look around", "prompt": "look twice and report", "tools": ["look"]}"#;
    let mut s = setup(
        vec![
            calls(1, "task", task),     // parent: start the task
            calls(2, "look", "{}"),     // sub-agent: two calls
            text("found two things"),   // sub-agent: its answer
            text("the task found two"), // parent: no tools left
        ],
        3,
    );
    s.agent.sub_agents = true;
    let (outcome, events) = run_with(&s.agent, vec![], "investigate", &allow()).await;
    assert_eq!(outcome.result, Ok(None));
    assert_eq!(outcome.tool_calls, 3, "the task and its two calls");
    let requests = s.model.requests.lock().unwrap();
    assert!(offered(&requests[0]).contains(&"task".to_string()));
    // The sub-agent's request: a fresh context, only the tools it was given, no `task`.
    assert_eq!(
        requests[1].messages,
        vec![Message::User {
            text: "look twice and report".into(),
            images: Vec::new()
        }]
    );
    assert_eq!(offered(&requests[1]), ["look", "plan"]);
    assert!(requests[1].system.contains("You are a sub-agent"));
    // The parent reads only the final answer, and has no calls left.
    assert_eq!(tool_message(&requests[3], "c0"), "found two things");
    assert!(requests[3].tools.is_empty(), "the cap is reached");
    assert_eq!(s.tools.called.lock().unwrap().len(), 2);
    let inner: Vec<&RunEvent> = events
        .iter()
        .filter_map(|e| match e {
            RunEvent::SubAgent { call_id, event } if call_id == "c0" => Some(event.as_ref()),
            _ => None,
        })
        .collect();
    assert_eq!(
        inner
            .iter()
            .filter(|e| matches!(e, RunEvent::ToolCall { .. }))
            .count(),
        2
    );
    assert!(matches!(
        inner.last(),
        Some(RunEvent::Done { tool_calls: 2, .. })
    ));
    assert!(matches!(
        events.last(),
        Some(RunEvent::Done { tool_calls: 3, .. })
    ));
}

#[tokio::test]
async fn a_sub_agent_cannot_be_given_a_tool_its_parent_lacks() {
    let task = r#"{"description": "d", "prompt": "write", "tools": ["write", "format_disk"]}"#;
    let mut s = setup(vec![calls(1, "task", task), text("ok")], 25);
    s.agent.sub_agents = true;
    s.agent.policy.effects.insert(Effect::Write, Decision::Deny);
    let (_, _) = run_with(&s.agent, vec![], "go", &allow()).await;
    let requests = s.model.requests.lock().unwrap();
    assert_eq!(requests.len(), 2, "no sub-agent request was made");
    let result = tool_message(&requests[1], "c0");
    assert!(
        result.contains("`write`, `format_disk` not among your tools"),
        "{result}"
    );
    assert!(
        s.tools.called.lock().unwrap().is_empty(),
        "a tool ran for a refused task"
    );
}

struct ScriptHooks {
    seen: Mutex<Vec<cairn_agent::hooks::HookInput>>,
}

impl cairn_agent::hooks::Hooks for ScriptHooks {
    fn run(
        &self,
        input: cairn_agent::hooks::HookInput,
    ) -> BoxFuture<'_, Vec<cairn_agent::hooks::HookReport>> {
        use cairn_agent::hooks::{HookOutcome, HookReport, HookStage};
        let report = |command: &str, outcome, message: &str| HookReport {
            command: command.into(),
            outcome,
            message: message.into(),
        };
        let reports = match (input.stage, input.tool.as_deref()) {
            (HookStage::PreTool, Some("write")) => {
                vec![report(
                    "guard.sh",
                    HookOutcome::Denied,
                    "no writes on Fridays",
                )]
            }
            (HookStage::PreTool, Some("big")) => {
                vec![report(
                    "guard.sh",
                    HookOutcome::Failed,
                    "timed out after 5 s",
                )]
            }
            (HookStage::PreTool, _) => vec![report("guard.sh", HookOutcome::Asked, "look twice")],
            (HookStage::PostTool, _) => vec![report("lint.sh", HookOutcome::Output, "2 warnings")],
            (HookStage::TurnEnd, _) => vec![report("notify.sh", HookOutcome::Allowed, "")],
        };
        self.seen.lock().unwrap().push(input);
        Box::pin(async move { reports })
    }
}

#[tokio::test]
async fn hooks_deny_ask_feed_back_and_end_the_turn() {
    let mut turn = calls(1, "write", r#"{"path": "a"}"#);
    turn.insert(
        0,
        ModelEvent::ToolCall(ToolCallRequest {
            id: "l".into(),
            name: "look".into(),
            arguments: "{}".into(),
        }),
    );
    turn.insert(
        0,
        ModelEvent::ToolCall(ToolCallRequest {
            id: "b".into(),
            name: "big".into(),
            arguments: "{}".into(),
        }),
    );
    let mut s = setup(vec![turn, text("done")], 25);
    let hooks = Arc::new(ScriptHooks {
        seen: Mutex::new(Vec::new()),
    });
    s.agent.hooks = Some(hooks.clone());
    s.agent.policy.effects.insert(Effect::Read, Decision::Allow);
    s.agent
        .policy
        .effects
        .insert(Effect::Write, Decision::Allow);
    let approver = allow();
    let (outcome, events) = run_with(&s.agent, vec![], "go", &approver).await;
    assert_eq!(outcome.result, Ok(None));
    let requests = s.model.requests.lock().unwrap();
    assert_eq!(
        tool_message(&requests[1], "c0"),
        "denied by the user's hook `guard.sh`: no writes on Fridays"
    );
    assert!(
        tool_message(&requests[1], "b")
            .starts_with("not run: the user's hook `guard.sh` failed (timed out after 5 s)")
    );
    // `look` is allowed by the policy, but the hook asked: the user was asked, then the
    // linter's output was added to the result.
    let asked = approver.1.lock().unwrap();
    assert_eq!(asked.len(), 1);
    assert_eq!(asked[0].tool, "look");
    assert!(asked[0].reason.contains("a hook asked for your approval"));
    assert_eq!(
        tool_message(&requests[1], "l"),
        "look ok\n\n[the user's hook `lint.sh` says]\n2 warnings"
    );
    // Only `look` ran; the denied and the failed call did not.
    assert_eq!(s.tools.called.lock().unwrap().len(), 1);
    let seen = hooks.seen.lock().unwrap();
    assert_eq!(seen[0].arguments, Some(serde_json::json!({})));
    assert!(
        seen.iter()
            .any(|i| i.stage == cairn_agent::hooks::HookStage::TurnEnd
                && i.answer.as_deref() == Some("done"))
    );
    let hook_events: Vec<_> = events
        .iter()
        .filter_map(|e| match e {
            RunEvent::Hook { outcome, .. } => Some(*outcome),
            _ => None,
        })
        .collect();
    use cairn_agent::hooks::HookOutcome::*;
    for o in [Denied, Failed, Asked, Output, Allowed] {
        assert!(hook_events.contains(&o), "{o:?} in {hook_events:?}");
    }
    // The turn-end hook is the last thing before `done`.
    assert!(matches!(
        &events[events.len() - 2],
        RunEvent::Hook {
            stage: cairn_agent::hooks::HookStage::TurnEnd,
            ..
        }
    ));
}

struct DirRules;

impl cairn_agent::context::ProjectRules for DirRules {
    fn rules(&self, paths: &[String]) -> cairn_agent::context::Rules {
        let mut text = "root rule: use tabs".to_string();
        if paths.iter().any(|p| p.starts_with("web/")) {
            text.push_str("\nweb rule: no jQuery");
        }
        cairn_agent::context::Rules {
            text,
            files: Vec::new(),
        }
    }
}

#[tokio::test]
async fn project_rules_follow_the_files_the_turn_works_in() {
    let mut s = setup(
        vec![calls(1, "look", r#"{"path": "web/app.js"}"#), text("ok")],
        25,
    );
    s.agent.rules = Some(Arc::new(DirRules));
    run_with(&s.agent, vec![], "go", &allow()).await;
    let requests = s.model.requests.lock().unwrap();
    assert_eq!(requests[0].system, "sys\n\nroot rule: use tabs");
    assert_eq!(
        requests[1].system,
        "sys\n\nroot rule: use tabs\nweb rule: no jQuery"
    );
}

/// The scripted model with a small context window.
struct Windowed(Arc<ScriptModel>, u64);

impl ModelClient for Windowed {
    fn describe(&self) -> String {
        self.0.describe()
    }
    fn stream(&self, request: ModelRequest) -> BoxFuture<'_, Result<ModelStream, ModelError>> {
        self.0.stream(request)
    }
    fn context_window(&self) -> Option<u64> {
        Some(self.1)
    }
}

fn long_history(turns: usize) -> Vec<Message> {
    (0..turns)
        .flat_map(|i| {
            [
                Message::User {
                    text: format!("turn {i}: the code word is word{i}. {}", "pad ".repeat(50)),
                    images: Vec::new(),
                },
                Message::Assistant {
                    text: format!("noted word{i}"),
                    tool_calls: Vec::new(),
                },
            ]
        })
        .collect()
}

#[tokio::test]
async fn an_overflowing_request_compacts_the_older_turns_first() {
    let mut s = setup(
        vec![
            text("## Facts\n- turn 1's code word is word1"),
            text("word1"),
        ],
        25,
    );
    s.agent.model = Arc::new(Windowed(s.model.clone(), 1000));
    let history = long_history(20);
    let (outcome, events) = run_with(
        &s.agent,
        history.clone(),
        "what was the code word of turn 1?",
        &allow(),
    )
    .await;
    assert_eq!(outcome.result, Ok(None));
    let requests = s.model.requests.lock().unwrap();
    assert_eq!(requests.len(), 2);
    // The summariser got the old turns (turn 1's fact among them) and no tools.
    assert!(requests[0].system.starts_with("You compact a conversation"));
    assert!(requests[0].tools.is_empty());
    let Message::User {
        text: transcript, ..
    } = &requests[0].messages[0]
    else {
        panic!()
    };
    assert!(transcript.contains("the code word is word1."));
    // The answer's request carries the summary in place of the old turns, and fits.
    let answer = &requests[1];
    assert!(
        matches!(&answer.messages[1], Message::Assistant { text, .. } if text.contains("word1"))
    );
    assert!(answer.messages.len() < history.len());
    assert!(cairn_agent::compact::estimate_tokens(answer) < 850);
    let c = outcome.compaction.expect("compacted");
    assert!(c.drop > 0 && c.drop < history.len());
    assert!(c.tokens_after < c.tokens_before);
    assert!(
        events
            .iter()
            .any(|e| matches!(e, RunEvent::Compacted { turns, .. } if *turns == c.turns))
    );
    // The newest turns were kept whole.
    assert_eq!(
        answer.messages[answer.messages.len() - 2],
        history[history.len() - 1]
    );
}

#[tokio::test]
async fn compact_on_demand_summarises_everything_and_answers_nothing() {
    let s = setup(vec![text("## Task\nrename foo")], 25);
    let history = long_history(3);
    let (outcome, events) = run_with(&s.agent, history.clone(), " /compact ", &allow()).await;
    assert_eq!(outcome.result, Ok(None));
    assert!(outcome.messages.is_empty(), "`/compact` is not a message");
    let c = outcome.compaction.unwrap();
    assert_eq!((c.drop, c.turns), (history.len(), 3));
    assert_eq!(c.summary, "## Task\nrename foo");
    assert!(matches!(events.last(), Some(RunEvent::Done { .. })));
    // Nothing to compact in a new session.
    let s = setup(vec![], 25);
    let (outcome, events) = run_with(&s.agent, vec![], "/compact", &allow()).await;
    assert_eq!(outcome.compaction, None);
    assert!(matches!(&events[0], RunEvent::Text { delta } if delta.contains("Nothing to compact")));
}

#[tokio::test]
async fn a_sub_agents_calls_go_through_the_hooks_but_only_the_turn_ends() {
    let task = r#"{"description": "d", "prompt": "look", "tools": ["look"]}"#;
    let mut s = setup(
        vec![
            calls(1, "task", task),
            calls(1, "look", "{}"),
            text("looked"),
            text("done"),
        ],
        25,
    );
    s.agent.sub_agents = true;
    s.agent.policy.effects.insert(Effect::Read, Decision::Allow);
    let hooks = Arc::new(ScriptHooks {
        seen: Mutex::new(Vec::new()),
    });
    s.agent.hooks = Some(hooks.clone());
    let (outcome, _) = run_with(&s.agent, vec![], "go", &allow()).await;
    assert_eq!(outcome.result, Ok(None));
    let seen = hooks.seen.lock().unwrap();
    let stages: Vec<_> = seen.iter().map(|i| (i.stage, i.tool.clone())).collect();
    use cairn_agent::hooks::HookStage::*;
    assert_eq!(
        stages,
        [
            (PreTool, Some("look".to_string())),
            (PostTool, Some("look".to_string())),
            (TurnEnd, None)
        ]
    );
}
