//! Shared by the API tool tests: a loopback HTTP/1.1 server that records every request (method,
//! target, headers, body) and answers through a closure, a fixed [`Credentials`] source with
//! host bindings, and a helper that calls a tool and returns (is_error, text).

#![allow(dead_code)]

use std::collections::HashMap;
use std::io;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use cairn_agent::tools::{CallContext, ToolHost};
use cairn_vault::Secret;
use cairn_web::{CredentialRefusal, Credentials, GuardConfig, WebGuard};
use cairn_webtools::api::{Api, ApiTools, api_tools};
use serde_json::Value;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// One request as it arrived.
#[derive(Debug, Clone, Default)]
pub struct Recorded {
    pub method: String,
    /// The request target: path and query, as sent.
    pub target: String,
    /// Lower-case names.
    pub headers: Vec<(String, String)>,
    pub body: String,
}

impl Recorded {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }

    pub fn path(&self) -> &str {
        self.target.split('?').next().unwrap_or("")
    }
}

/// Status, extra headers, body.
pub type Answer = (u16, Vec<(String, String)>, String);

pub fn json_answer(body: &str) -> Answer {
    (
        200,
        vec![("Content-Type".into(), "application/json".into())],
        body.to_owned(),
    )
}

pub struct Server {
    pub addr: SocketAddr,
    pub seen: Arc<Mutex<Vec<Recorded>>>,
}

type Respond = dyn Fn(&Recorded, &str) -> Answer + Send + Sync;

impl Server {
    /// Answers each request with `respond(request, own base URL)`.
    pub async fn start(
        respond: impl Fn(&Recorded, &str) -> Answer + Send + Sync + 'static,
    ) -> Self {
        let listener = match TcpListener::bind("127.0.0.1:0").await {
            Ok(l) => l,
            Err(e) => panic!("bind: {e}"),
        };
        let addr = match listener.local_addr() {
            Ok(a) => a,
            Err(e) => panic!("local_addr: {e}"),
        };
        let seen = Arc::new(Mutex::new(Vec::new()));
        let respond: Arc<Respond> = Arc::new(respond);
        let s = seen.clone();
        let base = format!("http://{addr}");
        tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                let (respond, s, base) = (respond.clone(), s.clone(), base.clone());
                tokio::spawn(async move {
                    let _ = handle(stream, &*respond, &s, &base).await;
                });
            }
        });
        Self { addr, seen }
    }

    pub fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }

    /// The same server named `localhost` (for secrets bound to `localhost`).
    pub fn localhost_url(&self, path: &str) -> String {
        format!("http://localhost:{}{path}", self.addr.port())
    }

    pub fn requests(&self) -> Vec<Recorded> {
        self.seen.lock().map(|s| s.clone()).unwrap_or_default()
    }
}

async fn handle(
    mut stream: TcpStream,
    respond: &Respond,
    seen: &Mutex<Vec<Recorded>>,
    base: &str,
) -> io::Result<()> {
    let mut raw = Vec::new();
    let mut buf = [0u8; 4096];
    let head_end = loop {
        if let Some(i) = raw.windows(4).position(|w| w == b"\r\n\r\n") {
            break i + 4;
        }
        let n = stream.read(&mut buf).await?;
        if n == 0 {
            return Ok(());
        }
        raw.extend_from_slice(&buf[..n]);
    };
    let head = String::from_utf8_lossy(&raw[..head_end]).into_owned();
    let mut lines = head.split("\r\n");
    let first = lines.next().unwrap_or("");
    let mut parts = first.split_whitespace();
    let method = parts.next().unwrap_or("").to_owned();
    let target = parts.next().unwrap_or("/").to_owned();
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim().to_owned()))
        .collect();
    let length: usize = headers
        .iter()
        .find(|(k, _)| k == "content-length")
        .and_then(|(_, v)| v.parse().ok())
        .unwrap_or(0);
    let mut body = raw[head_end..].to_vec();
    while body.len() < length {
        let n = stream.read(&mut buf).await?;
        if n == 0 {
            break;
        }
        body.extend_from_slice(&buf[..n]);
    }
    let recorded = Recorded {
        method,
        target,
        headers,
        body: String::from_utf8_lossy(&body).into_owned(),
    };
    if let Ok(mut s) = seen.lock() {
        s.push(recorded.clone());
    }
    let (code, extra, body) = respond(&recorded, base);
    let mut out = format!("HTTP/1.1 {code} X\r\nContent-Length: {}\r\n", body.len());
    for (k, v) in extra {
        out.push_str(&format!("{k}: {v}\r\n"));
    }
    out.push_str("Connection: close\r\n\r\n");
    out.push_str(&body);
    stream.write_all(out.as_bytes()).await?;
    stream.shutdown().await
}

/// Secrets with the hosts each is bound to.
#[derive(Default)]
pub struct TestVault {
    pub secrets: HashMap<String, (String, Vec<String>)>,
}

impl TestVault {
    pub fn with(mut self, name: &str, value: &str, hosts: &[&str]) -> Self {
        self.secrets.insert(
            name.to_owned(),
            (
                value.to_owned(),
                hosts.iter().map(|h| (*h).to_owned()).collect(),
            ),
        );
        self
    }
}

impl Credentials for TestVault {
    fn for_host(&self, name: &str, host: &str) -> Result<Secret, CredentialRefusal> {
        match self.secrets.get(name) {
            Some((value, hosts)) if hosts.iter().any(|h| h == host) => {
                Ok(Secret::new(value.clone()))
            }
            Some(_) => Err(CredentialRefusal {
                reason: format!("secret `{name}` is not bound to {host}"),
            }),
            None => Err(CredentialRefusal {
                reason: format!("no secret `{name}` in the vault"),
            }),
        }
    }
}

pub fn guard(vault: TestVault) -> Arc<WebGuard> {
    let config = GuardConfig {
        allow_loopback: true,
        per_user_per_minute: 0,
        per_host_per_minute: 0,
        ..GuardConfig::default()
    };
    match WebGuard::new(config) {
        Ok(g) => Arc::new(g.with_credentials(Arc::new(vault))),
        Err(e) => panic!("guard: {e}"),
    }
}

/// The API tools' shared state, sending through [`guard`] as `tester`.
pub fn api(vault: TestVault) -> Api {
    Api::new(guard(vault), "tester")
}

/// The fixed API tools over [`api`].
pub fn tools(vault: TestVault) -> ApiTools {
    api_tools(api(vault))
}

/// A call's context outside any run (never cancelled).
pub fn context() -> CallContext {
    CallContext {
        session_id: String::new(),
        run_id: String::new(),
        call_id: String::new(),
        cancel: tokio_util::sync::CancellationToken::new(),
    }
}

/// Calls `name` with `args` (an object); returns whether it is an error and its text.
pub async fn call(tools: &impl ToolHost, name: &str, args: Value) -> (bool, String) {
    let Value::Object(args) = args else {
        panic!("arguments must be an object")
    };
    let result = tools.call(name, args, context()).await;
    let text = result
        .content
        .iter()
        .filter_map(|c| c.as_text().map(|t| t.text.clone()))
        .collect::<Vec<_>>()
        .join("\n");
    (result.is_error == Some(true), text)
}

/// Calls and expects success.
pub async fn ok(tools: &impl ToolHost, name: &str, args: Value) -> String {
    let (is_error, text) = call(tools, name, args).await;
    assert!(!is_error, "{name} failed: {text}");
    text
}

/// Calls and expects an error result.
pub async fn fails(tools: &impl ToolHost, name: &str, args: Value) -> String {
    let (is_error, text) = call(tools, name, args).await;
    assert!(is_error, "{name} succeeded: {text}");
    text
}
