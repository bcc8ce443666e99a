//! Real MCP servers, gated by `CAIRN_PEER_TESTS=1` (`.ci/run` sets it and puts the peers on
//! PATH): npm `@modelcontextprotocol/server-everything` over stdio, streamable HTTP and legacy
//! SSE (explicitly, and by fallback from a url-only entry), and PyPI `mcp-server-time` over stdio.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use cairn_agent::tools::{CallContext, ToolHost};
use cairn_config::{McpConfig, McpServerConfig, McpTransport};
use cairn_mcp::{Hub, HubOptions, ServerState, TransportKind};
use tokio_util::sync::CancellationToken;

fn enabled(_test: &str) -> bool {
    cairn_test_support::gate("CAIRN_PEER_TESTS", "to run it against real MCP servers")
}

fn config(name: &str, server: McpServerConfig) -> McpConfig {
    McpConfig {
        servers: BTreeMap::from([(name.to_owned(), server)]),
        handshake_timeout_secs: 20,
        call_timeout_secs: 20,
        ..McpConfig::default()
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

async fn running(hub: &Hub, name: &str) {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let s = hub.status().into_iter().find(|s| s.name == name).unwrap();
        if matches!(s.state, ServerState::Running { .. }) {
            return;
        }
        assert!(
            !matches!(s.state, ServerState::Failed { .. }) && Instant::now() < deadline,
            "{name}: {s:?}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

async fn echo(hub: &Hub, public: &str) {
    let names: Vec<_> = hub.list().iter().map(|t| t.tool.name.to_string()).collect();
    assert!(names.iter().any(|n| n == public), "{names:?}");
    let mut args = serde_json::Map::new();
    args.insert("message".to_owned(), "hello from cairn".into());
    let r = hub.call(public, args, ctx()).await;
    assert_ne!(r.is_error, Some(true), "{r:?}");
    assert!(
        serde_json::to_string(&r.content)
            .unwrap()
            .contains("hello from cairn")
    );
}

fn everything(args: &[&str]) -> McpServerConfig {
    McpServerConfig {
        command: Some("mcp-server-everything".to_owned()),
        args: args.iter().map(|s| s.to_string()).collect(),
        ..McpServerConfig::default()
    }
}

/// Starts server-everything in an HTTP mode on a free port and waits until it listens.
#[allow(clippy::disallowed_methods)] // the peer is a fixture, not a hub server
async fn http_peer(mode: &str) -> (tokio::process::Child, u16) {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let child = tokio::process::Command::new("mcp-server-everything")
        .arg(mode)
        .env("PORT", port.to_string())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .expect("mcp-server-everything on PATH");
    let deadline = Instant::now() + Duration::from_secs(30);
    while tokio::net::TcpStream::connect(("127.0.0.1", port))
        .await
        .is_err()
    {
        assert!(Instant::now() < deadline, "{mode} peer did not listen");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    (child, port)
}

#[tokio::test]
async fn everything_over_stdio() {
    if !enabled("everything_over_stdio") {
        return;
    }
    let hub = Hub::new(
        config("everything", everything(&["stdio"])),
        HubOptions::default(),
    );
    running(&hub, "everything").await;
    echo(&hub, "everything__echo").await;
    hub.shutdown().await;
}

#[tokio::test]
async fn everything_over_streamable_http() {
    if !enabled("everything_over_streamable_http") {
        return;
    }
    let (_peer, port) = http_peer("streamableHttp").await;
    let server = McpServerConfig {
        url: Some(format!("http://127.0.0.1:{port}/mcp")),
        ..McpServerConfig::default()
    };
    let hub = Hub::new(config("everything", server), HubOptions::default());
    running(&hub, "everything").await;
    assert_eq!(hub.status()[0].transport, TransportKind::Http);
    echo(&hub, "everything__echo").await;
    hub.shutdown().await;
}

#[tokio::test]
async fn everything_over_sse_explicit_and_by_fallback() {
    if !enabled("everything_over_sse_explicit_and_by_fallback") {
        return;
    }
    let (_peer, port) = http_peer("sse").await;
    let url = format!("http://127.0.0.1:{port}/sse");
    let explicit = McpServerConfig {
        url: Some(url.clone()),
        transport: Some(McpTransport::Sse),
        ..McpServerConfig::default()
    };
    let hub = Hub::new(config("everything", explicit), HubOptions::default());
    running(&hub, "everything").await;
    echo(&hub, "everything__echo").await;
    hub.shutdown().await;

    // url only: the initialize POST to /sse gets 404, so the hub falls back to SSE.
    let url_only = McpServerConfig {
        url: Some(url),
        ..McpServerConfig::default()
    };
    let hub = Hub::new(config("legacy", url_only), HubOptions::default());
    running(&hub, "legacy").await;
    assert_eq!(hub.status()[0].transport, TransportKind::Sse);
    echo(&hub, "legacy__echo").await;
    hub.shutdown().await;
}

#[tokio::test]
async fn time_over_stdio() {
    if !enabled("time_over_stdio") {
        return;
    }
    let server = McpServerConfig {
        command: Some("mcp-server-time".to_owned()),
        ..McpServerConfig::default()
    };
    let hub = Hub::new(config("time", server), HubOptions::default());
    running(&hub, "time").await;
    let mut args = serde_json::Map::new();
    args.insert("timezone".to_owned(), "UTC".into());
    let r = hub.call("time__get_current_time", args, ctx()).await;
    assert_ne!(r.is_error, Some(true), "{r:?}");
    assert!(serde_json::to_string(&r.content).unwrap().contains("UTC"));
    hub.shutdown().await;
}
