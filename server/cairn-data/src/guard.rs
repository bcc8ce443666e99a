//! Hostile-file guards every JSON, JSON Lines and delimited reader goes through: the bytes are
//! scanned as they stream past, before any parser sees them, and refused when JSON nests more
//! than [`MAX_JSON_DEPTH`] levels (serde_json, arrow's readers and the schema inference recurse
//! per level, so `[[[[...]]]]` a hundred thousand deep could exhaust the stack and abort the
//! process) or a line passes [`MAX_LINE_BYTES`] (the parsers buffer a whole record, so a
//! gigabyte-long line would be held in memory).
//!
//! [`Guard`] wraps the reader handed to a parser: a read that would pass a violating byte fails
//! instead, so the parser only ever sees a prefix within the limits, and the violation is kept
//! for the caller to report as its typed error (the parser's own message is discarded).

use std::io::Read;
use std::sync::{Arc, Mutex};

use crate::DataError;

/// The deepest JSON nesting read (an array of objects is 2 levels).
pub(crate) const MAX_JSON_DEPTH: usize = 64;
/// The longest line of a delimited or JSON Lines file, not counting its line break.
pub(crate) const MAX_LINE_BYTES: usize = 16 * 1024 * 1024;

/// What a guard refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Violation {
    /// A line (0-based, counted from where the guard started) nests JSON too deep.
    TooDeep { line: u64 },
    /// A line (0-based, as above) that starts at byte `start` of the stream is too long.
    LineTooLong { line: u64, start: u64 },
}

/// Which limits a guard applies.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Checks {
    /// Scan for JSON nesting; with `per_line`, each line is its own document (JSON Lines).
    pub json: Option<JsonMode>,
    /// Refuse lines longer than [`MAX_LINE_BYTES`].
    pub line_cap: bool,
}

/// How JSON is laid out in the stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum JsonMode {
    /// One document (a JSON array): nesting carries across lines.
    Document,
    /// One document a line (JSON Lines): a line break starts over, so one malformed line does
    /// not make the next look deep.
    PerLine,
}

/// The streaming scanner: JSON nesting (aware of strings and escapes) and line lengths.
#[derive(Debug, Clone)]
pub(crate) struct Scanner {
    checks: Checks,
    depth: usize,
    in_string: bool,
    escaped: bool,
    /// Line breaks seen.
    line: u64,
    /// Bytes of the current line so far.
    line_len: usize,
    /// Bytes scanned.
    pos: u64,
}

impl Scanner {
    pub(crate) fn new(checks: Checks) -> Scanner {
        Scanner {
            checks,
            depth: 0,
            in_string: false,
            escaped: false,
            line: 0,
            line_len: 0,
            pos: 0,
        }
    }

    /// Scans `bytes`, the next of the stream. On a violation, returns it and how many of
    /// `bytes` are safe to pass on (those before the violating byte).
    pub(crate) fn scan(&mut self, bytes: &[u8]) -> Result<(), (Violation, usize)> {
        if self.checks.json.is_none() {
            return self.scan_lines(bytes);
        }
        for (i, &b) in bytes.iter().enumerate() {
            if b == b'\n' {
                self.line += 1;
                self.line_len = 0;
                if self.checks.json == Some(JsonMode::PerLine) {
                    self.depth = 0;
                    self.in_string = false;
                    self.escaped = false;
                }
            } else {
                self.line_len += 1;
                if self.checks.line_cap && self.line_len > MAX_LINE_BYTES {
                    return Err((self.too_long(i), i));
                }
            }
            if self.in_string {
                if self.escaped {
                    self.escaped = false;
                } else if b == b'\\' {
                    self.escaped = true;
                } else if b == b'"' {
                    self.in_string = false;
                }
            } else {
                match b {
                    b'"' => self.in_string = true,
                    b'[' | b'{' => {
                        self.depth += 1;
                        if self.depth > MAX_JSON_DEPTH {
                            return Err((Violation::TooDeep { line: self.line }, i));
                        }
                    }
                    b']' | b'}' => self.depth = self.depth.saturating_sub(1),
                    _ => {}
                }
            }
        }
        self.pos += bytes.len() as u64;
        Ok(())
    }

    /// Line lengths only (delimited files): line breaks found a chunk at a time.
    fn scan_lines(&mut self, bytes: &[u8]) -> Result<(), (Violation, usize)> {
        let mut rest = bytes;
        let mut done = 0;
        loop {
            let (len, brk) = match rest.iter().position(|b| *b == b'\n') {
                Some(i) => (i, true),
                None => (rest.len(), false),
            };
            if self.checks.line_cap && self.line_len + len > MAX_LINE_BYTES {
                let i = done + (MAX_LINE_BYTES - self.line_len);
                return Err((self.too_long(i), i));
            }
            if !brk {
                self.line_len += len;
                break;
            }
            self.line += 1;
            self.line_len = 0;
            done += len + 1;
            rest = &rest[len + 1..];
        }
        self.pos += bytes.len() as u64;
        Ok(())
    }

    /// The current line is too long; `i` is the offending byte's index in the chunk scanned.
    fn too_long(&self, i: usize) -> Violation {
        Violation::LineTooLong {
            line: self.line,
            start: (self.pos + i as u64).saturating_sub(MAX_LINE_BYTES as u64),
        }
    }
}

/// The slot a guard leaves its violation in, read by the caller once the parser failed.
#[derive(Debug, Clone, Default)]
pub(crate) struct Tripped(Arc<Mutex<Option<Violation>>>);

impl Tripped {
    pub(crate) fn get(&self) -> Option<Violation> {
        self.0.lock().ok().and_then(|v| *v)
    }

    fn set(&self, v: Violation) {
        if let Ok(mut slot) = self.0.lock() {
            slot.get_or_insert(v);
        }
    }
}

/// A reader that passes bytes on only while they are within the limits.
pub(crate) struct Guard<R> {
    inner: R,
    scanner: Scanner,
    tripped: Tripped,
    /// A violation was seen: every later read fails too.
    failed: bool,
}

impl<R: Read> Guard<R> {
    pub(crate) fn new(inner: R, checks: Checks) -> (Guard<R>, Tripped) {
        let tripped = Tripped::default();
        (
            Guard {
                inner,
                scanner: Scanner::new(checks),
                tripped: tripped.clone(),
                failed: false,
            },
            tripped,
        )
    }
}

impl<R: Read> Read for Guard<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if self.failed {
            return Err(refused());
        }
        let n = self.inner.read(buf)?;
        match self.scanner.scan(&buf[..n]) {
            Ok(()) => Ok(n),
            Err((v, _)) => {
                // Nothing of this chunk is passed on: the parser stops at a prefix that is
                // within the limits.
                self.failed = true;
                self.tripped.set(v);
                Err(refused())
            }
        }
    }
}

fn refused() -> std::io::Error {
    std::io::Error::other("refused by the data tools' limits")
}

/// Checks a whole JSON document already in memory (a JSON array file).
pub(crate) fn check_json(bytes: &[u8], display: &str) -> Result<(), DataError> {
    let mut s = Scanner::new(Checks {
        json: Some(JsonMode::Document),
        line_cap: false,
    });
    s.scan(bytes).map_err(|(v, _)| refusal(display, v))
}

/// The typed error for violation `v`, its line numbered from 1 (a guard that started mid-file
/// numbers its lines from there; the caller counts those before, see [`line_at`]).
pub(crate) fn refusal(display: &str, v: Violation) -> DataError {
    match v {
        Violation::TooDeep { line } => DataError::TooDeep {
            path: display.to_owned(),
            line: line + 1,
            limit: MAX_JSON_DEPTH,
        },
        Violation::LineTooLong { line, .. } => DataError::LineTooLong {
            path: display.to_owned(),
            line: line + 1,
            limit_mib: MAX_LINE_BYTES / (1024 * 1024),
        },
    }
}

/// The 1-based number of the line that starts at byte `offset` of `file` (for a guard that
/// started mid-file, as a split partition's does). Reads in chunks: bounded memory.
pub(crate) fn line_at(mut file: impl Read, offset: u64) -> std::io::Result<u64> {
    let mut buf = vec![0u8; 1 << 20];
    let mut left = offset;
    let mut line = 1;
    while left > 0 {
        let want = usize::try_from(left.min(buf.len() as u64)).unwrap_or(buf.len());
        let n = file.read(&mut buf[..want])?;
        if n == 0 {
            break;
        }
        line += buf[..n].iter().filter(|b| **b == b'\n').count() as u64;
        left -= n as u64;
    }
    Ok(line)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn json(mode: JsonMode) -> Scanner {
        Scanner::new(Checks {
            json: Some(mode),
            line_cap: false,
        })
    }

    #[test]
    fn nesting_is_counted_outside_strings_only() {
        let ok = format!("{}{}", "[".repeat(64), "]".repeat(64));
        assert!(json(JsonMode::Document).scan(ok.as_bytes()).is_ok());
        let deep = "[".repeat(65);
        assert_eq!(
            json(JsonMode::Document).scan(deep.as_bytes()),
            Err((Violation::TooDeep { line: 0 }, 64))
        );
        // Brackets in strings, and an escaped quote that does not end the string.
        let text = format!("[\"{}\\\"{}\"]", "[".repeat(100), "{".repeat(100));
        assert!(json(JsonMode::Document).scan(text.as_bytes()).is_ok());
        // Split across chunks, inside an escape.
        let mut s = json(JsonMode::Document);
        s.scan(b"[\"\\").unwrap();
        s.scan(b"\"[[[[\"]").unwrap();
        assert_eq!(s.depth, 0);
        // JSON Lines: each line starts over; a document nests across lines.
        let lines = "[[[[[[[[[[\n".repeat(10);
        assert!(json(JsonMode::PerLine).scan(lines.as_bytes()).is_ok());
        assert!(matches!(
            json(JsonMode::Document).scan(lines.as_bytes()),
            Err((Violation::TooDeep { line: 6 }, _))
        ));
    }

    #[test]
    fn long_lines_are_refused_at_the_cap_in_any_chunking() {
        let checks = Checks {
            json: None,
            line_cap: true,
        };
        let mut s = Scanner::new(checks);
        s.scan(b"a,b\n").unwrap();
        let chunk = vec![b'x'; 1 << 20];
        for _ in 0..16 {
            s.scan(&chunk).unwrap();
        }
        assert_eq!(
            s.scan(b"y"),
            Err((Violation::LineTooLong { line: 1, start: 4 }, 0))
        );
        let mut s = Scanner::new(checks);
        let mut big = vec![b'x'; MAX_LINE_BYTES];
        big.push(b'\n');
        s.scan(&big).unwrap();
        assert!(s.scan(b"next\n").is_ok());
        assert_eq!(line_at(&b"a\nb\nc"[..], 4).unwrap(), 3);
    }
}
