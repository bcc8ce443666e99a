//! `cairn bench mcp`: the latency of one trivial tool call (`echo` of
//! `@modelcontextprotocol/server-everything`) through cairn's hub, over stdio and over
//! streamable HTTP, next to the same calls made by the official Python SDK (PyPI `mcp`) against
//! the same server program (stdio) and the same server process (HTTP).
//!
//! cairn's side calls `ToolHost::call` on the `Hub`, the path every agent tool call takes
//! (catalog lookup, timeouts, cancellation), minus the approval policy. Calls are sequential,
//! after a short warm-up; the figures are printed, never judged: a slow machine is not an error.

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{ExitCode, Stdio};
use std::time::{Duration, Instant};

use cairn_agent::tools::{CallContext, ToolHost};
use cairn_config::{McpConfig, McpServerConfig, McpTransport};
use cairn_mcp::{Hub, HubOptions, ServerState};
use serde_json::{Map, Value};
use tokio_util::sync::CancellationToken;

use crate::compose::Env;

/// The Python client, compiled in so the binary needs no checkout to run the bench.
const PYTHON_CLIENT: &str = include_str!("../../../../bench/mcp_python_client.py");

const SERVER_BIN: &str = "mcp-server-everything";

/// Latency figures of one run, in milliseconds.
#[derive(Debug, Clone, PartialEq)]
pub struct Figures {
    pub p50_ms: f64,
    pub p99_ms: f64,
    pub mean_ms: f64,
}

/// One row of the table.
struct Row {
    client: String,
    transport: &'static str,
    figures: Figures,
}

/// `cairn bench mcp --calls N`.
pub async fn mcp(env: &Env, calls: usize) -> anyhow::Result<ExitCode> {
    anyhow::ensure!(calls > 0, "--calls must be at least 1");
    let warmup = (calls / 10).clamp(5, 100);
    let server = find_on_path(env, SERVER_BIN).ok_or_else(|| {
        anyhow::format_err!(
            "`{SERVER_BIN}` is not on PATH; install it with \
             `npm install -g @modelcontextprotocol/server-everything` \
             (or run .ci/run, which puts it in .peers/npm/node_modules/.bin)"
        )
    })?;
    let python = env.get("CAIRN_PYTHON").unwrap_or("python3").to_string();
    check_python(&python).await?;

    let http = HttpServer::start(&server).await?;
    let mut rows = Vec::new();

    let stdio = McpServerConfig {
        command: Some(server.display().to_string()),
        args: vec!["stdio".into()],
        transport: Some(McpTransport::Stdio),
        ..McpServerConfig::default()
    };
    let figures = through_hub(stdio, calls, warmup).await?;
    rows.push(Row {
        client: "cairn hub (rmcp)".into(),
        transport: "stdio",
        figures,
    });
    let (figures, sdk) = python_client(
        &python,
        &["stdio", "--command", &server.display().to_string()],
        calls,
        warmup,
    )
    .await?;
    rows.push(Row {
        client: format!("python sdk (mcp {sdk})"),
        transport: "stdio",
        figures,
    });

    let remote = McpServerConfig {
        url: Some(http.url.clone()),
        transport: Some(McpTransport::Http),
        ..McpServerConfig::default()
    };
    let figures = through_hub(remote, calls, warmup).await?;
    rows.push(Row {
        client: "cairn hub (rmcp)".into(),
        transport: "streamable http",
        figures,
    });
    let (figures, sdk) =
        python_client(&python, &["http", "--url", &http.url], calls, warmup).await?;
    rows.push(Row {
        client: format!("python sdk (mcp {sdk})"),
        transport: "streamable http",
        figures,
    });
    drop(http);

    print_table(calls, warmup, &rows);
    Ok(ExitCode::SUCCESS)
}

#[allow(clippy::print_stdout)]
fn print_table(calls: usize, warmup: usize, rows: &[Row]) {
    println!(
        "MCP tool call latency: `echo` of server-everything, {calls} sequential calls after {warmup} warm-up calls\n"
    );
    println!("| client | transport | p50 ms | p99 ms | mean ms |");
    println!("| --- | --- | ---: | ---: | ---: |");
    for r in rows {
        println!(
            "| {} | {} | {:.3} | {:.3} | {:.3} |",
            r.client, r.transport, r.figures.p50_ms, r.figures.p99_ms, r.figures.mean_ms
        );
    }
}

/// Runs the calls through a hub with one server, `everything`.
async fn through_hub(
    server: McpServerConfig,
    calls: usize,
    warmup: usize,
) -> anyhow::Result<Figures> {
    let mut servers = std::collections::BTreeMap::new();
    servers.insert("everything".to_string(), server);
    let config = McpConfig {
        servers,
        ..McpConfig::default()
    };
    let handshake = Duration::from_secs(config.handshake_timeout_secs);
    let hub = Hub::new(config, HubOptions::default());
    let result = measure_hub(&hub, handshake, calls, warmup).await;
    hub.shutdown().await;
    result
}

async fn measure_hub(
    hub: &Hub,
    handshake: Duration,
    calls: usize,
    warmup: usize,
) -> anyhow::Result<Figures> {
    hub.settled(handshake + Duration::from_secs(2)).await;
    for status in hub.status() {
        match status.state {
            ServerState::Running { .. } => {}
            ServerState::Restarting { reason, .. } | ServerState::Failed { reason } => {
                anyhow::bail!("server-everything did not start: {reason}")
            }
            other => anyhow::bail!("server-everything did not start: {other:?}"),
        }
    }
    let name = hub
        .server_tools()
        .into_iter()
        .find(|t| t.server == "everything" && t.tool.name == "echo")
        .map(|t| t.public_name)
        .ok_or_else(|| anyhow::format_err!("server-everything offers no `echo` tool"))?;
    for i in 0..warmup {
        echo(hub, &name, &format!("warm-up {i}")).await?;
    }
    let mut samples = Vec::with_capacity(calls);
    for i in 0..calls {
        let start = Instant::now();
        echo(hub, &name, &format!("bench {i}")).await?;
        samples.push(start.elapsed().as_secs_f64() * 1000.0);
    }
    figures(samples).ok_or_else(|| anyhow::format_err!("no calls were measured"))
}

async fn echo(hub: &Hub, name: &str, message: &str) -> anyhow::Result<()> {
    let mut arguments = Map::new();
    arguments.insert("message".into(), Value::String(message.into()));
    let ctx = CallContext {
        session_id: String::new(),
        run_id: "bench".into(),
        call_id: "bench".into(),
        cancel: CancellationToken::new(),
    };
    let result = ToolHost::call(hub, name, arguments, ctx).await;
    if result.is_error == Some(true) {
        let text: Vec<String> = result
            .content
            .iter()
            .filter_map(|c| c.as_text().map(|t| t.text.clone()))
            .collect();
        anyhow::bail!("echo through the hub failed: {}", text.join(" "));
    }
    Ok(())
}

/// p50, p99 (nearest rank, as the Python side computes them) and the mean.
pub fn figures(mut samples: Vec<f64>) -> Option<Figures> {
    if samples.is_empty() {
        return None;
    }
    samples.sort_by(f64::total_cmp);
    let rank = |p: f64| {
        let r = (p * samples.len() as f64).ceil() as usize;
        samples
            .get(r.clamp(1, samples.len()) - 1)
            .copied()
            .unwrap_or_default()
    };
    Some(Figures {
        p50_ms: rank(0.50),
        p99_ms: rank(0.99),
        mean_ms: samples.iter().sum::<f64>() / samples.len() as f64,
    })
}

async fn check_python(python: &str) -> anyhow::Result<()> {
    let probe = tokio::process::Command::new(python)
        .args(["-c", "import mcp"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .await;
    match probe {
        Ok(s) if s.success() => Ok(()),
        Ok(_) => anyhow::bail!(
            "`{python}` cannot import the MCP Python SDK; install it with \
             `{python} -m pip install mcp`, or set CAIRN_PYTHON to an interpreter that has it \
             (.ci/run makes one: .peers/venv/bin/python)"
        ),
        Err(e) => anyhow::bail!(
            "cannot run `{python}` ({e}); install Python 3 with the SDK (`pip install mcp`), \
             or set CAIRN_PYTHON to an interpreter that has it"
        ),
    }
}

/// Runs `bench/mcp_python_client.py` and reads its one JSON line.
async fn python_client(
    python: &str,
    args: &[&str],
    calls: usize,
    warmup: usize,
) -> anyhow::Result<(Figures, String)> {
    let output = tokio::process::Command::new(python)
        .arg("-c")
        .arg(PYTHON_CLIENT)
        .args(args)
        .args([
            "--calls",
            &calls.to_string(),
            "--warmup",
            &warmup.to_string(),
        ])
        .stdin(Stdio::null())
        .kill_on_drop(true)
        .output()
        .await
        .map_err(|e| anyhow::format_err!("cannot run `{python}`: {e}"))?;
    if !output.status.success() {
        let stderr = String::from_utf8_lossy(&output.stderr);
        let last = stderr.lines().rev().find(|l| !l.trim().is_empty());
        anyhow::bail!(
            "the Python SDK client failed ({}): {}",
            output.status,
            last.unwrap_or("no message")
        );
    }
    let stdout = String::from_utf8_lossy(&output.stdout);
    let line = stdout
        .lines()
        .rev()
        .find(|l| l.trim_start().starts_with('{'))
        .ok_or_else(|| anyhow::format_err!("the Python SDK client printed no result"))?;
    let value: Value = serde_json::from_str(line)
        .map_err(|e| anyhow::format_err!("the Python SDK client printed bad JSON: {e}"))?;
    let field = |k: &str| {
        value
            .get(k)
            .and_then(Value::as_f64)
            .ok_or_else(|| anyhow::format_err!("the Python SDK client's result lacks `{k}`"))
    };
    let figures = Figures {
        p50_ms: field("p50_ms")?,
        p99_ms: field("p99_ms")?,
        mean_ms: field("mean_ms")?,
    };
    let sdk = value
        .get("sdk_version")
        .and_then(Value::as_str)
        .unwrap_or("?")
        .to_string();
    Ok((figures, sdk))
}

/// `mcp-server-everything streamableHttp` on a free loopback port, ended when dropped.
struct HttpServer {
    url: String,
    _child: tokio::process::Child,
}

impl HttpServer {
    async fn start(program: &Path) -> anyhow::Result<HttpServer> {
        // The port is free when we look; the server takes it a moment later. Nothing else on a
        // CI machine races for ephemeral ports often enough to matter.
        let port = TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .map_err(|e| anyhow::format_err!("cannot find a free port: {e}"))?
            .port();
        let mut child = tokio::process::Command::new(program)
            .arg("streamableHttp")
            .env("PORT", port.to_string())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .map_err(|e| anyhow::format_err!("cannot start {}: {e}", program.display()))?;
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            if tokio::net::TcpStream::connect(("127.0.0.1", port))
                .await
                .is_ok()
            {
                break;
            }
            if let Ok(Some(status)) = child.try_wait() {
                anyhow::bail!("`{SERVER_BIN} streamableHttp` exited at start ({status})");
            }
            anyhow::ensure!(
                Instant::now() < deadline,
                "`{SERVER_BIN} streamableHttp` did not listen on port {port} within 20 s"
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        Ok(HttpServer {
            url: format!("http://127.0.0.1:{port}/mcp"),
            _child: child,
        })
    }
}

/// The first executable `name` in the environment's PATH.
fn find_on_path(env: &Env, name: &str) -> Option<PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    let path = env.get("PATH")?;
    std::env::split_paths(path)
        .map(|dir| dir.join(name))
        .find(|candidate| {
            std::fs::metadata(candidate)
                .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(samples: Vec<f64>, expected: Option<(f64, f64, f64)>) {
        let got = figures(samples).map(|f| (f.p50_ms, f.p99_ms, f.mean_ms));
        assert_eq!(got, expected);
    }

    #[test]
    fn percentiles_are_nearest_rank() {
        check(vec![], None);
        check(vec![4.0], Some((4.0, 4.0, 4.0)));
        check(vec![3.0, 1.0, 2.0, 4.0], Some((2.0, 4.0, 2.5)));
        let hundred: Vec<f64> = (1..=100).rev().map(f64::from).collect();
        check(hundred, Some((50.0, 99.0, 50.5)));
    }
}
