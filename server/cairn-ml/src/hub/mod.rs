//! OCR and the model hub: text of an image by Tesseract in a sandbox container (`ocr`), and
//! the Hugging Face Hub's models and datasets (`search`, `model_card`, `dataset_preview`).
//!
//! Every hub request goes through the web guard ([`get`]): its address checks, rate limits and
//! byte cap apply, and the optional token is a vault secret the guard attaches itself, only to
//! the hub's host. The model's repository ids are checked ([`repo_id`]) before they become
//! part of a path, so an id cannot reach another endpoint.

pub(crate) mod dataset_preview;
pub(crate) mod model_card;
pub(crate) mod ocr;
pub(crate) mod search;
pub(crate) mod settings;

use cairn_toolkit::CallContext;
use cairn_web::{CredentialUse, WebRequest};
use percent_encoding::{AsciiSet, NON_ALPHANUMERIC, utf8_percent_encode};

use crate::ml::Ml;

/// Which of the two services a request is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Service {
    Hub,
    Viewer,
}

/// What a request brought back: a 2xx body, whether the guard's byte cap cut it, and whether
/// the service links a next page (`Link: <...>; rel="next"`, as the Hub's lists do).
pub(crate) struct Answer {
    pub body: Vec<u8>,
    pub truncated: bool,
    pub next_page: bool,
}

/// Characters of a query value encoded: everything but unreserved ones.
const QUERY: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'_')
    .remove(b'.')
    .remove(b'~');

/// `value` encoded for a URL's query or one path segment.
pub(crate) fn encode(value: &str) -> String {
    utf8_percent_encode(value, QUERY).to_string()
}

/// A repository id (`owner/name`, or a legacy `name`) checked, so that it is one or two plain
/// path segments: letters, digits, `-`, `_`, `.`, never `..`.
pub(crate) fn repo_id(id: &str, what: &str) -> Result<String, String> {
    let id = id.trim();
    let segment_ok = |s: &str| {
        !s.is_empty()
            && s.len() <= 96
            && s != "."
            && !s.contains("..")
            && s.chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
    };
    let parts: Vec<&str> = id.split('/').collect();
    if (1..=2).contains(&parts.len()) && parts.iter().all(|s| segment_ok(s)) {
        Ok(id.to_owned())
    } else {
        Err(format!(
            "`{id}` is not a {what} id: give it as `owner/name` (letters, digits, `-`, `_`, `.`), \
             e.g. `sentence-transformers/all-MiniLM-L6-v2`; hf_search finds ids"
        ))
    }
}

/// GET `path` (with `query`, already encoded by [`encode`]) from `service`, through the guard;
/// every status but 2xx is an error that names what failed and what to do. `what` names the
/// thing asked for in those messages (`model google-bert/bert-base-uncased`).
pub(crate) async fn get(
    ml: &Ml,
    service: Service,
    path: &str,
    query: &[(&str, String)],
    what: &str,
    cx: &CallContext,
) -> Result<Answer, String> {
    let guard = ml.guard.as_ref().ok_or(
        "the hub tools reach the network through the web guard, and the web tools are off \
         (`[web] enabled = false`, or the guard could not be built): turn them on to use the hub",
    )?;
    let (base, key) = match service {
        Service::Hub => (&ml.hub.hub_url, "hub_url"),
        Service::Viewer => (&ml.hub.datasets_url, "datasets_url"),
    };
    let mut url = format!("{}{path}", base.trim_end_matches('/'));
    if !query.is_empty() {
        let pairs: Vec<String> = query.iter().map(|(k, v)| format!("{k}={v}")).collect();
        url.push('?');
        url.push_str(&pairs.join("&"));
    }
    let mut request = WebRequest::get(url);
    request.headers.insert(
        cairn_web::header::ACCEPT,
        cairn_web::header::HeaderValue::from_static("application/json, text/plain;q=0.9"),
    );
    // The token is for the hub only; the guard sends it to no other host (nor on a redirect
    // to the CDN the hub hands files to).
    if let (Service::Hub, Some(secret)) = (service, &ml.hub.secret) {
        request = request.with_credential(CredentialUse::bearer(secret.clone()));
    }
    let response = tokio::select! {
        r = guard.fetch(request) => r.map_err(|e| format!("{what}: {e}"))?,
        () = cx.cancel.cancelled() => return Err("cancelled".into()),
    };
    let status = response.status.as_u16();
    if response.status.is_success() {
        let next_page = response
            .headers
            .get_all(cairn_web::header::LINK)
            .iter()
            .filter_map(|v| v.to_str().ok())
            .any(|v| v.contains("rel=\"next\""));
        return Ok(Answer {
            body: response.body,
            truncated: response.truncated,
            next_page,
        });
    }
    let said = said(&response.body);
    let host = response
        .final_url
        .host_str()
        .unwrap_or("the hub")
        .to_owned();
    Err(match status {
        401 | 403 => format!(
            "{what}: {host} refused access (HTTP {status}{said}): it may be gated or private; \
             accept its terms on the Hub and set `[ml] hub_secret` to a vault secret holding a \
             Hub token bound to {host}"
        ),
        404 => format!(
            "{what} was not found on {host} (HTTP 404{said}): check the id (`owner/name`, \
             case matters), or find it with hf_search"
        ),
        429 => {
            let wait = response
                .headers
                .get(cairn_web::header::RETRY_AFTER)
                .and_then(|v| v.to_str().ok())
                .map(|v| format!("; it asks to wait {v} s"))
                .unwrap_or_default();
            format!(
                "{what}: {host}'s rate limit was reached (HTTP 429{wait}); wait before asking \
                 again, or set `[ml] hub_secret` (a token has a higher limit)"
            )
        }
        500..=599 => format!("{what}: {host} failed (HTTP {status}{said}); try again later"),
        _ => format!("{what}: {host} answered HTTP {status}{said} (`[ml] {key}` = {base})"),
    })
}

/// The service's own words in an error body (`{"error": "..."}`), briefly.
fn said(body: &[u8]) -> String {
    let text = match serde_json::from_slice::<serde_json::Value>(body) {
        Ok(v) => v["error"].as_str().map(str::to_owned).unwrap_or_default(),
        Err(_) => String::new(),
    };
    if text.trim().is_empty() {
        String::new()
    } else {
        format!(": {}", cairn_toolkit::table::cut(text.trim(), 300))
    }
}

/// An answer as JSON; one cut by the byte cap, or not JSON at all (a mirror that is not a hub,
/// a login page), is an error that says so.
pub(crate) fn json(answer: &Answer, what: &str, ml: &Ml) -> Result<serde_json::Value, String> {
    if answer.truncated {
        return Err(format!(
            "{what}: the answer is larger than the web guard's byte cap (`[web] max_bytes`) \
             and was cut; ask for less (a smaller limit)"
        ));
    }
    serde_json::from_slice(&answer.body).map_err(|_| {
        let start: String = String::from_utf8_lossy(&answer.body)
            .chars()
            .take(80)
            .collect();
        format!(
            "{what}: the answer is not JSON (it starts {start:?}); is `[ml] hub_url` ({}) / \
             `datasets_url` ({}) a Hugging Face Hub?",
            ml.hub.hub_url, ml.hub.datasets_url
        )
    })
}

/// A JSON number as a readable count (`1234567` → `1.2M`).
pub(crate) fn count(v: &serde_json::Value) -> String {
    match v.as_u64() {
        Some(n) if n >= 1_000_000_000 => format!("{:.1}B", n as f64 / 1e9),
        Some(n) if n >= 1_000_000 => format!("{:.1}M", n as f64 / 1e6),
        Some(n) if n >= 10_000 => format!("{:.1}k", n as f64 / 1e3),
        Some(n) => n.to_string(),
        None => "-".to_owned(),
    }
}

/// An ISO timestamp's date (`2024-01-05T10:00:00.000Z` → `2024-01-05`).
pub(crate) fn date(v: &serde_json::Value) -> String {
    v.as_str()
        .map(|s| s.split('T').next().unwrap_or(s).to_owned())
        .unwrap_or_else(|| "-".to_owned())
}
