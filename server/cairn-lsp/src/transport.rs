//! Framing between the editor and tower-lsp-server.
//!
//! tower-lsp-server ends its read loop at the first frame it cannot decode (its `FramedRead`
//! stops after an error), which would take the whole server down on one bad frame. So frames
//! are checked here first: a frame with a bad header, a body that is not a JSON-RPC message, or
//! a length over the cap gets a `-32700` (or `-32600`) reply with `id: null` and is dropped, and
//! the next frame is served. An oversized body is skipped as it streams, never buffered.
//!
//! Replies of our own and the server's output share stdout, so both go through one writer that
//! only ever writes whole frames.

use serde_json::{Value, json};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, DuplexStream};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

/// Largest frame accepted, in bytes.
pub const MAX_FRAME: usize = 32 * 1024 * 1024;
/// Longest header section accepted before it is treated as garbage.
const MAX_HEADER: usize = 8 * 1024;

/// The streams tower-lsp-server reads from and writes to, and the task that writes stdout.
pub struct Framing {
    pub server_input: DuplexStream,
    pub server_output: DuplexStream,
    pub writer: JoinHandle<()>,
}

/// Puts the checks between `input`/`output` and the server.
pub fn frame<R, W>(input: R, output: W, max_frame: usize) -> Framing
where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    let (server_input, feed) = tokio::io::duplex(64 * 1024);
    let (server_output, drain) = tokio::io::duplex(64 * 1024);
    let (errors_tx, errors_rx) = mpsc::unbounded_channel();
    tokio::spawn(read_frames(input, feed, errors_tx, max_frame));
    let writer = tokio::spawn(write_frames(drain, output, errors_rx));
    Framing {
        server_input,
        server_output,
        writer,
    }
}

fn error_frame(code: i64, message: &str, id: Value) -> Vec<u8> {
    let body = json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}})
        .to_string();
    let mut out = format!("Content-Length: {}\r\n\r\n", body.len()).into_bytes();
    out.extend_from_slice(body.as_bytes());
    out
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

fn content_length(header: &[u8]) -> Option<usize> {
    let text = std::str::from_utf8(header).ok()?;
    text.split("\r\n").find_map(|line| {
        let (name, value) = line.split_once(':')?;
        name.trim()
            .eq_ignore_ascii_case("content-length")
            .then(|| value.trim().parse().ok())?
    })
}

/// Checks a body: a JSON object that is a request, notification or response.
fn check_body(body: &[u8]) -> Result<(), (i64, String, Value)> {
    let value: Value = serde_json::from_slice(body)
        .map_err(|e| (-32700, format!("parse error: {e}"), Value::Null))?;
    let id = value.get("id").cloned().unwrap_or(Value::Null);
    let Some(obj) = value.as_object() else {
        return Err((
            -32600,
            "invalid request: not a JSON object".into(),
            Value::Null,
        ));
    };
    let ok = match obj.get("method") {
        Some(Value::String(_)) => {
            serde_json::from_value::<tower_lsp_server::jsonrpc::Request>(value.clone()).is_ok()
        }
        Some(_) => false,
        None => {
            serde_json::from_value::<tower_lsp_server::jsonrpc::Response>(value.clone()).is_ok()
        }
    };
    if ok {
        Ok(())
    } else {
        Err((
            -32600,
            "invalid request: not a JSON-RPC 2.0 message".into(),
            id,
        ))
    }
}

async fn read_frames<R>(
    mut input: R,
    mut feed: DuplexStream,
    errors: mpsc::UnboundedSender<Vec<u8>>,
    max_frame: usize,
) where
    R: AsyncRead + Unpin,
{
    let mut buf: Vec<u8> = Vec::with_capacity(64 * 1024);
    let mut chunk = vec![0u8; 64 * 1024];
    'frames: loop {
        // The header section.
        let header_end = loop {
            if let Some(pos) = find(&buf, b"\r\n\r\n") {
                break pos;
            }
            if buf.len() > MAX_HEADER {
                let _ = errors.send(error_frame(
                    -32700,
                    "parse error: no header within 8 KiB",
                    Value::Null,
                ));
                // Keep a tail in case a header starts at its end.
                buf.drain(..buf.len() - 3);
            }
            match input.read(&mut chunk).await {
                Ok(0) | Err(_) => break 'frames,
                Ok(n) => buf.extend_from_slice(&chunk[..n]),
            }
        };
        let header = buf[..header_end].to_vec();
        buf.drain(..header_end + 4);
        let Some(len) = content_length(&header) else {
            tracing::warn!("dropped a frame without a valid Content-Length");
            let _ = errors.send(error_frame(
                -32700,
                "parse error: missing or invalid Content-Length",
                Value::Null,
            ));
            continue;
        };
        if len > max_frame {
            tracing::warn!(len, "dropped a frame over the size cap");
            let message = format!("message of {len} bytes is over the limit of {max_frame} bytes");
            let _ = errors.send(error_frame(-32600, &message, Value::Null));
            // Skip the body as it arrives.
            let mut left = len;
            let take = left.min(buf.len());
            buf.drain(..take);
            left -= take;
            while left > 0 {
                match input.read(&mut chunk).await {
                    Ok(0) | Err(_) => break 'frames,
                    Ok(n) if n <= left => left -= n,
                    Ok(n) => {
                        buf.extend_from_slice(&chunk[left..n]);
                        left = 0;
                    }
                }
            }
            continue;
        }
        while buf.len() < len {
            match input.read(&mut chunk).await {
                Ok(0) | Err(_) => break 'frames,
                Ok(n) => buf.extend_from_slice(&chunk[..n]),
            }
        }
        let body: Vec<u8> = buf.drain(..len).collect();
        match check_body(&body) {
            Ok(()) => {
                let mut frame = format!("Content-Length: {len}\r\n\r\n").into_bytes();
                frame.extend_from_slice(&body);
                if feed.write_all(&frame).await.is_err() {
                    break;
                }
            }
            Err((code, message, id)) => {
                tracing::warn!("dropped a frame: {message}");
                let _ = errors.send(error_frame(code, &message, id));
            }
        }
    }
    // EOF: the server sees its input end and shuts down.
    let _ = feed.shutdown().await;
}

async fn write_frames<W>(
    mut drain: DuplexStream,
    mut output: W,
    mut errors: mpsc::UnboundedReceiver<Vec<u8>>,
) where
    W: AsyncWrite + Unpin,
{
    let mut buf: Vec<u8> = Vec::new();
    let mut chunk = vec![0u8; 64 * 1024];
    let mut server_open = true;
    let mut errors_open = true;
    while server_open || errors_open {
        tokio::select! {
            read = drain.read(&mut chunk), if server_open => match read {
                Ok(0) | Err(_) => server_open = false,
                Ok(n) => {
                    buf.extend_from_slice(&chunk[..n]);
                    // Write every whole frame the server produced.
                    while let Some(end) = find(&buf, b"\r\n\r\n") {
                        let Some(len) = content_length(&buf[..end]) else { break };
                        if buf.len() < end + 4 + len {
                            break;
                        }
                        let frame: Vec<u8> = buf.drain(..end + 4 + len).collect();
                        if output.write_all(&frame).await.is_err() || output.flush().await.is_err() {
                            return;
                        }
                    }
                }
            },
            frame = errors.recv(), if errors_open => match frame {
                Some(frame) => {
                    if output.write_all(&frame).await.is_err() || output.flush().await.is_err() {
                        return;
                    }
                }
                None => errors_open = false,
            },
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    async fn through(input: &[u8], max: usize) -> (Vec<u8>, Vec<u8>) {
        let (mut client, server_side) = tokio::io::duplex(1 << 20);
        client.write_all(input).await.unwrap();
        client.shutdown().await.unwrap();
        let (out_reader, out_writer) = tokio::io::duplex(1 << 20);
        let mut framing = frame(server_side, out_writer, max);
        let mut forwarded = Vec::new();
        framing
            .server_input
            .read_to_end(&mut forwarded)
            .await
            .unwrap();
        drop(framing.server_output);
        framing.writer.await.unwrap();
        let mut replies = Vec::new();
        let mut out_reader = out_reader;
        out_reader.read_to_end(&mut replies).await.unwrap();
        (forwarded, replies)
    }

    fn msg(body: &str) -> String {
        format!("Content-Length: {}\r\n\r\n{body}", body.len())
    }

    #[tokio::test]
    async fn good_frames_pass_bad_ones_get_errors() {
        let good = r#"{"jsonrpc":"2.0","id":1,"method":"x"}"#;
        let input = format!(
            "{}garbage\r\n\r\nContent-Length: abc\r\n\r\n{}{}{}",
            msg("{not json"),
            msg(r#"{"jsonrpc":"2.0","id":7}"#),
            msg(&"x".repeat(100)),
            msg(good)
        );
        let (forwarded, replies) = through(input.as_bytes(), 50).await;
        assert_eq!(String::from_utf8(forwarded).unwrap(), msg(good));
        let replies = String::from_utf8(replies).unwrap();
        assert_eq!(replies.matches("-32700").count(), 3, "{replies}");
        assert_eq!(replies.matches("-32600").count(), 2, "{replies}");
        assert!(
            replies.contains(r#""id":7"#),
            "an invalid message with an id gets its id back"
        );
    }

    #[tokio::test]
    async fn an_unsent_huge_length_allocates_nothing_and_ends_at_eof() {
        let (forwarded, replies) = through(
            b"Content-Length: 999999999999\r\n\r\n{\"jsonrpc\"",
            MAX_FRAME,
        )
        .await;
        assert!(forwarded.is_empty());
        assert!(
            String::from_utf8(replies)
                .unwrap()
                .contains("over the limit")
        );
    }
}
