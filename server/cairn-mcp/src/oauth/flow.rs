//! The grants: authorization code with PKCE through a loopback redirect listener, refresh, and
//! client credentials (a secret, or a signed JWT); plus client registration. One [`Authorizer`]
//! per server connection holds the current grant and serialises flows, so two requests refused
//! at once lead to one sign-in.

use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use base64::Engine as _;
use cairn_config::{McpOAuthConfig, OAuthGrant};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

use super::discovery::{self, Challenge, ServerMetadata};
use super::error::OAuthError;
use super::fetch::{Body, Fetcher};
use super::options::OAuthOptions;
use super::store::StoredGrant;

const B64URL: base64::engine::GeneralPurpose = base64::engine::general_purpose::URL_SAFE_NO_PAD;
/// A token this close to its expiry is treated as expired, so it does not lapse in flight.
const EXPIRY_MARGIN_SECS: u64 = 30;
const OFFLINE_ACCESS: &str = "offline_access";
const JWT_BEARER: &str = "urn:ietf:params:oauth:grant-type:jwt-bearer";
const TOKEN_EXCHANGE: &str = "urn:ietf:params:oauth:grant-type:token-exchange";
const ID_JAG: &str = "urn:ietf:params:oauth:token-type:id-jag";
const ID_TOKEN: &str = "urn:ietf:params:oauth:token-type:id_token";

fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

fn random_b64(bytes: usize) -> Result<String, OAuthError> {
    let mut buf = vec![0u8; bytes];
    getrandom::fill(&mut buf).map_err(|e| OAuthError::Http(format!("no randomness: {e}")))?;
    Ok(B64URL.encode(buf))
}

/// The PKCE S256 challenge of `verifier`.
pub fn pkce_challenge(verifier: &str) -> String {
    B64URL.encode(Sha256::digest(verifier.as_bytes()))
}

/// The loopback listener that receives the authorization redirect
/// (`http://127.0.0.1:PORT/callback?code=...&state=...`).
#[derive(Debug)]
pub struct CallbackListener {
    listener: TcpListener,
    port: u16,
}

impl CallbackListener {
    /// Binds 127.0.0.1 on `port`, or on a free port.
    pub async fn bind(port: Option<u16>) -> Result<Self, OAuthError> {
        let listener = TcpListener::bind(("127.0.0.1", port.unwrap_or(0)))
            .await
            .map_err(|e| OAuthError::Config(format!("cannot listen for the redirect: {e}")))?;
        let port = listener
            .local_addr()
            .map_err(|e| OAuthError::Config(format!("cannot listen for the redirect: {e}")))?
            .port();
        Ok(Self { listener, port })
    }

    /// The redirect URI to register and send.
    pub fn redirect_uri(&self) -> String {
        format!("http://127.0.0.1:{}/callback", self.port)
    }

    /// Waits for the redirect and returns the code. Requests for other paths (a browser's
    /// favicon) get a 404 and are skipped; a callback with the wrong `state` is refused and ends
    /// the flow, as does one carrying an `error`.
    pub async fn wait(&self, state: &str, limit: Duration) -> Result<String, OAuthError> {
        tokio::time::timeout(limit, self.serve(state))
            .await
            .map_err(|_| OAuthError::CallbackTimeout(limit))?
    }

    async fn serve(&self, state: &str) -> Result<String, OAuthError> {
        loop {
            let Ok((mut stream, _)) = self.listener.accept().await else {
                // Out of descriptors or the like: wait instead of spinning until the deadline.
                tokio::time::sleep(Duration::from_millis(100)).await;
                continue;
            };
            let Ok(Ok(target)) =
                tokio::time::timeout(Duration::from_secs(10), read_target(&mut stream)).await
            else {
                continue;
            };
            let Some(query) = target
                .strip_prefix("/callback")
                .filter(|q| q.is_empty() || q.starts_with('?'))
            else {
                let _ = reply(&mut stream, 404, "Not found.").await;
                continue;
            };
            let params: Vec<(String, String)> =
                url::form_urlencoded::parse(query.trim_start_matches('?').as_bytes())
                    .into_owned()
                    .collect();
            let get = |k: &str| params.iter().find(|(n, _)| n == k).map(|(_, v)| v.clone());
            if get("state").as_deref() != Some(state) {
                let _ = reply(
                    &mut stream,
                    400,
                    "This sign-in link is not the one cairn started.",
                )
                .await;
                return Err(OAuthError::StateMismatch);
            }
            if let Some(error) = get("error") {
                let _ = reply(&mut stream, 200, "Sign-in refused; you can close this tab.").await;
                let detail = get("error_description").map(|d| format!(": {d}"));
                return Err(OAuthError::Denied(format!(
                    "{error}{}",
                    detail.unwrap_or_default()
                )));
            }
            let Some(code) = get("code") else {
                let _ = reply(&mut stream, 400, "The redirect carries no code.").await;
                return Err(OAuthError::Denied("the redirect carried no code".into()));
            };
            let _ = reply(
                &mut stream,
                200,
                "Signed in to cairn; you can close this tab.",
            )
            .await;
            return Ok(code);
        }
    }
}

/// The request target of a GET, read from at most 8 KiB of request head.
async fn read_target(stream: &mut tokio::net::TcpStream) -> std::io::Result<String> {
    let mut head = Vec::new();
    let mut buf = [0u8; 1024];
    while !head.windows(4).any(|w| w == b"\r\n\r\n") && head.len() < 8192 {
        let n = stream.read(&mut buf).await?;
        if n == 0 {
            break;
        }
        head.extend_from_slice(buf.get(..n).unwrap_or_default());
    }
    let text = String::from_utf8_lossy(&head);
    let line = text.lines().next().unwrap_or_default();
    let mut parts = line.split(' ');
    match (parts.next(), parts.next()) {
        (Some("GET"), Some(target)) => Ok(target.to_owned()),
        _ => Err(std::io::Error::other("not a GET")),
    }
}

async fn reply(stream: &mut tokio::net::TcpStream, status: u16, text: &str) -> std::io::Result<()> {
    let reason = match status {
        200 => "OK",
        400 => "Bad Request",
        _ => "Not Found",
    };
    let body = format!("<!doctype html><title>cairn</title><p>{text}</p>\n");
    let head = format!(
        "HTTP/1.1 {status} {reason}\r\ncontent-type: text/html; charset=utf-8\r\n\
         content-length: {}\r\ncache-control: no-store\r\nconnection: close\r\n\r\n",
        body.len()
    );
    stream.write_all(head.as_bytes()).await?;
    stream.write_all(body.as_bytes()).await?;
    stream.shutdown().await
}

/// A client as registered with the authorization server.
#[derive(Debug, Clone)]
struct Client {
    id: String,
    secret: Option<String>,
    method: String,
}

/// Authorization for one server: the current grant and the flows that renew it.
pub struct Authorizer {
    server: String,
    url: String,
    settings: McpOAuthConfig,
    options: OAuthOptions,
    fetch: Fetcher,
    grant: Mutex<Option<StoredGrant>>,
    loaded: tokio::sync::OnceCell<()>,
    /// Held while a flow runs, so concurrent refusals lead to one flow.
    flow: tokio::sync::Mutex<()>,
    /// The scopes last asked for, widened on step-up.
    scopes: Mutex<Vec<String>>,
    /// For `private_key_jwt`: the issuer, the assertion's audience.
    issuer: Mutex<Option<String>>,
    /// When the last flow started or ended (`None`: never), and whether one runs now: the hub
    /// does not count the time a user takes to sign in against a server's handshake limit.
    activity: Mutex<(Option<std::time::Instant>, bool)>,
}

/// Marks a flow as running for as long as it lives.
struct Activity<'a>(&'a Mutex<(Option<std::time::Instant>, bool)>);

impl<'a> Activity<'a> {
    fn start(cell: &'a Mutex<(Option<std::time::Instant>, bool)>) -> Self {
        *lock(cell) = (Some(std::time::Instant::now()), true);
        Self(cell)
    }
}

impl Drop for Activity<'_> {
    fn drop(&mut self) {
        *lock(self.0) = (Some(std::time::Instant::now()), false);
    }
}

impl std::fmt::Debug for Authorizer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Authorizer")
            .field("server", &self.server)
            .field("url", &self.url)
            .finish_non_exhaustive()
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

impl Authorizer {
    /// Authorization for server `server` at `url`, with its `oauth` settings (secret handles
    /// already resolved to values).
    pub fn new(
        server: &str,
        url: &str,
        settings: Option<McpOAuthConfig>,
        options: OAuthOptions,
    ) -> Arc<Self> {
        let settings = settings.unwrap_or_default();
        // The identity provider is the user's choice too, like the server's host.
        let fetch = Fetcher::new(&[url, settings.idp_token_endpoint.as_deref().unwrap_or("")]);
        Arc::new(Self {
            server: server.to_owned(),
            url: url.to_owned(),
            settings,
            options,
            fetch,
            grant: Mutex::new(None),
            loaded: tokio::sync::OnceCell::new(),
            flow: tokio::sync::Mutex::new(()),
            scopes: Mutex::new(Vec::new()),
            issuer: Mutex::new(None),
            activity: Mutex::new((None, false)),
        })
    }

    /// Whether a flow runs now or ended less than `within` ago: a handshake that ran out of
    /// time meanwhile was waiting for the user, not for the server.
    pub fn busy(&self, within: Duration) -> bool {
        match *lock(&self.activity) {
            (_, true) => true,
            (Some(at), false) => at.elapsed() < within,
            (None, false) => false,
        }
    }

    fn current(&self) -> Option<String> {
        lock(&self.grant).as_ref().map(|g| g.access_token.clone())
    }

    /// The access token to send, if there is one: the stored grant on first use, refreshed
    /// first when it has expired.
    pub async fn token(&self) -> Option<String> {
        self.loaded
            .get_or_init(|| async {
                match self.options.store.load(&self.server, &self.url).await {
                    Ok(Some(grant)) => *lock(&self.grant) = Some(grant),
                    Ok(None) => {}
                    Err(e) => tracing::warn!(server = %self.server, "token store: {e}"),
                }
            })
            .await;
        let expired = lock(&self.grant)
            .as_ref()
            .and_then(|g| g.expires_at)
            .is_some_and(|at| now() + EXPIRY_MARGIN_SECS >= at);
        if expired {
            let _flow = self.flow.lock().await;
            let still = lock(&self.grant)
                .as_ref()
                .and_then(|g| g.expires_at)
                .is_some_and(|at| now() + EXPIRY_MARGIN_SECS >= at);
            if still && let Err(e) = self.refresh().await {
                tracing::info!(server = %self.server, "token refresh failed: {e}");
                *lock(&self.grant) = None;
            }
        }
        self.current()
    }

    /// The server answered 401 to a request sent with `used`: refresh, or authorize anew.
    pub async fn unauthorized(
        &self,
        used: Option<&str>,
        challenge: Option<&str>,
    ) -> Result<(), OAuthError> {
        let _flow = self.flow.lock().await;
        if self.current().as_deref() != used {
            return Ok(());
        }
        if used.is_some() {
            match self.refresh().await {
                Ok(true) => return Ok(()),
                Ok(false) => {}
                Err(e) => tracing::info!(server = %self.server, "token refresh failed: {e}"),
            }
        }
        let challenge = challenge
            .map(discovery::parse_challenge)
            .unwrap_or_default();
        self.authorize(&challenge, false).await
    }

    /// The server answered 403 `insufficient_scope` to a request sent with `used`: authorize
    /// again with the scope it names added.
    pub async fn insufficient_scope(
        &self,
        used: Option<&str>,
        challenge: &str,
    ) -> Result<(), OAuthError> {
        let _flow = self.flow.lock().await;
        if self.current().as_deref() != used {
            return Ok(());
        }
        self.authorize(&discovery::parse_challenge(challenge), true)
            .await
    }

    /// Uses the refresh token; `Ok(false)` when there is none.
    async fn refresh(&self) -> Result<bool, OAuthError> {
        let Some(grant) = lock(&self.grant).clone() else {
            return Ok(false);
        };
        let Some(refresh) = grant.refresh_token.clone() else {
            return Ok(false);
        };
        let client = Client {
            id: grant.client_id.clone(),
            secret: grant.client_secret.clone(),
            method: grant.auth_method.clone(),
        };
        let form = vec![
            ("grant_type", "refresh_token".to_owned()),
            ("refresh_token", refresh.clone()),
            ("resource", grant.resource.clone()),
        ];
        let mut fresh = self
            .token_request(&grant.token_endpoint, &client, form)
            .await?;
        fresh.resource = grant.resource;
        if fresh.refresh_token.is_none() {
            fresh.refresh_token = Some(refresh);
        }
        if fresh.scope.is_none() {
            fresh.scope = grant.scope;
        }
        self.keep(fresh).await;
        Ok(true)
    }

    async fn keep(&self, grant: StoredGrant) {
        if let Err(e) = self
            .options
            .store
            .save(&self.server, &self.url, &grant)
            .await
        {
            tracing::warn!(server = %self.server, "the token could not be stored: {e}");
        }
        *lock(&self.grant) = Some(grant);
    }

    /// The whole flow: discovery, registration, the grant, storage.
    async fn authorize(&self, challenge: &Challenge, step_up: bool) -> Result<(), OAuthError> {
        let _activity = Activity::start(&self.activity);
        let server_url = url::Url::parse(&self.url).map_err(|e| OAuthError::BadUrl {
            url: self.url.clone(),
            reason: e.to_string(),
        })?;
        let prm = discovery::resource_metadata(
            &self.fetch,
            &server_url,
            challenge.resource_metadata.as_deref(),
        )
        .await?;
        let resource = match prm.as_ref().and_then(|p| p.resource.clone()) {
            Some(found) if !discovery::resource_matches(&server_url, &found) => {
                return Err(OAuthError::ResourceMismatch {
                    expected: self.url.clone(),
                    found,
                });
            }
            Some(found) => found,
            None => self.url.clone(),
        };
        let issuer = prm
            .as_ref()
            .and_then(|p| p.authorization_servers.first().cloned());
        let metadata = match &issuer {
            Some(issuer) => {
                let parsed = url::Url::parse(issuer).map_err(|e| OAuthError::BadUrl {
                    url: issuer.clone(),
                    reason: e.to_string(),
                })?;
                discovery::server_metadata(&self.fetch, &parsed)
                    .await?
                    .ok_or_else(|| OAuthError::NoMetadata(issuer.clone()))?
            }
            // 2025-03-26: the MCP server's URL with its path discarded is the authorization
            // base URL, with default endpoints when it has no metadata either.
            None => {
                let mut base = server_url.clone();
                base.set_path("/");
                base.set_query(None);
                discovery::server_metadata(&self.fetch, &base)
                    .await?
                    .unwrap_or_else(|| discovery::default_metadata(&base))
            }
        };
        if let Some(methods) = &metadata.code_challenge_methods_supported
            && !methods.iter().any(|m| m == "S256")
        {
            return Err(OAuthError::NoPkce);
        }
        *lock(&self.issuer) = Some(metadata.issuer.clone());
        let scopes = self.choose_scopes(challenge, prm.as_ref(), &metadata, step_up);
        *lock(&self.scopes) = scopes.clone();
        let scope = scopes.join(" ");
        let token_endpoint = metadata
            .token_endpoint
            .clone()
            .ok_or_else(|| OAuthError::NoMetadata("no token_endpoint".into()))?;
        let grant = match self.settings.grant {
            OAuthGrant::ClientCredentials => {
                let client = self.machine_client(&metadata)?;
                let mut form = vec![
                    ("grant_type", "client_credentials".to_owned()),
                    ("resource", resource.clone()),
                ];
                if !scope.is_empty() {
                    form.push(("scope", scope.clone()));
                }
                self.token_request(&token_endpoint, &client, form).await?
            }
            OAuthGrant::IdentityAssertion => {
                let assertion = self
                    .identity_assertion(&metadata.issuer, &resource, &scope)
                    .await?;
                let client = self.machine_client(&metadata)?;
                let mut form = vec![
                    ("grant_type", JWT_BEARER.to_owned()),
                    ("assertion", assertion),
                    ("resource", resource.clone()),
                ];
                if !scope.is_empty() {
                    form.push(("scope", scope.clone()));
                }
                self.token_request(&token_endpoint, &client, form).await?
            }
            OAuthGrant::AuthorizationCode => {
                self.code_flow(&metadata, &token_endpoint, &resource, &scope)
                    .await?
            }
        };
        let grant = StoredGrant {
            resource,
            scope: grant
                .scope
                .or(if scope.is_empty() { None } else { Some(scope) }),
            ..grant
        };
        self.keep(grant).await;
        Ok(())
    }

    /// The spec's scope choice: configured scopes, else the challenge's, else the PRM's
    /// `scopes_supported`, else none; a step-up adds the challenge's scopes to those asked for
    /// before. `offline_access` is added when the authorization server lists it and a user signs
    /// in (a refresh token spares the next sign-in).
    fn choose_scopes(
        &self,
        challenge: &Challenge,
        prm: Option<&discovery::ResourceMetadata>,
        metadata: &ServerMetadata,
        step_up: bool,
    ) -> Vec<String> {
        let split = |s: &str| -> Vec<String> { s.split_whitespace().map(str::to_owned).collect() };
        let mut scopes: Vec<String> = if step_up {
            let asked = lock(&self.scopes).clone();
            if asked.is_empty() {
                // A grant from an earlier run: widen what it was issued for.
                lock(&self.grant)
                    .as_ref()
                    .and_then(|g| g.scope.as_deref())
                    .map(split)
                    .unwrap_or_default()
            } else {
                asked
            }
        } else {
            Vec::new()
        };
        let named: Vec<String> = if !self.settings.scopes.is_empty() && !step_up {
            self.settings.scopes.clone()
        } else if let Some(s) = &challenge.scope {
            split(s)
        } else {
            prm.and_then(|p| p.scopes_supported.clone())
                .unwrap_or_default()
        };
        for s in named {
            if !scopes.contains(&s) {
                scopes.push(s);
            }
        }
        let offline = metadata
            .scopes_supported
            .as_ref()
            .is_some_and(|s| s.iter().any(|x| x == OFFLINE_ACCESS));
        if offline
            && self.settings.grant == OAuthGrant::AuthorizationCode
            && !scopes.iter().any(|s| s == OFFLINE_ACCESS)
        {
            scopes.push(OFFLINE_ACCESS.to_owned());
        }
        scopes
    }

    /// SEP-990: exchanges the configured ID token at the identity provider for an identity
    /// assertion (ID-JAG, RFC 8693 token exchange) for authorization server `audience` and
    /// `resource`.
    async fn identity_assertion(
        &self,
        audience: &str,
        resource: &str,
        scope: &str,
    ) -> Result<String, OAuthError> {
        let missing = |key: &str| {
            OAuthError::Config(format!("the identity_assertion grant needs `oauth.{key}`"))
        };
        let endpoint = self
            .settings
            .idp_token_endpoint
            .clone()
            .ok_or_else(|| missing("idp_token_endpoint"))?;
        let id_token = self
            .settings
            .id_token
            .clone()
            .ok_or_else(|| missing("id_token"))?;
        let mut form = vec![
            ("grant_type", TOKEN_EXCHANGE),
            ("requested_token_type", ID_JAG),
            ("subject_token", id_token.as_str()),
            ("subject_token_type", ID_TOKEN),
            ("audience", audience),
            ("resource", resource),
        ];
        if let Some(id) = self.settings.idp_client_id.as_deref() {
            form.push(("client_id", id));
        }
        if !scope.is_empty() {
            form.push(("scope", scope));
        }
        let answer = self
            .fetch
            .send(reqwest13::Method::POST, &endpoint, Body::Form(&form), None)
            .await?;
        match answer.json.get("access_token").and_then(Value::as_str) {
            Some(jag) if (200..300).contains(&answer.status) => Ok(jag.to_owned()),
            _ => Err(OAuthError::TokenRefused(format!(
                "the identity provider answered {}{}",
                answer.status,
                error_text(&answer.json)
            ))),
        }
    }

    /// The client of the client-credentials and identity-assertion grants: the configured id
    /// with its private key or secret.
    fn machine_client(&self, metadata: &ServerMetadata) -> Result<Client, OAuthError> {
        let id = self
            .settings
            .client_id
            .clone()
            .ok_or_else(|| OAuthError::Config("this grant needs `oauth.client_id`".into()))?;
        if self.settings.private_key.is_some() {
            return Ok(Client {
                id,
                secret: None,
                method: "private_key_jwt".into(),
            });
        }
        let secret = self.settings.client_secret.clone().ok_or_else(|| {
            OAuthError::Config(
                "this grant needs `oauth.client_secret` or `oauth.private_key`".into(),
            )
        })?;
        let method = secret_method(metadata.token_endpoint_auth_methods_supported.as_deref());
        Ok(Client {
            id,
            secret: Some(secret),
            method,
        })
    }

    /// Authorization code with PKCE: listen, register, prompt, wait, exchange.
    async fn code_flow(
        &self,
        metadata: &ServerMetadata,
        token_endpoint: &str,
        resource: &str,
        scope: &str,
    ) -> Result<StoredGrant, OAuthError> {
        let authorization_endpoint = metadata
            .authorization_endpoint
            .clone()
            .ok_or_else(|| OAuthError::NoMetadata("no authorization_endpoint".into()))?;
        // Checked like every endpoint a server names, though a browser opens it.
        self.fetch.check(&authorization_endpoint).await?;
        let listener = CallbackListener::bind(self.settings.redirect_port).await?;
        let redirect_uri = listener.redirect_uri();
        let client = self.register(metadata, &redirect_uri).await?;
        let verifier = random_b64(32)?;
        let state = random_b64(16)?;
        let mut url = url::Url::parse(&authorization_endpoint).map_err(|e| OAuthError::BadUrl {
            url: authorization_endpoint.clone(),
            reason: e.to_string(),
        })?;
        {
            let mut q = url.query_pairs_mut();
            q.append_pair("response_type", "code")
                .append_pair("client_id", &client.id)
                .append_pair("redirect_uri", &redirect_uri)
                .append_pair("code_challenge", &pkce_challenge(&verifier))
                .append_pair("code_challenge_method", "S256")
                .append_pair("state", &state)
                .append_pair("resource", resource);
            if !scope.is_empty() {
                q.append_pair("scope", scope);
            }
        }
        let limit = self.options.callback_timeout;
        let wait = listener.wait(&state, limit);
        tokio::pin!(wait);
        tokio::select! {
            opened = self.options.prompt.open(&self.server, url.as_str()) => {
                opened.map_err(OAuthError::Prompt)?;
            }
            code = &mut wait => {
                // The redirect came before the prompt returned (a headless prompt delivers it).
                let code = code?;
                return self.exchange(token_endpoint, &client, code, &redirect_uri, &verifier, resource).await;
            }
        }
        let code = wait.await?;
        self.exchange(
            token_endpoint,
            &client,
            code,
            &redirect_uri,
            &verifier,
            resource,
        )
        .await
    }

    async fn exchange(
        &self,
        token_endpoint: &str,
        client: &Client,
        code: String,
        redirect_uri: &str,
        verifier: &str,
        resource: &str,
    ) -> Result<StoredGrant, OAuthError> {
        let form = vec![
            ("grant_type", "authorization_code".to_owned()),
            ("code", code),
            ("redirect_uri", redirect_uri.to_owned()),
            ("code_verifier", verifier.to_owned()),
            ("resource", resource.to_owned()),
        ];
        self.token_request(token_endpoint, client, form).await
    }

    /// The client for the authorization-code grant: configured, a metadata document URL, or
    /// dynamically registered.
    async fn register(
        &self,
        metadata: &ServerMetadata,
        redirect_uri: &str,
    ) -> Result<Client, OAuthError> {
        let supported = metadata.token_endpoint_auth_methods_supported.as_deref();
        if let Some(id) = &self.settings.client_id {
            let secret = self.settings.client_secret.clone();
            let method = match &secret {
                Some(_) => secret_method(supported),
                None => "none".into(),
            };
            return Ok(Client {
                id: id.clone(),
                secret,
                method,
            });
        }
        if metadata.client_id_metadata_document_supported
            && let Some(url) = &self.settings.client_metadata_url
        {
            return Ok(Client {
                id: url.clone(),
                secret: None,
                method: "none".into(),
            });
        }
        let endpoint = metadata
            .registration_endpoint
            .clone()
            .ok_or(OAuthError::NoRegistration)?;
        let wanted = if supported.is_none_or(|m| m.iter().any(|x| x == "none")) {
            "none".to_owned()
        } else {
            secret_method(supported)
        };
        let body = json!({
            "client_name": self.options.client_name,
            "redirect_uris": [redirect_uri],
            "grant_types": ["authorization_code", "refresh_token"],
            "response_types": ["code"],
            "token_endpoint_auth_method": wanted,
        });
        let answer = self
            .fetch
            .send(reqwest13::Method::POST, &endpoint, Body::Json(&body), None)
            .await?;
        if !(200..300).contains(&answer.status) {
            return Err(OAuthError::TokenRefused(format!(
                "registration answered {}{}",
                answer.status,
                error_text(&answer.json)
            )));
        }
        let text = |k: &str| {
            answer
                .json
                .get(k)
                .and_then(Value::as_str)
                .map(str::to_owned)
        };
        let id = text("client_id")
            .ok_or_else(|| OAuthError::Http("the registration answer has no client_id".into()))?;
        let secret = text("client_secret");
        let method = match (text("token_endpoint_auth_method"), &secret) {
            (Some(m), _) => m,
            (None, Some(_)) => secret_method(supported),
            (None, None) => "none".into(),
        };
        Ok(Client { id, secret, method })
    }

    /// One token request with the client's authentication; the answer as a grant.
    async fn token_request(
        &self,
        endpoint: &str,
        client: &Client,
        mut form: Vec<(&'static str, String)>,
    ) -> Result<StoredGrant, OAuthError> {
        let mut basic = None;
        match client.method.as_str() {
            "client_secret_basic" if client.secret.is_some() => {
                basic = client.secret.as_deref().map(|s| (client.id.as_str(), s));
            }
            "client_secret_post" if client.secret.is_some() => {
                form.push(("client_id", client.id.clone()));
                form.push(("client_secret", client.secret.clone().unwrap_or_default()));
            }
            "private_key_jwt" => {
                let assertion = self.assertion(&client.id)?;
                form.push(("client_id", client.id.clone()));
                form.push((
                    "client_assertion_type",
                    "urn:ietf:params:oauth:client-assertion-type:jwt-bearer".into(),
                ));
                form.push(("client_assertion", assertion));
            }
            _ => form.push(("client_id", client.id.clone())),
        }
        let pairs: Vec<(&str, &str)> = form.iter().map(|(k, v)| (*k, v.as_str())).collect();
        let answer = self
            .fetch
            .send(reqwest13::Method::POST, endpoint, Body::Form(&pairs), basic)
            .await?;
        let text = |k: &str| {
            answer
                .json
                .get(k)
                .and_then(Value::as_str)
                .map(str::to_owned)
        };
        let access_token = match text("access_token") {
            Some(t) if (200..300).contains(&answer.status) => t,
            _ => {
                return Err(OAuthError::TokenRefused(format!(
                    "status {}{}",
                    answer.status,
                    error_text(&answer.json)
                )));
            }
        };
        let expires_at = answer
            .json
            .get("expires_in")
            .and_then(Value::as_u64)
            .map(|s| now().saturating_add(s));
        Ok(StoredGrant {
            resource: String::new(),
            token_endpoint: endpoint.to_owned(),
            client_id: client.id.clone(),
            client_secret: client.secret.clone(),
            auth_method: client.method.clone(),
            access_token,
            refresh_token: text("refresh_token"),
            expires_at,
            scope: text("scope"),
        })
    }

    /// A `private_key_jwt` client assertion (RFC 7523), ES256, for the authorization server.
    fn assertion(&self, client_id: &str) -> Result<String, OAuthError> {
        let pem = self.settings.private_key.as_deref().ok_or_else(|| {
            OAuthError::Config("private_key_jwt needs `oauth.private_key`".into())
        })?;
        let audience = lock(&self.issuer).clone().unwrap_or_default();
        let issued = now();
        let claims = json!({
            "iss": client_id,
            "sub": client_id,
            "aud": audience,
            "iat": issued,
            "exp": issued + 300,
            "jti": random_b64(16)?,
        });
        sign_es256(pem, &claims)
    }
}

/// The secret-based method to use given what the server supports (RFC 8414's default is
/// `client_secret_basic`).
fn secret_method(supported: Option<&[String]>) -> String {
    let Some(methods) = supported else {
        return "client_secret_basic".into();
    };
    for m in ["client_secret_basic", "client_secret_post", "none"] {
        if methods.iter().any(|x| x == m) {
            return m.into();
        }
    }
    "client_secret_basic".into()
}

/// `: error (description)` from an OAuth error answer, for messages.
fn error_text(json: &Value) -> String {
    let text = |k: &str| json.get(k).and_then(Value::as_str);
    match (text("error"), text("error_description")) {
        (Some(e), Some(d)) => format!(": {e} ({d})"),
        (Some(e), None) => format!(": {e}"),
        _ => String::new(),
    }
}

/// Signs `claims` as a compact JWS with ES256 under the PKCS#8 PEM key `pem`.
fn sign_es256(pem: &str, claims: &Value) -> Result<String, OAuthError> {
    let bad = |why: &str| OAuthError::Config(format!("oauth.private_key: {why}"));
    let body: String = pem
        .lines()
        .filter(|l| !l.starts_with("-----"))
        .map(str::trim)
        .collect();
    let der = base64::engine::general_purpose::STANDARD
        .decode(body)
        .map_err(|_| bad("not a PEM key"))?;
    let rng = ring::rand::SystemRandom::new();
    let key = ring::signature::EcdsaKeyPair::from_pkcs8(
        &ring::signature::ECDSA_P256_SHA256_FIXED_SIGNING,
        &der,
        &rng,
    )
    .map_err(|_| bad("not a PKCS#8 EC P-256 key"))?;
    let header = B64URL.encode(json!({"alg": "ES256", "typ": "JWT"}).to_string());
    let payload = B64URL.encode(claims.to_string());
    let input = format!("{header}.{payload}");
    let signature = key
        .sign(&rng, input.as_bytes())
        .map_err(|_| bad("signing failed"))?;
    Ok(format!("{input}.{}", B64URL.encode(signature.as_ref())))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pkce_challenge_is_unpadded_base64url_sha256() {
        // Computed independently: base64.urlsafe_b64encode(sha256(v)).rstrip("=") in Python.
        assert_eq!(
            pkce_challenge("dBjftJeZ4CVP-mJ92K0aqqyB1GOHdOlcSS1gZ2QTRxc"),
            "o81EXHvcT_IV7Ufm5VXrgfUCyeDCl5IAX8nbXNJJWNQ"
        );
    }

    #[test]
    fn secret_methods_follow_the_server() {
        let v = |a: &[&str]| a.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(secret_method(None), "client_secret_basic");
        assert_eq!(
            secret_method(Some(&v(&["client_secret_post"]))),
            "client_secret_post"
        );
        assert_eq!(secret_method(Some(&v(&["none"]))), "none");
    }
}
