//! [`WebGuard`]: checks a request, pins it to vetted addresses, follows redirects by hand and
//! reads a bounded body.
//!
//! Each hop gets a fresh reqwest client that knows only the addresses just checked
//! (`resolve_to_addrs`), has redirects off and environment proxies off; a client per hop costs
//! a TLS context, which is cheap next to a fetch and keeps a pinned address from leaking into
//! another host's request.

use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;

use reqwest::header::{self, HeaderMap, HeaderValue};
use reqwest::{Method, StatusCode};
use url::{Host, Url};

use crate::blocklist::{host_suffixes, normalise_host, normalise_user_host};
use crate::classify::classify;
use crate::config::GuardConfig;
use crate::credentials::{CredentialUse, Credentials, NoCredentials, Placement};
use crate::error::WebError;
use crate::limits::Limits;
use crate::resolve::{Resolver, SystemResolver};

/// The client's resolver: refuses every lookup, because every name the guard lets through is
/// pinned with `resolve_to_addrs`, and a lookup reaching here would be an unchecked one.
struct NoDns;

impl reqwest::dns::Resolve for NoDns {
    fn resolve(&self, name: reqwest::dns::Name) -> reqwest::dns::Resolving {
        let message = format!("{} was not checked by the web guard", name.as_str());
        Box::pin(async move { Err(message.into()) })
    }
}

fn is_localhost(name: &str) -> bool {
    let name = normalise_host(name);
    name == "localhost" || name.ends_with(".localhost")
}

/// One outbound request.
#[derive(Debug, Clone)]
pub struct WebRequest {
    pub method: Method,
    pub url: String,
    pub headers: HeaderMap,
    pub body: Option<Vec<u8>>,
    /// Whose request this is, for the per-user rate limit.
    pub user: String,
    /// A vault secret the guard attaches itself, per hop, only for hosts it is bound to.
    pub credential: Option<CredentialUse>,
}

impl WebRequest {
    /// A request with no headers or body, on behalf of the local user.
    pub fn new(method: Method, url: impl Into<String>) -> Self {
        Self {
            method,
            url: url.into(),
            headers: HeaderMap::new(),
            body: None,
            user: "local".into(),
            credential: None,
        }
    }

    /// A GET of `url`.
    pub fn get(url: impl Into<String>) -> Self {
        Self::new(Method::GET, url)
    }

    /// The same request carrying a vault secret.
    pub fn with_credential(mut self, credential: CredentialUse) -> Self {
        self.credential = Some(credential);
        self
    }

    /// The same request on behalf of `user`.
    pub fn for_user(mut self, user: impl Into<String>) -> Self {
        self.user = user.into();
        self
    }
}

/// What came back: the final hop's status and headers, and at most `max_bytes` of body.
#[derive(Debug, Clone)]
pub struct WebResponse {
    pub status: StatusCode,
    /// The URL of the last hop (after redirects).
    pub final_url: Url,
    pub headers: HeaderMap,
    pub body: Vec<u8>,
    /// The body was longer than `max_bytes` and was cut there (the rest was not read).
    pub truncated: bool,
    /// How many redirects were followed.
    pub redirects: usize,
}

/// The outbound-connection guard; share one per process (`Arc`), its rate limits are inside.
pub struct WebGuard {
    config: GuardConfig,
    deny: Vec<String>,
    allow: Vec<String>,
    resolver: Arc<dyn Resolver>,
    limits: Limits,
    credentials: Arc<dyn Credentials>,
}

impl std::fmt::Debug for WebGuard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WebGuard")
            .field("config", &self.config)
            .field("limits", &self.limits)
            .finish_non_exhaustive()
    }
}

fn normalise_list(hosts: &[String], what: &str) -> Result<Vec<String>, WebError> {
    hosts
        .iter()
        .map(|h| {
            normalise_user_host(h)
                .ok_or_else(|| WebError::Config(format!("{what} entry {h:?} is not a host name")))
        })
        .collect()
}

impl WebGuard {
    /// A guard resolving names through the system resolver.
    pub fn new(config: GuardConfig) -> Result<Self, WebError> {
        Self::with_resolver(config, Arc::new(SystemResolver))
    }

    /// A guard resolving names through `resolver` (tests script DNS answers with it).
    pub fn with_resolver(
        config: GuardConfig,
        resolver: Arc<dyn Resolver>,
    ) -> Result<Self, WebError> {
        if config.max_bytes == 0 {
            return Err(WebError::Config("max_bytes must be at least 1".into()));
        }
        if let Some(proxy) = &config.proxy
            && !matches!(proxy.scheme(), "http" | "https" | "socks5" | "socks5h")
        {
            return Err(WebError::Config(format!(
                "unsupported proxy scheme in {proxy}"
            )));
        }
        Ok(Self {
            deny: normalise_list(&config.deny_hosts, "deny_hosts")?,
            allow: normalise_list(&config.allow_hosts, "allow_hosts")?,
            limits: Limits::new(config.per_user_per_minute, config.per_host_per_minute),
            resolver,
            config,
            credentials: Arc::new(NoCredentials),
        })
    }

    /// The same guard, taking the secrets that requests name from `credentials`.
    pub fn with_credentials(mut self, credentials: Arc<dyn Credentials>) -> Self {
        self.credentials = credentials;
        self
    }

    /// The configuration in force.
    pub fn config(&self) -> &GuardConfig {
        &self.config
    }

    /// The checks that need no network: parse, scheme, credentials, deny list, blocklist, and
    /// the class of an IP-literal host. Returns the parsed URL.
    pub fn check_url(&self, text: &str) -> Result<Url, WebError> {
        let url = Url::parse(text).map_err(|e| WebError::InvalidUrl {
            url: text.to_string(),
            reason: e.to_string(),
        })?;
        self.check_parsed(&url)?;
        Ok(url)
    }

    fn check_parsed(&self, url: &Url) -> Result<(), WebError> {
        let shown = url.to_string();
        if !matches!(url.scheme(), "http" | "https") {
            return Err(WebError::SchemeNotAllowed {
                url: shown,
                scheme: url.scheme().into(),
            });
        }
        if !url.username().is_empty() || url.password().is_some() {
            return Err(WebError::UserinfoInUrl { url: shown });
        }
        let Some(host) = url.host_str().map(normalise_host).filter(|h| !h.is_empty()) else {
            return Err(WebError::InvalidUrl {
                url: shown,
                reason: "no host".into(),
            });
        };
        let listed = |list: &[String]| {
            host_suffixes(&host)
                .find(|h| list.iter().any(|e| e == h))
                .map(str::to_string)
        };
        if let Some(entry) = listed(&self.deny) {
            return Err(WebError::DeniedHost { url: shown, entry });
        }
        if listed(&self.allow).is_none()
            && let Some(hit) = self.config.blocklist.check(url)
        {
            return Err(WebError::Blocklisted {
                url: shown,
                entry: hit.entry,
            });
        }
        // IP literals are never looked up (reqwest skips DNS for them), so judge them here.
        let literal: Option<IpAddr> = match url.host() {
            Some(Host::Ipv4(ip)) => Some(ip.into()),
            Some(Host::Ipv6(ip)) => Some(ip.into()),
            _ => None,
        };
        if let Some(addr) = literal {
            self.check_addr(&host, addr)?;
        }
        Ok(())
    }

    fn check_addr(&self, host: &str, addr: IpAddr) -> Result<(), WebError> {
        let class = classify(addr);
        if class.is_allowed(self.config.allow_loopback) {
            Ok(())
        } else {
            Err(WebError::AddressRefused {
                host: host.to_string(),
                addr,
                class,
            })
        }
    }

    /// Everything a hop must pass before a connection is opened; returns the addresses to pin.
    async fn vet(&self, url: &Url) -> Result<Vec<SocketAddr>, WebError> {
        self.check_parsed(url)?;
        let port = url.port_or_known_default().unwrap_or(80);
        let addrs = match url.host() {
            Some(Host::Ipv4(ip)) => vec![SocketAddr::new(ip.into(), port)],
            Some(Host::Ipv6(ip)) => vec![SocketAddr::new(ip.into(), port)],
            // RFC 6761: `localhost` and its subdomains are loopback whatever DNS says, and a
            // resolver that does not know `localhost.` must not turn that into a lookup error.
            Some(Host::Domain(name)) if is_localhost(name) => {
                let addr = SocketAddr::new(IpAddr::from([127, 0, 0, 1]), port);
                self.check_addr(name, addr.ip())?;
                vec![addr]
            }
            Some(Host::Domain(name)) => {
                let addrs = self.resolver.resolve(name, port).await.map_err(|source| {
                    WebError::Resolve {
                        host: name.to_string(),
                        source,
                    }
                })?;
                if addrs.is_empty() {
                    return Err(WebError::NoAddresses {
                        host: name.to_string(),
                    });
                }
                // Every answer must pass: a name with one public and one private record is
                // refused rather than trimmed, since its owner is steering traffic inward.
                for addr in &addrs {
                    self.check_addr(name, addr.ip())?;
                }
                addrs
            }
            None => {
                return Err(WebError::InvalidUrl {
                    url: url.to_string(),
                    reason: "no host".into(),
                });
            }
        };
        let host = url.host_str().map(normalise_host).unwrap_or_default();
        self.limits.check_host(&host)?;
        Ok(addrs)
    }

    // The one place a client is built (clippy.toml bans it elsewhere in this crate).
    #[allow(clippy::disallowed_methods)]
    async fn client_for(
        &self,
        url: &Url,
        addrs: &[SocketAddr],
    ) -> Result<reqwest::Client, WebError> {
        let mut builder = reqwest::Client::builder()
            // Any name reqwest would resolve itself is one the guard did not pin: fail it.
            .dns_resolver(Arc::new(NoDns))
            .redirect(reqwest::redirect::Policy::none())
            .connect_timeout(self.config.connect_timeout)
            .user_agent(concat!("cairn/", env!("CARGO_PKG_VERSION")));
        builder = match &self.config.proxy {
            Some(proxy) => {
                builder.proxy(reqwest::Proxy::all(proxy.as_str()).map_err(|source| {
                    WebError::Http {
                        url: proxy.to_string(),
                        source,
                    }
                })?)
            }
            None => builder.no_proxy(),
        };
        // The user's own proxy is trusted as configured (it may well be on loopback), but its
        // name is resolved here too, since the client has no DNS of its own.
        if let Some(proxy) = &self.config.proxy
            && let Some(Host::Domain(name)) = proxy.host()
        {
            let port = proxy.port_or_known_default().unwrap_or(80);
            let proxy_addrs =
                self.resolver
                    .resolve(name, port)
                    .await
                    .map_err(|source| WebError::Resolve {
                        host: name.to_string(),
                        source,
                    })?;
            builder = builder.resolve_to_addrs(name, &proxy_addrs);
        }
        if let Some(Host::Domain(name)) = url.host() {
            // The pin: reqwest dials these addresses for `name` and never asks DNS again.
            builder = builder.resolve_to_addrs(name, addrs);
        }
        builder.build().map_err(|source| WebError::Http {
            url: url.to_string(),
            source,
        })
    }

    /// Send `request` through the guard.
    pub async fn fetch(&self, request: WebRequest) -> Result<WebResponse, WebError> {
        let url = self.check_url(&request.url)?;
        self.limits.check_user(&request.user)?;
        let total = self.config.total_timeout;
        match tokio::time::timeout(total, self.run(request, url.clone())).await {
            Ok(result) => result,
            Err(_) => Err(WebError::Timeout {
                url: url.to_string(),
                after: total,
            }),
        }
    }

    async fn run(&self, request: WebRequest, mut url: Url) -> Result<WebResponse, WebError> {
        let WebRequest {
            mut method,
            mut headers,
            mut body,
            credential,
            ..
        } = request;
        let mut hop = 0;
        // What the guard attached, named by its secret: it must not come back (see `scrub`).
        let mut sent: Vec<(String, String)> = Vec::new();
        // (from, location) of the redirect that led to `url`, so a refusal names the hop.
        let mut came_from: Option<(String, String)> = None;
        loop {
            let addrs = self.vet(&url).await.map_err(|source| match &came_from {
                Some((from, location)) => WebError::RedirectRefused {
                    hop,
                    from: from.clone(),
                    location: location.clone(),
                    source: Box::new(source),
                },
                None => source,
            })?;
            tracing::debug!(%url, ?addrs, hop, "web guard: sending");
            let client = self.client_for(&url, &addrs).await?;
            let (send_url, send_headers) =
                self.attach(credential.as_ref(), &url, &headers, hop == 0, &mut sent)?;
            let mut builder = client
                .request(method.clone(), send_url)
                .headers(send_headers);
            if let Some(body) = &body {
                builder = builder.body(body.clone());
            }
            // reqwest's error names the URL it sent, which carries a query-placed secret; the
            // guard's own `url` (without it) is the one reported.
            let response = builder.send().await.map_err(|source| WebError::Http {
                url: url.to_string(),
                source: source.without_url(),
            })?;
            let status = response.status();
            let location = status
                .is_redirection()
                .then(|| response.headers().get(header::LOCATION))
                .flatten()
                .map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned());
            let Some(location) = location else {
                let response = self.read(response, url, hop).await?;
                return Ok(scrub(response, &sent));
            };
            drop(response);
            if hop >= self.config.max_redirects {
                return Err(WebError::TooManyRedirects {
                    url: url.to_string(),
                    limit: self.config.max_redirects,
                });
            }
            hop += 1;
            let next = url.join(&location).map_err(|e| WebError::RedirectRefused {
                hop,
                from: url.to_string(),
                location: location.clone(),
                source: Box::new(WebError::InvalidUrl {
                    url: location.clone(),
                    reason: e.to_string(),
                }),
            })?;
            // As browsers do: 303, and 301/302 after a POST, continue as a GET without body.
            if status == StatusCode::SEE_OTHER
                || (matches!(status, StatusCode::MOVED_PERMANENTLY | StatusCode::FOUND)
                    && method == Method::POST)
            {
                method = Method::GET;
                body = None;
                headers.remove(header::CONTENT_TYPE);
                headers.remove(header::CONTENT_LENGTH);
            }
            // A credential echoed into the address of another origin would be sent there in
            // the URL: refused, naming the target without it.
            if next.origin() != url.origin()
                && let Some((secret, shown)) = carried(&sent, next.as_str())
            {
                return Err(WebError::RedirectRefused {
                    hop,
                    from: url.to_string(),
                    location: shown.clone(),
                    source: Box::new(WebError::CredentialRefused {
                        url: shown,
                        secret,
                        host: next.host_str().map(normalise_host).unwrap_or_default(),
                        reason: "the redirect's address carries the credential the guard sent to the previous host".into(),
                    }),
                });
            }
            // Credentials meant for one origin must not follow a redirect to another.
            if next.origin() != url.origin() {
                headers.remove(header::AUTHORIZATION);
                headers.remove(header::COOKIE);
                headers.remove(header::PROXY_AUTHORIZATION);
            }
            let from = std::mem::replace(&mut url, next);
            came_from = Some((from.to_string(), location));
        }
    }

    /// The URL and headers to send for this hop: with the credential when it is bound to the
    /// hop's host; without it on a later hop (a redirect elsewhere), refused on the first.
    fn attach(
        &self,
        credential: Option<&CredentialUse>,
        url: &Url,
        headers: &HeaderMap,
        first_hop: bool,
        sent: &mut Vec<(String, String)>,
    ) -> Result<(Url, HeaderMap), WebError> {
        let mut url_out = url.clone();
        let mut headers_out = headers.clone();
        let Some(credential) = credential else {
            return Ok((url_out, headers_out));
        };
        let host = url.host_str().map(normalise_host).unwrap_or_default();
        let secret = match self.credentials.for_host(&credential.secret, &host) {
            Ok(secret) => secret,
            Err(refusal) if first_hop => {
                return Err(WebError::CredentialRefused {
                    url: url.to_string(),
                    secret: credential.secret.clone(),
                    host,
                    reason: refusal.reason,
                });
            }
            Err(refusal) => {
                tracing::info!(secret = %credential.secret, %host, "redirect: credential not sent ({})", refusal.reason);
                return Ok((url_out, headers_out));
            }
        };
        let invalid = |what: &str| WebError::CredentialRefused {
            url: url.to_string(),
            secret: credential.secret.clone(),
            host: host.clone(),
            reason: format!("{what} is not a valid header value"),
        };
        let name = &credential.secret;
        sent.push((name.clone(), secret.expose().to_string()));
        if let Placement::Basic { username } = &credential.placement {
            sent.push((name.clone(), format!("{username}:{}", secret.expose())));
        }
        let mut sensitive = |header_name: header::HeaderName, value: String| {
            sent.push((name.clone(), value.clone()));
            let mut value = HeaderValue::from_str(&value).map_err(|_| invalid("its value"))?;
            value.set_sensitive(true);
            headers_out.insert(header_name, value);
            Ok::<(), WebError>(())
        };
        match &credential.placement {
            Placement::Bearer => {
                sensitive(header::AUTHORIZATION, format!("Bearer {}", secret.expose()))?
            }
            Placement::Basic { username } => {
                use base64::Engine as _;
                let pair = format!("{username}:{}", secret.expose());
                let encoded = base64::engine::general_purpose::STANDARD.encode(pair.as_bytes());
                sensitive(header::AUTHORIZATION, format!("Basic {encoded}"))?
            }
            Placement::Header(name) => {
                let name = header::HeaderName::from_bytes(name.as_bytes())
                    .map_err(|_| invalid("the header name"))?;
                sensitive(name, secret.expose().to_string())?
            }
            Placement::Query(param) => {
                url_out
                    .query_pairs_mut()
                    .append_pair(param, secret.expose());
            }
        }
        Ok((url_out, headers_out))
    }

    async fn read(
        &self,
        mut response: reqwest::Response,
        url: Url,
        redirects: usize,
    ) -> Result<WebResponse, WebError> {
        let status = response.status();
        let headers = response.headers().clone();
        let max = self.config.max_bytes;
        // The announced length only sizes the buffer; it is never trusted as the real length.
        let hint = response
            .content_length()
            .map_or(0, |n| n.min(max as u64) as usize);
        let mut body = Vec::with_capacity(hint);
        let mut truncated = false;
        while let Some(chunk) = response.chunk().await.map_err(|source| WebError::Http {
            url: url.to_string(),
            source: source.without_url(),
        })? {
            let room = max - body.len();
            if chunk.len() > room {
                body.extend_from_slice(&chunk[..room]);
                truncated = true;
                // Dropping the response closes the connection: the rest is never read.
                break;
            }
            body.extend_from_slice(&chunk);
        }
        Ok(WebResponse {
            status,
            final_url: url,
            headers,
            body,
            truncated,
            redirects,
        })
    }
}

/// The longest any encoding the redactor knows writes one byte of a value (`&#x10FFFF;` for a
/// four-byte character is 10, so 10 per byte is more than enough).
const MAX_ESCAPE_PER_BYTE: usize = 10;

/// `response` with what the guard sent (`(secret name, value)`: the secret, the header value
/// it composed, a Basic pair) replaced by `[REDACTED:name]` in the body, the header values
/// and the final URL, in any encoding the redactor knows: a server echoing a credential must
/// not hand it to the tool, whatever the tool does with the body next (shows a page of it,
/// converts it, writes it to a file).
fn scrub(mut response: WebResponse, sent: &[(String, String)]) -> WebResponse {
    if sent.is_empty() {
        return response;
    }
    let redactor = cairn_vault::Redactor::new(sent.to_vec());
    let (body, mut count) = redactor.redact_values(&response.body);
    if count > 0 {
        response.body = body.into_owned();
    }
    // A body cut at the size cap may end in the first part of an echo, too short to be
    // recognised: its last bytes, as many as the longest encoding of what was sent could take
    // (an HTML reference per byte), go too. It is marked truncated either way.
    if response.truncated {
        let longest = sent.iter().map(|(_, v)| v.len()).max().unwrap_or(0);
        let keep = response
            .body
            .len()
            .saturating_sub(MAX_ESCAPE_PER_BYTE * longest);
        if keep < response.body.len() {
            response.body.truncate(keep);
            count += 1;
        }
    }
    for value in response.headers.values_mut() {
        let (redacted, n) = redactor.redact_values(value.as_bytes());
        if n > 0 {
            count += n;
            *value = HeaderValue::from_bytes(&redacted)
                .unwrap_or_else(|_| HeaderValue::from_static("[REDACTED]"));
        }
    }
    let (url, n) = redactor.redact_values(response.final_url.as_str().as_bytes());
    if n > 0 {
        count += n;
        let text = String::from_utf8_lossy(&url);
        response.final_url = Url::parse(&text).unwrap_or_else(|_| {
            let mut bare = response.final_url.clone();
            bare.set_query(None);
            bare.set_fragment(None);
            bare
        });
    }
    if count > 0 {
        // Where and how many, never what.
        tracing::info!(
            category = "web_response",
            count,
            "a credential the web guard sent came back in the response; redacted"
        );
    }
    response
}

/// The secret whose sent value `url` carries, and `url` with it redacted.
fn carried(sent: &[(String, String)], url: &str) -> Option<(String, String)> {
    for (name, value) in sent {
        let redactor = cairn_vault::Redactor::new(vec![(name.clone(), value.clone())]);
        let (shown, count) = redactor.redact_values(url.as_bytes());
        if count > 0 {
            return Some((name.clone(), String::from_utf8_lossy(&shown).into_owned()));
        }
    }
    None
}
