//! Scrubbing a secret's value out of a message, in every encoding it could appear in.

use base64::Engine;

/// `text` with every occurrence of `secret` (plain, base64, hex) replaced: the last line of
/// defence for a message that passed near the value (a vault error, say).
pub(super) fn scrub(text: &str, secret: &str) -> String {
    if secret.is_empty() {
        return text.to_owned();
    }
    let forms = [
        secret.to_owned(),
        base64::engine::general_purpose::STANDARD.encode(secret),
        base64::engine::general_purpose::STANDARD_NO_PAD.encode(secret),
        base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(secret),
        hex_of(secret.as_bytes()),
        hex_of(secret.as_bytes()).to_ascii_uppercase(),
    ];
    let mut out = text.to_owned();
    for form in forms {
        out = out.replace(&form, "[secret]");
    }
    out
}

fn hex_of(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scrub_removes_every_encoding() {
        let s = "hunter2!";
        let b64 = base64::engine::general_purpose::STANDARD.encode(s);
        let text = format!("a {s} b {b64} c {} d", hex_of(s.as_bytes()));
        let out = scrub(&text, s);
        assert_eq!(out, "a [secret] b [secret] c [secret] d");
    }
}
