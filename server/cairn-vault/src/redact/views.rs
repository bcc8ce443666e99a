//! Canonical views of a text, in which a secret is searched whatever encoding it came back in.
//!
//! A view is the text with one kind of escape decoded (none; backslash escapes as in JSON,
//! JavaScript and Python string literals; percent-encoding; HTML character references), every
//! line break (`\r`, `\n`, so also `\r\n` and MIME's 76-column wrapping) removed and ASCII
//! letters lower-cased. Each byte of a view remembers the byte range of the text it came from,
//! so a match in a view is redacted as exactly the span of the original that produced it.
//!
//! One escape kind per view rather than all at once: a secret may itself contain what another
//! scheme would decode (`%41` in a value echoed JSON-escaped), and decoding everything together
//! would change it; each scheme alone leaves the others' sequences as they are.

use std::collections::HashMap;
use std::ops::Range;
use std::sync::LazyLock;

/// Which escapes a view decodes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Decode {
    /// Nothing: the text as it is (still without line breaks, lower-cased).
    Nothing,
    /// `\"`, `\\`, `\/`, `\'`, `\b`, `\f`, `\n`, `\r`, `\t`, `\uXXXX` (surrogate pairs joined)
    /// and `\xHH`.
    Backslash,
    /// `%HH`, either case (a form's `+` for space is a form of the value, not decoded here).
    Percent,
    /// `&name;` (the ASCII punctuation and Latin-1 names and a few common others), `&#NNN;`
    /// and `&#xHH;` (the `;` optional after a number).
    Html,
}

impl Decode {
    pub(super) const ALL: [Decode; 4] = [
        Decode::Nothing,
        Decode::Backslash,
        Decode::Percent,
        Decode::Html,
    ];

    /// Whether `text` has anything this view would decode (when not, the plain view is the
    /// same and this one is skipped).
    pub(super) fn applies(self, text: &[u8]) -> bool {
        let needle = match self {
            Decode::Nothing => return true,
            Decode::Backslash => b'\\',
            Decode::Percent => b'%',
            Decode::Html => b'&',
        };
        text.contains(&needle)
    }
}

/// A view of a text: its bytes and, per byte, the range of the text it came from.
pub(super) struct View {
    pub bytes: Vec<u8>,
    src: Vec<[u32; 2]>,
}

impl View {
    /// The view of `text` that decodes `decode`. `None` for a text too long to map (4 GiB).
    pub(super) fn new(text: &[u8], decode: Decode) -> Option<View> {
        u32::try_from(text.len()).ok()?;
        let mut view = View {
            bytes: Vec::with_capacity(text.len()),
            src: Vec::with_capacity(text.len()),
        };
        let mut buf = [0u8; 4];
        let mut i = 0;
        while i < text.len() {
            let decoded = match (decode, text[i]) {
                (Decode::Backslash, b'\\') => backslash(text, i, &mut buf),
                (Decode::Percent, b'%') => percent(text, i, &mut buf),
                (Decode::Html, b'&') => entity(text, i, &mut buf),
                _ => None,
            };
            match decoded {
                Some((len, n)) => {
                    for &b in &buf[..n] {
                        view.push(b, i, i + len);
                    }
                    i += len;
                }
                None => {
                    view.push(text[i], i, i + 1);
                    i += 1;
                }
            }
        }
        fold_latin1(&mut view.bytes);
        Some(view)
    }

    fn push(&mut self, byte: u8, start: usize, end: usize) {
        if byte == b'\n' || byte == b'\r' {
            return;
        }
        self.bytes.push(byte.to_ascii_lowercase());
        // Both fit: the text's length was checked against u32 in `new`.
        self.src.push([start as u32, end as u32]);
    }

    /// The range of the text that view bytes `r` (non-empty) came from.
    pub(super) fn source(&self, r: Range<usize>) -> Range<usize> {
        self.src[r.start][0] as usize..self.src[r.end - 1][1] as usize
    }
}

/// `bytes` case-folded as the views are: ASCII and Latin-1 letters lower-cased, in place (the
/// length never changes, so positions keep their meaning).
pub(super) fn fold(bytes: &mut [u8]) {
    bytes.make_ascii_lowercase();
    fold_latin1(bytes);
}

/// `À`..`Þ` (UTF-8 `C3 80`..`C3 9E`, but `×`) to `à`..`þ` (`C3 A0`..`C3 BE`).
fn fold_latin1(bytes: &mut [u8]) {
    for i in 1..bytes.len() {
        if bytes[i - 1] == 0xc3 && (0x80..=0x9e).contains(&bytes[i]) && bytes[i] != 0x97 {
            bytes[i] += 0x20;
        }
    }
}

/// `\…` at `i`: (bytes consumed, bytes decoded into `buf`).
fn backslash(t: &[u8], i: usize, buf: &mut [u8; 4]) -> Option<(usize, usize)> {
    let c = *t.get(i + 1)?;
    let simple = match c {
        b'"' | b'\\' | b'/' | b'\'' => Some(c),
        b'b' => Some(0x08),
        b'f' => Some(0x0c),
        b'n' => Some(b'\n'),
        b'r' => Some(b'\r'),
        b't' => Some(b'\t'),
        _ => None,
    };
    if let Some(b) = simple {
        buf[0] = b;
        return Some((2, 1));
    }
    match c {
        b'x' => {
            buf[0] = hex_byte(t.get(i + 2..i + 4)?)?;
            Some((4, 1))
        }
        b'u' => {
            let hi = hex_u32(t.get(i + 2..i + 6)?)?;
            let (ch, len) = if (0xd800..0xdc00).contains(&hi) {
                // A high surrogate counts only with its low half right after it.
                if t.get(i + 6..i + 8) != Some(b"\\u") {
                    return None;
                }
                let lo = hex_u32(t.get(i + 8..i + 12)?)?;
                if !(0xdc00..0xe000).contains(&lo) {
                    return None;
                }
                (0x10000 + ((hi - 0xd800) << 10) + (lo - 0xdc00), 12)
            } else {
                (hi, 6)
            };
            Some((len, char::from_u32(ch)?.encode_utf8(buf).len()))
        }
        _ => None,
    }
}

/// `%HH` at `i`.
fn percent(t: &[u8], i: usize, buf: &mut [u8; 4]) -> Option<(usize, usize)> {
    buf[0] = hex_byte(t.get(i + 1..i + 3)?)?;
    Some((3, 1))
}

/// The longest character reference accepted (`&#x0000000041;`, or a long name).
const MAX_ENTITY: usize = 32;

/// `&…;` at `i`.
fn entity(t: &[u8], i: usize, buf: &mut [u8; 4]) -> Option<(usize, usize)> {
    let rest = &t[i + 1..t.len().min(i + MAX_ENTITY)];
    let (ch, len) = if rest.first() == Some(&b'#') {
        let (hex, digits_at) = match rest.get(1) {
            Some(b'x' | b'X') => (true, 2),
            _ => (false, 1),
        };
        let digits = rest[digits_at..]
            .iter()
            .take_while(|b| {
                if hex {
                    b.is_ascii_hexdigit()
                } else {
                    b.is_ascii_digit()
                }
            })
            .count();
        if digits == 0 || digits > 10 {
            return None;
        }
        let text = std::str::from_utf8(&rest[digits_at..digits_at + digits]).ok()?;
        let n = u32::from_str_radix(text, if hex { 16 } else { 10 }).ok()?;
        let end = digits_at + digits;
        let len = if rest.get(end) == Some(&b';') {
            end + 1
        } else {
            end
        };
        (char::from_u32(n)?, 1 + len)
    } else {
        let name_len = rest
            .iter()
            .take_while(|b| b.is_ascii_alphanumeric())
            .count();
        if rest.get(name_len) != Some(&b';') {
            return None;
        }
        let ch = *ENTITIES.get(&rest[..name_len])?;
        (ch, 1 + name_len + 1)
    };
    Some((len, ch.encode_utf8(buf).len()))
}

fn hex_digit(b: u8) -> Option<u8> {
    match b {
        b'0'..=b'9' => Some(b - b'0'),
        b'a'..=b'f' => Some(b - b'a' + 10),
        b'A'..=b'F' => Some(b - b'A' + 10),
        _ => None,
    }
}

fn hex_byte(two: &[u8]) -> Option<u8> {
    Some(hex_digit(two[0])? << 4 | hex_digit(two[1])?)
}

fn hex_u32(four: &[u8]) -> Option<u32> {
    four.iter()
        .try_fold(0u32, |acc, &b| Some(acc << 4 | u32::from(hex_digit(b)?)))
}

/// The Latin-1 names, U+00A0 to U+00FF in order.
const LATIN1: [&str; 96] = [
    "nbsp", "iexcl", "cent", "pound", "curren", "yen", "brvbar", "sect", "uml", "copy", "ordf",
    "laquo", "not", "shy", "reg", "macr", "deg", "plusmn", "sup2", "sup3", "acute", "micro",
    "para", "middot", "cedil", "sup1", "ordm", "raquo", "frac14", "frac12", "frac34", "iquest",
    "Agrave", "Aacute", "Acirc", "Atilde", "Auml", "Aring", "AElig", "Ccedil", "Egrave", "Eacute",
    "Ecirc", "Euml", "Igrave", "Iacute", "Icirc", "Iuml", "ETH", "Ntilde", "Ograve", "Oacute",
    "Ocirc", "Otilde", "Ouml", "times", "Oslash", "Ugrave", "Uacute", "Ucirc", "Uuml", "Yacute",
    "THORN", "szlig", "agrave", "aacute", "acirc", "atilde", "auml", "aring", "aelig", "ccedil",
    "egrave", "eacute", "ecirc", "euml", "igrave", "iacute", "icirc", "iuml", "eth", "ntilde",
    "ograve", "oacute", "ocirc", "otilde", "ouml", "divide", "oslash", "ugrave", "uacute", "ucirc",
    "uuml", "yacute", "thorn", "yuml",
];

/// The HTML5 names of ASCII characters (what an encoder that names every punctuation mark
/// uses), and a few common others.
const OTHERS: &[(&str, char)] = &[
    ("Tab", '\t'),
    ("NewLine", '\n'),
    ("excl", '!'),
    ("quot", '"'),
    ("QUOT", '"'),
    ("num", '#'),
    ("dollar", '$'),
    ("percnt", '%'),
    ("amp", '&'),
    ("AMP", '&'),
    ("apos", '\''),
    ("lpar", '('),
    ("rpar", ')'),
    ("ast", '*'),
    ("midast", '*'),
    ("plus", '+'),
    ("comma", ','),
    ("period", '.'),
    ("sol", '/'),
    ("colon", ':'),
    ("semi", ';'),
    ("lt", '<'),
    ("LT", '<'),
    ("equals", '='),
    ("gt", '>'),
    ("GT", '>'),
    ("quest", '?'),
    ("commat", '@'),
    ("lsqb", '['),
    ("lbrack", '['),
    ("bsol", '\\'),
    ("rsqb", ']'),
    ("rbrack", ']'),
    ("Hat", '^'),
    ("lowbar", '_'),
    ("UnderBar", '_'),
    ("grave", '`'),
    ("DiacriticalGrave", '`'),
    ("lcub", '{'),
    ("lbrace", '{'),
    ("verbar", '|'),
    ("vert", '|'),
    ("VerticalLine", '|'),
    ("rcub", '}'),
    ("rbrace", '}'),
    ("tilde", '\u{2dc}'),
    ("euro", '€'),
    ("ndash", '–'),
    ("mdash", '—'),
    ("lsquo", '‘'),
    ("rsquo", '’'),
    ("ldquo", '“'),
    ("rdquo", '”'),
    ("hellip", '…'),
];

static ENTITIES: LazyLock<HashMap<&'static [u8], char>> = LazyLock::new(|| {
    let latin1 = LATIN1
        .iter()
        .zip('\u{a0}'..='\u{ff}')
        .map(|(name, ch)| (name.as_bytes(), ch));
    let others = OTHERS.iter().map(|(name, ch)| (name.as_bytes(), *ch));
    latin1.chain(others).collect()
});

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    fn check(decode: Decode, text: &str, want: &str) {
        let view = View::new(text.as_bytes(), decode).unwrap();
        assert_eq!(
            String::from_utf8_lossy(&view.bytes),
            want,
            "{decode:?} {text:?}"
        );
        assert_eq!(view.bytes.len(), view.src.len());
    }

    #[test]
    fn views_decode_one_scheme_fold_case_and_drop_line_breaks() {
        check(Decode::Nothing, "Ab\r\nC%41\\u0041", "abc%41\\u0041");
        check(
            Decode::Backslash,
            "a\\\"b\\/c\\u0041\\x42\\n\\\\",
            "a\"b/cab\\",
        );
        check(
            Decode::Backslash,
            "\\ud83d\\ude00 \\ud83d x",
            "😀 \\ud83d x",
        );
        check(Decode::Backslash, "\\q \\u12 \\x4", "\\q \\u12 \\x4");
        check(Decode::Percent, "%7e%7E%2f%zz%4", "~~/%zz%4");
        check(
            Decode::Html,
            "&lt;&#60;&#x3C;&#X3c;&#60x&eacute;&bogus;&amp",
            "<<<<<xé&bogus;&amp",
        );
        // Line breaks that an escape produced go too.
        check(Decode::Percent, "a%0Ab%0d%0Ac", "abc");
        check(Decode::Nothing, "ÉÀÞ×Ÿ", "éàþ×Ÿ");
    }

    #[test]
    fn a_view_maps_back_to_the_source() {
        let text = "x&quot;Y\r\nz";
        let view = View::new(text.as_bytes(), Decode::Html).unwrap();
        assert_eq!(view.bytes, b"x\"yz");
        assert_eq!(view.source(1..2), 1..7);
        assert_eq!(view.source(1..4), 1..11);
        assert_eq!(&text[view.source(2..4)], "Y\r\nz");
    }
}
