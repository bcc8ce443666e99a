//! Building a message: addresses and the subject checked (no line break or other control
//! character can start a header of its own), a UTF-8 text body in base64, the subject in encoded
//! words, `Date` and `Message-ID`, and attachments as `multipart/mixed` parts.

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use cairn_toolkit::ToolError;

/// The longest address accepted (RFC 5321's path limit).
const MAX_ADDRESS: usize = 254;
/// The longest subject accepted, in characters.
const MAX_SUBJECT: usize = 500;

/// `address` if it is one plain address (`local@domain`, ASCII, no spaces, brackets, commas,
/// quotes or control characters); else why not (`invalid`: the address is one of a list, or the
/// configured sender, and the message names it rather than the argument).
pub(crate) fn address(address: &str) -> Result<String, ToolError> {
    // Control characters are looked for before trimming: a trailing line break is refused too.
    if let Some(c) = address.chars().find(|c| c.is_control()) {
        return Err(ToolError::invalid(format!(
            "{address:?} is refused: it holds the control character {c:?} (a line break would start a header of its own)"
        )));
    }
    let a = address.trim();
    let Some((local, domain)) = a.rsplit_once('@') else {
        return Err(ToolError::invalid(format!(
            "{a:?} is not an email address (no @)"
        )));
    };
    let bad = |why: &str| {
        Err(ToolError::invalid(format!(
            "{a:?} is not a plain email address: {why}"
        )))
    };
    if a.len() > MAX_ADDRESS {
        return bad("longer than 254 characters");
    }
    if local.is_empty() || domain.is_empty() {
        return bad("nothing before or after the @");
    }
    if !a.is_ascii() {
        return bad("only ASCII addresses are supported");
    }
    if let Some(c) = a
        .chars()
        .find(|c| c.is_whitespace() || "<>()[],;:\\\"".contains(*c))
    {
        return bad(&format!(
            "it holds {c:?}; give the bare address, without a name"
        ));
    }
    if local.contains('@') || domain.starts_with(['.', '-']) || !domain.contains('.') {
        return bad("the domain is not a domain name");
    }
    Ok(a.to_owned())
}

/// The sender as configured (`Name <me@example.com>` or a bare address): its display name and
/// address.
pub(crate) fn sender(from: &str) -> Result<(Option<String>, String), ToolError> {
    let from = from.trim();
    let refuse = |e: ToolError| e.context(format!("`[comms.email] from` = {from:?}"));
    match from.rsplit_once('<') {
        Some((name, rest)) => {
            let addr = rest
                .strip_suffix('>')
                .ok_or_else(|| refuse(ToolError::invalid("no closing `>`")))?;
            let name = name.trim().trim_matches('"').trim();
            if name.chars().any(char::is_control) {
                return Err(refuse(ToolError::invalid(
                    "the name holds a control character",
                )));
            }
            let name = (!name.is_empty()).then(|| name.to_owned());
            Ok((name, address(addr).map_err(refuse)?))
        }
        None => Ok((None, address(from).map_err(refuse)?)),
    }
}

/// `subject` if a header may carry it: no line break or other control character, not too long.
pub(crate) fn subject(subject: &str) -> Result<String, ToolError> {
    if let Some(c) = subject.chars().find(|c| c.is_control()) {
        return Err(ToolError::invalid_argument(
            "subject",
            format!(
                "the subject is refused: it holds the control character {c:?}, and a line break in a \
                 subject would add headers of its own (header injection); write it on one line"
            ),
        ));
    }
    if subject.chars().count() > MAX_SUBJECT {
        return Err(ToolError::invalid_argument(
            "subject",
            format!("the subject is longer than {MAX_SUBJECT} characters"),
        ));
    }
    Ok(subject.to_owned())
}

/// A file to attach.
pub(crate) struct Attachment {
    /// The file's name, as the recipient sees it.
    pub name: String,
    pub bytes: Vec<u8>,
}

/// One message, ready to build.
pub(crate) struct Message<'a> {
    pub from_name: Option<&'a str>,
    pub from: &'a str,
    pub to: &'a [String],
    pub cc: &'a [String],
    pub subject: &'a str,
    pub body: &'a str,
    pub attachments: &'a [Attachment],
}

impl Message<'_> {
    /// The message as sent (CRLF line ends, every line short, 7-bit). Bcc recipients are
    /// envelope only: no header names them.
    pub fn build(&self, message_id: &str) -> Vec<u8> {
        let mut h = String::new();
        let from = match self.from_name {
            Some(name) => format!("{} <{}>", phrase(name), self.from),
            None => self.from.to_owned(),
        };
        header(&mut h, "From", &from);
        if !self.to.is_empty() {
            header(&mut h, "To", &self.to.join(", "));
        }
        if !self.cc.is_empty() {
            header(&mut h, "Cc", &self.cc.join(", "));
        }
        header(&mut h, "Subject", &unstructured(self.subject));
        header(&mut h, "Date", &chrono::Utc::now().to_rfc2822());
        header(&mut h, "Message-ID", &format!("<{message_id}>"));
        header(&mut h, "MIME-Version", "1.0");
        let text = text_part(self.body);
        if self.attachments.is_empty() {
            h.push_str(&text);
            return h.into_bytes();
        }
        let boundary = format!("=_cairn_{}", uuid::Uuid::new_v4().simple());
        header(
            &mut h,
            "Content-Type",
            &format!("multipart/mixed; boundary=\"{boundary}\""),
        );
        h.push_str("\r\nThis is a message in MIME format.\r\n");
        h.push_str(&format!("--{boundary}\r\n{text}"));
        for a in self.attachments {
            h.push_str(&format!("--{boundary}\r\n"));
            h.push_str(&format!(
                "Content-Type: {}\r\nContent-Transfer-Encoding: base64\r\nContent-Disposition: attachment; {}\r\n\r\n",
                content_type(&a.name),
                filename(&a.name)
            ));
            h.push_str(&wrapped_base64(&a.bytes));
        }
        h.push_str(&format!("--{boundary}--\r\n"));
        h.into_bytes()
    }
}

/// The text part's headers and body: UTF-8, base64 (long lines and a lone `.` are harmless).
fn text_part(body: &str) -> String {
    let normalised = body.replace("\r\n", "\n").replace('\n', "\r\n");
    format!(
        "Content-Type: text/plain; charset=utf-8\r\nContent-Transfer-Encoding: base64\r\n\r\n{}",
        wrapped_base64(normalised.as_bytes())
    )
}

/// `bytes` in base64, 76 characters a line.
fn wrapped_base64(bytes: &[u8]) -> String {
    let encoded = STANDARD.encode(bytes);
    let mut out = String::with_capacity(encoded.len() + encoded.len() / 38 + 2);
    for chunk in encoded.as_bytes().chunks(76) {
        out.push_str(&String::from_utf8_lossy(chunk));
        out.push_str("\r\n");
    }
    out
}

/// `Name: value`, folded before 78 characters where the value has spaces.
fn header(out: &mut String, name: &str, value: &str) {
    let mut line = format!("{name}:");
    let mut len = line.len();
    for word in value.split(' ') {
        if len + 1 + word.len() > 76 && len > name.len() + 1 {
            line.push_str("\r\n");
            len = 0;
        }
        line.push(' ');
        line.push_str(word);
        len += 1 + word.len();
    }
    out.push_str(&line);
    out.push_str("\r\n");
}

/// An unstructured header value: as it is when plain ASCII, else RFC 2047 encoded words
/// (UTF-8, base64), each under 75 characters, split between characters.
fn unstructured(text: &str) -> String {
    if text.is_ascii() && !text.contains("=?") && text.split(' ').all(|w| w.len() < 70) {
        return text.to_owned();
    }
    let mut words = Vec::new();
    let mut chunk = String::new();
    for c in text.chars() {
        if chunk.len() + c.len_utf8() > 39 {
            words.push(encoded_word(&chunk));
            chunk.clear();
        }
        chunk.push(c);
    }
    if !chunk.is_empty() || words.is_empty() {
        words.push(encoded_word(&chunk));
    }
    words.join(" ")
}

fn encoded_word(text: &str) -> String {
    format!("=?UTF-8?B?{}?=", STANDARD.encode(text.as_bytes()))
}

/// A display name: a quoted string when ASCII, encoded words otherwise.
fn phrase(name: &str) -> String {
    if name.is_ascii() {
        format!("\"{}\"", name.replace('\\', "\\\\").replace('"', "\\\""))
    } else {
        unstructured(name)
    }
}

/// The `filename` parameter: quoted when plain ASCII, RFC 2231 percent-encoded otherwise.
fn filename(name: &str) -> String {
    if name
        .chars()
        .all(|c| c.is_ascii_graphic() && c != '"' && c != '\\' || c == ' ')
        && name.len() < 60
    {
        return format!("filename=\"{name}\"");
    }
    let encoded: String = name
        .bytes()
        .map(|b| {
            if b.is_ascii_alphanumeric() || b"-._".contains(&b) {
                (b as char).to_string()
            } else {
                format!("%{b:02X}")
            }
        })
        .collect();
    format!("filename*=UTF-8''{encoded}")
}

/// A content type from the file's extension; `application/octet-stream` when unknown.
fn content_type(name: &str) -> &'static str {
    let ext = name
        .rsplit_once('.')
        .map(|(_, e)| e.to_ascii_lowercase())
        .unwrap_or_default();
    match ext.as_str() {
        "txt" | "log" | "md" => "text/plain; charset=utf-8",
        "csv" => "text/csv; charset=utf-8",
        "html" | "htm" => "text/html; charset=utf-8",
        "json" => "application/json",
        "pdf" => "application/pdf",
        "png" => "image/png",
        "jpg" | "jpeg" => "image/jpeg",
        "gif" => "image/gif",
        "zip" => "application/zip",
        _ => "application/octet-stream",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addresses_and_subjects_with_line_breaks_are_refused() {
        assert_eq!(
            address(" bob@example.com ").as_deref(),
            Ok("bob@example.com")
        );
        for bad in [
            "bob@example.com\r\nBcc: eve@evil.org",
            "bob@example.com\n",
            "Bob <bob@example.com>",
            "bob@example.com, eve@evil.org",
            "bob",
            "@example.com",
            "bob@localhost",
            "bö@example.com",
        ] {
            assert!(address(bad).is_err(), "{bad:?}");
        }
        assert!(subject("Hello\r\nBcc: eve@evil.org").is_err());
        assert!(subject("tab\there").is_err());
        assert!(subject("Grüße, all fine").is_ok());
        assert_eq!(
            sender("Ada Lovelace <ada@example.com>"),
            Ok((Some("Ada Lovelace".into()), "ada@example.com".into()))
        );
        assert_eq!(
            sender("ada@example.com"),
            Ok((None, "ada@example.com".into()))
        );
    }

    #[test]
    fn a_message_is_seven_bit_with_short_lines_and_no_bcc() {
        let to = vec!["bob@example.com".to_owned()];
        let m = Message {
            from_name: Some("Ada \"the\" Countess"),
            from: "ada@example.com",
            to: &to,
            cc: &[],
            subject: "Grüße aus Zürich — ein längerer Betreff, der in mehrere Wörter kodiert wird",
            body: "line one\nline two\n.\n",
            attachments: &[Attachment {
                name: "résumé.pdf".into(),
                bytes: vec![0, 1, 2, 255],
            }],
        };
        let bytes = m.build("x@example.com");
        let text = String::from_utf8(bytes).unwrap_or_default();
        assert!(text.is_ascii());
        assert!(text.lines().all(|l| l.len() <= 78), "{text}");
        assert!(text.contains("Subject: =?UTF-8?B?"), "{text}");
        assert!(
            text.contains("filename*=UTF-8''r%C3%A9sum%C3%A9.pdf"),
            "{text}"
        );
        assert!(text.contains("From: \"Ada \\\"the\\\" Countess\" <ada@example.com>"));
        // No Bcc header; the letters may still occur in encoded words, base64 and the boundary.
        assert!(
            !text
                .lines()
                .any(|l| l.to_ascii_lowercase().starts_with("bcc:")),
            "{text}"
        );
    }
}
