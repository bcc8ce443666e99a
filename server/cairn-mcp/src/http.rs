//! The HTTP transports' shared parts: the reqwest client (rustls with ring and the webpki
//! roots, proxies ignored, as in `cairn-llm`), the headers a server gets, and the seam through
//! which the vault supplies credentials (OAuth tokens come through [`crate::oauth`]).

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use futures::future::BoxFuture;
use reqwest13::header::{HeaderName, HeaderValue};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;

use crate::error::McpError;

/// Supplies the headers sent to an HTTP server, each time it is (re)connected.
///
/// The default returns the entry's `headers` as configured. The vault will implement this to
/// resolve secret handles (`Authorization = "vault:github"`) at the last moment, and OAuth to
/// attach a fresh bearer token, without the transports knowing either.
pub trait HeaderSource: Send + Sync {
    /// The headers for server `server`, given what its configuration declares.
    fn headers<'a>(
        &'a self,
        server: &'a str,
        configured: &'a BTreeMap<String, String>,
    ) -> BoxFuture<'a, Result<BTreeMap<String, String>, String>>;
}

/// Sends the configured headers unchanged.
#[derive(Debug, Default, Clone, Copy)]
pub struct ConfiguredHeaders;

impl HeaderSource for ConfiguredHeaders {
    fn headers<'a>(
        &'a self,
        _server: &'a str,
        configured: &'a BTreeMap<String, String>,
    ) -> BoxFuture<'a, Result<BTreeMap<String, String>, String>> {
        Box::pin(async move { Ok(configured.clone()) })
    }
}

/// Parses header names and values; a bad one is a configuration error naming the header (never
/// its value, which may be a secret).
pub(crate) fn header_map(
    headers: &BTreeMap<String, String>,
) -> Result<HashMap<HeaderName, HeaderValue>, McpError> {
    let mut map = HashMap::new();
    for (name, value) in headers {
        let key = HeaderName::from_bytes(name.as_bytes())
            .map_err(|_| McpError::Config(format!("header `{name}` has an invalid name")))?;
        let mut val = HeaderValue::from_str(value)
            .map_err(|_| McpError::Config(format!("header `{name}` has an invalid value")))?;
        val.set_sensitive(true);
        map.insert(key, val);
    }
    Ok(map)
}

/// The HTTP client for MCP servers.
pub(crate) fn client() -> Result<reqwest13::Client, McpError> {
    builder()?
        .build()
        .map_err(|e| McpError::Config(format!("HTTP client setup: {e}")))
}

/// The builder behind [`client`], for clients that need more settings (the OAuth requests).
pub(crate) fn builder() -> Result<reqwest13::ClientBuilder, McpError> {
    let roots = rustls::RootCertStore {
        roots: webpki_roots::TLS_SERVER_ROOTS.to_vec(),
    };
    let mut tls = rustls::ClientConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .map_err(|e| McpError::Config(format!("TLS setup: {e}")))?
    .with_root_certificates(roots)
    .with_no_client_auth();
    tls.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
    Ok(reqwest13::Client::builder()
        .tls_backend_preconfigured(tls)
        .no_proxy()
        .connect_timeout(std::time::Duration::from_secs(10)))
}

/// The streamable HTTP transport (rmcp's client) for `url`.
/// With `auth`, every request carries the current OAuth token and a 401 or 403
/// `insufficient_scope` is authorized and sent again (see [`crate::oauth`]).
pub(crate) fn streamable(
    url: &str,
    headers: HashMap<HeaderName, HeaderValue>,
    max_message_bytes: usize,
    auth: Option<Arc<crate::oauth::Authorizer>>,
    max_step_ups: u32,
) -> Result<StreamableHttpClientTransport<crate::oauth::AuthClient>, McpError> {
    let config = StreamableHttpClientTransportConfig::with_uri(url.to_owned())
        .custom_headers(headers)
        .max_sse_event_size(max_message_bytes);
    Ok(StreamableHttpClientTransport::with_client(
        crate::oauth::AuthClient::new(client()?, auth, max_step_ups),
        config,
    ))
}

/// The HTTP status in a failed streamable-HTTP initialize, when the error chain carries one.
/// rmcp reports a non-JSON error answer as `HTTP 404 Not Found: ...`, and a bare status through
/// reqwest's `error_for_status`; both are looked for.
pub(crate) fn status_in_error(err: &(dyn std::error::Error + 'static)) -> Option<u16> {
    let mut cur: Option<&(dyn std::error::Error + 'static)> = Some(err);
    while let Some(e) = cur {
        if let Some(re) = e.downcast_ref::<reqwest13::Error>()
            && let Some(status) = re.status()
        {
            return Some(status.as_u16());
        }
        let text = e.to_string();
        if let Some(pos) = text.find("HTTP ") {
            let digits: String = text[pos + 5..]
                .chars()
                .take_while(char::is_ascii_digit)
                .collect();
            if digits.len() == 3
                && let Ok(code) = digits.parse()
            {
                return Some(code);
            }
        }
        cur = e.source();
    }
    None
}
