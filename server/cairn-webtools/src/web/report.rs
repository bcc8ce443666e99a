//! How a response is shown to the model: its URL, status and redirects, its content type, and
//! its content one part at a time.

use super::extract::page;
use cairn_web::WebResponse;

/// The response's content type, lower case; empty when it has none.
pub(super) fn content_type(r: &WebResponse) -> String {
    r.headers
        .get(cairn_web::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_ascii_lowercase()
}

/// Whether a body is HTML: by its content type, or by its first bytes when it has none.
pub(super) fn is_html(ct: &str, body: &[u8]) -> bool {
    if ct.contains("html") {
        return true;
    }
    if !ct.is_empty() {
        return false;
    }
    let head = String::from_utf8_lossy(&body[..body.len().min(512)]).to_ascii_lowercase();
    let head = head.trim_start();
    head.starts_with("<!doctype html") || head.starts_with("<html")
}

/// Whether a content type is text the model can read as it is.
pub(super) fn is_text(ct: &str) -> bool {
    ct.is_empty()
        || ct.starts_with("text/")
        || [
            "json",
            "xml",
            "javascript",
            "ecmascript",
            "yaml",
            "toml",
            "csv",
        ]
        .iter()
        .any(|t| ct.contains(t))
}

/// The lines every report starts with: final URL, status, redirects, and a cut body.
pub(super) fn header_lines(r: &WebResponse) -> String {
    let mut out = format!("URL: {}\nStatus: {}\n", r.final_url, r.status);
    if r.redirects > 0 {
        out.push_str(&format!("Redirects followed: {}\n", r.redirects));
    }
    if r.truncated {
        out.push_str("Note: the download stopped at the web guard's size cap; the rest of the page was not read.\n");
    }
    out
}

/// The header lines, then `max` characters of `content` from `start`, saying where to go on.
pub(super) fn fetch_report(
    r: &WebResponse,
    ct: &str,
    content: &str,
    start: usize,
    max: usize,
) -> String {
    let mut out = header_lines(r);
    if !ct.is_empty() {
        out.push_str(&format!("Content-Type: {ct}\n"));
    }
    out.push('\n');
    let (part, next) = page(content, start, max);
    if part.is_empty() && start > 0 {
        out.push_str(&format!(
            "(no content from start_index={start}: the content has {} characters)\n",
            content.chars().count()
        ));
        return out;
    }
    out.push_str(part);
    if let Some(n) = next {
        out.push_str(&format!(
            "\n\n[content truncated; call again with start_index={n}]"
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use url::Url;

    use super::*;

    #[test]
    fn fetch_report_says_how_to_continue() {
        let r = WebResponse {
            status: cairn_web::StatusCode::OK,
            final_url: Url::parse("https://example.com/a").unwrap_or_else(|e| panic!("{e}")),
            headers: Default::default(),
            body: Vec::new(),
            truncated: true,
            redirects: 0,
        };
        let content = "x".repeat(30);
        let out = fetch_report(&r, "text/plain", &content, 0, 10);
        assert!(out.contains("URL: https://example.com/a"), "{out}");
        assert!(out.contains("call again with start_index=10"), "{out}");
        assert!(out.contains("size cap"), "{out}");
        let last = fetch_report(&r, "text/plain", &content, 20, 10);
        assert!(!last.contains("start_index="), "{last}");
    }
}
