//! The client path against an in-process rmcp server over `tokio::io::duplex`: listing, calls,
//! `tools/list_changed`, call timeouts and cancellation through `CallContext.cancel`.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use cairn_agent::tools::{CallContext, Effect, ToolHost};
use cairn_config::McpConfig;
use cairn_mcp::{Hub, HubOptions, ServerState, ToolMeta, TransportKind};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, ErrorData,
    ListToolsResult, PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::{Peer, RequestContext};
use rmcp::{RoleServer, ServerHandler};
use tokio_util::sync::CancellationToken;

#[derive(Clone, Default)]
struct TestServer {
    extra: Arc<Mutex<Vec<Tool>>>,
    peer: Arc<Mutex<Option<Peer<RoleServer>>>>,
    cancelled: Arc<AtomicUsize>,
    /// Calls that reached the server.
    calls: Arc<AtomicUsize>,
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

impl ServerHandler for TestServer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(
            ServerCapabilities::builder()
                .enable_tools()
                .enable_tool_list_changed()
                .build(),
        )
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        *self.peer.lock().unwrap() = Some(context.peer.clone());
        let mut tools = vec![tool("echo"), tool("hang"), tool("bad name")];
        tools.extend(self.extra.lock().unwrap().iter().cloned());
        Ok(ListToolsResult::with_all_items(tools))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        self.calls.fetch_add(1, Ordering::SeqCst);
        match request.name.as_ref() {
            "echo" => {
                let text = request
                    .arguments
                    .and_then(|a| a.get("text").cloned())
                    .unwrap_or_default();
                Ok(CallToolResult::success(vec![ContentBlock::text(text.to_string())]).into())
            }
            "hang" => {
                context.ct.cancelled().await;
                self.cancelled.fetch_add(1, Ordering::SeqCst);
                Ok(CallToolResult::success(vec![]).into())
            }
            other => Err(ErrorData::invalid_params(format!("no tool {other}"), None)),
        }
    }
}

fn config(call_timeout_secs: u64) -> McpConfig {
    McpConfig {
        call_timeout_secs,
        max_call_timeout_secs: call_timeout_secs,
        handshake_timeout_secs: 5,
        ..McpConfig::default()
    }
}

fn meta(tool: &Tool) -> ToolMeta {
    ToolMeta {
        effect: if tool.name == "echo" {
            Effect::Read
        } else {
            Effect::Write
        },
        category: "test".to_owned(),
        agent_only: tool.name == "hang",
    }
}

fn ctx() -> CallContext {
    CallContext {
        session_id: String::new(),
        run_id: "r".to_owned(),
        call_id: "c".to_owned(),
        cancel: CancellationToken::new(),
    }
}

async fn wait_until(what: &str, mut f: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(5);
    while !f() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        tokio::time::sleep(Duration::from_millis(20)).await;
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

async fn started(server: TestServer, call_timeout_secs: u64) -> Hub {
    let hub = Hub::new(config(call_timeout_secs), HubOptions::default());
    hub.add_in_process("builtin", server, meta);
    wait_until("the built-in server", || {
        hub.status()
            .iter()
            .any(|s| matches!(s.state, ServerState::Running { .. }))
    })
    .await;
    hub
}

#[tokio::test]
async fn lists_and_calls_with_plain_names_and_own_meta() {
    let hub = started(TestServer::default(), 5).await;
    let status = hub.status();
    assert_eq!(status.len(), 1);
    assert_eq!(status[0].transport, TransportKind::InProcess);
    assert_eq!(status[0].state, ServerState::Running { tools: 2 });
    let tools = hub.list();
    let names: Vec<_> = tools.iter().map(|t| t.tool.name.to_string()).collect();
    assert_eq!(names, ["echo", "hang"], "the badly named tool is rejected");
    assert_eq!(tools[0].effect, Effect::Read);
    assert_eq!(tools[0].category, "test");
    assert!(tools[1].agent_only);

    let result = hub.call("echo", args("hi"), ctx()).await;
    assert_ne!(result.is_error, Some(true), "{result:?}");
    assert!(text_of(&result).contains("hi"));

    let unknown = hub.call("nope", args("x"), ctx()).await;
    assert_eq!(unknown.is_error, Some(true));
    assert!(text_of(&unknown).contains("unknown tool"));

    // Disabling hides the tool and refuses calls; enabling brings it back.
    assert!(hub.set_tool_enabled("echo", false));
    assert!(hub.list().iter().all(|t| t.tool.name != "echo"));
    let refused = hub.call("echo", args("x"), ctx()).await;
    assert!(text_of(&refused).contains("disabled"), "{refused:?}");
    assert!(
        hub.server_tools()
            .iter()
            .any(|t| t.public_name == "echo" && !t.enabled)
    );
    assert!(hub.set_tool_enabled("echo", true));
    assert!(hub.list().iter().any(|t| t.tool.name == "echo"));
    hub.shutdown().await;
}

/// A call decided (policy, approval, grant) for one server's tool never runs another's that now
/// carries the name: the hub compares the origin the gate decided for with the catalog's.
#[tokio::test]
async fn a_call_decided_for_another_tool_is_not_run() {
    let server = TestServer::default();
    let calls = server.calls.clone();
    let hub = started(server, 5).await;
    let echo = hub
        .list()
        .into_iter()
        .find(|t| t.tool.name == "echo")
        .unwrap();
    let origin = echo.origin.clone().unwrap();
    assert_eq!(
        (origin.server.as_str(), origin.tool.as_str()),
        ("builtin", "echo")
    );

    let mut moved = echo.clone();
    moved.origin = Some(cairn_agent::tools::ToolOrigin {
        server: "other".into(),
        tool: "echo".into(),
    });
    let refused = hub.call_tool(&moved, args("x"), ctx()).await;
    assert_eq!(refused.is_error, Some(true), "{refused:?}");
    assert!(
        text_of(&refused).contains(
            "not run: `echo` was approved as tool `echo` of server `other`, but the name now belongs to another tool (the configuration changed); ask again"
        ),
        "{refused:?}"
    );
    assert_eq!(calls.load(Ordering::SeqCst), 0, "the server was not called");

    // The origin it was decided for runs.
    let ran = hub.call_tool(&echo, args("hi"), ctx()).await;
    assert_ne!(ran.is_error, Some(true), "{ran:?}");
    assert_eq!(calls.load(Ordering::SeqCst), 1);
    hub.shutdown().await;
}

#[tokio::test]
async fn list_changed_refreshes_the_catalog() {
    let server = TestServer::default();
    let hub = started(server.clone(), 5).await;
    let mut events = hub.subscribe();
    server.extra.lock().unwrap().push(tool("added"));
    let peer = server.peer.lock().unwrap().clone().unwrap();
    peer.notify_tool_list_changed().await.unwrap();
    wait_until("the new tool", || {
        hub.list().iter().any(|t| t.tool.name == "added")
    })
    .await;
    assert_eq!(hub.status()[0].state, ServerState::Running { tools: 3 });
    assert!(events.try_recv().is_ok(), "an event was sent");
    let originals: Vec<_> = hub
        .server_tools()
        .into_iter()
        .map(|t| t.tool.name)
        .collect();
    assert!(originals.iter().any(|n| n == "added"));
    hub.shutdown().await;
}

#[tokio::test]
async fn a_hanging_call_times_out_and_is_cancelled_on_the_server() {
    let server = TestServer::default();
    let hub = started(server.clone(), 1).await;
    let start = Instant::now();
    let result = hub.call("hang", args(""), ctx()).await;
    let elapsed = start.elapsed();
    assert_eq!(result.is_error, Some(true));
    let text = text_of(&result);
    assert!(text.contains("timed out after 1 s"), "{text}");
    assert!(text.contains("builtin"), "names the server: {text}");
    assert!(elapsed < Duration::from_secs(3), "{elapsed:?}");
    wait_until("notifications/cancelled", || {
        server.cancelled.load(Ordering::SeqCst) == 1
    })
    .await;
    // The server still works.
    let ok = hub.call("echo", args("after"), ctx()).await;
    assert!(text_of(&ok).contains("after"));
    hub.shutdown().await;
}

#[tokio::test]
async fn cancelling_the_run_cancels_the_call() {
    let server = TestServer::default();
    let hub = started(server.clone(), 30).await;
    let c = ctx();
    let token = c.cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(200)).await;
        token.cancel();
    });
    let start = Instant::now();
    let result = hub.call("hang", args(""), c).await;
    assert!(start.elapsed() < Duration::from_secs(2));
    assert_eq!(result.is_error, Some(true));
    assert!(text_of(&result).contains("cancelled"), "{result:?}");
    wait_until("notifications/cancelled", || {
        server.cancelled.load(Ordering::SeqCst) == 1
    })
    .await;
    hub.shutdown().await;
}

#[tokio::test]
async fn external_tools_cannot_shadow_builtins() {
    let hub = started(TestServer::default(), 5).await;
    // A second in-process server with the same tool names gets prefixed names.
    hub.add_in_process("other", TestServer::default(), meta);
    wait_until("the second server", || hub.list().len() == 4).await;
    let names: Vec<_> = hub.list().iter().map(|t| t.tool.name.to_string()).collect();
    assert!(names.contains(&"echo".to_owned()));
    assert!(names.contains(&"other__echo".to_owned()), "{names:?}");
    hub.shutdown().await;
}

/// Many built-in servers coming up at once: once the hub has settled, every server is running
/// and every one of its tools is in the catalog. (Rebuilds of the catalog used to race: one
/// computed from older state could be stored last, and a `Running` server's tools were missing;
/// under parallel load `cairn tools call read_file` then said "unknown tool".)
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn servers_starting_together_all_reach_the_catalog() {
    for round in 0..100 {
        let hub = Hub::new(config(5), HubOptions::default());
        let names: Vec<String> = (0..8).map(|i| format!("builtin{i}")).collect();
        for name in &names {
            hub.add_in_process(name, TestServer::default(), meta);
        }
        hub.settled(std::time::Duration::from_secs(30)).await;
        let running = hub
            .status()
            .iter()
            .filter(|s| matches!(s.state, ServerState::Running { .. }))
            .count();
        assert_eq!(running, names.len(), "round {round}");
        // Two tools per server: the first server's under their own names, the others prefixed.
        assert_eq!(hub.list().len(), 2 * names.len(), "round {round}");
        hub.shutdown().await;
    }
}
