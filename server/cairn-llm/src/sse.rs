//! A small Server-Sent Events parser, fed with whatever byte chunks the network delivers.
//!
//! Handles `\n`, `\r\n` and `\r` line ends, multi-line `data`, comments, and events or
//! lines split across chunks. Lines are split on bytes before UTF-8 decoding, so a
//! multi-byte character split across chunks is never mangled.

/// Longest line accepted; a provider sending more without a newline is broken, and
/// buffering forever would exhaust memory.
const MAX_LINE: usize = 8 * 1024 * 1024;

/// A stream the parser refuses to buffer further: a line longer than [`MAX_LINE`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("an event-stream line exceeds {MAX_LINE} bytes")]
pub(crate) struct LineTooLong;

/// One dispatched event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SseEvent {
    /// The `event:` field, when given.
    pub event: Option<String>,
    /// The `data:` lines joined with `\n`.
    pub data: String,
}

#[derive(Debug, Default)]
pub(crate) struct SseParser {
    buf: Vec<u8>,
    event: Option<String>,
    data: Vec<String>,
    /// The previous chunk ended in `\r`; a `\n` starting the next one belongs to it.
    skip_lf: bool,
}

impl SseParser {
    /// Feed bytes; returns the events completed by them.
    pub fn feed(&mut self, bytes: &[u8]) -> Result<Vec<SseEvent>, LineTooLong> {
        let mut out = Vec::new();
        let mut bytes = bytes;
        if self.skip_lf {
            self.skip_lf = false;
            if let Some(rest) = bytes.strip_prefix(b"\n") {
                bytes = rest;
            }
        }
        let mut start = 0;
        let mut i = 0;
        while i < bytes.len() {
            match bytes[i] {
                b'\n' | b'\r' => {
                    self.buf.extend_from_slice(&bytes[start..i]);
                    let line = std::mem::take(&mut self.buf);
                    self.line(&String::from_utf8_lossy(&line), &mut out);
                    if bytes[i] == b'\r' {
                        if i + 1 == bytes.len() {
                            self.skip_lf = true;
                        } else if bytes[i + 1] == b'\n' {
                            i += 1;
                        }
                    }
                    start = i + 1;
                }
                _ => {}
            }
            i += 1;
        }
        self.buf.extend_from_slice(&bytes[start..]);
        if self.buf.len() > MAX_LINE {
            return Err(LineTooLong);
        }
        Ok(out)
    }

    /// The body ended: dispatch what is pending. Lenient on purpose: some servers omit the
    /// blank line after the last event, and dropping `data: [DONE]` would look like a cut.
    pub fn finish(&mut self) -> Vec<SseEvent> {
        let mut out = Vec::new();
        if !self.buf.is_empty() {
            let line = std::mem::take(&mut self.buf);
            self.line(&String::from_utf8_lossy(&line), &mut out);
        }
        self.line("", &mut out);
        out
    }

    fn line(&mut self, line: &str, out: &mut Vec<SseEvent>) {
        if line.is_empty() {
            if !self.data.is_empty() {
                let data = std::mem::take(&mut self.data).join("\n");
                out.push(SseEvent {
                    event: self.event.take(),
                    data,
                });
            }
            self.event = None;
            return;
        }
        if line.starts_with(':') {
            return;
        }
        let (field, value) = match line.split_once(':') {
            Some((field, value)) => (field, value.strip_prefix(' ').unwrap_or(value)),
            None => (line, ""),
        };
        match field {
            "data" => self.data.push(value.to_owned()),
            "event" => self.event = Some(value.to_owned()),
            // `id` and `retry` matter for browser reconnection only.
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    /// Feeds `chunks` in order and checks the `(event, data)` pairs dispatched in total.
    #[track_caller]
    fn check(chunks: &[&str], expected: &[(Option<&str>, &str)]) {
        let mut parser = SseParser::default();
        let mut got = Vec::new();
        for chunk in chunks {
            got.extend(parser.feed(chunk.as_bytes()).unwrap());
        }
        got.extend(parser.finish());
        let got: Vec<(Option<&str>, &str)> = got
            .iter()
            .map(|e| (e.event.as_deref(), e.data.as_str()))
            .collect();
        assert_eq!(got, expected);
    }

    #[test]
    fn single_event() {
        check(&["data: {\"a\":1}\n\n"], &[(None, "{\"a\":1}")]);
    }

    #[test]
    fn crlf_and_cr_line_ends() {
        check(
            &["data: a\r\n\r\ndata: b\r\rdata: c\n\n"],
            &[(None, "a"), (None, "b"), (None, "c")],
        );
    }

    #[test]
    fn crlf_split_across_chunks() {
        check(
            &["data: a\r", "\n\r", "\ndata: b\r\n\r\n"],
            &[(None, "a"), (None, "b")],
        );
    }

    #[test]
    fn multi_line_data_and_event_names() {
        check(
            &["event: x\ndata: 1\ndata:2\ndata\n\n"],
            &[(Some("x"), "1\n2\n")],
        );
    }

    #[test]
    fn comments_and_unknown_fields_are_ignored() {
        check(
            &[": keep-alive\nid: 3\nretry: 10\ndata: a\n\n: bye\n\n"],
            &[(None, "a")],
        );
    }

    #[test]
    fn events_split_at_every_byte() {
        let text = "event: message_start\ndata: {\"é\": \"ü\"}\n\ndata: [DONE]\n\n";
        let mut parser = SseParser::default();
        let mut got = Vec::new();
        for byte in text.as_bytes() {
            got.extend(parser.feed(std::slice::from_ref(byte)).unwrap());
        }
        assert_eq!(got.len(), 2);
        assert_eq!(got[0].event.as_deref(), Some("message_start"));
        assert_eq!(got[0].data, "{\"é\": \"ü\"}");
        assert_eq!(got[1].data, "[DONE]");
    }

    #[test]
    fn last_event_without_blank_line_is_dispatched_at_eof() {
        check(
            &["data: a\n\ndata: [DONE]"],
            &[(None, "a"), (None, "[DONE]")],
        );
    }

    #[test]
    fn blank_lines_without_data_dispatch_nothing() {
        check(&["\n\n\nevent: ping\n\n"], &[]);
    }
}
