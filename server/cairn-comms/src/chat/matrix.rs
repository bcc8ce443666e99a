//! What the Matrix tools share: requests to the homeserver's client-server API through the web
//! guard (the access token is the vault secret `token_secret`, attached by the guard as Bearer),
//! the homeserver's errors in words the model can act on, the allowed-room check, and the small
//! Markdown subset a message may be written in.

use cairn_config::MatrixConfig;
use cairn_toolkit::reply::error;
use cairn_toolkit::{CallContext, ToolError};
use cairn_web::{CredentialUse, Method, WebGuard, WebRequest, header};
use percent_encoding::{NON_ALPHANUMERIC, utf8_percent_encode};
use rmcp::model::CallToolResult;
use serde_json::Value;

use crate::comms::{Comms, cancelled};

/// The setting that allows rooms, named in refusals.
pub(crate) const ALLOW_SETTING: &str = "comms.matrix.allow_rooms";

/// The most of a homeserver's error text shown (it is the server's words, not ours).
const SHOWN_ERROR: usize = 300;

/// One account's client-server API, for one call.
pub(crate) struct Matrix<'a> {
    guard: &'a WebGuard,
    /// The homeserver without a trailing `/`.
    base: String,
    pub(crate) settings: &'a MatrixConfig,
    user: &'a str,
}

impl<'a> Matrix<'a> {
    /// The account of `host`'s `[comms.matrix]`, or the error saying what is missing.
    #[allow(clippy::result_large_err)] // the error is the call's result, built once
    pub(crate) fn of(host: &'a Comms) -> Result<Matrix<'a>, CallToolResult> {
        let Some(settings) = host.settings.matrix.as_ref() else {
            return Err(error(
                "no Matrix account is configured: add `[comms.matrix]` (homeserver, token_secret, allow_rooms) to your config",
            ));
        };
        let Some(guard) = host.guard.as_deref() else {
            return Err(error(
                "the web tools are off (`[web] enabled = false`), so the homeserver cannot be reached",
            ));
        };
        Ok(Matrix {
            guard,
            base: settings.homeserver.trim_end_matches('/').to_owned(),
            settings,
            user: &host.user,
        })
    }

    /// `method` on `path` (from `/_matrix/...`, already encoded) with a JSON `body`: the JSON the
    /// homeserver answered, or an error the model can act on.
    pub(crate) async fn call(
        &self,
        method: Method,
        path: &str,
        body: Option<&Value>,
        cx: &CallContext,
    ) -> Result<Value, ToolError> {
        let mut request = WebRequest::new(method, format!("{}{path}", self.base))
            .for_user(self.user)
            .with_credential(CredentialUse::bearer(&self.settings.token_secret));
        if let Some(body) = body {
            request.body = Some(serde_json::to_vec(body).map_err(ToolError::invalid)?);
            request.headers.insert(
                header::CONTENT_TYPE,
                header::HeaderValue::from_static("application/json"),
            );
        }
        let response = tokio::select! {
            r = self.guard.fetch(request) => r,
            () = cx.cancel.cancelled() => return Err(cancelled()),
        };
        let response = match response {
            Ok(r) => r,
            Err(e) if e.is_denial() => {
                return Err(ToolError::refused(format!("refused before sending: {e}")));
            }
            Err(e) => {
                return Err(ToolError::peer(format!(
                    "the homeserver {} did not answer: {e}",
                    self.base
                )));
            }
        };
        if response.truncated {
            return Err(ToolError::limit(format!(
                "the homeserver's answer was larger than the web guard's size cap and was cut ({} bytes read); ask for less (a smaller limit)",
                response.body.len()
            )));
        }
        let json: Value = serde_json::from_slice(&response.body).unwrap_or(Value::Null);
        let status = response.status.as_u16();
        if response.status.is_success() {
            return Ok(json);
        }
        let code = json["errcode"].as_str().unwrap_or("no errcode");
        let said: String = json["error"]
            .as_str()
            .unwrap_or("")
            .chars()
            .take(SHOWN_ERROR)
            .collect();
        Err(match status {
            401 => ToolError::peer(format!(
                "the homeserver refused the access token in vault secret `{}` ({status} {code}: {said}); it is wrong or expired: store a fresh token in the vault",
                self.settings.token_secret
            )),
            429 => ToolError::limit(format!(
                "the homeserver is rate-limiting this account ({code}); try again in {} s",
                json["retry_after_ms"]
                    .as_u64()
                    .unwrap_or(1000)
                    .div_ceil(1000)
            )),
            _ => ToolError::peer(format!("the homeserver answered {status} ({code}: {said})")),
        })
    }

    /// The room id of `room`: itself when it is an id (`!...`), else the alias resolved
    /// through the homeserver's directory.
    pub(crate) async fn room_id(&self, room: &str, cx: &CallContext) -> Result<String, ToolError> {
        if room.starts_with('!') {
            return Ok(room.to_owned());
        }
        let found = self
            .call(
                Method::GET,
                &format!("/_matrix/client/v3/directory/room/{}", enc(room)),
                None,
                cx,
            )
            .await
            .map_err(|e| e.context(format!("could not resolve the alias {room}")))?;
        found["room_id"].as_str().map(str::to_owned).ok_or_else(|| {
            ToolError::unreadable(format!(
                "the homeserver gave no room id for the alias {room}"
            ))
        })
    }
}

/// Whether `room` (an id or alias, as given) is shaped like one: a sigil, a name, no spaces or
/// controls. Aliases carry a server part (`#dev:example.org`).
pub(crate) fn check_room(room: &str) -> Result<(), ToolError> {
    let room = room.trim();
    let shaped = (room.starts_with('!') || (room.starts_with('#') && room.contains(':')))
        && room.len() > 2
        && room.len() <= 255
        && !room.chars().any(|c| c.is_whitespace() || c.is_control());
    if shaped {
        Ok(())
    } else {
        // The message names the argument (`room`), so it is shown as it is.
        Err(ToolError::invalid_argument(
            "room",
            format!(
                "{room:?} is not a Matrix room id (`!abc:example.org`) or alias (`#dev:example.org`)"
            ),
        ))
    }
}

/// Whether `room` (as given, or its canonical alias) is in `[comms.matrix] allow_rooms`.
pub(crate) fn is_allowed(settings: &MatrixConfig, room: &str) -> bool {
    settings
        .allow_rooms
        .iter()
        .any(|p| crate::send::allowed(p, room))
}

/// The refusal for reading a room that is not allowed (sends are refused by `check_send`).
pub(crate) fn not_allowed(settings: &MatrixConfig, room: &str) -> CallToolResult {
    let allowed = if settings.allow_rooms.is_empty() {
        "none".to_owned()
    } else {
        settings.allow_rooms.join(", ")
    };
    error(format!(
        "matrix: {room} is not an allowed room; add it to `{ALLOW_SETTING}` in your config (allowed now: {allowed}); `matrix_rooms` lists the rooms this account has joined"
    ))
}

/// `s` as one path segment.
pub(crate) fn enc(s: &str) -> String {
    utf8_percent_encode(s, NON_ALPHANUMERIC).to_string()
}

/// Milliseconds since the epoch as `2026-12-02 09:30:00 UTC`.
pub(crate) fn time_of(ms: Option<i64>) -> String {
    ms.and_then(chrono::DateTime::from_timestamp_millis)
        .map(|t| t.format("%Y-%m-%d %H:%M:%S UTC").to_string())
        .unwrap_or_else(|| "unknown time".into())
}

/// The `formatted_body` of a Markdown message: fenced code blocks, and per line `code`,
/// **bold**, *italic* and [links](https://...) (http, https and mailto only), everything else
/// escaped; lines end in `<br>`. A small subset, so what was written is what is shown.
pub(crate) fn markdown_html(text: &str) -> String {
    let mut out = String::new();
    let mut in_code = false;
    let mut lines = Vec::new();
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            if in_code {
                out.push_str(&lines.join("\n"));
                out.push_str("</code></pre>");
                lines.clear();
            } else {
                out.push_str("<pre><code>");
            }
            in_code = !in_code;
            continue;
        }
        if in_code {
            lines.push(cairn_toolkit::html::escape(line));
        } else {
            out.push_str(&inline(line));
            out.push_str("<br>");
        }
    }
    if in_code {
        out.push_str(&lines.join("\n"));
        out.push_str("</code></pre>");
    }
    out.strip_suffix("<br>").unwrap_or(&out).to_owned()
}

/// One line's inline Markdown as HTML.
fn inline(line: &str) -> String {
    let chars: Vec<char> = line.chars().collect();
    let mut out = String::new();
    let mut i = 0;
    let find = |from: usize, pat: &[char]| -> Option<usize> {
        (from..chars.len().saturating_sub(pat.len() - 1)).find(|&j| chars[j..j + pat.len()] == *pat)
    };
    let span = |a: usize, b: usize| chars[a..b].iter().collect::<String>();
    while i < chars.len() {
        let c = chars[i];
        if c == '`'
            && let Some(end) = find(i + 1, &['`'])
        {
            out.push_str(&format!(
                "<code>{}</code>",
                cairn_toolkit::html::escape(&span(i + 1, end))
            ));
            i = end + 1;
            continue;
        }
        if c == '*'
            && chars.get(i + 1) == Some(&'*')
            && let Some(end) = find(i + 2, &['*', '*'])
            && end > i + 2
        {
            out.push_str(&format!("<strong>{}</strong>", inline(&span(i + 2, end))));
            i = end + 2;
            continue;
        }
        if (c == '*' || c == '_')
            && let Some(end) = find(i + 1, &[c])
            && end > i + 1
        {
            out.push_str(&format!("<em>{}</em>", inline(&span(i + 1, end))));
            i = end + 1;
            continue;
        }
        if c == '['
            && let Some(close) = find(i + 1, &[']', '('])
            && let Some(end) = find(close + 2, &[')'])
        {
            let url = span(close + 2, end);
            if ["https://", "http://", "mailto:"]
                .iter()
                .any(|s| url.starts_with(s))
            {
                out.push_str(&format!(
                    "<a href=\"{}\">{}</a>",
                    cairn_toolkit::html::escape(&url),
                    inline(&span(i + 1, close))
                ));
                i = end + 1;
                continue;
            }
        }
        out.push_str(&cairn_toolkit::html::escape(&c.to_string()));
        i += 1;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markdown_is_a_small_escaped_subset() {
        assert_eq!(
            markdown_html("**Deploy** done: `v1.2` <b>x</b>\nsee [notes](https://x.org/a?b=1&c=2)"),
            "<strong>Deploy</strong> done: <code>v1.2</code> &lt;b&gt;x&lt;/b&gt;<br>see <a href=\"https://x.org/a?b=1&amp;c=2\">notes</a>"
        );
        assert_eq!(
            markdown_html("[x](javascript:alert(1)) *a*"),
            "[x](javascript:alert(1)) <em>a</em>"
        );
        assert_eq!(
            markdown_html("```\nfn <x>\n```"),
            "<pre><code>fn &lt;x&gt;</code></pre>"
        );
        assert_eq!(markdown_html("2 * 3 and `unclosed"), "2 * 3 and `unclosed");
    }

    #[test]
    fn rooms_are_shaped_like_rooms() {
        assert!(check_room("!abc:example.org").is_ok());
        assert!(check_room("!abcdef").is_ok());
        assert!(check_room("#dev:example.org").is_ok());
        assert!(check_room("#dev").is_err());
        assert!(check_room("dev").is_err());
        assert!(check_room("!a b:x").is_err());
    }
}
