//! Framing between the editor and tower-lsp-server.
//!
//! tower-lsp-server ends its read loop at the first frame it cannot decode (its `FramedRead`
//! stops after an error), which would take the whole server down on one bad frame. So frames
//! are checked here first, by [`Decoder`], and only whole, checked frames reach the server.
//!
//! A bad frame costs one error reply, never the frames after it. A header without a valid
//! `Content-Length`, a body that is not JSON, or a frame over the cap gets one `-32700` (or
//! `-32600`) reply with `id: null`, and the decoder resynchronises: it scans for the next
//! `Content-Length:` header that is well formed and serves from there, discarding what it skips
//! as it goes (only a header's worth, 8 KiB, is ever held while scanning), silently until it
//! finds one, so a run of garbage gets one reply. The scan looks anywhere, not only after a
//! newline, because frames abut: the header after a body starts right after its last byte, so
//! stray bytes before a header share its line.
//!
//! What makes this safe is that a valid JSON body can never contain a well-formed
//! `Content-Length: N` line: outside a JSON string there are no bare letters, and inside one
//! there are no raw line ends. So a header line that shows up inside a body proves the body
//! was cut short or its length was a lie; the body is refused at once (without waiting for
//! the bytes it announced) and rescanned from its start. That is how a `Content-Length` larger
//! than the data it came with is recovered from without a timeout: the next frame's header
//! ends it.
//!
//! Header lines may end with `\r\n` (the specification) or a bare `\n` (which some clients
//! write): a bare `\n` is unambiguous in a header, and refusing it would only cost the frame.
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
pub(crate) const MAX_HEADER: usize = 8 * 1024;

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

/// Where `needle` (lower case) first occurs in `haystack`, ignoring ASCII case.
fn find_ci(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack
        .windows(needle.len())
        .position(|w| w.eq_ignore_ascii_case(needle))
}

/// The `Content-Length` of a header section our own server wrote (trusted, `\r\n` lines).
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

/// The header name every frame carries, lower case; the decoder resynchronises on it.
const CONTENT_LENGTH: &[u8] = b"content-length:";

/// What the decoder made of the bytes it was given.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Decoded {
    /// The body of a frame that is a JSON-RPC message.
    Message(Vec<u8>),
    /// A bad frame (or a run of garbage): the error to reply with.
    Error {
        code: i64,
        message: String,
        id: Value,
    },
}

enum State {
    /// At a frame boundary: a header starts at the first buffered byte.
    Header,
    /// The body of `len` bytes starts at the first buffered byte; the first `scanned` of them
    /// hold no header line.
    Body { len: usize, scanned: usize },
    /// After a bad frame: skipping to the next well-formed `Content-Length` header.
    Resync,
}

/// The frame decoder: bytes in, checked messages and error replies out, with no IO, so the
/// reader task and the property tests drive the same code.
pub(crate) struct Decoder {
    buf: Vec<u8>,
    state: State,
    max_frame: usize,
}

impl Decoder {
    pub(crate) fn new(max_frame: usize) -> Self {
        Self {
            buf: Vec::new(),
            state: State::Header,
            max_frame,
        }
    }

    /// Adds input; call [`Decoder::decode`] until it returns `None` before pushing more.
    pub(crate) fn push(&mut self, bytes: &[u8]) {
        self.buf.extend_from_slice(bytes);
    }

    /// How many bytes are held: at most a header (8 KiB) plus the last push while scanning or
    /// reading a header, and a body of at most the frame cap while one is read.
    // Used by the tests and the libFuzzer target (fuzz/), not by the server.
    #[allow(dead_code)]
    pub(crate) fn buffered(&self) -> usize {
        self.buf.len()
    }

    /// The next message or error, or `None` when more input is needed.
    pub(crate) fn decode(&mut self) -> Option<Decoded> {
        loop {
            match self.state {
                State::Header => match parse_header(&self.buf) {
                    Header::Incomplete => return None,
                    Header::Invalid(why) => {
                        // Resynchronise from the next byte: stray bytes glued to a real header
                        // leave that header to be found.
                        self.buf.drain(..1.min(self.buf.len()));
                        self.state = State::Resync;
                        return Some(parse_error(format!(
                            "parse error: {why}; skipped to the next Content-Length header"
                        )));
                    }
                    Header::Valid { end, len } => {
                        self.buf.drain(..end);
                        if let Some(error) = self.start_body(len) {
                            return Some(error);
                        }
                    }
                },
                State::Resync => {
                    let Some(at) = find_ci(&self.buf, CONTENT_LENGTH) else {
                        // Discard as we go, keeping only what could be the start of the name.
                        let keep = CONTENT_LENGTH.len() - 1;
                        self.buf.drain(..self.buf.len().saturating_sub(keep));
                        return None;
                    };
                    self.buf.drain(..at);
                    match parse_header(&self.buf) {
                        Header::Incomplete => return None,
                        // Part of the garbage already answered: skip it silently.
                        Header::Invalid(_) => {
                            self.buf.drain(..1);
                        }
                        Header::Valid { end, len } => {
                            self.buf.drain(..end);
                            if let Some(error) = self.start_body(len) {
                                return Some(error);
                            }
                        }
                    }
                }
                State::Body { len, scanned } => {
                    if self.buf.len() >= len {
                        return Some(self.finish_body(len));
                    }
                    match find_header_line(&self.buf, scanned) {
                        Scan::Found => {
                            // Rescan from the body's start: the header line may begin a frame.
                            self.state = State::Resync;
                            return Some(parse_error(format!(
                                "parse error: a message announced as {len} bytes was cut short \
                                 by the next Content-Length header"
                            )));
                        }
                        Scan::CleanUpTo(scanned) => {
                            self.state = State::Body { len, scanned };
                            return None;
                        }
                    }
                }
            }
        }
    }

    /// Enters the body of a frame announced as `len` bytes, or refuses it over the cap.
    fn start_body(&mut self, len: u64) -> Option<Decoded> {
        match usize::try_from(len) {
            Ok(len) if len <= self.max_frame => {
                self.state = State::Body { len, scanned: 0 };
                None
            }
            _ => {
                // A message this large is never buffered: the scan discards it as it arrives
                // (a valid body holds no header line, so the scan finds the frame after it).
                self.state = State::Resync;
                Some(Decoded::Error {
                    code: -32600,
                    message: format!(
                        "message of {len} bytes is over the limit of {} bytes",
                        self.max_frame
                    ),
                    id: Value::Null,
                })
            }
        }
    }

    /// Checks a whole body of `len` buffered bytes.
    fn finish_body(&mut self, len: usize) -> Decoded {
        let body = &self.buf[..len];
        match check_body(body) {
            Ok(()) => {
                let body: Vec<u8> = self.buf.drain(..len).collect();
                self.state = State::Header;
                Decoded::Message(body)
            }
            // Not JSON: its length may have been a lie, so rescan it from its start.
            Err((code, message, id)) if code == -32700 => {
                self.state = State::Resync;
                Decoded::Error { code, message, id }
            }
            // JSON but not JSON-RPC: well delimited, so the next frame starts after it.
            Err((code, message, id)) => {
                self.buf.drain(..len);
                self.state = State::Header;
                Decoded::Error { code, message, id }
            }
        }
    }
}

fn parse_error(message: String) -> Decoded {
    Decoded::Error {
        code: -32700,
        message,
        id: Value::Null,
    }
}

enum Header {
    /// Not decided yet: more bytes are needed.
    Incomplete,
    Invalid(&'static str),
    /// A header of `end` bytes announcing a body of `len`.
    Valid {
        end: usize,
        len: u64,
    },
}

/// Parses the header section at the start of `buf`: `Name: value` lines ending in `\r\n` or
/// `\n`, then an empty line, with exactly one `Content-Length`, at the start of its line.
fn parse_header(buf: &[u8]) -> Header {
    let mut pos = 0;
    let mut length = None;
    loop {
        let Some(newline) = buf[pos..].iter().position(|b| *b == b'\n') else {
            return if buf.len() > MAX_HEADER {
                Header::Invalid("no end of header within 8 KiB")
            } else {
                Header::Incomplete
            };
        };
        let line = &buf[pos..pos + newline];
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        pos += newline + 1;
        if pos > MAX_HEADER {
            return Header::Invalid("a header longer than 8 KiB");
        }
        if line.is_empty() {
            return match length {
                Some(len) => Header::Valid { end: pos, len },
                None => Header::Invalid("a header without Content-Length"),
            };
        }
        let Some(colon) = line.iter().position(|b| *b == b':') else {
            return Header::Invalid("a header line without a colon");
        };
        let (name, value) = (&line[..colon], &line[colon + 1..]);
        if name.is_empty() || !name.iter().all(|b| is_token(*b)) {
            return Header::Invalid("a header name that is not a token");
        }
        if value
            .iter()
            .any(|b| (*b < 0x20 && *b != b'\t') || *b == 0x7f)
        {
            return Header::Invalid("a control character in a header");
        }
        // A `Content-Length:` inside another line is a header that lost its line start: taking
        // this section would hide it.
        if find_ci(&line[1..], CONTENT_LENGTH).is_some() {
            return Header::Invalid("a Content-Length inside another header line");
        }
        if name.eq_ignore_ascii_case(b"content-length") {
            if length.is_some() {
                return Header::Invalid("two Content-Length headers");
            }
            let digits = value.trim_ascii();
            let parsed = (!digits.is_empty() && digits.len() <= 19)
                .then(|| std::str::from_utf8(digits).ok()?.parse::<u64>().ok())
                .flatten();
            match parsed {
                Some(len) if digits.iter().all(u8::is_ascii_digit) => length = Some(len),
                _ => return Header::Invalid("an invalid Content-Length"),
            }
        }
    }
}

/// A token character (RFC 9110), the characters of a header name.
fn is_token(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b)
}

enum Scan {
    /// A well-formed `Content-Length` line is in the buffer.
    Found,
    /// None starts before this offset.
    CleanUpTo(usize),
}

/// Looks for a well-formed `Content-Length: N` line starting at or after `from`.
fn find_header_line(buf: &[u8], from: usize) -> Scan {
    let mut at = from;
    while let Some(i) = find_ci(&buf[at..], CONTENT_LENGTH) {
        let start = at + i;
        match header_line_at(buf, start) {
            Some(true) => return Scan::Found,
            Some(false) => at = start + 1,
            // Decided by bytes still to come: look here again then.
            None => return Scan::CleanUpTo(start),
        }
    }
    Scan::CleanUpTo(buf.len().saturating_sub(CONTENT_LENGTH.len() - 1).max(at))
}

/// Whether `buf[start..]`, which begins with the name, is `Content-Length:`, blanks, digits,
/// blanks and a line end; `None` while the buffer ends before that is decided.
fn header_line_at(buf: &[u8], start: usize) -> Option<bool> {
    let mut i = start + CONTENT_LENGTH.len();
    let mut digits = 0;
    let mut after_digits = false;
    loop {
        if i - start > MAX_HEADER {
            return Some(false);
        }
        let b = *buf.get(i)?;
        match b {
            b' ' | b'\t' if digits > 0 => after_digits = true,
            b' ' | b'\t' => {}
            b'0'..=b'9' if !after_digits => digits += 1,
            b'\n' => return Some(digits > 0),
            b'\r' => return Some(digits > 0 && *buf.get(i + 1)? == b'\n'),
            _ => return Some(false),
        }
        i += 1;
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
    let mut decoder = Decoder::new(max_frame);
    let mut chunk = vec![0u8; 64 * 1024];
    'read: loop {
        while let Some(decoded) = decoder.decode() {
            match decoded {
                Decoded::Message(body) => {
                    let mut frame = format!("Content-Length: {}\r\n\r\n", body.len()).into_bytes();
                    frame.extend_from_slice(&body);
                    if feed.write_all(&frame).await.is_err() {
                        break 'read;
                    }
                }
                Decoded::Error { code, message, id } => {
                    tracing::warn!("dropped a frame: {message}");
                    let _ = errors.send(error_frame(code, &message, id));
                }
            }
        }
        match input.read(&mut chunk).await {
            Ok(0) | Err(_) => break,
            Ok(n) => decoder.push(&chunk[..n]),
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
    use proptest::prelude::*;

    /// Feeds `input` to the reader task through a pipe that carries at most `pipe` bytes at a
    /// time; returns what reached the server and what was replied.
    async fn through_pipe(input: &[u8], max: usize, pipe: usize) -> (Vec<u8>, Vec<u8>) {
        let (mut client, server_side) = tokio::io::duplex(pipe);
        let input = input.to_vec();
        let sender = tokio::spawn(async move {
            client.write_all(&input).await.unwrap();
            client.shutdown().await.unwrap();
        });
        let (out_reader, out_writer) = tokio::io::duplex(1 << 20);
        let mut framing = frame(server_side, out_writer, max);
        let mut forwarded = Vec::new();
        framing
            .server_input
            .read_to_end(&mut forwarded)
            .await
            .unwrap();
        sender.await.unwrap();
        drop(framing.server_output);
        framing.writer.await.unwrap();
        let mut replies = Vec::new();
        let mut out_reader = out_reader;
        out_reader.read_to_end(&mut replies).await.unwrap();
        (forwarded, replies)
    }

    async fn through(input: &[u8], max: usize) -> (Vec<u8>, Vec<u8>) {
        through_pipe(input, max, 1 << 20).await
    }

    fn msg(body: &str) -> String {
        format!("Content-Length: {}\r\n\r\n{body}", body.len())
    }

    /// The bodies of a stream of frames as our own writer frames them.
    fn bodies(mut stream: &[u8]) -> Vec<Vec<u8>> {
        let mut out = Vec::new();
        while let Some(end) = find(stream, b"\r\n\r\n") {
            let len = content_length(&stream[..end]).unwrap();
            out.push(stream[end + 4..end + 4 + len].to_vec());
            stream = &stream[end + 4 + len..];
        }
        assert!(stream.is_empty(), "a partial frame was written");
        out
    }

    const PING: &str = r#"{"jsonrpc":"2.0","id":"sentinel","method":"cairn/tools"}"#;

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
        // The bad body and the garbage after it are one run: one parse error.
        assert_eq!(replies.matches("-32700").count(), 1, "{replies}");
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

    /// Each bad input of the desync class, then a valid frame: the valid frame is served, and
    /// the bad input cost at most one error reply.
    #[tokio::test]
    async fn every_bad_frame_is_followed_by_a_served_frame() {
        let cases: Vec<(&str, Vec<u8>, usize)> = vec![
            (
                "a header ended by LF LF",
                format!("Content-Length: {}\n\n{PING}", PING.len()).into_bytes(),
                0,
            ),
            ("stray bytes before a header", b"abc".to_vec(), 1),
            (
                "a header without Content-Length",
                b"Content-Type: application/vscode-jsonrpc\r\n\r\n".to_vec(),
                1,
            ),
            (
                "a length larger than the data",
                b"Content-Length: 5000\r\n\r\n{\"jsonrpc\"".to_vec(),
                1,
            ),
            (
                "a length over the cap",
                b"Content-Length: 999999999999\r\n\r\n{\"jsonrpc\"".to_vec(),
                1,
            ),
            ("garbage without a newline", vec![b'x'; 100_000], 1),
            ("a truncated header", b"Content-Len".to_vec(), 1),
            (
                "a header cut after its length",
                b"Content-Length: 4".to_vec(),
                1,
            ),
            (
                "a header without its empty line",
                b"Content-Length: 7\r\n".to_vec(),
                1,
            ),
            (
                "NUL bytes",
                b"\0\0\0Content-Length: 2\0\r\n\r\n\0".to_vec(),
                1,
            ),
            (
                "a huge header line",
                [b"X-Big: ".as_slice(), &[b'a'; 100_000], b"\r\n"].concat(),
                1,
            ),
            (
                "a length of many digits",
                [b"Content-Length: ".as_slice(), &[b'9'; 50_000]].concat(),
                1,
            ),
            (
                "a length smaller than the body",
                b"Content-Length: 5\r\n\r\n{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"x\"}"
                    .to_vec(),
                1,
            ),
        ];
        for (name, bad, errors) in cases {
            let mut input = bad.clone();
            input.extend_from_slice(msg(PING).as_bytes());
            let (forwarded, replies) = through(&input, MAX_FRAME).await;
            let served = bodies(&forwarded);
            assert_eq!(
                served.last().map(Vec::as_slice),
                Some(PING.as_bytes()),
                "{name}: the valid frame after it was not served"
            );
            assert_eq!(
                bodies(&replies).len(),
                errors,
                "{name}: {}",
                String::from_utf8_lossy(&replies)
            );
        }
    }

    #[test]
    fn scanning_garbage_discards_as_it_goes() {
        let mut decoder = Decoder::new(MAX_FRAME);
        let chunk = [b'x'; 64 * 1024];
        for _ in 0..64 {
            decoder.push(&chunk);
            while decoder.decode().is_some() {}
            assert!(decoder.buffered() <= MAX_HEADER, "{}", decoder.buffered());
        }
        decoder.push(msg(PING).as_bytes());
        assert_eq!(
            decoder.decode(),
            Some(Decoded::Message(PING.as_bytes().to_vec()))
        );
    }

    /// A valid frame in one of the spellings a client may use.
    fn valid_frame(body: &[u8], style: u8) -> Vec<u8> {
        let len = body.len();
        let header = match style % 5 {
            0 => format!("Content-Length: {len}\r\n\r\n"),
            1 => format!("Content-Length: {len}\n\n"),
            2 => format!("content-length:{len}  \r\n\r\n"),
            3 => format!(
                "Content-Type: application/vscode-jsonrpc; charset=utf-8\r\nContent-Length: {len}\r\n\r\n"
            ),
            _ => format!("Content-Length: {len}\r\nContent-Type: x\n\r\n"),
        };
        [header.as_bytes(), body].concat()
    }

    #[derive(Debug, Clone)]
    enum Mutation {
        Truncate(prop::sample::Index),
        Delete(prop::sample::Index),
        Insert(prop::sample::Index, u8),
        Replace(prop::sample::Index, u8),
        /// Announce a different length.
        Length(i64),
        /// Every `\r\n` becomes `\n` or `\r`.
        LineEnds(bool),
    }

    fn mutate(frame: Vec<u8>, body_len: usize, m: Mutation) -> Vec<u8> {
        let mut f = frame;
        match m {
            Mutation::Truncate(i) => f.truncate(i.index(f.len())),
            Mutation::Delete(i) => {
                f.remove(i.index(f.len()));
            }
            Mutation::Insert(i, b) => f.insert(i.index(f.len() + 1), b),
            Mutation::Replace(i, b) => {
                let i = i.index(f.len());
                f[i] = b;
            }
            Mutation::Length(delta) => {
                let text = String::from_utf8_lossy(&f).into_owned();
                let wrong = (body_len as i64 + delta).unsigned_abs().to_string();
                f = text.replacen(&body_len.to_string(), &wrong, 1).into_bytes();
            }
            Mutation::LineEnds(lf) => {
                let text = String::from_utf8_lossy(&f).into_owned();
                f = text
                    .replace("\r\n", if lf { "\n" } else { "\r" })
                    .into_bytes();
            }
        }
        f
    }

    fn mutation() -> impl Strategy<Value = Mutation> {
        prop_oneof![
            any::<prop::sample::Index>().prop_map(Mutation::Truncate),
            any::<prop::sample::Index>().prop_map(Mutation::Delete),
            (any::<prop::sample::Index>(), any::<u8>()).prop_map(|(i, b)| Mutation::Insert(i, b)),
            (any::<prop::sample::Index>(), any::<u8>()).prop_map(|(i, b)| Mutation::Replace(i, b)),
            prop_oneof![-40i64..40, Just(1 << 20), Just(1 << 40)].prop_map(Mutation::Length),
            any::<bool>().prop_map(Mutation::LineEnds),
        ]
    }

    /// One piece of what comes before the valid frame: random bytes, header-like bytes, whole
    /// frames (good and bad bodies), mutated frames, lying lengths, long lines.
    fn piece() -> impl Strategy<Value = Vec<u8>> {
        let alphabet: Vec<u8> = b"Content-Length: 0123456789\r\n\r\n{}\":ab \t\0\xff".to_vec();
        let body = prop_oneof![
            "[a-z]{0,6}".prop_map(|m| format!(r#"{{"jsonrpc":"2.0","id":3,"method":"{m}"}}"#)),
            "[ -~]{0,20}",
        ];
        prop_oneof![
            prop::collection::vec(any::<u8>(), 0..48),
            prop::collection::vec(prop::sample::select(alphabet), 0..64),
            (body.clone(), any::<u8>()).prop_map(|(b, s)| valid_frame(b.as_bytes(), s)),
            (body, any::<u8>(), mutation())
                .prop_map(|(b, s, m)| { mutate(valid_frame(b.as_bytes(), s), b.len(), m) }),
            (0u64..(1 << 21), prop::collection::vec(any::<u8>(), 0..32)).prop_map(|(len, b)| {
                [format!("Content-Length: {len}\r\n\r\n").as_bytes(), &b].concat()
            }),
            (0usize..20_000, prop::sample::select(b"a9 :\r".to_vec()))
                .prop_map(|(n, b)| vec![b; n]),
        ]
    }

    fn garbage() -> impl Strategy<Value = Vec<u8>> {
        prop::collection::vec(piece(), 0..6).prop_map(|pieces| pieces.concat())
    }

    /// No input stops a following valid frame from reaching the server, through the reader
    /// task, whatever sizes the input arrives in.
    #[test]
    fn fuzz_lsp_frames_a_valid_frame_after_garbage_is_served() {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let strategy = (
            garbage(),
            any::<u8>(),
            prop_oneof![Just(100usize), Just(4096), Just(MAX_FRAME)],
            prop_oneof![1usize..16, Just(64 * 1024)],
        );
        cairn_test_support::fuzz::check(
            "LSP frames: a valid frame after garbage is served",
            strategy,
            |(garbage, style, max, pipe)| {
                let input = [garbage, valid_frame(PING.as_bytes(), style)].concat();
                let (forwarded, replies) = rt.block_on(through_pipe(&input, max, pipe));
                let served = bodies(&forwarded);
                prop_assert_eq!(served.last().map(Vec::as_slice), Some(PING.as_bytes()));
                for body in &served {
                    prop_assert!(check_body(body).is_ok());
                }
                for reply in bodies(&replies) {
                    let reply: Value = serde_json::from_slice(&reply).unwrap();
                    prop_assert!(reply["error"]["code"].is_i64());
                }
                Ok(())
            },
        );
    }

    /// The same, driving the decoder in arbitrary pieces: the valid frame comes out, and what
    /// it holds between pieces never exceeds a header or the frame cap, whatever came before.
    #[test]
    fn fuzz_lsp_decoder_holds_bounded_memory() {
        let strategy = (
            garbage(),
            any::<u8>(),
            prop::collection::vec(1usize..4096, 1..8),
        );
        cairn_test_support::fuzz::check(
            "LSP frames: bounded memory",
            strategy,
            |(garbage, style, sizes)| {
                let max = 256;
                let input = [garbage, valid_frame(PING.as_bytes(), style)].concat();
                let mut decoder = Decoder::new(max);
                let mut last = None;
                let mut rest = input.as_slice();
                let mut sizes = sizes.iter().cycle();
                while !rest.is_empty() {
                    let n = sizes.next().copied().unwrap_or(1).min(rest.len());
                    decoder.push(&rest[..n]);
                    rest = &rest[n..];
                    while let Some(decoded) = decoder.decode() {
                        if let Decoded::Message(body) = decoded {
                            last = Some(body);
                        }
                    }
                    prop_assert!(decoder.buffered() <= MAX_HEADER.max(max));
                }
                prop_assert_eq!(last.as_deref(), Some(PING.as_bytes()));
                Ok(())
            },
        );
    }
}
