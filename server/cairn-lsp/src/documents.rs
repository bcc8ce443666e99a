//! Open documents as ropes, and LSP positions in the negotiated encoding.
//!
//! Positions out of range are clamped as the LSP specification says: a character past the end
//! of its line means the end of the line, a line past the end of the document means its end, and
//! a position inside a UTF-16 surrogate pair falls back to the start of that character.

use ropey::Rope;
use tower_lsp_server::ls_types::{Position, Range, TextDocumentContentChangeEvent};

/// How `Position.character` counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Encoding {
    Utf8,
    #[default]
    Utf16,
}

impl Encoding {
    fn units(self, c: char) -> usize {
        match self {
            Encoding::Utf8 => c.len_utf8(),
            Encoding::Utf16 => c.len_utf16(),
        }
    }
}

/// One open document.
#[derive(Debug, Clone)]
pub struct Document {
    pub rope: Rope,
    pub version: i32,
}

impl Document {
    pub fn new(text: &str, version: i32) -> Self {
        Self {
            rope: Rope::from_str(text),
            version,
        }
    }

    pub fn text(&self) -> String {
        self.rope.to_string()
    }

    /// Byte offset of a position, clamped into the document.
    pub fn offset(&self, pos: Position, enc: Encoding) -> usize {
        let line = pos.line as usize;
        if line >= self.rope.len_lines() {
            return self.rope.len_bytes();
        }
        let start = self.rope.line_to_byte(line);
        let mut consumed_units = 0usize;
        let mut consumed_bytes = 0usize;
        for c in self.rope.line(line).chars() {
            if c == '\n' || c == '\r' {
                break;
            }
            let units = enc.units(c);
            if consumed_units + units > pos.character as usize {
                break;
            }
            consumed_units += units;
            consumed_bytes += c.len_utf8();
        }
        start + consumed_bytes
    }

    /// Position of a byte offset (rounded down to a character boundary).
    pub fn position(&self, byte: usize, enc: Encoding) -> Position {
        let byte = byte.min(self.rope.len_bytes());
        let char_idx = self.rope.byte_to_char(byte);
        let line = self.rope.char_to_line(char_idx);
        let line_start = self.rope.line_to_char(line);
        let character: usize = self
            .rope
            .slice(line_start..char_idx)
            .chars()
            .map(|c| enc.units(c))
            .sum();
        Position {
            line: line as u32,
            character: character as u32,
        }
    }

    /// The text of a range (clamped).
    pub fn slice(&self, range: Range, enc: Encoding) -> String {
        let (start, end) = self.byte_range(range, enc);
        self.rope.byte_slice(start..end).to_string()
    }

    fn byte_range(&self, range: Range, enc: Encoding) -> (usize, usize) {
        let a = self.offset(range.start, enc);
        let b = self.offset(range.end, enc);
        (a.min(b), a.max(b))
    }

    /// Applies one change of `textDocument/didChange` (a range, or the whole text).
    pub fn apply_change(&mut self, change: &TextDocumentContentChangeEvent, enc: Encoding) {
        match change.range {
            None => self.rope = Rope::from_str(&change.text),
            Some(range) => {
                let (start, end) = self.byte_range(range, enc);
                let (cs, ce) = (self.rope.byte_to_char(start), self.rope.byte_to_char(end));
                self.rope.remove(cs..ce);
                self.rope.insert(cs, &change.text);
            }
        }
    }

    /// The position of the end of the document.
    pub fn end(&self, enc: Encoding) -> Position {
        self.position(self.rope.len_bytes(), enc)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pos(line: u32, character: u32) -> Position {
        Position { line, character }
    }

    #[track_caller]
    fn check_offset(text: &str, p: Position, enc: Encoding, expected: usize) {
        assert_eq!(
            Document::new(text, 0).offset(p, enc),
            expected,
            "{text:?} at {p:?} in {enc:?}"
        );
    }

    #[test]
    fn offsets_and_clamping() {
        use Encoding::*;
        check_offset("abc\ndef", pos(1, 1), Utf16, 5);
        check_offset("abc\ndef", pos(0, 99), Utf16, 3); // past the line: its end, not the next line
        check_offset("abc\r\ndef", pos(0, 99), Utf16, 3);
        check_offset("abc\rdef", pos(1, 0), Utf16, 4); // a lone CR ends a line too
        check_offset("abc\ndef", pos(9, 0), Utf16, 7); // past the end: the end
        check_offset("a😀b", pos(0, 3), Utf16, 5); // the emoji is two UTF-16 units
        check_offset("a😀b", pos(0, 2), Utf16, 1); // half a surrogate pair: start of the character
        check_offset("a😀b", pos(0, 5), Utf8, 5);
        check_offset("a😀b", pos(0, 3), Utf8, 1); // inside a UTF-8 sequence: start of the character
        check_offset("é\n", pos(0, 1), Utf16, 2);
        check_offset("", pos(0, 5), Utf16, 0);
        check_offset("x\u{2028}y", pos(0, 2), Utf16, 4); // U+2028 is not an LSP line break
    }

    #[test]
    fn positions_round_trip() {
        let doc = Document::new("a😀b\r\nsecond\n", 0);
        for (byte, p16, p8) in [
            (0, pos(0, 0), pos(0, 0)),
            (5, pos(0, 3), pos(0, 5)),
            (8, pos(1, 0), pos(1, 0)),
            (15, pos(2, 0), pos(2, 0)),
        ] {
            assert_eq!(doc.position(byte, Encoding::Utf16), p16);
            assert_eq!(doc.position(byte, Encoding::Utf8), p8);
            assert_eq!(doc.offset(p16, Encoding::Utf16), byte);
        }
        assert_eq!(doc.end(Encoding::Utf16), pos(2, 0));
    }

    #[test]
    fn incremental_changes() {
        let mut doc = Document::new("hello world\nbye", 1);
        let change = |range: Option<Range>, text: &str| TextDocumentContentChangeEvent {
            range,
            range_length: None,
            text: text.into(),
        };
        doc.apply_change(
            &change(Some(Range::new(pos(0, 6), pos(0, 11))), "cairn"),
            Encoding::Utf16,
        );
        assert_eq!(doc.text(), "hello cairn\nbye");
        doc.apply_change(
            &change(Some(Range::new(pos(1, 3), pos(0, 11))), ""),
            Encoding::Utf16,
        ); // reversed range
        assert_eq!(doc.text(), "hello cairn");
        doc.apply_change(
            &change(Some(Range::new(pos(7, 0), pos(9, 9))), "!"),
            Encoding::Utf16,
        ); // beyond EOF appends
        assert_eq!(doc.text(), "hello cairn!");
        doc.apply_change(&change(None, "new"), Encoding::Utf16);
        assert_eq!(doc.text(), "new");
    }
}
