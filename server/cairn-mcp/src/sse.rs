//! The legacy HTTP+SSE transport (MCP 2024-11-05), which rmcp no longer ships and many servers
//! still speak: GET the SSE URL, wait for the `endpoint` event, POST each JSON-RPC message to
//! that endpoint, and read every answer from the event stream.

use std::collections::HashMap;
use std::future::Future;

use futures::StreamExt;
use reqwest13::Url;
use reqwest13::header::{ACCEPT, CONTENT_TYPE, HeaderMap, HeaderName, HeaderValue};
use rmcp::RoleClient;
use rmcp::model::{ClientJsonRpcMessage, ServerJsonRpcMessage};
use rmcp::transport::Transport;
use tokio::sync::{mpsc, oneshot};
use tokio::task::JoinHandle;

use crate::error::McpError;

/// Errors of one POST to the message endpoint.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SseError {
    #[error("POST to the message endpoint failed: {0}")]
    Http(#[from] reqwest13::Error),
    #[error("the message endpoint answered HTTP {0}")]
    Status(u16),
    #[error("could not encode the message: {0}")]
    Encode(#[from] serde_json::Error),
}

/// A connected legacy SSE session.
pub(crate) struct SseTransport {
    client: reqwest13::Client,
    endpoint: Url,
    headers: HeaderMap,
    rx: mpsc::Receiver<ServerJsonRpcMessage>,
    reader: JoinHandle<()>,
}

impl Drop for SseTransport {
    fn drop(&mut self) {
        self.reader.abort();
    }
}

/// Opens the event stream at `url` and waits for the `endpoint` event. The caller bounds the
/// wait with the handshake timeout.
pub(crate) async fn connect(
    client: reqwest13::Client,
    url: &str,
    headers: HashMap<HeaderName, HeaderValue>,
    max_event_bytes: usize,
) -> Result<SseTransport, McpError> {
    let base = Url::parse(url).map_err(|e| McpError::Config(format!("bad url `{url}`: {e}")))?;
    let headers: HeaderMap = headers.into_iter().collect();
    let response = client
        .get(base.clone())
        .headers(headers.clone())
        .header(ACCEPT, "text/event-stream")
        .send()
        .await
        .map_err(|e| McpError::Transport(format!("GET {base}: {e}")))?;
    let status = response.status();
    if !status.is_success() {
        return Err(McpError::Transport(format!(
            "GET {base} answered HTTP {status}"
        )));
    }
    let (endpoint_tx, endpoint_rx) = oneshot::channel();
    let (tx, rx) = mpsc::channel(64);
    let reader = tokio::spawn(read_events(
        response.bytes_stream(),
        max_event_bytes,
        endpoint_tx,
        tx,
    ));
    let data = endpoint_rx.await.map_err(|_| {
        McpError::Protocol("the SSE stream ended before its `endpoint` event".to_owned())
    })?;
    let endpoint = base
        .join(data.trim())
        .map_err(|e| McpError::Protocol(format!("bad SSE endpoint `{data}`: {e}")))?;
    // Messages carry the user's arguments; a server must not redirect them to another host.
    if endpoint.origin() != base.origin() {
        reader.abort();
        return Err(McpError::Protocol(format!(
            "the SSE endpoint `{endpoint}` is on another origin than `{base}`"
        )));
    }
    Ok(SseTransport {
        client,
        endpoint,
        headers,
        rx,
        reader,
    })
}

/// Parses the event stream: the first `endpoint` event goes to `endpoint`, each `message`
/// event to `messages`. An event over `max` bytes ends the stream, so memory stays bounded.
async fn read_events<S>(
    mut stream: S,
    max: usize,
    endpoint: oneshot::Sender<String>,
    messages: mpsc::Sender<ServerJsonRpcMessage>,
) where
    S: futures::Stream<Item = reqwest13::Result<bytes::Bytes>> + Unpin,
{
    let mut endpoint = Some(endpoint);
    let mut pending: Vec<u8> = Vec::new();
    let mut event = String::new();
    let mut data = String::new();
    while let Some(chunk) = stream.next().await {
        let chunk = match chunk {
            Ok(c) => c,
            Err(e) => {
                tracing::debug!("SSE stream error: {e}");
                return;
            }
        };
        pending.extend_from_slice(&chunk);
        while let Some(pos) = pending.iter().position(|b| *b == b'\n') {
            let line: Vec<u8> = pending.drain(..=pos).collect();
            let line = String::from_utf8_lossy(&line);
            let line = line.trim_end_matches(['\n', '\r']);
            if line.is_empty() {
                let name = if event.is_empty() { "message" } else { &event };
                match name {
                    "endpoint" => {
                        if let Some(tx) = endpoint.take() {
                            let _ = tx.send(std::mem::take(&mut data));
                        }
                    }
                    "message" if !data.is_empty() => {
                        match serde_json::from_str::<ServerJsonRpcMessage>(&data) {
                            Ok(msg) => {
                                if messages.send(msg).await.is_err() {
                                    return;
                                }
                            }
                            Err(e) => tracing::warn!("skipping unparsable SSE message: {e}"),
                        }
                    }
                    _ => {}
                }
                event.clear();
                data.clear();
                continue;
            }
            if line.starts_with(':') {
                continue;
            }
            let (field, value) = match line.split_once(':') {
                Some((f, v)) => (f, v.strip_prefix(' ').unwrap_or(v)),
                None => (line, ""),
            };
            match field {
                "event" => event = value.to_owned(),
                "data" => {
                    if !data.is_empty() {
                        data.push('\n');
                    }
                    data.push_str(value);
                }
                _ => {}
            }
        }
        if pending.len() + data.len() > max {
            tracing::warn!("SSE event over {max} bytes, closing the connection");
            return;
        }
    }
}

impl Transport<RoleClient> for SseTransport {
    type Error = SseError;

    fn name() -> std::borrow::Cow<'static, str> {
        "legacy SSE".into()
    }

    fn send(
        &mut self,
        item: ClientJsonRpcMessage,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        let client = self.client.clone();
        let endpoint = self.endpoint.clone();
        let headers = self.headers.clone();
        async move {
            let body = serde_json::to_vec(&item)?;
            let response = client
                .post(endpoint)
                .headers(headers)
                .header(CONTENT_TYPE, "application/json")
                .body(body)
                .send()
                .await?;
            let status = response.status();
            if !status.is_success() {
                return Err(SseError::Status(status.as_u16()));
            }
            Ok(())
        }
    }

    fn receive(&mut self) -> impl Future<Output = Option<ServerJsonRpcMessage>> + Send {
        self.rx.recv()
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        self.reader.abort();
        Ok(())
    }
}
