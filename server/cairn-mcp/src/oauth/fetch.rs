//! The HTTP requests of the OAuth flow, with the SSRF rule (SECURITY.md C7): a URL that a server
//! handed us is fetched only when it is on the host of the configured server URL (the user chose
//! that host), or when every address its host resolves to is public; the connection is then
//! pinned to the addresses checked, so a second DNS answer is never used. Redirects are not
//! followed, proxies from the environment are ignored, and bodies are capped.

use std::net::{IpAddr, SocketAddr};
use std::time::Duration;

use base64::Engine as _;
use serde_json::Value;

use super::error::OAuthError;

/// Metadata and token answers are small; anything bigger is not one.
const MAX_BODY: usize = 1024 * 1024;
const TIMEOUT: Duration = Duration::from_secs(30);

/// An answer: its status and its body parsed as JSON (`Null` when it is not JSON).
#[derive(Debug)]
pub(crate) struct Answer {
    pub status: u16,
    pub json: Value,
}

/// Fetches for one server, knowing which hosts the user configured.
#[derive(Debug, Clone)]
pub(crate) struct Fetcher {
    trusted_hosts: Vec<String>,
}

/// A request body.
pub(crate) enum Body<'a> {
    None,
    Form(&'a [(&'a str, &'a str)]),
    Json(&'a Value),
}

impl Fetcher {
    /// A fetcher that trusts the hosts of `user_urls`: the server's URL and any other URL the
    /// user configured (an identity provider).
    pub fn new(user_urls: &[&str]) -> Self {
        let trusted_hosts = user_urls
            .iter()
            .filter_map(|u| url::Url::parse(u).ok())
            .filter_map(|u| u.host_str().map(str::to_ascii_lowercase))
            .collect();
        Self { trusted_hosts }
    }

    /// Checks `raw` and returns the parsed URL and, when its host is not the trusted one, the
    /// addresses the connection must be pinned to.
    pub async fn check(&self, raw: &str) -> Result<(url::Url, Vec<SocketAddr>), OAuthError> {
        let bad = |reason: &str| OAuthError::BadUrl {
            url: raw.to_owned(),
            reason: reason.to_owned(),
        };
        let url = url::Url::parse(raw).map_err(|e| bad(&e.to_string()))?;
        if !matches!(url.scheme(), "http" | "https") {
            return Err(bad("only http and https URLs are used"));
        }
        if !url.username().is_empty() || url.password().is_some() {
            return Err(bad("credentials in a URL are refused"));
        }
        let host = url
            .host_str()
            .ok_or_else(|| bad("no host"))?
            .to_ascii_lowercase();
        if self.trusted_hosts.contains(&host) {
            return Ok((url, Vec::new()));
        }
        let port = url.port_or_known_default().unwrap_or(443);
        let addrs: Vec<SocketAddr> = match url.host() {
            Some(url::Host::Ipv4(ip)) => vec![SocketAddr::new(IpAddr::V4(ip), port)],
            Some(url::Host::Ipv6(ip)) => vec![SocketAddr::new(IpAddr::V6(ip), port)],
            _ => tokio::net::lookup_host((host.as_str(), port))
                .await
                .map_err(|e| OAuthError::Http(format!("cannot resolve {host}: {e}")))?
                .collect(),
        };
        if addrs.is_empty() {
            return Err(OAuthError::Http(format!("{host} resolves to no address")));
        }
        for addr in &addrs {
            let class = cairn_web::classify(addr.ip());
            if !class.is_allowed(false) {
                return Err(OAuthError::ForbiddenAddress {
                    url: raw.to_owned(),
                    class: class.to_string(),
                    addr: addr.ip(),
                });
            }
        }
        Ok((url, addrs))
    }

    /// Sends one request and reads the answer.
    pub async fn send(
        &self,
        method: reqwest13::Method,
        raw: &str,
        body: Body<'_>,
        basic: Option<(&str, &str)>,
    ) -> Result<Answer, OAuthError> {
        let (url, pinned) = self.check(raw).await?;
        let mut builder = crate::http::builder()
            .map_err(|e| OAuthError::Http(e.to_string()))?
            .redirect(reqwest13::redirect::Policy::none())
            .timeout(TIMEOUT);
        if !pinned.is_empty()
            && let Some(url::Host::Domain(domain)) = url.host()
        {
            builder = builder.resolve_to_addrs(domain, &pinned);
        }
        let client = builder
            .build()
            .map_err(|e| OAuthError::Http(format!("HTTP client setup: {e}")))?;
        let mut request = client
            .request(method, url.clone())
            .header("accept", "application/json");
        request = match body {
            Body::None => request,
            Body::Form(pairs) => {
                let encoded = url::form_urlencoded::Serializer::new(String::new())
                    .extend_pairs(pairs.iter())
                    .finish();
                request
                    .header("content-type", "application/x-www-form-urlencoded")
                    .body(encoded)
            }
            Body::Json(value) => request
                .header("content-type", "application/json")
                .body(value.to_string()),
        };
        if let Some((id, secret)) = basic {
            // RFC 6749 2.3.1: both parts form-encoded before joining.
            let enc =
                |s: &str| url::form_urlencoded::byte_serialize(s.as_bytes()).collect::<String>();
            let pair = format!("{}:{}", enc(id), enc(secret));
            let value = format!(
                "Basic {}",
                base64::engine::general_purpose::STANDARD.encode(pair)
            );
            let mut header = reqwest13::header::HeaderValue::from_str(&value).map_err(|_| {
                OAuthError::Config("the client credentials cannot go in a header".into())
            })?;
            header.set_sensitive(true);
            request = request.header("authorization", header);
        }
        let mut response = request.send().await.map_err(|e| {
            // The URL is named once, without its query; reqwest's own text would repeat it.
            OAuthError::Http(format!(
                "{}: {}",
                redact_query(&url),
                crate::error::chain(&e.without_url())
            ))
        })?;
        let status = response.status().as_u16();
        let mut bytes = Vec::new();
        while let Some(chunk) = response
            .chunk()
            .await
            .map_err(|e| OAuthError::Http(format!("{}: {}", redact_query(&url), e.without_url())))?
        {
            if bytes.len() + chunk.len() > MAX_BODY {
                return Err(OAuthError::Http(format!(
                    "{}: the answer is over {MAX_BODY} bytes",
                    redact_query(&url)
                )));
            }
            bytes.extend_from_slice(&chunk);
        }
        let json = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
        Ok(Answer { status, json })
    }

    /// GETs a metadata document: `Some` for a 2xx JSON object, `None` for anything else except a
    /// refused URL, which is an error.
    pub async fn metadata(&self, raw: &str) -> Result<Option<Value>, OAuthError> {
        match self
            .send(reqwest13::Method::GET, raw, Body::None, None)
            .await
        {
            Ok(a) if (200..300).contains(&a.status) && a.json.is_object() => Ok(Some(a.json)),
            Ok(a) => {
                tracing::debug!(url = %raw, status = a.status, "no OAuth metadata here");
                Ok(None)
            }
            Err(e @ (OAuthError::ForbiddenAddress { .. } | OAuthError::BadUrl { .. })) => Err(e),
            Err(e) => {
                tracing::debug!(url = %raw, "OAuth metadata fetch failed: {e}");
                Ok(None)
            }
        }
    }
}

/// A URL for messages: without its query, which may hold a code or state.
fn redact_query(url: &url::Url) -> String {
    let mut u = url.clone();
    u.set_query(None);
    u.set_fragment(None);
    u.to_string()
}
