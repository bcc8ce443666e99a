//! The redactor: replaces vault values, in whatever encoding they come back, and common
//! credential patterns in text with `[REDACTED:name]`.
//!
//! Values are searched in canonical views of the text ([`views`]): as it is, with backslash
//! escapes (JSON, JavaScript, Python) decoded, with percent-encoding decoded, and with HTML
//! character references decoded; every view without line breaks and lower-cased. In each view
//! one Aho-Corasick automaton looks for every form of every value, lower-cased:
//! - the value itself (case-insensitively, so an upper-cased echo is caught), and with `+` for
//!   each space (a form-encoded value, once its `%HH` are decoded);
//! - its hex (hex digits carry no case, so folding loses nothing);
//! - its base64, standard and URL-safe: the value's bytes may start at any offset of a larger
//!   encoded input (`base64(user:secret)` in a Basic pair), so for each of the three alignments
//!   the characters that depend on the value's bits alone (a stable core), widened when found
//!   to the one character on each side that mixes in its bits, and to the padding. Base64 is
//!   matched case-insensitively too: an upper-cased base64 cannot be decoded but still says
//!   most of the value, and eight or more folded characters are still specific. (The base64 or
//!   hex of a case-changed value is a different string and is not looked for: encodings apply
//!   to what was sent, case changes to what is shown.)
//!
//! Each match is mapped back to the bytes of the original text that produced it, so exactly
//! that span is replaced; overlapping matches (from several views or values) are merged, the
//! first value's name kept. Patterns are regular expressions applied after that, each in turn.
//! Text already redacted stays as it is: a match that would cut into an existing
//! `[REDACTED:…]` marker, or that is exactly one, is left alone, so redacting twice gives the
//! same text as once.
//!
//! Not caught: an encoding nested in another (percent inside JSON escapes), compressed bodies,
//! case changes of non-ASCII letters, base64 cores shorter than [`MIN_CORE_LEN`] (the offset
//! forms of values under about six bytes), and values shorter than [`MIN_VALUE_LEN`] (too
//! likely to be ordinary text).

mod views;

use std::borrow::Cow;
use std::collections::HashMap;
use std::ops::Range;
use std::sync::LazyLock;

use aho_corasick::{AhoCorasick, MatchKind};
use regex::Regex;

use crate::vault::Vault;
use views::{Decode, View};

/// Values shorter than this are not redacted: four characters of a secret are too likely to be
/// ordinary text.
pub const MIN_VALUE_LEN: usize = 4;

/// The shortest base64 core of a value at an offset that is looked for: shorter ones would
/// match ordinary words and unrelated base64.
pub const MIN_CORE_LEN: usize = 8;

/// Redacts vault values and credential patterns. Cheap to share (`Send + Sync`).
pub struct Redactor {
    values: Option<Values>,
}

/// The forms of every value, in one automaton.
struct Values {
    ac: AhoCorasick,
    /// Per pattern: whose form it is and how a match widens.
    forms: Vec<Form>,
    names: Vec<String>,
}

/// One searched form of a value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Form {
    /// Index into the names.
    name: usize,
    /// A base64 core after which (`trail`) or before which (`lead`) one character mixes the
    /// value's bits with its neighbours'; a trailing one may be followed by `=` padding.
    lead: bool,
    trail: bool,
}

impl std::fmt::Debug for Redactor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Redactor")
            .field(
                "value_forms",
                &self.values.as_ref().map_or(0, |v| v.forms.len()),
            )
            .finish()
    }
}

impl Redactor {
    /// A redactor for these `(name, value)` pairs and the built-in patterns. Values shorter than
    /// [`MIN_VALUE_LEN`] are ignored.
    pub fn new(secrets: Vec<(String, String)>) -> Redactor {
        // pattern -> form; the first value wins for a pattern two values share.
        let mut forms: HashMap<Vec<u8>, Form> = HashMap::new();
        let mut names: Vec<String> = Vec::new();
        for (name, value) in secrets {
            if value.len() < MIN_VALUE_LEN {
                continue;
            }
            let index = names.len();
            names.push(name);
            for (pattern, lead, trail) in value_forms(&value) {
                forms.entry(pattern).or_insert(Form {
                    name: index,
                    lead,
                    trail,
                });
            }
        }
        let values = if forms.is_empty() {
            None
        } else {
            let (patterns, forms): (Vec<Vec<u8>>, Vec<Form>) = forms.into_iter().unzip();
            AhoCorasick::builder()
                .match_kind(MatchKind::Standard)
                .build(&patterns)
                .ok()
                .map(|ac| Values { ac, forms, names })
        };
        Redactor { values }
    }

    /// A redactor with the built-in patterns only.
    pub fn patterns_only() -> Redactor {
        Redactor::new(Vec::new())
    }

    /// A redactor for every value in `vault`, each named by its secret's name.
    pub fn from_vault(vault: &Vault) -> Redactor {
        Redactor::new(
            vault
                .values()
                .map(|(n, s)| (n.to_string(), s.expose().to_string()))
                .collect(),
        )
    }

    /// `bytes` with every form of every value replaced, and how many spans were; the credential
    /// patterns are not applied. For bodies that may not be text (a response, a downloaded
    /// file): a valid UTF-8 input stays valid UTF-8.
    pub fn redact_values<'a>(&self, bytes: &'a [u8]) -> (Cow<'a, [u8]>, usize) {
        let Some(values) = &self.values else {
            return (Cow::Borrowed(bytes), 0);
        };
        let edits = values.find(bytes);
        let count = edits.len();
        (apply(Cow::Borrowed(bytes), edits), count)
    }

    /// `text` with every value form and credential pattern replaced; borrowed when nothing was.
    pub fn redact<'a>(&self, text: &'a str) -> Cow<'a, str> {
        let mut out: Cow<'a, str> = Cow::Borrowed(text);
        if let Some(values) = &self.values {
            let edits = values.find(text.as_bytes());
            out = apply_str(out, edits);
        }
        for p in PATTERNS.iter() {
            let markers = markers(out.as_bytes());
            let mut edits = Vec::new();
            for caps in p.re.captures_iter(out.as_ref()) {
                let Some(m) = caps.name("v").or_else(|| caps.get(0)) else {
                    continue;
                };
                let mut range = m.range();
                if p.env {
                    range = unquote(&out, range);
                    if range.is_empty() {
                        continue;
                    }
                }
                if let Some(keep) = p.keep
                    && !keep(&out[range.clone()])
                {
                    continue;
                }
                if !blocked(&markers, range.clone()) {
                    edits.push((range, p.name));
                }
            }
            out = apply_str(out, edits);
        }
        out
    }
}

impl Values {
    /// The spans of `text` to replace, ascending and disjoint, each with its value's name.
    fn find(&self, text: &[u8]) -> Vec<(Range<usize>, &str)> {
        let mut found: Vec<(Range<usize>, usize)> = Vec::new();
        for decode in Decode::ALL {
            if !decode.applies(text) {
                continue;
            }
            let Some(view) = View::new(text, decode) else {
                continue;
            };
            for m in self.ac.find_overlapping_iter(view.bytes.as_slice()) {
                let form = self.forms[m.pattern().as_usize()];
                let r = widen(&view.bytes, m.range(), form);
                found.push((snap(text, view.source(r)), form.name));
            }
        }
        // Merge overlaps: leftmost first, and of two starting together the longer.
        found.sort_by(|a, b| a.0.start.cmp(&b.0.start).then(b.0.end.cmp(&a.0.end)));
        let mut merged: Vec<(Range<usize>, usize)> = Vec::new();
        for (r, name) in found {
            match merged.last_mut() {
                Some((last, _)) if r.start < last.end => last.end = last.end.max(r.end),
                _ => merged.push((r, name)),
            }
        }
        let markers = markers(text);
        merged
            .into_iter()
            .filter(|(r, _)| !blocked(&markers, r.clone()))
            .map(|(r, name)| (r, self.names[name].as_str()))
            .collect()
    }
}

/// A base64 core's match widened to the characters that mix in the value's bits, and the
/// padding after it.
fn widen(view: &[u8], mut r: Range<usize>, form: Form) -> Range<usize> {
    let b64 = |b: &u8| b.is_ascii_alphanumeric() || b"+/-_".contains(b);
    if form.lead && r.start > 0 && b64(&view[r.start - 1]) {
        r.start -= 1;
    }
    if form.trail && view.get(r.end).is_some_and(b64) {
        r.end += 1;
        for _ in 0..2 {
            if view.get(r.end) == Some(&b'=') {
                r.end += 1;
            }
        }
    }
    r
}

/// `r` widened to whole UTF-8 characters of `text` (a no-op for text, whose matches already
/// start and end on characters; bytes that are not text are left with no half characters).
fn snap(text: &[u8], mut r: Range<usize>) -> Range<usize> {
    let continuation = |b: u8| b & 0xc0 == 0x80;
    while r.start > 0 && continuation(text[r.start]) {
        r.start -= 1;
    }
    while r.end < text.len() && continuation(text[r.end]) {
        r.end += 1;
    }
    r
}

/// The patterns searched for `value` (lower-cased, as the views are), each with whether a match
/// widens before and after it (base64 cores).
fn value_forms(value: &str) -> Vec<(Vec<u8>, bool, bool)> {
    let fold = |s: &[u8]| {
        let mut s = s.to_vec();
        views::fold(&mut s);
        s
    };
    // Views have no line breaks, so neither do the forms of a value that has some.
    let plain: Vec<u8> = value
        .bytes()
        .filter(|b| *b != b'\n' && *b != b'\r')
        .collect();
    let mut forms: Vec<(Vec<u8>, bool, bool)> = Vec::new();
    if plain.len() >= MIN_VALUE_LEN {
        forms.push((fold(&plain), false, false));
        if plain.contains(&b' ') {
            let form: Vec<u8> = plain
                .iter()
                .map(|&b| if b == b' ' { b'+' } else { b })
                .collect();
            forms.push((fold(&form), false, false));
        }
    }
    let b = value.as_bytes();
    forms.push((hex(b, b"0123456789abcdef").into_bytes(), false, false));
    for alphabet in [STD_ALPHABET, URL_ALPHABET] {
        // The whole encoding at offset 0, padded and not (what short values are matched by).
        let whole = base64(b, alphabet);
        forms.push((fold(whole.trim_end_matches('=').as_bytes()), false, false));
        forms.push((fold(whole.as_bytes()), false, false));
        for offset in 0..3 {
            let (core, lead, trail) = base64_core(b, offset, alphabet);
            if core.len() >= MIN_CORE_LEN {
                forms.push((fold(core.as_bytes()), lead, trail));
            }
        }
    }
    forms.sort();
    forms.dedup_by(|a, b| a.0 == b.0);
    forms
}

/// The base64 characters that depend on `value`'s bits alone when it starts `offset` bytes
/// into the encoded input, and whether a character mixing its bits with others' comes before
/// and after them.
fn base64_core(value: &[u8], offset: usize, alphabet: &[u8; 64]) -> (String, bool, bool) {
    let mut input = vec![0u8; offset];
    input.extend_from_slice(value);
    let encoded = base64(&input, alphabet);
    let (first_bit, end_bit) = (8 * offset, 8 * (offset + value.len()));
    let first = first_bit.div_ceil(6);
    let end = end_bit / 6;
    let core = encoded.get(first..end).unwrap_or_default().to_string();
    (core, first_bit % 6 != 0, end_bit % 6 != 0)
}

const STD_ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
const URL_ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

fn base64(bytes: &[u8], alphabet: &[u8; 64]) -> String {
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let n = chunk.len();
        let v = (u32::from(chunk[0]) << 16)
            | (u32::from(*chunk.get(1).unwrap_or(&0)) << 8)
            | u32::from(*chunk.get(2).unwrap_or(&0));
        for i in 0..4 {
            if i <= n {
                out.push(alphabet[((v >> (18 - 6 * i)) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

fn hex(bytes: &[u8], digits: &[u8; 16]) -> String {
    let mut out = String::with_capacity(bytes.len() * 2);
    for &c in bytes {
        out.push(digits[(c >> 4) as usize] as char);
        out.push(digits[(c & 15) as usize] as char);
    }
    out
}

static MARKER: LazyLock<regex::bytes::Regex> = LazyLock::new(|| {
    #[allow(clippy::expect_used)]
    regex::bytes::Regex::new(r"\[REDACTED:[^\]\s]{1,128}\]").expect("the marker pattern compiles")
});

/// The ranges of the `[REDACTED:…]` markers already in `text`.
fn markers(text: &[u8]) -> Vec<Range<usize>> {
    MARKER.find_iter(text).map(|m| m.range()).collect()
}

/// Whether replacing `r` would cut into a marker or merely replace one marker with another.
fn blocked(markers: &[Range<usize>], r: Range<usize>) -> bool {
    markers.iter().any(|m| {
        let overlaps = m.start < r.end && r.start < m.end;
        let contains = r.start <= m.start && m.end <= r.end;
        let exact = *m == r;
        exact || (overlaps && !contains)
    })
}

/// `text` with each (non-overlapping, ascending) range replaced by `[REDACTED:name]`.
/// [`apply`] on text: markers are ASCII and spans fall on character boundaries, so the result
/// is text again (lossily, should a span ever split a character).
fn apply_str<'a>(text: Cow<'a, str>, edits: Vec<(Range<usize>, &str)>) -> Cow<'a, str> {
    match apply(Cow::Borrowed(text.as_bytes()), edits) {
        Cow::Borrowed(_) => text,
        Cow::Owned(bytes) => Cow::Owned(
            String::from_utf8(bytes)
                .unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned()),
        ),
    }
}

fn apply<'a>(text: Cow<'a, [u8]>, edits: Vec<(Range<usize>, &str)>) -> Cow<'a, [u8]> {
    if edits.is_empty() {
        return text;
    }
    let mut out = Vec::with_capacity(text.len());
    let mut last = 0;
    for (r, name) in edits {
        if r.start < last {
            continue;
        }
        out.extend_from_slice(&text[last..r.start]);
        out.extend_from_slice(b"[REDACTED:");
        out.extend_from_slice(name.as_bytes());
        out.push(b']');
        last = r.end;
    }
    out.extend_from_slice(&text[last..]);
    Cow::Owned(out)
}

/// An assignment's value range without surrounding quotes and trailing whitespace.
fn unquote(text: &str, r: Range<usize>) -> Range<usize> {
    let v = text[r.clone()].trim_end();
    let mut r = r.start..r.start + v.len();
    let b = v.as_bytes();
    if b.len() >= 2 && (b[0] == b'"' || b[0] == b'\'') && b[b.len() - 1] == b[0] {
        r = r.start + 1..r.end - 1;
    }
    r
}

struct Pattern {
    name: &'static str,
    re: Regex,
    /// A further check on the text to replace (what a regex without look-around cannot say).
    keep: Option<fn(&str) -> bool>,
    /// An assignment: the value may be quoted, the quotes are kept.
    env: bool,
}

#[allow(clippy::expect_used)]
fn re(s: &str) -> Regex {
    Regex::new(s).expect("built-in redaction pattern compiles")
}

fn pattern(name: &'static str, s: &str) -> Pattern {
    Pattern {
        name,
        re: re(s),
        keep: None,
        env: false,
    }
}

/// The built-in credential patterns, most specific first. Where a pattern has a `v` group only
/// that part is replaced.
static PATTERNS: LazyLock<Vec<Pattern>> = LazyLock::new(|| {
    vec![
        pattern(
            "private-key",
            r"(?s)-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----(?:.*?-----END [A-Z0-9 ]*PRIVATE KEY-----|.*)",
        ),
        pattern(
            "jwt",
            r"\beyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}",
        ),
        pattern("aws-access-key-id", r"\b(?:AKIA|ASIA)[A-Z0-9]{16}\b"),
        pattern(
            "aws-secret-access-key",
            r#"(?i)\baws_secret_access_key["']?[ \t]*[:=][ \t]*["']?(?P<v>[A-Za-z0-9/+=]{20,})"#,
        ),
        pattern(
            "github-token",
            r"\b(?:gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,})",
        ),
        pattern("slack-token", r"\bxox[abprs]-[A-Za-z0-9-]{10,}"),
        pattern("anthropic-key", r"\bsk-ant-[A-Za-z0-9_-]{20,}"),
        Pattern {
            keep: Some(|s| s.bytes().any(|c| c.is_ascii_digit())),
            ..pattern(
                "openai-key",
                r"\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9][A-Za-z0-9_-]{18,}[A-Za-z0-9]",
            )
        },
        pattern("google-api-key", r"\bAIza[0-9A-Za-z_-]{35}"),
        pattern("stripe-key", r"\b(?:sk|rk)_live_[0-9A-Za-z]{16,}"),
        pattern(
            "bearer-token",
            r"(?i)\bAuthorization[ \t]*:[ \t]*Bearer[ \t]+(?P<v>[A-Za-z0-9._~+/-]+=*)",
        ),
        Pattern {
            env: true,
            ..pattern(
                "env-assignment",
                r#"(?im)^[ \t]*(?:export[ \t]+)?[A-Za-z0-9_.-]*(?:KEY|SECRET|TOKEN|PASSWORD|PASSWD)[A-Za-z0-9_.-]*[ \t]*[=:][ \t]*(?P<v>\S[^\r\n]*)"#,
            )
        },
    ]
});

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    const SECRET: &str = "hunter2-Secret/Value?x";

    fn vault_redactor() -> Redactor {
        Redactor::new(vec![
            ("DB_PASS".into(), SECRET.into()),
            ("SHORT".into(), "abc".into()),
            ("LONGER".into(), "s3cr3t-token-longer-one".into()),
            ("INNER".into(), "token-longer".into()),
        ])
    }

    /// A value with what the encodings change: `&`, a space, `"`, `/`, `+`, `=`, a non-ASCII
    /// letter, `~`, `'`, `<`, `\` and `>` (26 characters, 27 bytes).
    const RICH: &str = "Tr0ub4dor&3 \"x\"/y+z=é~'<\\>";

    /// `RICH` as independent encoders wrote it. Generated once with Python 3 and pasted here:
    /// `json.dumps(V)[1:-1]` (and with `/` as `\/`, every character as `\uXXXX`, and with
    /// `ensure_ascii=False`); `urllib.parse.quote(V, safe='')`, `quote(V)`, the same with its hex
    /// lower-cased, `quote_plus(V)` (and with `~` as `%7E`), every byte as `%XX`; `html.escape(V)`,
    /// every character as `&#N;` and `&#xH;`, `html.entities.codepoint2name` names;
    /// `base64.b64encode(user + V)` for users `u:`, `bo:`, `user:` (the value at offsets 2, 0
    /// and 2 of the input, its core at each alignment), `b64encode(V)`,
    /// `urlsafe_b64encode(V).rstrip('=')`, `base64.encodebytes(b'x' * 50 + V)` (MIME lines of
    /// 76); `binascii.hexlify(V)` and `.upper()`; `V.upper()`, `V.swapcase()`; and `V` split by
    /// `\n` after 9 characters and by `\r\n` after 13. Each is `(what, text, redacted text)`.
    const RICH_VECTORS: &[(&str, &str, &str)] = &[
        ("raw", "Tr0ub4dor&3 \"x\"/y+z=é~'<\\>", "[REDACTED:RICH]"),
        (
            "json",
            "Tr0ub4dor&3 \\\"x\\\"/y+z=\\u00e9~'<\\\\>",
            "[REDACTED:RICH]",
        ),
        (
            "json \\/",
            "Tr0ub4dor&3 \\\"x\\\"\\/y+z=\\u00e9~'<\\\\>",
            "[REDACTED:RICH]",
        ),
        (
            "json all \\u",
            "\\u0054\\u0072\\u0030\\u0075\\u0062\\u0034\\u0064\\u006f\\u0072\\u0026\\u0033\\u0020\\u0022\\u0078\\u0022\\u002f\\u0079\\u002b\\u007a\\u003d\\u00e9\\u007e\\u0027\\u003c\\u005c\\u003e",
            "[REDACTED:RICH]",
        ),
        (
            "json utf-8",
            "Tr0ub4dor&3 \\\"x\\\"/y+z=é~'<\\\\>",
            "[REDACTED:RICH]",
        ),
        (
            "quote all",
            "Tr0ub4dor%263%20%22x%22%2Fy%2Bz%3D%C3%A9~%27%3C%5C%3E",
            "[REDACTED:RICH]",
        ),
        (
            "quote default",
            "Tr0ub4dor%263%20%22x%22/y%2Bz%3D%C3%A9~%27%3C%5C%3E",
            "[REDACTED:RICH]",
        ),
        (
            "quote lower",
            "Tr0ub4dor%263%20%22x%22%2fy%2bz%3d%c3%a9~%27%3c%5c%3e",
            "[REDACTED:RICH]",
        ),
        (
            "quote_plus",
            "Tr0ub4dor%263+%22x%22%2Fy%2Bz%3D%C3%A9~%27%3C%5C%3E",
            "[REDACTED:RICH]",
        ),
        (
            "quote_plus %7E",
            "Tr0ub4dor%263+%22x%22%2Fy%2Bz%3D%C3%A9%7E%27%3C%5C%3E",
            "[REDACTED:RICH]",
        ),
        (
            "every byte",
            "%54%72%30%75%62%34%64%6F%72%26%33%20%22%78%22%2F%79%2B%7A%3D%C3%A9%7E%27%3C%5C%3E",
            "[REDACTED:RICH]",
        ),
        (
            "html.escape",
            "Tr0ub4dor&amp;3 &quot;x&quot;/y+z=é~&#x27;&lt;\\&gt;",
            "[REDACTED:RICH]",
        ),
        (
            "html decimal",
            "&#84;&#114;&#48;&#117;&#98;&#52;&#100;&#111;&#114;&#38;&#51;&#32;&#34;&#120;&#34;&#47;&#121;&#43;&#122;&#61;&#233;&#126;&#39;&#60;&#92;&#62;",
            "[REDACTED:RICH]",
        ),
        (
            "html hex",
            "&#x54;&#x72;&#x30;&#x75;&#x62;&#x34;&#x64;&#x6F;&#x72;&#x26;&#x33;&#x20;&#x22;&#x78;&#x22;&#x2F;&#x79;&#x2B;&#x7A;&#x3D;&#xE9;&#x7E;&#x27;&#x3C;&#x5C;&#x3E;",
            "[REDACTED:RICH]",
        ),
        (
            "html named",
            "Tr0ub4dor&amp;3 &quot;x&quot;/y+z=&eacute;~'&lt;\\&gt;",
            "[REDACTED:RICH]",
        ),
        // What is left of a Basic pair encodes the user name alone.
        (
            "basic u:",
            "dTpUcjB1YjRkb3ImMyAieCIveSt6PcOpfic8XD4=",
            "dT[REDACTED:RICH]",
        ),
        (
            "basic bo:",
            "Ym86VHIwdWI0ZG9yJjMgIngiL3krej3DqX4nPFw+",
            "Ym86[REDACTED:RICH]",
        ),
        (
            "basic user:",
            "dXNlcjpUcjB1YjRkb3ImMyAieCIveSt6PcOpfic8XD4=",
            "dXNlcj[REDACTED:RICH]",
        ),
        (
            "base64",
            "VHIwdWI0ZG9yJjMgIngiL3krej3DqX4nPFw+",
            "[REDACTED:RICH]",
        ),
        (
            "base64url",
            "VHIwdWI0ZG9yJjMgIngiL3krej3DqX4nPFw-",
            "[REDACTED:RICH]",
        ),
        (
            "mime",
            "eHh4eHh4eHh4eHh4eHh4eHh4eHh4eHh4eHh4eHh4eHh4eHh4eHh4eHh4eHh4eHh4eHhUcjB1YjRk\nb3ImMyAieCIveSt6PcOpfic8XD4=\n",
            "eHh4eHh4eHh4eHh4eHh4eHh4eHh4eHh4eHh4eHh4eHh4eHh4eHh4eHh4eHh4eHh4eH[REDACTED:RICH]\n",
        ),
        (
            "hex",
            "547230756234646f722633202278222f792b7a3dc3a97e273c5c3e",
            "[REDACTED:RICH]",
        ),
        (
            "hex upper",
            "547230756234646F722633202278222F792B7A3DC3A97E273C5C3E",
            "[REDACTED:RICH]",
        ),
        ("upper", "TR0UB4DOR&3 \"X\"/Y+Z=É~'<\\>", "[REDACTED:RICH]"),
        (
            "swapcase",
            "tR0UB4DOR&3 \"X\"/Y+Z=É~'<\\>",
            "[REDACTED:RICH]",
        ),
        (
            "split \\n",
            "Tr0ub4dor\n&3 \"x\"/y+z=é~'<\\>",
            "[REDACTED:RICH]",
        ),
        (
            "split \\r\\n",
            "Tr0ub4dor&3 \"\r\nx\"/y+z=é~'<\\>",
            "[REDACTED:RICH]",
        ),
    ];

    #[test]
    fn every_encoding_of_a_value_is_redacted_exactly() {
        let r = Redactor::new(vec![("RICH".into(), RICH.into())]);
        for (what, form, want) in RICH_VECTORS {
            let text = format!("before {form} after");
            assert_eq!(r.redact(&text), format!("before {want} after"), "{what}");
            let (bytes, count) = r.redact_values(text.as_bytes());
            assert_eq!(bytes, format!("before {want} after").as_bytes(), "{what}");
            assert_eq!(count, 1, "{what}");
        }
    }

    /// `SECRET` in the forms the first redactor knew, from Python's `base64.b64encode`,
    /// `urlsafe_b64encode`, `urllib.parse.quote(V, safe='')` and `binascii.hexlify`.
    #[test]
    fn the_classic_forms_are_redacted() {
        let r = vault_redactor();
        let cases = [
            ("plain", SECRET),
            ("base64", "aHVudGVyMi1TZWNyZXQvVmFsdWU/eA=="),
            ("base64 unpadded", "aHVudGVyMi1TZWNyZXQvVmFsdWU/eA"),
            ("base64url", "aHVudGVyMi1TZWNyZXQvVmFsdWU_eA=="),
            ("base64url unpadded", "aHVudGVyMi1TZWNyZXQvVmFsdWU_eA"),
            ("percent", "hunter2-Secret%2FValue%3Fx"),
            ("hex lower", "68756e746572322d5365637265742f56616c75653f78"),
            ("hex upper", "68756E746572322D5365637265742F56616C75653F78"),
        ];
        for (what, form) in cases {
            let text = format!("before {form} after");
            let out = r.redact(&text);
            assert_eq!(out, "before [REDACTED:DB_PASS] after", "{what}: {form}");
        }
    }

    /// Short values keep their whole forms (`base64.b64encode(b'abcd')`, unpadded, hex) though
    /// their offset cores are too short to look for.
    #[test]
    fn short_values_keep_their_whole_forms() {
        let r = Redactor::new(vec![("S".into(), "abcd".into())]);
        for form in ["abcd", "ABCD", "YWJjZA==", "YWJjZA", "61626364"] {
            assert_eq!(
                r.redact(&format!("x {form} y")),
                "x [REDACTED:S] y",
                "{form}"
            );
        }
    }

    #[test]
    fn base64_cores_at_each_offset() {
        // `base64.b64encode(b'\0' * k + b'abcdefgh')` for k = 0, 1, 2:
        // YWJjZGVmZ2g=, AGFiY2RlZmdo, AABhYmNkZWZnaA==.
        assert_eq!(
            base64_core(b"abcdefgh", 0, STD_ALPHABET),
            ("YWJjZGVmZ2".to_string(), false, true)
        );
        assert_eq!(
            base64_core(b"abcdefgh", 1, STD_ALPHABET),
            ("FiY2RlZmdo".to_string(), true, false)
        );
        assert_eq!(
            base64_core(b"abcdefgh", 2, STD_ALPHABET),
            ("hYmNkZWZna".to_string(), true, true)
        );
    }

    #[test]
    fn longest_value_wins() {
        let r = vault_redactor();
        assert_eq!(
            r.redact("x s3cr3t-token-longer-one y token-longer z"),
            "x [REDACTED:LONGER] y [REDACTED:INNER] z"
        );
    }

    #[test]
    fn patterns_are_redacted() {
        let r = Redactor::patterns_only();
        let cases: &[(&str, &str, &str)] = &[
            (
                "aws id",
                "key AKIAIOSFODNN7EXAMPLE here",
                "key [REDACTED:aws-access-key-id] here",
            ),
            (
                "aws session id",
                "ASIAABCDEFGHIJKLMNOP",
                "[REDACTED:aws-access-key-id]",
            ),
            (
                "aws secret",
                "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
                "aws_secret_access_key = [REDACTED:aws-secret-access-key]",
            ),
            (
                "aws secret json",
                r#""aws_secret_access_key": "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY""#,
                r#""aws_secret_access_key": "[REDACTED:aws-secret-access-key]""#,
            ),
            (
                "ghp",
                "t ghp_aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789 .",
                "t [REDACTED:github-token] .",
            ),
            (
                "gho",
                "gho_aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789",
                "[REDACTED:github-token]",
            ),
            (
                "ghu",
                "ghu_aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789",
                "[REDACTED:github-token]",
            ),
            (
                "ghs",
                "ghs_aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789",
                "[REDACTED:github-token]",
            ),
            (
                "ghr",
                "ghr_aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789",
                "[REDACTED:github-token]",
            ),
            (
                "github pat",
                "github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz",
                "[REDACTED:github-token]",
            ),
            (
                "slack",
                "xoxb-123456789012-1234567890123-AbCdEfGhIjKl",
                "[REDACTED:slack-token]",
            ),
            (
                "slack user",
                "xoxp-1234567890-abcdef",
                "[REDACTED:slack-token]",
            ),
            (
                "openai",
                "sk-abcdefghijklmnopqrstuvwxyz0123456789ABCD",
                "[REDACTED:openai-key]",
            ),
            (
                "openai proj",
                "key=sk-proj-Ab12_cd34-EF56gh78IJ90kl",
                "key=[REDACTED:openai-key]",
            ),
            (
                "anthropic",
                "sk-ant-api03-abcdefghijklmnopqrstuvwxyz012345-AA",
                "[REDACTED:anthropic-key]",
            ),
            (
                "google",
                "AIzaSyA-1234567890abcdefghijklmnopqrstu",
                "[REDACTED:google-api-key]",
            ),
            (
                "stripe",
                "sk_live_51H8abcdefghijklmnop",
                "[REDACTED:stripe-key]",
            ),
            (
                "stripe restricted",
                "rk_live_51H8abcdefghijklmnop",
                "[REDACTED:stripe-key]",
            ),
            (
                "jwt",
                "tok eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U end",
                "tok [REDACTED:jwt] end",
            ),
            (
                "pem",
                "a\n-----BEGIN RSA PRIVATE KEY-----\nMIIEow\nIBAAK\n-----END RSA PRIVATE KEY-----\nb",
                "a\n[REDACTED:private-key]\nb",
            ),
            (
                "pem plain",
                "-----BEGIN PRIVATE KEY-----\nMIIE\n-----END PRIVATE KEY-----",
                "[REDACTED:private-key]",
            ),
            (
                "pem cut off",
                "x\n-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNz",
                "x\n[REDACTED:private-key]",
            ),
            (
                "bearer",
                "Authorization: Bearer abc.def-ghi_jkl==",
                "Authorization: Bearer [REDACTED:bearer-token]",
            ),
            (
                "bearer lowercase",
                "curl -H 'authorization: bearer opaque123token'",
                "curl -H 'authorization: bearer [REDACTED:bearer-token]'",
            ),
            (
                "env key",
                "API_KEY=abc123",
                "API_KEY=[REDACTED:env-assignment]",
            ),
            (
                "env secret quoted",
                "export CLIENT_SECRET=\"x y z\"\nOTHER=1",
                "export CLIENT_SECRET=\"[REDACTED:env-assignment]\"\nOTHER=1",
            ),
            (
                "env token yaml",
                "  auth_token: 'abcd'",
                "  auth_token: '[REDACTED:env-assignment]'",
            ),
            (
                "env password",
                "DB_PASSWORD = p@ss word \nx",
                "DB_PASSWORD = [REDACTED:env-assignment] \nx",
            ),
            (
                "env passwd",
                "MYSQL_PASSWD:hunter2",
                "MYSQL_PASSWD:[REDACTED:env-assignment]",
            ),
            (
                "env value with a token",
                "GH_TOKEN=ghp_aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789",
                "GH_TOKEN=[REDACTED:github-token]",
            ),
        ];
        for (what, input, want) in cases {
            assert_eq!(r.redact(input), *want, "{what}");
        }
    }

    #[test]
    fn ordinary_text_is_not_redacted() {
        let r = vault_redactor();
        let cases = [
            "the task-list is short, a risk-free sk- prefix",
            "ask-questions-about-the-thing-and-more-of-it",
            "sk-learn-is-a-library-for-machine-learning",
            "abc is short and abcd is not a secret",
            "AKIA is a prefix; AKIAshort",
            "Authorization: Basic",
            "the key is in the KEY_FILE variable",
            "monkey business, password reset flow",
            "a [REDACTED:x] marker stays",
            "",
        ];
        for text in cases {
            let out = r.redact(text);
            assert!(matches!(out, Cow::Borrowed(_)), "{text} became {out}");
        }
    }

    #[test]
    fn short_values_are_ignored() {
        let r = Redactor::new(vec![("S".into(), "abc".into())]);
        assert_eq!(r.redact("abc abc"), "abc abc");
        assert!(r.values.is_none());
    }

    #[test]
    fn redacting_twice_is_redacting_once() {
        let r = Redactor::new(vec![
            ("DB_PASS".into(), SECRET.into()),
            ("R".into(), "REDACTED".into()),
            ("E".into(), "env-assignment".into()),
        ]);
        let text = format!(
            "{SECRET} aHVudGVyMi1TZWNyZXQvVmFsdWU/eA==\nAPI_KEY={SECRET}\n\
             TOKEN=foo ghp_aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789\n\
             Authorization: Bearer abcdefgh\n-----BEGIN PRIVATE KEY-----\n{SECRET}\n\
             -----END PRIVATE KEY-----\nAKIAIOSFODNN7EXAMPLE REDACTED"
        );
        let once = r.redact(&text).into_owned();
        assert!(!once.contains(SECRET), "{once}");
        let twice = r.redact(&once);
        assert_eq!(twice, once);
        assert!(matches!(twice, Cow::Borrowed(_)));
    }

    /// A megabyte of text full of what the views decode (escapes, entities, percent signs,
    /// line breaks) with the value once at the end, encoded: only the value goes. (How fast:
    /// see the figure in `ARCHITECTURE.md`; timings are not asserted in tests.)
    #[test]
    fn a_megabyte_is_redacted() {
        let r = vault_redactor();
        let line = "ordinary \"words\" &amp; 100% of /a/b/c.rs\r\n \\u0041 %7E\n";
        let mut text = line.repeat(1_000_000 / line.len());
        text.push_str("hunter2-Secret%2FValue%3Fx");
        let out = r.redact(&text);
        assert_eq!(
            out.len(),
            text.len() - "hunter2-Secret%2FValue%3Fx".len() + "[REDACTED:DB_PASS]".len()
        );
        assert!(out.ends_with(&format!("{line}[REDACTED:DB_PASS]")));
    }

    /// The encodings the fuzz puts a value in, written here from the standards (and the
    /// `base64` crate), not with the redactor's helpers.
    #[derive(Debug, Clone, Copy)]
    enum Enc {
        Raw,
        Upper,
        Lower,
        Json,
        JsonAllU,
        JsonSlash,
        Percent,
        PercentEveryByteLower,
        Form,
        HtmlEscape,
        HtmlDecimal,
        HtmlHex,
        Basic,
        Base64,
        Base64UrlUnpadded,
        Mime,
        Hex,
        HexUpper,
        Split,
    }

    const ENCS: [Enc; 19] = [
        Enc::Raw,
        Enc::Upper,
        Enc::Lower,
        Enc::Json,
        Enc::JsonAllU,
        Enc::JsonSlash,
        Enc::Percent,
        Enc::PercentEveryByteLower,
        Enc::Form,
        Enc::HtmlEscape,
        Enc::HtmlDecimal,
        Enc::HtmlHex,
        Enc::Basic,
        Enc::Base64,
        Enc::Base64UrlUnpadded,
        Enc::Mime,
        Enc::Hex,
        Enc::HexUpper,
        Enc::Split,
    ];

    /// `value` encoded: (the text put in the body, the part of it that carries the value and
    /// must not survive). `extra` is a user name (Basic), a prefix (MIME), or where to split.
    fn encode(enc: Enc, value: &str, extra: &str, at: usize, crlf: bool) -> (String, String) {
        use base64::Engine as _;
        use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
        let bytes = value.as_bytes();
        let unreserved = |b: u8| b.is_ascii_alphanumeric() || b"-._~".contains(&b);
        let whole = |s: String| (s.clone(), s);
        match enc {
            Enc::Raw => whole(value.to_string()),
            Enc::Upper => whole(value.to_uppercase()),
            Enc::Lower => whole(value.to_lowercase()),
            Enc::Json => {
                let s = serde_json::to_string(value).unwrap();
                whole(s[1..s.len() - 1].to_string())
            }
            Enc::JsonAllU => whole(
                value
                    .encode_utf16()
                    .map(|u| format!("\\u{u:04x}"))
                    .collect(),
            ),
            Enc::JsonSlash => {
                let s = serde_json::to_string(value).unwrap();
                whole(s[1..s.len() - 1].replace('/', "\\/"))
            }
            Enc::Percent => whole(
                bytes
                    .iter()
                    .map(|&b| {
                        if unreserved(b) {
                            (b as char).to_string()
                        } else {
                            format!("%{b:02X}")
                        }
                    })
                    .collect(),
            ),
            Enc::PercentEveryByteLower => {
                whole(bytes.iter().map(|b| format!("%{b:02x}")).collect())
            }
            Enc::Form => whole(
                bytes
                    .iter()
                    .map(|&b| match b {
                        b' ' => "+".to_string(),
                        b'~' => "%7E".to_string(),
                        b if unreserved(b) => (b as char).to_string(),
                        b => format!("%{b:02X}"),
                    })
                    .collect(),
            ),
            Enc::HtmlEscape => whole(
                value
                    .replace('&', "&amp;")
                    .replace('<', "&lt;")
                    .replace('>', "&gt;")
                    .replace('"', "&quot;")
                    .replace('\'', "&#x27;"),
            ),
            Enc::HtmlDecimal => whole(value.chars().map(|c| format!("&#{};", c as u32)).collect()),
            Enc::HtmlHex => whole(
                value
                    .chars()
                    .map(|c| format!("&#x{:X};", c as u32))
                    .collect(),
            ),
            Enc::Basic => {
                let s = STANDARD.encode(format!("{extra}:{value}"));
                // The characters that encode the user name alone stay.
                let keep = (extra.len() + 1) * 8 / 6;
                (s.clone(), s[keep..].to_string())
            }
            Enc::Base64 => whole(STANDARD.encode(bytes)),
            Enc::Base64UrlUnpadded => whole(URL_SAFE_NO_PAD.encode(bytes)),
            Enc::Mime => {
                let mut input = extra.as_bytes().to_vec();
                input.extend_from_slice(bytes);
                let s = STANDARD.encode(&input);
                let keep = extra.len() * 8 / 6;
                let break_ = if crlf { "\r\n" } else { "\n" };
                let lines: Vec<&str> = s
                    .as_bytes()
                    .chunks(76)
                    .map(|c| std::str::from_utf8(c).unwrap())
                    .collect();
                let wrapped = lines.join(break_);
                // `extra` is short enough that the kept characters are all on the first line.
                (wrapped.clone(), wrapped[keep..].to_string())
            }
            Enc::Hex => whole(bytes.iter().map(|b| format!("{b:02x}")).collect()),
            Enc::HexUpper => whole(bytes.iter().map(|b| format!("{b:02X}")).collect()),
            Enc::Split => {
                let chars: Vec<char> = value.chars().collect();
                let at = 1 + at % (chars.len() - 1);
                let (a, b): (String, String) =
                    (chars[..at].iter().collect(), chars[at..].iter().collect());
                whole(format!("{a}{}{b}", if crlf { "\r\n" } else { "\n" }))
            }
        }
    }

    /// Secrets' shapes: 8 to 64 characters, with what encodings change.
    fn secret() -> impl proptest::strategy::Strategy<Value = String> {
        proptest::string::string_regex(
            "[A-Za-z0-9+/=%&<>\"'\\\\ _.~:@!#$-]{6,56}[éüØñ€中😀]{0,4}[A-Za-z0-9+/=%&<>\"'\\\\ ]{2,4}",
        )
        .unwrap()
    }

    /// Text around the value: anything (control characters, escapes, entities, non-ASCII).
    fn around() -> impl proptest::strategy::Strategy<Value = String> {
        proptest::string::string_regex("(.|[\\\\%&;#\\r\\n])*").unwrap()
    }

    /// A separator between the surrounding text and the form, so a stray `\` or `%` at the
    /// end of the text does not join the form's first escape (which would be a different
    /// text, not an encoding of the value).
    const SEPARATORS: [&str; 6] = [" ", "\n", "\"", ": ", "=", "("];

    /// Every window of `part` at least half as long (and 8 characters) that occurs in `out`.
    fn survivors(part: &str, out: &str) -> Option<String> {
        let chars: Vec<char> = part.chars().collect();
        let w = chars.len().div_ceil(2).max(8).min(chars.len());
        (0..=chars.len() - w)
            .map(|i| chars[i..i + w].iter().collect::<String>())
            .find(|window| out.contains(window.as_str()))
    }

    #[test]
    fn fuzz_any_encoding_of_a_value_anywhere_is_redacted() {
        use proptest::prelude::*;
        let strategy = (
            secret(),
            0..ENCS.len(),
            around(),
            around(),
            (0..SEPARATORS.len(), 0..SEPARATORS.len()),
            ("[a-z0-9._-]{0,12}", any::<usize>(), any::<bool>()),
        );
        cairn_test_support::fuzz::check(
            "redactor: any encoding of a value anywhere",
            strategy,
            |(value, enc, before, after, (s1, s2), (extra, at, crlf))| {
                let r = Redactor::new(vec![("V".into(), value.clone())]);
                let (form, part) = encode(ENCS[enc], &value, &extra, at, crlf);
                let text = format!("{before}{}{form}{}{after}", SEPARATORS[s1], SEPARATORS[s2]);
                let out = r.redact(&text);
                prop_assert!(
                    out.contains("[REDACTED:V]"),
                    "{:?}: {text:?} -> {out:?}",
                    ENCS[enc]
                );
                prop_assert!(
                    survivors(&part, &out).is_none(),
                    "{:?}: {:?} survived in {out:?}",
                    ENCS[enc],
                    survivors(&part, &out)
                );
                let (bytes, _) = r.redact_values(text.as_bytes());
                let bytes = String::from_utf8(bytes.into_owned()).unwrap();
                prop_assert!(survivors(&part, &bytes).is_none(), "bytes: {bytes:?}");
                Ok(())
            },
        );
    }

    #[test]
    fn fuzz_text_without_the_value_is_unchanged() {
        use proptest::prelude::*;
        let strategy = (
            secret(),
            0..ENCS.len(),
            around(),
            around(),
            any::<usize>(),
            ("[a-z0-9._-]{0,12}", any::<usize>(), any::<bool>()),
        );
        cairn_test_support::fuzz::check(
            "redactor: text without the value is unchanged",
            strategy,
            |(value, enc, before, after, change, (extra, at, crlf))| {
                // A near miss: the value with one character changed (not only its case, and
                // not between a space and the `+` a form writes for it), in any encoding. Not
                // the first or last: a base64 core leaves out up to four bits at each end (the
                // characters mixing them with the neighbours'), so a value differing only there
                // is redacted as the value it nearly is.
                let mut chars: Vec<char> = value.chars().collect();
                let i = 1 + change % (chars.len() - 2);
                let old = chars[i];
                chars[i] = if old.is_ascii_digit() { 'q' } else { '7' };
                let other: String = chars.into_iter().collect();
                let r = Redactor::new(vec![("V".into(), value.clone())]);
                let (form, _) = encode(ENCS[enc], &other, &extra, at, crlf);
                let text = format!("{before} {form} {after}");
                prop_assume!(!text.to_lowercase().contains(&value.to_lowercase()));
                let (out, count) = r.redact_values(text.as_bytes());
                prop_assert_eq!(
                    count,
                    0,
                    "{:?}: {:?} -> {:?}",
                    ENCS[enc],
                    text,
                    String::from_utf8_lossy(&out)
                );
                prop_assert!(matches!(out, Cow::Borrowed(_)));
                Ok(())
            },
        );
    }
}
