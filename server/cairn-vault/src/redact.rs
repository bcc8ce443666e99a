//! The redactor: replaces vault values (and their base64, URL-encoded and hex forms) and common
//! credential patterns in text with `[REDACTED:name]`.
//!
//! Values are found in one Aho-Corasick pass (leftmost-longest, so of two overlapping values the
//! longer wins); patterns are regular expressions applied after it, each in turn. Text already
//! redacted stays as it is: a match that would cut into an existing `[REDACTED:…]` marker, or
//! that is exactly one, is left alone, so redacting twice gives the same text as once.
//!
//! Not caught: a value's base64 inside a larger base64 blob (it is aligned only at the blob's
//! start), and values shorter than [`MIN_VALUE_LEN`] (too likely to be ordinary text).

use std::borrow::Cow;
use std::collections::HashMap;
use std::ops::Range;
use std::sync::LazyLock;

use aho_corasick::{AhoCorasick, MatchKind};
use regex::Regex;

use crate::Vault;

/// Values shorter than this are not redacted: four characters of a secret are too likely to be
/// ordinary text.
pub const MIN_VALUE_LEN: usize = 4;

/// Redacts vault values and credential patterns. Cheap to share (`Send + Sync`).
pub struct Redactor {
    /// The value forms and, per pattern index, the name each is replaced with.
    values: Option<(AhoCorasick, Vec<String>)>,
}

impl std::fmt::Debug for Redactor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Redactor")
            .field(
                "value_forms",
                &self.values.as_ref().map_or(0, |v| v.1.len()),
            )
            .finish()
    }
}

impl Redactor {
    /// A redactor for these `(name, value)` pairs and the built-in patterns. Values shorter than
    /// [`MIN_VALUE_LEN`] are ignored.
    pub fn new(secrets: Vec<(String, String)>) -> Redactor {
        // form -> name; the first name wins for a form two values share.
        let mut forms: HashMap<String, String> = HashMap::new();
        for (name, value) in &secrets {
            if value.len() < MIN_VALUE_LEN {
                continue;
            }
            for form in value_forms(value) {
                forms.entry(form).or_insert_with(|| name.clone());
            }
        }
        let values = if forms.is_empty() {
            None
        } else {
            let (patterns, names): (Vec<String>, Vec<String>) = forms.into_iter().unzip();
            AhoCorasick::builder()
                .match_kind(MatchKind::LeftmostLongest)
                .build(&patterns)
                .ok()
                .map(|ac| (ac, names))
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

    /// `text` with every value form and credential pattern replaced; borrowed when nothing was.
    pub fn redact<'a>(&self, text: &'a str) -> Cow<'a, str> {
        let mut out: Cow<'a, str> = Cow::Borrowed(text);
        if let Some((ac, names)) = &self.values {
            let markers = markers(&out);
            let mut edits = Vec::new();
            for m in ac.find_iter(out.as_ref()) {
                if !blocked(&markers, m.range()) {
                    edits.push((m.range(), names[m.pattern().as_usize()].as_str()));
                }
            }
            out = apply(out, edits);
        }
        for p in PATTERNS.iter() {
            let markers = markers(&out);
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
            out = apply(out, edits);
        }
        out
    }
}

/// The forms of `value` that are replaced: itself, standard and URL-safe base64 with and
/// without padding, percent-encoded, and lower and upper hex.
fn value_forms(value: &str) -> Vec<String> {
    let b = value.as_bytes();
    let std = base64(b, STD_ALPHABET);
    let url = base64(b, URL_ALPHABET);
    let mut forms = vec![
        value.to_string(),
        std.trim_end_matches('=').to_string(),
        url.trim_end_matches('=').to_string(),
        std,
        url,
        percent_encode(b),
        hex(b, b"0123456789abcdef"),
        hex(b, b"0123456789ABCDEF"),
    ];
    forms.sort();
    forms.dedup();
    forms
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

fn percent_encode(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len());
    for &c in bytes {
        if c.is_ascii_alphanumeric() || b"-._~".contains(&c) {
            out.push(c as char);
        } else {
            out.push_str(&format!("%{c:02X}"));
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

static MARKER: LazyLock<Regex> = LazyLock::new(|| re(r"\[REDACTED:[^\]\s]{1,128}\]"));

/// The ranges of the `[REDACTED:…]` markers already in `text`.
fn markers(text: &str) -> Vec<Range<usize>> {
    if !text.contains("[REDACTED:") {
        return Vec::new();
    }
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
fn apply<'a>(text: Cow<'a, str>, edits: Vec<(Range<usize>, &str)>) -> Cow<'a, str> {
    if edits.is_empty() {
        return text;
    }
    let mut out = String::with_capacity(text.len());
    let mut last = 0;
    for (r, name) in edits {
        if r.start < last {
            continue;
        }
        out.push_str(&text[last..r.start]);
        out.push_str("[REDACTED:");
        out.push_str(name);
        out.push(']');
        last = r.end;
    }
    out.push_str(&text[last..]);
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
#[allow(clippy::unwrap_used)]
mod tests {
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

    #[test]
    fn value_forms_are_redacted() {
        let r = vault_redactor();
        let b = SECRET.as_bytes();
        let std = base64(b, STD_ALPHABET);
        let url = base64(b, URL_ALPHABET);
        assert!(std.ends_with('=') && std.contains('/'));
        assert_ne!(std, url);
        let cases = [
            ("plain", SECRET.to_string()),
            ("base64", std.clone()),
            ("base64 unpadded", std.trim_end_matches('=').to_string()),
            ("base64url", url.clone()),
            ("base64url unpadded", url.trim_end_matches('=').to_string()),
            ("percent", percent_encode(b)),
            ("hex lower", hex(b, b"0123456789abcdef")),
            ("hex upper", hex(b, b"0123456789ABCDEF")),
        ];
        for (what, form) in cases {
            let text = format!("before {form} after");
            let out = r.redact(&text);
            assert_eq!(out, "before [REDACTED:DB_PASS] after", "{what}: {form}");
        }
    }

    #[test]
    fn known_encodings() {
        assert_eq!(base64(b"hello", STD_ALPHABET), "aGVsbG8=");
        assert_eq!(base64(b"\xfb\xff", STD_ALPHABET), "+/8=");
        assert_eq!(base64(b"\xfb\xff", URL_ALPHABET), "-_8=");
        assert_eq!(base64(b"abc", STD_ALPHABET), "YWJj");
        assert_eq!(percent_encode(b"a b/c"), "a%20b%2Fc");
        assert_eq!(hex(b"\x01\xab", b"0123456789abcdef"), "01ab");
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
            "{SECRET} {}\nAPI_KEY={SECRET}\nTOKEN=foo ghp_aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789\n\
             Authorization: Bearer abcdefgh\n-----BEGIN PRIVATE KEY-----\n{SECRET}\n\
             -----END PRIVATE KEY-----\nAKIAIOSFODNN7EXAMPLE REDACTED",
            base64(SECRET.as_bytes(), STD_ALPHABET)
        );
        let once = r.redact(&text).into_owned();
        assert!(!once.contains(SECRET), "{once}");
        let twice = r.redact(&once);
        assert_eq!(twice, once);
        assert!(matches!(twice, Cow::Borrowed(_)));
    }

    #[test]
    fn a_megabyte_is_quick() {
        let r = vault_redactor();
        let mut text = "ordinary words, numbers 12345 and paths /a/b/c.rs\n".repeat(20_000);
        text.push_str(SECRET);
        let t = std::time::Instant::now();
        let out = r.redact(&text);
        assert!(out.ends_with("[REDACTED:DB_PASS]"));
        assert!(
            t.elapsed() < std::time::Duration::from_secs(5),
            "{:?}",
            t.elapsed()
        );
    }
}
