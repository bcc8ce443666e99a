//! Turning a tool's arguments into a guarded [`WebRequest`] (URL, query, headers, body, vault
//! secret), and a [`WebResponse`] into the text the model reads.
//!
//! Nothing here expands anything: a URL, header or body is sent as the model wrote it, so
//! `{{vault.github}}` or `secret:github` in it stays that text. The only way to a secret is the
//! `auth` argument, which names it; the guard attaches its value for hosts it is bound to.

use std::collections::BTreeMap;

use cairn_web::header::{HeaderMap, HeaderName, HeaderValue};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Map, Value};
use url::Url;

use cairn_web::{CredentialUse, Method, Placement, WebRequest, WebResponse};

/// The `headers` argument of a tool (names to values, as written) as [`Outgoing`] takes it.
pub fn header_args(headers: BTreeMap<String, String>) -> Map<String, Value> {
    headers
        .into_iter()
        .map(|(name, value)| (name, Value::String(value)))
        .collect()
}

/// How many characters of a body are shown by default.
pub const DEFAULT_MAX_LENGTH: usize = 20_000;

/// A request's use of a vault secret, as tools take it: `{"secret": "github", "scheme":
/// "bearer"}`. `name` is the header (`header`), the query parameter (`query`) or the user name
/// (`basic`). The field docs are what the model reads in every `auth` argument's schema.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(
    description = "Authenticate with a secret from the user's vault, by name (the value is attached by cairn only for hosts the secret is bound to; you never see it). Never put secrets in the URL, headers or body yourself."
)]
pub struct ApiAuth {
    /// The vault secret's name.
    pub secret: String,
    /// bearer (default): Authorization: Bearer; basic: with name as the user name; header: the header called name; query: the query parameter called name.
    #[serde(default)]
    pub scheme: AuthScheme,
    /// Header name, query parameter or user name, per scheme.
    pub name: Option<String>,
}

/// Where the secret goes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum AuthScheme {
    #[default]
    Bearer,
    Basic,
    Header,
    Query,
}

impl ApiAuth {
    /// The [`CredentialUse`] the guard acts on; a scheme that needs a `name` says so.
    pub fn credential(&self) -> Result<CredentialUse, String> {
        if self.secret.trim().is_empty() {
            return Err("auth.secret must name a vault secret".into());
        }
        let name = |what: &str| {
            self.name
                .clone()
                .filter(|n| !n.trim().is_empty())
                .ok_or_else(|| format!("auth.scheme `{what}` needs auth.name"))
        };
        let placement = match self.scheme {
            AuthScheme::Bearer => Placement::Bearer,
            AuthScheme::Basic => Placement::Basic {
                username: name("basic")?,
            },
            AuthScheme::Header => {
                let header = name("header")?;
                match HeaderName::from_bytes(header.as_bytes()) {
                    Err(_) => return Err(format!("auth.name {header:?} is not a header name")),
                    Ok(name) if LAYER_HEADERS.contains(&name.as_str()) => {
                        return Err(format!(
                            "auth.name {header:?} is set by the HTTP layer and cannot carry a secret"
                        ));
                    }
                    Ok(_) => {}
                }
                Placement::Header(header)
            }
            AuthScheme::Query => Placement::Query(name("query")?),
        };
        Ok(CredentialUse {
            secret: self.secret.clone(),
            placement,
        })
    }
}

/// The URL from `url`, or `base_url` joined with `path` (one slash between them), with the
/// `query` object's pairs appended (arrays repeat the key, null is skipped, objects as JSON).
pub fn target_url(
    url: Option<&str>,
    base_url: Option<&str>,
    path: Option<&str>,
    query: &Map<String, Value>,
) -> Result<String, String> {
    let text = match (url, base_url) {
        (Some(_), Some(_)) => {
            return Err("give either url or base_url (with path), not both".into());
        }
        (Some(url), None) => {
            if path.is_some() {
                return Err("path goes with base_url, not url".into());
            }
            url.to_owned()
        }
        (None, Some(base)) => match path {
            Some(path) if !path.is_empty() => format!(
                "{}/{}",
                base.trim_end_matches('/'),
                path.trim_start_matches('/')
            ),
            _ => base.to_owned(),
        },
        (None, None) => return Err("url (or base_url with path) is required".into()),
    };
    if query.is_empty() {
        // Sent as written; the guard parses and checks it.
        return Ok(text);
    }
    let mut parsed = Url::parse(&text).map_err(|e| format!("invalid URL {text:?}: {e}"))?;
    append_query(&mut parsed, query);
    Ok(parsed.to_string())
}

/// Appends `query`'s pairs to `url`, in key order (whichever order serde_json keeps an object in).
pub fn append_query(url: &mut Url, query: &Map<String, Value>) {
    let mut entries: Vec<_> = query.iter().collect();
    entries.sort_by(|a, b| a.0.cmp(b.0));
    let mut pairs = url.query_pairs_mut();
    for (key, value) in entries {
        for v in scalar_list(value) {
            pairs.append_pair(key, &v);
        }
    }
}

/// A parameter value as the strings sent: arrays repeat, null is nothing, objects are JSON.
pub fn scalar_list(value: &Value) -> Vec<String> {
    match value {
        Value::Null => Vec::new(),
        Value::Array(items) => items.iter().flat_map(scalar_list).collect(),
        other => vec![scalar(other)],
    }
}

/// One value as text: strings as they are, everything else as JSON.
pub fn scalar(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// Headers the HTTP layer sets itself (framing and routing): the model may not set them.
const LAYER_HEADERS: [&str; 5] = [
    "host",
    "content-length",
    "transfer-encoding",
    "connection",
    "upgrade",
];

/// The model's headers as a [`HeaderMap`]. `Authorization` and `Cookie` are allowed: they are
/// the model's own text, sent verbatim (never expanded), and the guard drops them when a
/// redirect leaves the origin. A secret from the vault comes only through `auth`.
pub fn header_map(headers: &Map<String, Value>) -> Result<HeaderMap, String> {
    let mut map = HeaderMap::new();
    for (name, value) in headers {
        let header = HeaderName::from_bytes(name.as_bytes())
            .map_err(|_| format!("{name:?} is not a valid header name"))?;
        if LAYER_HEADERS.contains(&header.as_str()) {
            return Err(format!(
                "the {name} header is set by the HTTP layer and cannot be given"
            ));
        }
        let text = scalar(value);
        let value = HeaderValue::from_str(&text)
            .map_err(|_| format!("the value of header {name} is not a valid header value"))?;
        map.append(header, value);
    }
    Ok(map)
}

/// Everything a request needs from the arguments; tools fill what they take.
#[derive(Debug, Default)]
pub struct Outgoing {
    pub method: Option<String>,
    pub url: String,
    pub headers: Map<String, Value>,
    /// A body and its default content type (a `Content-Type` header wins).
    pub body: Option<(Vec<u8>, String)>,
    pub auth: Option<ApiAuth>,
}

/// The method named by the model, upper-cased; only the standard ones.
pub fn method(name: Option<&str>) -> Result<Method, String> {
    let name = name.unwrap_or("GET").to_ascii_uppercase();
    match name.as_str() {
        "GET" | "HEAD" | "POST" | "PUT" | "PATCH" | "DELETE" | "OPTIONS" => {
            Method::from_bytes(name.as_bytes()).map_err(|e| format!("method {name}: {e}"))
        }
        other => Err(format!(
            "method {other} is not supported (GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS)"
        )),
    }
}

/// A JSON body or a text one (not both), with its default content type.
pub fn body_of(
    json: Option<&Value>,
    body: Option<&str>,
    content_type: Option<&str>,
) -> Result<Option<(Vec<u8>, String)>, String> {
    match (json, body) {
        (Some(_), Some(_)) => Err("give either json or body, not both".into()),
        (Some(json), None) => Ok(Some((
            json.to_string().into_bytes(),
            content_type.unwrap_or("application/json").to_owned(),
        ))),
        (None, Some(text)) => Ok(Some((
            text.as_bytes().to_vec(),
            content_type
                .unwrap_or("text/plain; charset=utf-8")
                .to_owned(),
        ))),
        (None, None) => Ok(None),
    }
}

impl Outgoing {
    /// The [`WebRequest`] on behalf of `user`.
    pub fn build(self, user: &str) -> Result<WebRequest, String> {
        let method = method(self.method.as_deref())?;
        let mut request = WebRequest::new(method, self.url).for_user(user);
        request.headers = header_map(&self.headers)?;
        if let Some((bytes, content_type)) = self.body {
            if !request
                .headers
                .contains_key(cairn_web::header::CONTENT_TYPE)
            {
                let value = HeaderValue::from_str(&content_type)
                    .map_err(|_| format!("{content_type:?} is not a valid content type"))?;
                request
                    .headers
                    .insert(cairn_web::header::CONTENT_TYPE, value);
            }
            request.body = Some(bytes);
        }
        if let Some(auth) = &self.auth {
            request.credential = Some(auth.credential()?);
        }
        Ok(request)
    }
}

/// The response's content type, lower case.
pub fn content_type(r: &WebResponse) -> String {
    r.headers
        .get(cairn_web::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_ascii_lowercase()
}

/// Response headers worth showing from an API: content, paging, caching, rate limits, errors.
fn shown_header(name: &str) -> bool {
    matches!(
        name,
        "content-type"
            | "content-length"
            | "location"
            | "link"
            | "etag"
            | "last-modified"
            | "retry-after"
            | "www-authenticate"
            | "allow"
            | "x-request-id"
            | "x-total-count"
    ) || name.starts_with("x-ratelimit-")
        || name.starts_with("ratelimit")
        || name.starts_with("access-control-")
}

/// The status block: method and final URL, status, redirects, the size-cap note and the
/// headers worth showing (`Set-Cookie` counted, not shown: it is session state, not data).
pub fn status_block(method: &Method, r: &WebResponse) -> String {
    let mut out = format!("{method} {}\nStatus: {}\n", r.final_url, r.status);
    if r.redirects > 0 {
        out.push_str(&format!("Redirects followed: {}\n", r.redirects));
    }
    if r.truncated {
        out.push_str(
            "Note: the body stopped at the web guard's size cap; the rest was not read.\n",
        );
    }
    let mut cookies = 0;
    for (name, value) in &r.headers {
        if name == cairn_web::header::SET_COOKIE {
            cookies += 1;
        } else if shown_header(name.as_str()) {
            out.push_str(&format!(
                "{name}: {}\n",
                String::from_utf8_lossy(value.as_bytes())
            ));
        }
    }
    if cookies > 0 {
        out.push_str(&format!("set-cookie: ({cookies} cookies, not shown)\n"));
    }
    out
}

/// The body as the model reads it: JSON pretty-printed, text as text, binary described.
pub fn body_text(r: &WebResponse) -> String {
    if r.body.is_empty() {
        return String::new();
    }
    if let Ok(json) = serde_json::from_slice::<Value>(&r.body) {
        return serde_json::to_string_pretty(&json).unwrap_or_default();
    }
    let ct = content_type(r);
    let looks_binary = r.body.iter().take(8192).any(|b| *b == 0);
    if looks_binary
        || ct.starts_with("image/")
        || ct.starts_with("audio/")
        || ct.starts_with("video/")
        || ct == "application/octet-stream"
    {
        return format!(
            "(binary body: {} bytes of {}; not shown)",
            r.body.len(),
            if ct.is_empty() { "unknown type" } else { &ct }
        );
    }
    String::from_utf8_lossy(&r.body).into_owned()
}

/// `text` from character `start`, at most `max` characters, and where the next part starts.
pub fn page(text: &str, start: usize, max: usize) -> (&str, Option<usize>) {
    let mut indices = text.char_indices().map(|(i, _)| i).skip(start);
    let Some(from) = indices.next() else {
        return ("", None);
    };
    let mut rest = text[from..].char_indices().map(|(i, _)| i);
    match rest.nth(max.max(1)) {
        Some(to) => (&text[from..from + to], Some(start + max.max(1))),
        None => (&text[from..], None),
    }
}

/// `body` paged, with the note that says how to go on.
pub fn paged(body: &str, start: usize, max: Option<usize>) -> String {
    let max = max.unwrap_or(DEFAULT_MAX_LENGTH).max(1);
    let (part, next) = page(body, start, max);
    if part.is_empty() && start > 0 {
        return format!(
            "(nothing from start_index={start}: the body has {} characters)",
            body.chars().count()
        );
    }
    let mut out = part.to_owned();
    if let Some(n) = next {
        out.push_str(&format!(
            "\n\n[body truncated; call again with start_index={n}]"
        ));
    }
    out
}

/// Status block, blank line, paged body.
pub fn report(method: &Method, r: &WebResponse, start: usize, max: Option<usize>) -> String {
    let mut out = status_block(method, r);
    let body = body_text(r);
    if !body.is_empty() {
        out.push('\n');
        out.push_str(&paged(&body, start, max));
    }
    out
}

/// The value at JSON Pointer `pointer` (RFC 6901; `""` is the whole document), or an error
/// naming what is there instead.
pub fn select<'a>(doc: &'a Value, pointer: &str) -> Result<&'a Value, String> {
    if !pointer.is_empty() && !pointer.starts_with('/') {
        return Err(format!(
            "{pointer:?} is not a JSON Pointer: it must be empty or start with / (e.g. /data/items)"
        ));
    }
    doc.pointer(pointer).ok_or_else(|| {
        let keys = match doc {
            Value::Object(map) => format!(
                "the top-level keys are {}",
                map.keys().take(30).cloned().collect::<Vec<_>>().join(", ")
            ),
            Value::Array(items) => format!("the document is an array of {}", items.len()),
            _ => "the document is a single value".into(),
        };
        format!("nothing at JSON Pointer {pointer:?}; {keys}")
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paging_counts_characters() {
        assert_eq!(page("héllo wörld", 0, 5), ("héllo", Some(5)));
        assert_eq!(page("héllo wörld", 6, 50), ("wörld", None));
        assert_eq!(page("abc", 9, 5), ("", None));
    }

    #[test]
    fn urls_join_and_take_query_pairs() {
        let mut q = Map::new();
        q.insert("a".into(), Value::from("x y"));
        q.insert("n".into(), Value::from(vec![1, 2]));
        q.insert("skip".into(), Value::Null);
        let url = target_url(None, Some("https://api.test/v1/"), Some("/pets"), &q);
        assert_eq!(url.as_deref(), Ok("https://api.test/v1/pets?a=x+y&n=1&n=2"));
        assert!(target_url(Some("https://a.test"), Some("https://b.test"), None, &q).is_err());
        assert!(target_url(None, None, None, &q).is_err());
    }

    #[test]
    fn framing_headers_are_refused() {
        let mut h = Map::new();
        h.insert("Host".into(), Value::from("evil.test"));
        assert!(header_map(&h).is_err());
        let mut h = Map::new();
        h.insert("Authorization".into(), Value::from("Bearer mine"));
        assert!(header_map(&h).is_ok());
    }

    #[test]
    fn auth_schemes_need_their_name() {
        let auth = |scheme, name: Option<&str>| ApiAuth {
            secret: "s".into(),
            scheme,
            name: name.map(str::to_owned),
        };
        assert!(auth(AuthScheme::Header, None).credential().is_err());
        assert!(auth(AuthScheme::Header, Some("Host")).credential().is_err());
        assert_eq!(
            auth(AuthScheme::Query, Some("key"))
                .credential()
                .map(|c| c.placement),
            Ok(Placement::Query("key".into()))
        );
        assert_eq!(
            auth(AuthScheme::Bearer, None)
                .credential()
                .map(|c| c.placement),
            Ok(Placement::Bearer)
        );
    }
}
