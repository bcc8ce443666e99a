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

    /// The resolver every name the guard connects to is looked up with (a DNS tool shows what
    /// the guard would see, never what another resolver says).
    pub fn resolver(&self) -> &Arc<dyn Resolver> {
        &self.resolver
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

    /// The user's rate limit, then everything a connection to `url` must pass (see `vet`);
    /// for connections the guard makes itself without HTTP (a TLS handshake).
    pub(crate) async fn vet_for(&self, user: &str, url: &Url) -> Result<Vec<SocketAddr>, WebError> {
        self.limits.check_user(user)?;
        self.vet(url).await
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
        let whole = async {
            let last = self.run(request, url.clone()).await?;
            let response = self.read(last.response, last.url, last.redirects).await?;
            Ok(scrub(response, &last.sent))
        };
        match tokio::time::timeout(total, whole).await {
            Ok(result) => result,
            Err(_) => Err(WebError::Timeout {
                url: url.to_string(),
                after: total,
            }),
        }
    }

    /// [`WebGuard::fetch`], with a successful (2xx) final body streamed into `writer`, at most
    /// `max_bytes` of it (the rest is not read; `truncated` says so), instead of read into
    /// memory up to `web.max_bytes`: for downloads larger than that cap. The hops pass every
    /// check `fetch` makes, within `web.total_timeout`; the body then flows as long as each
    /// chunk arrives within that time (callers bound the whole by cancellation).
    ///
    /// An error status's body is read into memory as `fetch` reads it and nothing is written.
    /// A credential placed as the secret itself (Bearer, Basic, a header, a query parameter, a
    /// SAS token) is not streamed: an echo of it split across chunks could not be scrubbed, so
    /// the body is fetched as `fetch` does (capped at `web.max_bytes`, scrubbed) and written
    /// after. Signatures (SigV4, Shared Key) carry no secret to echo, so they stream.
    pub async fn fetch_to<W>(
        &self,
        request: WebRequest,
        max_bytes: u64,
        writer: &mut W,
    ) -> Result<StreamedResponse, WebError>
    where
        W: tokio::io::AsyncWrite + Unpin + Send,
    {
        let sends_secret = request.credential.as_ref().is_some_and(|c| {
            !matches!(
                c.placement,
                Placement::AwsSigV4 { .. } | Placement::AzureSharedKey { .. }
            )
        });
        if sends_secret {
            let response = self.fetch(request).await?;
            return write_buffered(response, max_bytes, writer).await;
        }
        let url = self.check_url(&request.url)?;
        self.limits.check_user(&request.user)?;
        let total = self.config.total_timeout;
        let timeout = |url: &Url| WebError::Timeout {
            url: url.to_string(),
            after: total,
        };
        let last = tokio::time::timeout(total, self.run(request, url.clone()))
            .await
            .map_err(|_| timeout(&url))??;
        let Last {
            mut response,
            url,
            redirects,
            sent,
        } = last;
        let status = response.status();
        if !status.is_success() {
            let read = tokio::time::timeout(total, self.read(response, url.clone(), redirects))
                .await
                .map_err(|_| timeout(&url))??;
            // A signature leaves nothing to scrub, but the error page is treated as `fetch`
            // treats any body, so this path never depends on that.
            let read = scrub(read, &sent);
            return Ok(StreamedResponse {
                status,
                final_url: read.final_url,
                headers: read.headers,
                written: 0,
                truncated: read.truncated,
                redirects,
                body: read.body,
            });
        }
        let headers = response.headers().clone();
        let mut written: u64 = 0;
        let mut truncated = false;
        loop {
            let chunk = tokio::time::timeout(total, response.chunk())
                .await
                .map_err(|_| timeout(&url))?
                .map_err(|source| WebError::Http {
                    url: url.to_string(),
                    source: source.without_url(),
                })?;
            let Some(chunk) = chunk else { break };
            let room = usize::try_from(max_bytes - written).unwrap_or(usize::MAX);
            let take = chunk.len().min(room);
            write_all(writer, &chunk[..take], &url).await?;
            written += take as u64;
            if take < chunk.len() {
                truncated = true;
                // Dropping the response closes the connection: the rest is never read.
                break;
            }
        }
        tokio::io::AsyncWriteExt::flush(writer)
            .await
            .map_err(|e| WebError::Write {
                url: url.to_string(),
                reason: e.to_string(),
            })?;
        Ok(StreamedResponse {
            status,
            final_url: url,
            headers,
            written,
            truncated,
            redirects,
            body: Vec::new(),
        })
    }

    /// Follows the hops of `request` (every check, the credential attached per hop) up to the
    /// final answer, whose body is not read yet.
    async fn run(&self, request: WebRequest, mut url: Url) -> Result<Last, WebError> {
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
            let (send_url, send_headers) = self.attach(
                credential.as_ref(),
                Signed {
                    method: &method,
                    url: &url,
                    headers: &headers,
                    body: body.as_deref(),
                },
                hop == 0,
                &mut sent,
            )?;
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
                return Ok(Last {
                    response,
                    url,
                    redirects: hop,
                    sent,
                });
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
        request: Signed<'_>,
        first_hop: bool,
        sent: &mut Vec<(String, String)>,
    ) -> Result<(Url, HeaderMap), WebError> {
        let Signed { url, headers, .. } = request;
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
        // Each hop to the same host attaches the same values: keep them once.
        let mut remember = |value: String| {
            let entry = (name.clone(), value);
            if !sent.contains(&entry) {
                sent.push(entry);
            }
        };
        let signs = matches!(
            credential.placement,
            Placement::AwsSigV4 { .. } | Placement::AzureSharedKey { .. }
        );
        // A signature placement sends a signature over this request, never the key, so there
        // is nothing of it a server could echo back.
        if !signs {
            remember(secret.expose().to_string());
        }
        if let Placement::Basic { username } = &credential.placement {
            remember(format!("{username}:{}", secret.expose()));
        }
        let mut sensitive = |header_name: header::HeaderName, value: String| {
            remember(value.clone());
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
            Placement::SasToken => {
                let token = secret.expose().trim().trim_start_matches('?');
                let mut pairs = url_out.query_pairs_mut();
                for (k, v) in url::form_urlencoded::parse(token.as_bytes()) {
                    pairs.append_pair(&k, &v);
                }
            }
            Placement::AwsSigV4 {
                access_key_id,
                region,
                service,
            } => {
                let now = chrono::Utc::now();
                let payload = crate::sign::sha256_hex(request.body.unwrap_or_default());
                let mut set = |name: &str, value: &str| {
                    let value =
                        HeaderValue::from_str(value).map_err(|_| invalid("a signed header"))?;
                    headers_out.insert(
                        header::HeaderName::from_bytes(name.as_bytes())
                            .map_err(|_| invalid("a signed header's name"))?,
                        value,
                    );
                    Ok::<(), WebError>(())
                };
                set("x-amz-date", &now.format("%Y%m%dT%H%M%SZ").to_string())?;
                set("x-amz-content-sha256", &payload)?;
                let key = crate::sign::AwsKey {
                    access_key_id,
                    secret: secret.expose(),
                    region,
                    service,
                };
                let signed = signed_headers(&headers_out, &url_out, |name| {
                    name.starts_with("x-amz-") || name == "content-type" || name == "content-md5"
                });
                let authorization =
                    key.authorization(request.method.as_str(), &url_out, &signed, &payload, now);
                let mut value =
                    HeaderValue::from_str(&authorization).map_err(|_| invalid("the signature"))?;
                value.set_sensitive(true);
                headers_out.insert(header::AUTHORIZATION, value);
            }
            Placement::AzureSharedKey { account, table } => {
                let key = crate::sign::AzureKey {
                    account,
                    key_base64: secret.expose(),
                };
                let all = signed_headers(&headers_out, &url_out, |_| true);
                let length = request.body.map_or(0, <[u8]>::len);
                let authorization = key
                    .authorization(request.method.as_str(), &url_out, &all, length, *table)
                    .map_err(|why| invalid(&why.to_string()))?;
                let mut value =
                    HeaderValue::from_str(&authorization).map_err(|_| invalid("the signature"))?;
                value.set_sensitive(true);
                headers_out.insert(header::AUTHORIZATION, value);
            }
        }
        Ok((url_out, headers_out))
    }

    /// `url` presigned for `method`, valid for `expires`, with the vault secret `credential`
    /// names: refused (before anything is computed) when the secret is not bound to the URL's
    /// host, and for placements that cannot presign (a bearer token would be the secret
    /// itself). What comes back carries a signature for this one object and time, never the key.
    pub fn presign(
        &self,
        credential: &CredentialUse,
        method: &Method,
        url: &str,
        expires: std::time::Duration,
    ) -> Result<Url, WebError> {
        let url = self.check_url(url)?;
        let host = url.host_str().map(normalise_host).unwrap_or_default();
        let refused = |reason: String| WebError::CredentialRefused {
            url: url.to_string(),
            secret: credential.secret.clone(),
            host: host.clone(),
            reason,
        };
        let secret = self
            .credentials
            .for_host(&credential.secret, &host)
            .map_err(|r| refused(r.reason))?;
        let now = chrono::Utc::now();
        match &credential.placement {
            Placement::AwsSigV4 {
                access_key_id,
                region,
                service,
            } => {
                let key = crate::sign::AwsKey {
                    access_key_id,
                    secret: secret.expose(),
                    region,
                    service,
                };
                Ok(key.presign(method.as_str(), &url, expires.as_secs(), now))
            }
            Placement::AzureSharedKey { account, .. } => {
                let key = crate::sign::AzureKey {
                    account,
                    key_base64: secret.expose(),
                };
                let path_style = url.path().starts_with(&format!("/{account}/"));
                let permissions = if *method == Method::PUT { "cw" } else { "r" };
                let expiry = now
                    + chrono::Duration::from_std(expires)
                        .map_err(|_| refused("the expiry is too far away".into()))?;
                let sas = key
                    .blob_sas(&url, path_style, permissions, expiry, "2021-08-06")
                    .map_err(|why| refused(why.to_string()))?;
                let mut out = url.clone();
                out.set_query(Some(&match url.query() {
                    Some(q) if !q.is_empty() => format!("{q}&{sas}"),
                    _ => sas,
                }));
                Ok(out)
            }
            _ => Err(refused(
                "this credential cannot presign: a link would have to carry the secret itself"
                    .into(),
            )),
        }
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

/// What [`WebGuard::fetch_to`] did: the final hop's status and headers, and how much of the
/// body went to the writer.
#[derive(Debug, Clone)]
pub struct StreamedResponse {
    pub status: StatusCode,
    /// The URL of the last hop (after redirects).
    pub final_url: Url,
    pub headers: HeaderMap,
    /// Bytes written.
    pub written: u64,
    /// The body was longer than the cap and was cut there.
    pub truncated: bool,
    /// How many redirects were followed.
    pub redirects: usize,
    /// An error status's body (at most `web.max_bytes`), read instead of written; empty when
    /// the body was written.
    pub body: Vec<u8>,
}

/// The final hop's answer, its body unread, and what the guard attached on the way.
struct Last {
    response: reqwest::Response,
    url: Url,
    redirects: usize,
    sent: Vec<(String, String)>,
}

async fn write_all<W>(writer: &mut W, bytes: &[u8], url: &Url) -> Result<(), WebError>
where
    W: tokio::io::AsyncWrite + Unpin + Send,
{
    tokio::io::AsyncWriteExt::write_all(writer, bytes)
        .await
        .map_err(|e| WebError::Write {
            url: url.to_string(),
            reason: e.to_string(),
        })
}

/// A body `fetch` read (and scrubbed), written as `fetch_to` would have: a success's body up
/// to `max_bytes`, an error's kept in memory.
async fn write_buffered<W>(
    response: WebResponse,
    max_bytes: u64,
    writer: &mut W,
) -> Result<StreamedResponse, WebError>
where
    W: tokio::io::AsyncWrite + Unpin + Send,
{
    let WebResponse {
        status,
        final_url,
        headers,
        body,
        truncated,
        redirects,
    } = response;
    if !status.is_success() {
        return Ok(StreamedResponse {
            status,
            final_url,
            headers,
            written: 0,
            truncated,
            redirects,
            body,
        });
    }
    let take = body
        .len()
        .min(usize::try_from(max_bytes).unwrap_or(usize::MAX));
    write_all(writer, &body[..take], &final_url).await?;
    tokio::io::AsyncWriteExt::flush(writer)
        .await
        .map_err(|e| WebError::Write {
            url: final_url.to_string(),
            reason: e.to_string(),
        })?;
    Ok(StreamedResponse {
        status,
        final_url,
        headers,
        written: take as u64,
        truncated: truncated || take < body.len(),
        redirects,
        body: Vec::new(),
    })
}

/// What a signature covers: the request as it will be sent.
#[derive(Clone, Copy)]
struct Signed<'a> {
    method: &'a Method,
    url: &'a Url,
    headers: &'a HeaderMap,
    body: Option<&'a [u8]>,
}

/// The headers a signature covers, as (name, value): `host` (as it will be sent) and those
/// `include` picks, by lower-case name.
fn signed_headers(
    headers: &HeaderMap,
    url: &Url,
    include: impl Fn(&str) -> bool,
) -> Vec<(String, String)> {
    let mut out = vec![("host".to_owned(), crate::sign::host_header(url))];
    for (name, value) in headers {
        let name = name.as_str().to_ascii_lowercase();
        if name != "host" && include(&name) {
            out.push((name, String::from_utf8_lossy(value.as_bytes()).into_owned()));
        }
    }
    out
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
            // Not an echo seen, so not counted as one.
            tracing::debug!(
                cut = response.body.len() - keep,
                "web guard: cut a truncated body's tail"
            );
            response.body.truncate(keep);
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
    // One credential per request, so every entry carries the same secret's name.
    let (name, _) = sent.first()?;
    let (shown, count) = cairn_vault::Redactor::new(sent.to_vec()).redact_values(url.as_bytes());
    (count > 0).then(|| (name.clone(), String::from_utf8_lossy(&shown).into_owned()))
}

#[cfg(test)]
mod tests {
    //! The address property: a denied address is refused in every spelling a URL can give it.
    #![allow(clippy::unwrap_used)]

    use std::net::{Ipv4Addr, Ipv6Addr};
    use std::sync::Mutex;

    use proptest::prelude::*;

    use super::*;
    use crate::resolve::BoxFuture;

    /// Answers every name with the address of the case, as a hostile DNS server would.
    struct Hostile(Mutex<Option<IpAddr>>);

    impl Resolver for Hostile {
        fn resolve<'a>(
            &'a self,
            _host: &'a str,
            port: u16,
        ) -> BoxFuture<'a, std::io::Result<Vec<SocketAddr>>> {
            let answer = self.0.lock().unwrap().map(|ip| SocketAddr::new(ip, port));
            Box::pin(async move { Ok(answer.into_iter().collect()) })
        }
    }

    /// The denied IPv4 ranges, written out here (not taken from the classifier under test).
    const DENIED_V4: &[([u8; 4], u32)] = &[
        ([0, 0, 0, 0], 8),
        ([10, 0, 0, 0], 8),
        ([100, 64, 0, 0], 10),
        ([127, 0, 0, 0], 8),
        ([169, 254, 0, 0], 16),
        ([172, 16, 0, 0], 12),
        ([192, 0, 0, 0], 24),
        ([192, 0, 2, 0], 24),
        ([192, 88, 99, 0], 24),
        ([192, 168, 0, 0], 16),
        ([198, 18, 0, 0], 15),
        ([198, 51, 100, 0], 24),
        ([203, 0, 113, 0], 24),
        ([224, 0, 0, 0], 4),
        ([240, 0, 0, 0], 4),
    ];

    /// The denied native IPv6 ranges: loopback, unspecified, link-local, unique-local,
    /// multicast, site-local, documentation, Teredo, discard-only, local NAT64, unassigned.
    const DENIED_V6: &[(u128, u32)] = &[
        (1, 128),
        (0, 128),
        (0xfe80 << 112, 10),
        (0xfc00 << 112, 7),
        (0xff00 << 112, 8),
        (0xfec0 << 112, 10),
        (0x2001_0db8 << 96, 32),
        (0x3fff << 112, 20),
        (0x2001_0000 << 96, 32),
        (0x0100 << 112, 64),
        (0x0064_ff9b_0001 << 80, 48),
        (0x4000 << 112, 2),
        (0x5f00 << 112, 16),
    ];

    fn denied_v4() -> impl Strategy<Value = Ipv4Addr> {
        (prop::sample::select(DENIED_V4), any::<u32>()).prop_map(|((net, prefix), bits)| {
            let mask = u32::MAX.checked_shl(32 - prefix).unwrap_or(0);
            Ipv4Addr::from((u32::from(Ipv4Addr::from(net)) & mask) | (bits & !mask))
        })
    }

    /// Native denied IPv6 addresses, and IPv6 forms that carry a denied IPv4 address.
    fn denied_v6() -> impl Strategy<Value = Ipv6Addr> {
        prop_oneof![
            (prop::sample::select(DENIED_V6), any::<u128>()).prop_map(|((net, prefix), bits)| {
                let mask = u128::MAX.checked_shl(128 - prefix).unwrap_or(0);
                Ipv6Addr::from((net & mask) | (bits & !mask))
            }),
            denied_v4().prop_map(|v4| v4.to_ipv6_mapped()),
            denied_v4().prop_map(|v4| Ipv6Addr::from(u128::from(u32::from(v4)))),
            // IPv4-translated (SIIT) ::ffff:0:a.b.c.d.
            denied_v4().prop_map(|v4| Ipv6Addr::from(
                (0xffff_0000_u128 << 32) | u128::from(u32::from(v4))
            )),
            denied_v4().prop_map(|v4| Ipv6Addr::from(
                (0x0064_ff9b_u128 << 96) | u128::from(u32::from(v4))
            )),
            (denied_v4(), any::<u64>()).prop_map(|(v4, rest)| Ipv6Addr::from(
                (0x2002_u128 << 112) | (u128::from(u32::from(v4)) << 80) | u128::from(rest)
            )),
        ]
    }

    /// How one number of a dotted IPv4 form is written.
    fn number(n: u32, radix: u8) -> String {
        match radix % 4 {
            0 => n.to_string(),
            1 => format!("0{n:o}"),
            2 => format!("0x{n:x}"),
            _ => format!("0X{n:X}"),
        }
    }

    /// An IPv4 address as 1 to 4 numbers (`127.1`, `2130706433`), each in any radix.
    fn spell_v4(ip: Ipv4Addr, parts: u8, radices: &[u8]) -> String {
        let o = ip.octets().map(u32::from);
        let v = u32::from(ip);
        let numbers = match parts % 4 {
            0 => vec![v],
            1 => vec![o[0], v & 0x00ff_ffff],
            2 => vec![o[0], o[1], v & 0xffff],
            _ => o.to_vec(),
        };
        numbers
            .iter()
            .enumerate()
            .map(|(i, n)| number(*n, radices.get(i).copied().unwrap_or(0)))
            .collect::<Vec<_>>()
            .join(".")
    }

    /// An IPv6 address compressed, expanded, upper case, or with a dotted IPv4 tail.
    fn spell_v6(ip: Ipv6Addr, form: u8) -> String {
        let s = ip.segments();
        match form % 5 {
            0 => ip.to_string(),
            1 => s.map(|g| format!("{g:04x}")).join(":"),
            2 => ip.to_string().to_uppercase(),
            3 => s.map(|g| format!("{g:x}")).join(":"),
            _ => {
                let o = ip.octets();
                let head = s[..6].iter().map(|g| format!("{g:X}")).collect::<Vec<_>>();
                format!("{}:{}.{}.{}.{}", head.join(":"), o[12], o[13], o[14], o[15])
            }
        }
    }

    /// Rewrites a host: full-width digits and letters and ideographic dots (which IDNA maps
    /// back), percent-encoding (which the URL parser decodes), a trailing dot.
    fn disguise(host: &str, how: u8, mask: u64) -> String {
        let mut out = String::new();
        for (i, c) in host.chars().enumerate() {
            let pick = mask >> (i % 64) & 1 == 1;
            match how % 4 {
                1 if pick && c.is_ascii_alphanumeric() => {
                    out.push(char::from_u32(u32::from(c) + 0xfee0).unwrap_or(c));
                }
                1 if pick && c == '.' => out.push('。'),
                2 if pick => out.push_str(&format!("%{:02X}", u32::from(c))),
                3 if pick && c.is_ascii_alphabetic() => out.push(c.to_ascii_uppercase()),
                _ => out.push(c),
            }
        }
        if how & 4 != 0 {
            out.push('.');
        }
        out
    }

    /// A URL whose real host is the denied address, spelled one of many ways.
    fn spelled_url() -> impl Strategy<Value = (IpAddr, String)> {
        let v4 = (
            denied_v4(),
            any::<u8>(),
            prop::collection::vec(any::<u8>(), 4),
            any::<u8>(),
            any::<u64>(),
        )
            .prop_map(|(ip, parts, radices, how, mask)| {
                (
                    IpAddr::V4(ip),
                    disguise(&spell_v4(ip, parts, &radices), how, mask),
                )
            });
        let v6 = (
            denied_v6(),
            any::<u8>(),
            prop::sample::select(vec!["", "%25eth0", "%251"]),
        )
            .prop_map(|(ip, form, zone)| {
                (IpAddr::V6(ip), format!("[{}{zone}]", spell_v6(ip, form)))
            });
        let scheme = prop::sample::select(vec![
            "http://",
            "https://",
            "HTTP://",
            "hTTpS://",
            "http:",
            "http:/",
            "http:\\\\",
            "https:/\\",
        ]);
        let userinfo = prop::sample::select(vec!["", "", "a@", "a:b@", "8.8.8.8@", "@", "x%40y@"]);
        let port = prop::sample::select(vec!["", "", ":80", ":443", ":0", ":", ":65535"]);
        let tail = prop::sample::select(vec![
            "",
            "/",
            "/x?y=1",
            "#@8.8.8.8",
            "?@8.8.8.8",
            "\\@8.8.8.8",
            "/..%2f",
            "/%2e%2e/",
        ]);
        (prop_oneof![v4, v6], scheme, userinfo, port, tail).prop_map(
            |((ip, host), scheme, userinfo, port, tail)| {
                (ip, format!("{scheme}{userinfo}{host}{port}{tail}"))
            },
        )
    }

    /// Nothing in a denied range is allowed in any spelling: an IP-literal host is refused by
    /// `check_url` without a lookup, and a host the parser takes for a name is refused when the
    /// name resolves there; the decision never reaches the network.
    #[test]
    fn fuzz_web_denied_addresses_are_refused_in_every_spelling() {
        let rt = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        let dns = Arc::new(Hostile(Mutex::new(None)));
        let config = GuardConfig {
            per_user_per_minute: 0,
            per_host_per_minute: 0,
            ..GuardConfig::default()
        };
        let guard = WebGuard::with_resolver(config, dns.clone()).unwrap();
        cairn_test_support::fuzz::check(
            "web guard: denied addresses in every spelling",
            spelled_url(),
            |(ip, text)| {
                *dns.0.lock().unwrap() = Some(ip);
                let Ok(url) = Url::parse(&text) else {
                    // Unparseable: refused before anything else.
                    prop_assert!(guard.check_url(&text).is_err());
                    return Ok(());
                };
                if matches!(url.host(), Some(Host::Ipv4(_) | Host::Ipv6(_))) {
                    let decided = guard.check_url(&text);
                    prop_assert!(decided.is_err(), "{text} ({ip}) was allowed: {url}");
                }
                let vetted = rt.block_on(guard.vet(&url));
                prop_assert!(vetted.is_err(), "{text} ({ip}) was allowed: {vetted:?}");
                // Without user info to refuse first, it is refused for its address.
                if url.username().is_empty() && url.password().is_none() {
                    prop_assert!(
                        matches!(vetted, Err(WebError::AddressRefused { .. })),
                        "{text} ({ip}): {vetted:?}"
                    );
                }
                Ok(())
            },
        );
    }
}
