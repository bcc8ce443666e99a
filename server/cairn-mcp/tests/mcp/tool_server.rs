//! Any tool set served as an MCP server ([`cairn_mcp::ToolServer`]): over a real MCP session on
//! an in-memory transport, and through the hub, which passes the session, run and call ids in
//! the request's `_meta` and cancels the call when the run is cancelled. The tool set is a
//! small host of this test's own, so the test holds for any host.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use cairn_agent::tools::{
    CallContext, EditReport, Effect, ToolHost, ToolInfo, attach_edits, edits_of,
};
use cairn_config::McpConfig;
use cairn_mcp::{CallMeta, Hub, HubOptions, ServerState, ToolServer};
use futures::future::BoxFuture;
use rmcp::model::{CallToolRequestParams, CallToolResult, ClientConfig, ContentBlock, Tool};
use rmcp::{ClientHandler, ServiceExt};
use tokio_util::sync::CancellationToken;

/// Three tools: `echo` reads, `note` writes (agent-only, reports an edit), `wait` runs until
/// cancelled. Every call records the ids it was given.
#[derive(Clone, Default)]
struct Notes {
    seen: Arc<Mutex<Vec<CallMeta>>>,
    cancelled: Arc<AtomicUsize>,
}

fn tool(name: &str) -> Tool {
    let schema = serde_json::json!({"type": "object", "properties": {"text": {"type": "string"}}});
    let serde_json::Value::Object(schema) = schema else {
        unreachable!()
    };
    Tool::new(
        name.to_owned(),
        format!("the {name} tool"),
        Arc::new(schema),
    )
}

impl ToolHost for Notes {
    fn list(&self) -> Vec<ToolInfo> {
        [
            ("echo", Effect::Read, false),
            ("note", Effect::Write, true),
            ("wait", Effect::Read, false),
        ]
        .into_iter()
        .map(|(name, effect, agent_only)| ToolInfo {
            tool: tool(name),
            effect,
            category: "notes".to_owned(),
            agent_only,
            origin: None,
        })
        .collect()
    }

    fn call(
        &self,
        name: &str,
        arguments: serde_json::Map<String, serde_json::Value>,
        ctx: CallContext,
    ) -> BoxFuture<'_, CallToolResult> {
        self.seen.lock().unwrap().push(CallMeta::of(&ctx));
        let name = name.to_owned();
        Box::pin(async move {
            let text = arguments
                .get("text")
                .and_then(|t| t.as_str())
                .unwrap_or_default()
                .to_owned();
            match name.as_str() {
                "echo" => CallToolResult::success(vec![ContentBlock::text(text)]),
                "note" => attach_edits(
                    CallToolResult::success(vec![ContentBlock::text("noted")]),
                    &[EditReport {
                        uri: format!("file:///notes/{text}"),
                        applied: true,
                        reason: None,
                    }],
                ),
                "wait" => {
                    ctx.cancel.cancelled().await;
                    self.cancelled.fetch_add(1, Ordering::SeqCst);
                    CallToolResult::success(vec![])
                }
                other => CallToolResult::error(vec![ContentBlock::text(format!(
                    "unknown tool `{other}`"
                ))]),
            }
        })
    }
}

#[derive(Clone)]
struct Client;

impl ClientHandler for Client {
    fn get_info(&self) -> ClientConfig {
        ClientConfig::default()
    }
}

fn args(text: &str) -> serde_json::Map<String, serde_json::Value> {
    let mut m = serde_json::Map::new();
    m.insert("text".to_owned(), text.into());
    m
}

fn text_of(result: &CallToolResult) -> String {
    serde_json::to_string(&result.content).unwrap()
}

#[tokio::test]
async fn a_tool_host_answers_over_mcp() {
    let notes = Notes::default();
    let server = ToolServer::new("cairn-notes", notes.clone());
    let infos = server.infos();
    assert!(infos.iter().any(|t| t.tool.name == "note" && t.agent_only));

    let (server_io, client_io) = tokio::io::duplex(64 * 1024);
    let running = tokio::spawn(async move {
        let service = server.serve(server_io).await.unwrap();
        service.waiting().await.unwrap();
    });
    let client = Client.serve(client_io).await.unwrap();
    let info = client.peer_info().unwrap();
    assert_eq!(info.server_info.as_ref().unwrap().name, "cairn-notes");

    let tools = client.list_all_tools().await.unwrap();
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
    let listed: Vec<String> = notes
        .list()
        .iter()
        .map(|t| t.tool.name.to_string())
        .collect();
    assert_eq!(names, listed);

    let result = client
        .call_tool(CallToolRequestParams::new("echo").with_arguments(args("beta")))
        .await
        .unwrap();
    assert!(text_of(&result).contains("beta"), "{result:?}");
    // A request without the hub's `_meta` reaches the tool with empty ids.
    assert_eq!(notes.seen.lock().unwrap().clone(), [CallMeta::default()]);

    // The result's own `_meta` (the edits) comes through.
    let result = client
        .call_tool(CallToolRequestParams::new("note").with_arguments(args("a.txt")))
        .await
        .unwrap();
    let edits = edits_of(&result);
    assert_eq!(edits.len(), 1, "{result:?}");
    assert!(edits[0].applied);
    assert_eq!(edits[0].uri, "file:///notes/a.txt");

    client.cancel().await.unwrap();
    running.await.unwrap();
}

async fn hub_with(notes: Notes) -> Hub {
    let config = McpConfig {
        call_timeout_secs: 30,
        max_call_timeout_secs: 30,
        handshake_timeout_secs: 5,
        ..McpConfig::default()
    };
    let hub = Hub::new(config, HubOptions::default());
    hub.add_builtin("cairn-notes", notes);
    hub.settled(Duration::from_secs(30)).await;
    assert_eq!(
        hub.status()[0].state,
        ServerState::Running { tools: 3 },
        "{:?}",
        hub.status()
    );
    hub
}

fn ctx(cancel: CancellationToken) -> CallContext {
    CallContext {
        session_id: "session-1".to_owned(),
        run_id: "run-2".to_owned(),
        call_id: "call-3".to_owned(),
        cancel,
    }
}

#[tokio::test]
async fn through_the_hub_the_tool_gets_its_ids_and_its_meta() {
    let notes = Notes::default();
    let hub = hub_with(notes.clone()).await;
    let listed = hub.list();
    let note = listed.iter().find(|t| t.tool.name == "note").unwrap();
    assert_eq!(
        (note.effect, note.category.as_str(), note.agent_only),
        (Effect::Write, "notes", true)
    );

    let result = hub
        .call("echo", args("hi"), ctx(CancellationToken::new()))
        .await;
    assert!(text_of(&result).contains("hi"), "{result:?}");
    assert_eq!(
        notes.seen.lock().unwrap().clone(),
        [CallMeta {
            session_id: "session-1".to_owned(),
            run_id: "run-2".to_owned(),
            call_id: "call-3".to_owned(),
        }]
    );
    let result = hub
        .call("note", args("b.txt"), ctx(CancellationToken::new()))
        .await;
    assert_eq!(edits_of(&result).len(), 1, "{result:?}");
    hub.shutdown().await;
}

#[tokio::test]
async fn cancelling_the_run_cancels_the_tool() {
    let notes = Notes::default();
    let hub = hub_with(notes.clone()).await;
    let cancel = CancellationToken::new();
    let token = cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(200)).await;
        token.cancel();
    });
    let start = Instant::now();
    let result = hub.call("wait", args(""), ctx(cancel)).await;
    assert!(start.elapsed() < Duration::from_secs(5));
    assert_eq!(result.is_error, Some(true));
    assert!(text_of(&result).contains("cancelled"), "{result:?}");
    let deadline = Instant::now() + Duration::from_secs(5);
    while notes.cancelled.load(Ordering::SeqCst) == 0 {
        assert!(Instant::now() < deadline, "the tool's token never fired");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    hub.shutdown().await;
}
