//! A recording HTTP peer on loopback, for tests of tools that call HTTP services: a real TCP
//! server that keeps every request it receives, and either answers it itself (the peer of a
//! webhook, an error status on demand), never answers (a server that hangs), or relays it to an
//! upstream server (Prism serving a service's published API description) and hands back that
//! server's answer as it came, so a test sees both what was sent and what the description's
//! validator said of it.

// A test double: its failures are the test's, and it talks to its upstream directly.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stderr)]

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

    /// The body as JSON.
    ///
    /// # Panics
    /// When the body is not JSON: the test fails.
    pub fn json(&self) -> serde_json::Value {
        serde_json::from_slice(&self.body).expect("the request's body is JSON")
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

    /// Cancels `cancel` once a request has arrived: the call under test is then in flight.
    pub fn cancel_when_received(&self, cancel: tokio_util::sync::CancellationToken) {
        let seen = self.seen.clone();
        tokio::spawn(async move {
            while seen.lock().unwrap().is_empty() {
                tokio::time::sleep(std::time::Duration::from_millis(10)).await;
            }
            cancel.cancel();
        });
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
