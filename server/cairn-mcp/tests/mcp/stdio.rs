//! Real child processes (a Python script speaking JSON-RPC lines) exercising SECURITY.md F1, F2
//! and F4: missing binary, crash loop, silent server, crash mid-call, oversized line, log lines
//! on stdout, and environment isolation.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

use cairn_agent::tools::{CallContext, ToolHost};
use cairn_config::{McpConfig, McpServerConfig};
use cairn_mcp::{Hub, HubOptions, ServerState};
use tokio_util::sync::CancellationToken;

fn script() -> String {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fake_server.py")
        .display()
        .to_string()
}

fn temp_file(tag: &str) -> PathBuf {
    static N: AtomicU32 = AtomicU32::new(0);
    std::env::temp_dir().join(format!(
        "cairn-mcp-{tag}-{}-{}",
        std::process::id(),
        N.fetch_add(1, Ordering::SeqCst)
    ))
}

fn server(mode: &str) -> McpServerConfig {
    McpServerConfig {
        command: Some("python3".to_owned()),
        args: vec!["-u".to_owned(), script(), mode.to_owned()],
        ..McpServerConfig::default()
    }
}

fn config(servers: Vec<(&str, McpServerConfig)>) -> McpConfig {
    McpConfig {
        servers: servers
            .into_iter()
            .map(|(n, c)| (n.to_owned(), c))
            .collect::<BTreeMap<_, _>>(),
        handshake_timeout_secs: 2,
        call_timeout_secs: 10,
        max_call_timeout_secs: 10,
        max_line_bytes: 1 << 20,
        max_restarts: 2,
    }
}

fn options() -> HubOptions {
    HubOptions {
        backoff_base: Duration::from_millis(100),
        backoff_max: Duration::from_millis(400),
        ..HubOptions::default()
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

fn state(hub: &Hub, name: &str) -> ServerState {
    hub.status()
        .into_iter()
        .find(|s| s.name == name)
        .map(|s| s.state)
        .unwrap()
}

async fn wait_state(
    hub: &Hub,
    name: &str,
    secs: u64,
    f: impl Fn(&ServerState) -> bool,
) -> ServerState {
    let deadline = Instant::now() + Duration::from_secs(secs);
    loop {
        let s = state(hub, name);
        if f(&s) {
            return s;
        }
        assert!(Instant::now() < deadline, "{name} stuck in {s:?}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

fn text(result: &rmcp::model::CallToolResult) -> String {
    serde_json::to_string(&result.content).unwrap()
}

fn failed(s: &ServerState) -> bool {
    matches!(s, ServerState::Failed { .. })
}

#[tokio::test]
async fn missing_binary_fails_at_once_with_a_reason() {
    let cfg = McpServerConfig {
        command: Some("/nonexistent/cairn-no-such-server".to_owned()),
        ..McpServerConfig::default()
    };
    let hub = Hub::new(
        config(vec![("ghost", cfg), ("good", server("ok"))]),
        options(),
    );
    let s = wait_state(&hub, "ghost", 5, failed).await;
    let ServerState::Failed { reason } = s else {
        unreachable!()
    };
    assert!(
        reason.contains("could not start `/nonexistent/cairn-no-such-server`"),
        "{reason}"
    );
    // The other server is unaffected.
    wait_state(&hub, "good", 5, |s| {
        matches!(s, ServerState::Running { .. })
    })
    .await;
    let r = hub.call("ghost__x", Default::default(), ctx()).await;
    assert_eq!(r.is_error, Some(true));
    hub.shutdown().await;
}

#[tokio::test]
async fn a_crash_loop_backs_off_then_fails_without_a_storm() {
    let count = temp_file("count");
    let mut cfg = server("exit");
    cfg.env
        .insert("COUNT_FILE".to_owned(), count.display().to_string());
    let hub = Hub::new(config(vec![("loop", cfg)]), options());
    let start = Instant::now();
    let s = wait_state(&hub, "loop", 10, failed).await;
    let ServerState::Failed { reason } = s else {
        unreachable!()
    };
    assert!(
        reason.contains("exited with status 1 during initialize: boom: the config file is missing"),
        "{reason}"
    );
    // Backoff 100 + 200 ms between the three starts.
    assert!(
        start.elapsed() >= Duration::from_millis(300),
        "{:?}",
        start.elapsed()
    );
    tokio::time::sleep(Duration::from_millis(600)).await;
    let starts = std::fs::read_to_string(&count).unwrap().lines().count();
    assert_eq!(
        starts, 3,
        "one start and max_restarts = 2 restarts, then no more"
    );
    let _ = std::fs::remove_file(count);
    hub.shutdown().await;
}

#[tokio::test]
async fn a_silent_server_times_out_its_handshake() {
    let mut c = config(vec![("mute", server("silent"))]);
    c.handshake_timeout_secs = 1;
    c.max_restarts = 0;
    let hub = Hub::new(c, options());
    let s = wait_state(&hub, "mute", 5, failed).await;
    assert_eq!(
        s,
        ServerState::Failed {
            reason: "did not answer initialize within 1 s".to_owned()
        }
    );
    hub.shutdown().await;
}

#[tokio::test]
async fn a_crash_mid_call_fails_fast_and_restarts() {
    let hub = Hub::new(config(vec![("fake", server("ok"))]), options());
    wait_state(&hub, "fake", 5, |s| {
        matches!(s, ServerState::Running { .. })
    })
    .await;
    let names: Vec<_> = hub.list().iter().map(|t| t.tool.name.to_string()).collect();
    assert_eq!(
        names,
        ["fake__env", "fake__crash", "fake__claims"],
        "the name with a space is rejected"
    );
    let tool = &hub.list()[0];
    assert_eq!(tool.category, "mcp:fake");
    assert_eq!(tool.effect, cairn_agent::tools::Effect::Execute);

    let start = Instant::now();
    let r = hub.call("fake__crash", Default::default(), ctx()).await;
    assert!(
        start.elapsed() < Duration::from_secs(2),
        "{:?}",
        start.elapsed()
    );
    assert_eq!(r.is_error, Some(true));
    let t = text(&r);
    assert!(
        t.contains("MCP server `fake`") && t.contains("crashed"),
        "{t}"
    );
    // It comes back.
    wait_state(&hub, "fake", 5, |s| {
        matches!(s, ServerState::Restarting { .. })
    })
    .await;
    wait_state(&hub, "fake", 5, |s| {
        matches!(s, ServerState::Running { .. })
    })
    .await;
    let r = hub.call("fake__env", Default::default(), ctx()).await;
    assert_ne!(r.is_error, Some(true), "{r:?}");
    hub.shutdown().await;
}

#[tokio::test]
async fn a_line_without_end_closes_the_connection() {
    let mut c = config(vec![("huge", server("huge"))]);
    c.max_restarts = 0;
    let hub = Hub::new(c, options());
    let s = wait_state(&hub, "huge", 10, failed).await;
    let ServerState::Failed { reason } = s else {
        unreachable!()
    };
    assert!(
        reason.contains("longer than the 1048576-byte limit"),
        "{reason}"
    );
    hub.shutdown().await;
}

#[tokio::test]
async fn an_external_server_cannot_speak_for_a_builtin_in_meta() {
    let hub = Hub::new(config(vec![("claimer", server("ok"))]), options());
    wait_state(&hub, "claimer", 5, |s| {
        matches!(s, ServerState::Running { .. })
    })
    .await;
    let r = hub.call("claimer__claims", Default::default(), ctx()).await;
    assert!(text(&r).contains("claimed"), "{}", text(&r));
    assert!(cairn_agent::tools::edits_of(&r).is_empty());
    assert!(cairn_agent::tools::protected_of(&r).is_empty());
    assert_eq!(
        cairn_agent::tools::usage_of(&r),
        cairn_agent::model::Usage::default()
    );
    // The server's own keys pass.
    let meta = r.meta.clone().unwrap_or_default();
    assert_eq!(meta.get("vendor/trace"), Some(&serde_json::json!("abc")));
    hub.shutdown().await;
}

#[tokio::test]
async fn the_child_gets_only_its_declared_environment() {
    // `set_var` needs `unsafe` in edition 2024 (denied here), so the test relies on what the
    // test process has: cargo always sets `CARGO_*` variables, and `.ci/run` may export
    // `OPENAI_API_KEY`; neither may reach the child.
    let secret_visible = std::env::var_os("OPENAI_API_KEY").is_some();
    assert!(std::env::var_os("CARGO_PKG_NAME").is_some());
    let mut cfg = server("ok");
    cfg.env
        .insert("CAIRN_TEST_DECLARED".to_owned(), "1".to_owned());
    let hub = Hub::new(config(vec![("envy", cfg)]), options());
    wait_state(&hub, "envy", 5, |s| {
        matches!(s, ServerState::Running { .. })
    })
    .await;
    let r = hub.call("envy__env", Default::default(), ctx()).await;
    let t = text(&r);
    assert!(t.contains("CAIRN_TEST_DECLARED"), "{t}");
    assert!(t.contains("PATH"), "{t}");
    assert!(
        !t.contains("OPENAI_API_KEY"),
        "{t} (set here: {secret_visible})"
    );
    assert!(!t.contains("CARGO"), "cargo's variables leak: {t}");
    hub.shutdown().await;
}

#[tokio::test]
async fn shutdown_ends_children_and_set_servers_applies_changes() {
    let hub = Hub::new(config(vec![("a", server("ok"))]), options());
    wait_state(&hub, "a", 5, |s| matches!(s, ServerState::Running { .. })).await;
    // Add b, remove a.
    hub.set_servers(config(vec![("b", server("ok"))]));
    wait_state(&hub, "b", 5, |s| matches!(s, ServerState::Running { .. })).await;
    assert!(hub.status().iter().all(|s| s.name != "a"));
    assert!(hub.list().iter().all(|t| !t.tool.name.starts_with("a__")));
    let start = Instant::now();
    hub.shutdown().await;
    assert!(start.elapsed() < Duration::from_secs(5));
}
