//! A recording HTTP peer for the Slack, webhook and SMS tests: a real TCP server on loopback
//! that keeps every request it receives, and either answers it itself (the peer of a generic
//! webhook) or relays it to an upstream server (Prism) and hands back that server's answer, so a
//! test sees both what was sent and what the API description's validator said of it.

#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::sync::{Arc, Mutex};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// One request as it arrived, and the status it was answered with.
#[derive(Debug, Clone)]
pub struct Request {
    pub method: String,
    /// The path and query, as sent.
    pub target: String,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
    pub status: u16,
}

impl Request {
    /// The value of header `name` (case-insensitive).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// The body as text.
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }

    /// The body's form fields (`a=1&b=2`), decoded.
    pub fn form(&self) -> Vec<(String, String)> {
        url::form_urlencoded::parse(&self.body)
            .into_owned()
            .collect()
    }

    /// The query's fields, decoded.
    pub fn query(&self) -> Vec<(String, String)> {
        let q = self.target.split_once('?').map_or("", |(_, q)| q);
        url::form_urlencoded::parse(q.as_bytes())
            .into_owned()
            .collect()
    }

    /// The path without the query.
    pub fn path(&self) -> &str {
        self.target.split('?').next().unwrap_or("")
    }
}

/// How the recorder answers.
#[derive(Clone)]
enum Answer {
    Fixed {
        status: u16,
        body: String,
    },
    /// Keep the request and never answer (a server that hangs).
    Never,
    Relay {
        upstream: String,
    },
}

/// The running recorder.
pub struct Recorder {
    /// `http://127.0.0.1:PORT`.
    pub url: String,
    seen: Arc<Mutex<Vec<Request>>>,
}

impl Recorder {
    /// A peer answering every request with `status` and `body`.
    pub async fn answering(status: u16, body: &str) -> Recorder {
        Self::start(Answer::Fixed {
            status,
            body: body.to_owned(),
        })
        .await
    }

    /// A peer that takes every request and never answers.
    pub async fn hanging() -> Recorder {
        Self::start(Answer::Never).await
    }

    /// A peer relaying every request to `upstream` (`http://127.0.0.1:PORT`).
    pub async fn relaying(upstream: &str) -> Recorder {
        let upstream = upstream
            .trim_end_matches('/')
            .strip_prefix("http://")
            .expect("an http:// upstream")
            .to_owned();
        Self::start(Answer::Relay { upstream }).await
    }

    /// Every request received so far.
    pub fn requests(&self) -> Vec<Request> {
        self.seen.lock().unwrap().clone()
    }

    /// The requests received for a path (without the query) ending in `suffix`.
    pub fn to(&self, suffix: &str) -> Vec<Request> {
        self.requests()
            .into_iter()
            .filter(|r| r.path().ends_with(suffix))
            .collect()
    }

    async fn start(answer: Answer) -> Recorder {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let seen = Arc::new(Mutex::new(Vec::new()));
        let kept = seen.clone();
        tokio::spawn(async move {
            while let Ok((socket, _)) = listener.accept().await {
                let (answer, kept) = (answer.clone(), kept.clone());
                tokio::spawn(async move {
                    if let Err(e) = serve(socket, answer, kept).await {
                        eprintln!("recorder: {e:?}");
                    }
                });
            }
        });
        Recorder { url, seen }
    }
}

/// Reads one request, answers it, closes the connection.
async fn serve(
    mut socket: TcpStream,
    answer: Answer,
    seen: Arc<Mutex<Vec<Request>>>,
) -> std::io::Result<()> {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 8192];
    let head_end = loop {
        let n = socket.read(&mut chunk).await?;
        if n == 0 {
            return Ok(());
        }
        buf.extend_from_slice(&chunk[..n]);
        if let Some(i) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break i + 4;
        }
        if buf.len() > 1 << 20 {
            return Ok(());
        }
    };
    let head = String::from_utf8_lossy(&buf[..head_end]).into_owned();
    let mut lines = head.split("\r\n");
    let mut first = lines.next().unwrap_or("").split(' ');
    let method = first.next().unwrap_or("").to_owned();
    let target = first.next().unwrap_or("").to_owned();
    let headers: Vec<(String, String)> = lines
        .filter(|l| !l.is_empty())
        .filter_map(|l| l.split_once(':'))
        .map(|(n, v)| (n.trim().to_owned(), v.trim().to_owned()))
        .collect();
    let length: usize = headers
        .iter()
        .find(|(n, _)| n.eq_ignore_ascii_case("content-length"))
        .and_then(|(_, v)| v.parse().ok())
        .unwrap_or(0);
    while buf.len() < head_end + length {
        let n = socket.read(&mut chunk).await?;
        if n == 0 {
            break;
        }
        buf.extend_from_slice(&chunk[..n]);
    }
    let body = buf[head_end..].to_vec();
    let (status, response) = match answer {
        Answer::Never => {
            seen.lock().unwrap().push(Request {
                method,
                target,
                headers,
                body,
                status: 0,
            });
            // Hold the connection open until the client gives up.
            let _ = socket.read(&mut chunk).await;
            return Ok(());
        }
        Answer::Fixed { status, body } => (
            status,
            format!(
                "HTTP/1.1 {status} Recorded\r\nContent-Type: text/plain\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                body.len()
            )
            .into_bytes(),
        ),
        Answer::Relay { upstream } => {
            let mut up = TcpStream::connect(&upstream).await.map_err(|e| std::io::Error::other(format!("connect {upstream}: {e}")))?;
            let mut out = format!("{method} {target} HTTP/1.1\r\n");
            for (n, v) in &headers {
                if !n.eq_ignore_ascii_case("connection") && !n.eq_ignore_ascii_case("host") {
                    out.push_str(&format!("{n}: {v}\r\n"));
                }
            }
            out.push_str(&format!("Host: {upstream}\r\nConnection: close\r\n\r\n"));
            up.write_all(out.as_bytes()).await?;
            up.write_all(&body).await?;
            let mut response = Vec::new();
            up.read_to_end(&mut response).await.map_err(|e| std::io::Error::other(format!("read upstream: {e} after {} bytes; sent {out:?}", response.len())))?;
            let status = String::from_utf8_lossy(&response)
                .split(' ')
                .nth(1)
                .and_then(|s| s.parse().ok())
                .unwrap_or(0);
            (status, response)
        }
    };
    seen.lock().unwrap().push(Request {
        method,
        target,
        headers,
        body,
        status,
    });
    socket.write_all(&response).await?;
    socket.shutdown().await
}

/// The vault the tests give the guard: secret name -> (value, the one host it is bound to).
pub struct Vault(pub Vec<(&'static str, String, String)>);

impl cairn_web::Credentials for Vault {
    fn for_host(
        &self,
        name: &str,
        host: &str,
    ) -> Result<cairn_vault::Secret, cairn_web::CredentialRefusal> {
        match self.0.iter().find(|(n, _, _)| *n == name) {
            Some((_, value, bound)) if bound == host => Ok(cairn_vault::Secret::new(value.clone())),
            Some((_, _, bound)) => Err(cairn_web::CredentialRefusal {
                reason: format!("it is bound to {bound}"),
            }),
            None => Err(cairn_web::CredentialRefusal {
                reason: format!("no secret `{name}` in the vault"),
            }),
        }
    }
}

/// The communication tools over `settings`, with a guard that allows loopback when `loopback`,
/// and the approvals the agent would hold.
pub fn tools(
    settings: cairn_config::CommsConfig,
    vault: Vault,
    loopback: bool,
) -> (
    cairn_toolkit::ToolSet<cairn_comms::Comms>,
    Arc<cairn_workspace::ExactApprovals>,
) {
    let guard = cairn_web::WebGuard::new(cairn_web::GuardConfig {
        allow_loopback: loopback,
        per_user_per_minute: 1000,
        per_host_per_minute: 1000,
        ..Default::default()
    })
    .unwrap();
    let vault = Arc::new(vault);
    let guard = Arc::new(guard.with_credentials(vault.clone()));
    let approvals = cairn_workspace::ExactApprovals::new();
    let host = cairn_comms::Comms::new(settings, Some(guard), vault, approvals.clone());
    (cairn_comms::comms_tools(host), approvals)
}

/// What a send came to: the strict question the first call asked (its text and the shown
/// message), then the second call's result with that exact approval held, as after "allow once".
pub async fn approved(
    t: &cairn_toolkit::ToolSet<cairn_comms::Comms>,
    approvals: &cairn_workspace::ExactApprovals,
    name: &str,
    args: serde_json::Value,
) -> (String, String, cairn_test_support::tools::Seen) {
    use cairn_test_support::tools::call;
    let asked = call(t, name, args.clone()).await;
    assert!(asked.is_error, "{}", asked.text);
    let protected = cairn_agent::tools::protected_of(&asked.result);
    assert_eq!(protected.len(), 1, "no question: {}", asked.text);
    let key = std::path::PathBuf::from(&protected[0].key);
    approvals.hold(&key, cairn_workspace::Operation::Write);
    let done = call(t, name, args).await;
    approvals.release(&key, cairn_workspace::Operation::Write);
    (asked.text, protected[0].path.clone(), done)
}

/// Cancels `cancel` once `peer` has received a request: the call is then in flight.
pub fn cancel_when_received(peer: &Recorder, cancel: tokio_util::sync::CancellationToken) {
    let seen = peer.seen.clone();
    tokio::spawn(async move {
        while seen.lock().unwrap().is_empty() {
            tokio::time::sleep(std::time::Duration::from_millis(10)).await;
        }
        cancel.cancel();
    });
}
