//! The loopback HTTP server behind [`ScriptedModel`]: routing, script selection, recording,
//! and the streaming of rendered replies including the faults.

use std::collections::{BTreeMap, VecDeque};
use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use bytes::Bytes;
use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt, Full, StreamBody};
use hyper::body::{Frame, Incoming};
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use serde_json::{Value, json};
use tokio::net::TcpListener;
use tokio::task::JoinHandle;

use crate::render::{self, Context};
use crate::script::{Fault, Reply};

type Body = BoxBody<Bytes, std::io::Error>;

/// Which provider's wire format the scripted model speaks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// `POST {base}/chat/completions`, base `http://127.0.0.1:PORT/v1`.
    OpenAi,
    /// `POST {base}/v1/messages`, base `http://127.0.0.1:PORT`.
    Anthropic,
}

/// One request as the scripted model received it.
#[derive(Clone, Debug, PartialEq)]
pub struct RecordedRequest {
    pub method: String,
    pub path: String,
    /// Header names are lowercase; repeated headers are joined with `, `.
    pub headers: BTreeMap<String, String>,
    /// The body as JSON; `Null` when empty, a JSON string when it was not JSON.
    pub body: Value,
}

impl RecordedRequest {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .get(&name.to_ascii_lowercase())
            .map(String::as_str)
    }
}

/// Options for [`ScriptedModel::start_with`].
#[derive(Clone, Debug, Default)]
pub struct Options {
    /// Port to listen on; 0 picks a free one.
    pub port: u16,
    /// Log each request to stderr (the binary does; tests usually do not).
    pub log_requests: bool,
}

struct Queue {
    key: String,
    replies: VecDeque<Reply>,
}

struct State {
    format: Format,
    log_requests: bool,
    queues: Mutex<Vec<Queue>>,
    requests: Mutex<Vec<RecordedRequest>>,
    replies_started: AtomicUsize,
    dropped: DroppedCounter,
}

/// Locks even after a panicking test thread poisoned the lock: the data stays usable.
fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// A scripted model provider on loopback. Stops serving when dropped.
pub struct ScriptedModel {
    addr: SocketAddr,
    state: Arc<State>,
    accept: JoinHandle<()>,
}

impl Drop for ScriptedModel {
    fn drop(&mut self) {
        self.accept.abort();
    }
}

impl ScriptedModel {
    /// Serve `replies` in order, one per model request.
    pub async fn start(format: Format, replies: Vec<Reply>) -> std::io::Result<Self> {
        Self::start_with(format, vec![(String::new(), replies)], Options::default()).await
    }

    /// Serve several scripts: a request takes the next reply from the first queue whose key
    /// occurs in the first user message of the request, so concurrent runs stay deterministic.
    pub async fn start_keyed(
        format: Format,
        keyed: Vec<(String, Vec<Reply>)>,
    ) -> std::io::Result<Self> {
        Self::start_with(format, keyed, Options::default()).await
    }

    pub async fn start_with(
        format: Format,
        keyed: Vec<(String, Vec<Reply>)>,
        options: Options,
    ) -> std::io::Result<Self> {
        let listener = TcpListener::bind(("127.0.0.1", options.port)).await?;
        let addr = listener.local_addr()?;
        let queues = keyed.into_iter().map(|(key, r)| Queue {
            key,
            replies: r.into_iter().collect(),
        });
        let state = Arc::new(State {
            format,
            log_requests: options.log_requests,
            queues: Mutex::new(queues.collect()),
            requests: Mutex::new(Vec::new()),
            replies_started: AtomicUsize::new(0),
            dropped: Arc::new(AtomicUsize::new(0)),
        });
        let accept = tokio::spawn(accept_loop(listener, state.clone()));
        Ok(Self {
            addr,
            state,
            accept,
        })
    }

    /// The base URL a client is configured with (see [`Format`] for the shape).
    pub fn base_url(&self) -> String {
        match self.state.format {
            Format::OpenAi => format!("http://{}/v1", self.addr),
            Format::Anthropic => format!("http://{}", self.addr),
        }
    }

    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Every request received so far, in arrival order, faulted ones included.
    pub fn requests(&self) -> Vec<RecordedRequest> {
        lock(&self.state.requests).clone()
    }

    /// Wait until at least `n` requests arrived or `timeout` passed; returns what arrived.
    pub async fn wait_for_requests(&self, n: usize, timeout: Duration) -> Vec<RecordedRequest> {
        let deadline = tokio::time::Instant::now() + timeout;
        loop {
            let requests = self.requests();
            if requests.len() >= n || tokio::time::Instant::now() >= deadline {
                return requests;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }

    /// Replies not yet served, over all queues.
    pub fn remaining(&self) -> usize {
        lock(&self.state.queues)
            .iter()
            .map(|q| q.replies.len())
            .sum()
    }

    /// Streamed responses the client abandoned before they were complete (including stalls
    /// the client gave up on). Shows that dropping a client stream closes the connection.
    pub fn dropped_responses(&self) -> usize {
        self.state.dropped.load(Ordering::SeqCst)
    }
}

async fn accept_loop(listener: TcpListener, state: Arc<State>) {
    loop {
        let Ok((stream, _)) = listener.accept().await else {
            // Transient accept errors (e.g. too many open files) must not end the server.
            tokio::time::sleep(Duration::from_millis(10)).await;
            continue;
        };
        let state = state.clone();
        tokio::spawn(async move {
            let service = hyper::service::service_fn(move |req| handle(state.clone(), req));
            // A client that goes away mid-response is an expected outcome, not an error.
            let _ = hyper::server::conn::http1::Builder::new()
                .serve_connection(TokioIo::new(stream), service)
                .await;
        });
    }
}

async fn handle(state: Arc<State>, req: Request<Incoming>) -> Result<Response<Body>, Infallible> {
    let method = req.method().to_string();
    let path = req.uri().path().to_owned();
    let mut headers = BTreeMap::<String, String>::new();
    for (name, value) in req.headers() {
        let value = String::from_utf8_lossy(value.as_bytes()).into_owned();
        headers
            .entry(name.as_str().to_owned())
            .and_modify(|v| {
                v.push_str(", ");
                v.push_str(&value);
            })
            .or_insert(value);
    }
    let bytes = req
        .into_body()
        .collect()
        .await
        .map(|c| c.to_bytes())
        .unwrap_or_default();
    let body = if bytes.is_empty() {
        Value::Null
    } else {
        serde_json::from_slice(&bytes)
            .unwrap_or_else(|_| Value::String(String::from_utf8_lossy(&bytes).into_owned()))
    };
    let request = RecordedRequest {
        method,
        path,
        headers,
        body,
    };
    lock(&state.requests).push(request.clone());

    let response = respond(&state, &request, bytes.len());
    if state.log_requests {
        eprintln!(
            "scripted-model: {} {} -> {}",
            request.method, request.path, response.0
        );
    }
    Ok(response.1)
}

/// Picks the answer; the string describes it for the request log.
fn respond(state: &State, request: &RecordedRequest, size: usize) -> (String, Response<Body>) {
    let path = request.path.as_str();
    if request.method == "GET" && (path == "/v1/models" || path == "/models") {
        let models = json!({
            "object": "list", "has_more": false,
            "data": [{"id": "scripted-model", "object": "model", "type": "model",
                      "display_name": "Scripted model", "owned_by": "cairn-test-support"}],
        });
        return (
            "model list".to_owned(),
            json_response(StatusCode::OK, &models),
        );
    }
    let route = match state.format {
        Format::OpenAi => path.ends_with("/chat/completions"),
        Format::Anthropic => path.ends_with("/v1/messages"),
    };
    if request.method != "POST" || !route {
        let message = format!("scripted model: no route for {} {path}", request.method);
        return (
            message.clone(),
            error_response(StatusCode::NOT_FOUND, &message),
        );
    }
    let Some(reply) = next_reply(state, &request.body) else {
        let message = "scripted model: script exhausted";
        return (
            message.to_owned(),
            error_response(StatusCode::INTERNAL_SERVER_ERROR, message),
        );
    };
    let seq = state.replies_started.fetch_add(1, Ordering::SeqCst);
    let ctx = Context {
        model: request
            .body
            .get("model")
            .and_then(Value::as_str)
            .unwrap_or("scripted")
            .to_owned(),
        seq,
        include_usage: request.body.pointer("/stream_options/include_usage")
            == Some(&Value::Bool(true)),
        request_bytes: size,
    };
    let kind = match &reply.fault {
        Some(Fault::Status { status, .. }) => format!("status {status}"),
        Some(Fault::Garbage) => "garbage".to_owned(),
        Some(Fault::CloseMidStream) => "close mid-stream".to_owned(),
        Some(Fault::StallMidStream) => "stall mid-stream".to_owned(),
        None if reply.tool_calls.is_empty() => "text".to_owned(),
        None => format!("{} tool call(s)", reply.tool_calls.len()),
    };
    let label = format!("reply {seq} ({kind})");
    (
        label,
        render_reply(state, &reply, &ctx, request.body.get("stream")),
    )
}

fn next_reply(state: &State, body: &Value) -> Option<Reply> {
    let prompt = first_user_text(body);
    let mut queues = lock(&state.queues);
    let queue = queues.iter_mut().find(|q| prompt.contains(&q.key))?;
    queue.replies.pop_front()
}

/// The text of the first user message, in either format (string or content parts).
fn first_user_text(body: &Value) -> String {
    let messages = body.get("messages").and_then(Value::as_array);
    let Some(first) = messages.and_then(|m| m.iter().find(|m| m["role"] == "user")) else {
        return String::new();
    };
    match &first["content"] {
        Value::String(text) => text.clone(),
        Value::Array(parts) => parts.iter().filter_map(|p| p["text"].as_str()).collect(),
        _ => String::new(),
    }
}

fn render_reply(
    state: &State,
    reply: &Reply,
    ctx: &Context,
    stream: Option<&Value>,
) -> Response<Body> {
    let streaming = stream == Some(&Value::Bool(true));
    let (chunks, ending) = match &reply.fault {
        Some(Fault::Status {
            status,
            body,
            retry_after,
        }) => {
            return status_response(*status, body, retry_after.as_deref());
        }
        Some(Fault::Garbage) => {
            let garbage = match state.format {
                Format::OpenAi => "data: {not json\n\ndata: {\"choices\": [\n\n",
                Format::Anthropic => "event: content_block_delta\ndata: {not json\n\n",
            };
            (vec![garbage.to_owned()], Ending::Complete)
        }
        Some(Fault::CloseMidStream) => (partial(state.format, reply, ctx), Ending::Close),
        Some(Fault::StallMidStream) => (partial(state.format, reply, ctx), Ending::Stall),
        None if !streaming => {
            let value = match state.format {
                Format::OpenAi => render::openai_json(reply, ctx),
                Format::Anthropic => render::anthropic_json(reply, ctx),
            };
            return json_response(StatusCode::OK, &value);
        }
        None => {
            let chunks = match state.format {
                Format::OpenAi => render::openai_stream(reply, ctx, false),
                Format::Anthropic => render::anthropic_stream(reply, ctx, false),
            };
            (chunks, Ending::Complete)
        }
    };
    event_stream(
        chunks,
        ending,
        Duration::from_millis(reply.chunk_delay_ms),
        &state.dropped,
    )
}

fn partial(format: Format, reply: &Reply, ctx: &Context) -> Vec<String> {
    match format {
        Format::OpenAi => render::openai_stream(reply, ctx, true),
        Format::Anthropic => render::anthropic_stream(reply, ctx, true),
    }
}

/// How a streamed response ends.
enum Ending {
    Complete,
    /// Abort the connection: hyper cannot finish a chunked body that failed.
    Close,
    /// Send nothing more until the client goes away.
    Stall,
}

/// A counter shared with streaming tasks, which can outlive the request handler.
type DroppedCounter = Arc<AtomicUsize>;

fn event_stream(
    chunks: Vec<String>,
    ending: Ending,
    delay: Duration,
    dropped: &DroppedCounter,
) -> Response<Body> {
    let (tx, mut rx) = tokio::sync::mpsc::channel::<Result<Frame<Bytes>, std::io::Error>>(4);
    let dropped = dropped.clone();
    tokio::spawn(async move {
        for chunk in chunks {
            if !delay.is_zero() {
                tokio::time::sleep(delay).await;
            }
            if tx.send(Ok(Frame::data(Bytes::from(chunk)))).await.is_err() {
                dropped.fetch_add(1, Ordering::SeqCst);
                return;
            }
        }
        match ending {
            Ending::Complete => {}
            Ending::Close => {
                // hyper drops unflushed frames when a body fails; give it time to write the
                // partial answer first, as a real cut connection would have delivered it.
                tokio::time::sleep(Duration::from_millis(50)).await;
                let _ = tx
                    .send(Err(std::io::Error::other("scripted close mid-stream")))
                    .await;
            }
            Ending::Stall => {
                tx.closed().await;
                dropped.fetch_add(1, Ordering::SeqCst);
            }
        }
    });
    let stream = futures::stream::poll_fn(move |cx| rx.poll_recv(cx));
    let mut response = Response::new(StreamBody::new(stream).boxed());
    let headers = response.headers_mut();
    headers.insert(
        "content-type",
        hyper::header::HeaderValue::from_static("text/event-stream"),
    );
    headers.insert(
        "cache-control",
        hyper::header::HeaderValue::from_static("no-cache"),
    );
    response
}

fn full(bytes: impl Into<Bytes>) -> Body {
    Full::new(bytes.into())
        .map_err(|never| match never {})
        .boxed()
}

fn json_response(status: StatusCode, value: &Value) -> Response<Body> {
    let mut response = Response::new(full(value.to_string()));
    *response.status_mut() = status;
    response.headers_mut().insert(
        "content-type",
        hyper::header::HeaderValue::from_static("application/json"),
    );
    response
}

fn error_response(status: StatusCode, message: &str) -> Response<Body> {
    json_response(
        status,
        &json!({"error": {"type": "scripted_model", "message": message}}),
    )
}

fn status_response(status: u16, body: &str, retry_after: Option<&str>) -> Response<Body> {
    let content_type = if serde_json::from_str::<Value>(body).is_ok() {
        "application/json"
    } else {
        "text/plain"
    };
    let mut response = Response::new(full(body.to_owned()));
    *response.status_mut() =
        StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    let headers = response.headers_mut();
    headers.insert(
        "content-type",
        hyper::header::HeaderValue::from_static(content_type),
    );
    if let Some(value) = retry_after.and_then(|v| hyper::header::HeaderValue::from_str(v).ok()) {
        headers.insert("retry-after", value);
    }
    response
}
