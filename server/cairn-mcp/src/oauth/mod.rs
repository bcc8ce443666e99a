//! OAuth 2.1 for HTTP MCP servers, as the MCP authorization spec (2025-06-18, 2025-11-25, with
//! the 2025-03-26 fallbacks) describes it.
//!
//! An HTTP server that answers 401 with `WWW-Authenticate: Bearer ...` is authorized here:
//! Protected Resource Metadata (RFC 9728, from the challenge or the well-known URIs), whose
//! `resource` must match the server's URL; Authorization Server metadata (RFC 8414, then OpenID
//! discovery); a client (pre-registered, a Client ID Metadata Document, or Dynamic Client
//! Registration, RFC 7591); the authorization-code grant with PKCE S256, `state` and the
//! `resource` parameter (RFC 8707) through a loopback redirect listener; or the
//! client-credentials grant. Tokens are refreshed when expired or refused, and a 403
//! `insufficient_scope` asks again with the wider scope, a bounded number of times.
//!
//! The seams: [`TokenStore`] keeps grants (the binary puts them in the vault, encrypted and bound
//! to the server's host), and [`AuthorizationPrompt`] shows the user where to sign in (the
//! editor's `window/showDocument`, the terminal, or the conformance client's headless GET).
//!
//! Security rules:
//! - a token never enters an error message, a log line, `Debug` output or the hub's status;
//! - every URL a server hands us (metadata, authorization servers, endpoints) is fetched only
//!   when it is on the configured server's host (which the user chose) or resolves to public
//!   addresses only, and the connection is pinned to the addresses checked (no DNS rebinding);
//!   environment proxies are ignored and redirects are not followed.

mod client;
mod discovery;
mod fetch;
mod flow;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::future::BoxFuture;
use serde::{Deserialize, Serialize};

pub(crate) use client::AuthClient;
pub use flow::{Authorizer, CallbackListener, pkce_challenge};

/// Why authorization to a server failed. Each denial is its own variant so callers and tests can
/// tell them apart; none carries a token.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum OAuthError {
    /// A URL a server handed us leads to an address cairn does not connect to on a server's word.
    #[error("refused to fetch {url}: it resolves to a {class} address ({addr})")]
    ForbiddenAddress {
        url: String,
        class: String,
        addr: std::net::IpAddr,
    },
    /// A URL a server handed us cannot be used (bad syntax, not http(s), credentials in it).
    #[error("refused URL {url}: {reason}")]
    BadUrl { url: String, reason: String },
    /// The Protected Resource Metadata names another resource than the server's URL.
    #[error("the protected resource metadata is for {found}, not for {expected}; refusing it")]
    ResourceMismatch { expected: String, found: String },
    /// No authorization server metadata, and no way to guess the endpoints.
    #[error("no authorization server metadata found for {0}")]
    NoMetadata(String),
    /// The authorization server offers no way to register cairn as a client.
    #[error(
        "the authorization server supports neither dynamic client registration nor client id \
         metadata documents; set `oauth.client_id` for this server"
    )]
    NoRegistration,
    /// The authorization server does not support PKCE with S256.
    #[error("the authorization server does not support PKCE with S256")]
    NoPkce,
    /// The redirect carried another `state` than the one sent: a forged or mixed-up callback.
    #[error("the authorization callback carried a wrong state; refused")]
    StateMismatch,
    /// The authorization server redirected back with an error (the user declined, ...).
    #[error("the authorization server refused: {0}")]
    Denied(String),
    /// Nobody completed the sign-in in time.
    #[error("no authorization callback within {} s", .0.as_secs())]
    CallbackTimeout(Duration),
    /// The prompt could not show the authorization URL.
    #[error("could not open the authorization page: {0}")]
    Prompt(String),
    /// The token endpoint refused (`error` and `error_description` from its answer).
    #[error("the token endpoint refused: {0}")]
    TokenRefused(String),
    /// The server keeps asking for more scope.
    #[error("the server still answers insufficient_scope after {0} authorizations; giving up")]
    ScopeRetryLimit(u32),
    /// The server refused a token it was just given.
    #[error("the server refused the new access token")]
    Unauthorized,
    /// The configuration cannot work (client credentials without a secret, a bad key, ...).
    #[error("{0}")]
    Config(String),
    /// A network or protocol failure on the way.
    #[error("{0}")]
    Http(String),
    /// The token store failed.
    #[error("token store: {0}")]
    Store(String),
}

/// What is kept of an authorization between runs: enough to use and refresh the token without
/// discovering or registering again. Its `Debug` shows no token or secret.
#[derive(Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct StoredGrant {
    /// The resource the token is for (the server URL, or its PRM `resource`).
    pub resource: String,
    pub token_endpoint: String,
    pub client_id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_secret: Option<String>,
    /// `none`, `client_secret_post`, `client_secret_basic` or `private_key_jwt`.
    pub auth_method: String,
    pub access_token: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refresh_token: Option<String>,
    /// Seconds since the Unix epoch after which the access token is stale.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expires_at: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scope: Option<String>,
}

impl std::fmt::Debug for StoredGrant {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StoredGrant")
            .field("resource", &self.resource)
            .field("token_endpoint", &self.token_endpoint)
            .field("client_id", &self.client_id)
            .field("auth_method", &self.auth_method)
            .field("expires_at", &self.expires_at)
            .field("scope", &self.scope)
            .finish_non_exhaustive()
    }
}

/// Where grants live between runs. The binary implements it on the vault; errors are words for
/// the log (never a token).
pub trait TokenStore: Send + Sync {
    /// The grant stored for server `server` at `url`, if any.
    fn load<'a>(
        &'a self,
        server: &'a str,
        url: &'a str,
    ) -> BoxFuture<'a, Result<Option<StoredGrant>, String>>;
    /// Stores (replaces) the grant for `server` at `url`.
    fn save<'a>(
        &'a self,
        server: &'a str,
        url: &'a str,
        grant: &'a StoredGrant,
    ) -> BoxFuture<'a, Result<(), String>>;
}

/// Grants in memory only: the default, and what tests and the conformance client use.
#[derive(Debug, Default)]
pub struct MemoryTokenStore {
    grants: Mutex<HashMap<(String, String), StoredGrant>>,
}

impl TokenStore for MemoryTokenStore {
    fn load<'a>(
        &'a self,
        server: &'a str,
        url: &'a str,
    ) -> BoxFuture<'a, Result<Option<StoredGrant>, String>> {
        let grant = self
            .grants
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .get(&(server.to_owned(), url.to_owned()))
            .cloned();
        Box::pin(async move { Ok(grant) })
    }

    fn save<'a>(
        &'a self,
        server: &'a str,
        url: &'a str,
        grant: &'a StoredGrant,
    ) -> BoxFuture<'a, Result<(), String>> {
        self.grants
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .insert((server.to_owned(), url.to_owned()), grant.clone());
        Box::pin(async { Ok(()) })
    }
}

/// Shows the user the authorization URL. The authorization server then redirects the browser to
/// cairn's loopback listener, which the flow is already waiting on; a headless prompt may also
/// follow the URL itself and deliver the redirect there.
pub trait AuthorizationPrompt: Send + Sync {
    /// Asks the user to sign in to server `server` at `url`; returns once the URL is shown (the
    /// flow waits for the redirect, however long the user takes, up to its limit).
    fn open<'a>(&'a self, server: &'a str, url: &'a str) -> BoxFuture<'a, Result<(), String>>;
}

/// A prompt for when nobody can sign in: every authorization-code flow fails with a message.
#[derive(Debug, Default, Clone, Copy)]
pub struct NoPrompt;

impl AuthorizationPrompt for NoPrompt {
    fn open<'a>(&'a self, _server: &'a str, _url: &'a str) -> BoxFuture<'a, Result<(), String>> {
        Box::pin(async { Err("nobody is here to sign in".to_owned()) })
    }
}

/// How the hub authorizes to HTTP servers that ask for OAuth.
#[derive(Clone)]
pub struct OAuthOptions {
    pub store: Arc<dyn TokenStore>,
    pub prompt: Arc<dyn AuthorizationPrompt>,
    /// `client_name` in dynamic registration.
    pub client_name: String,
    /// How long the user has to finish signing in.
    pub callback_timeout: Duration,
    /// How many times a 403 `insufficient_scope` may lead to a new authorization per request.
    pub max_step_ups: u32,
}

impl Default for OAuthOptions {
    fn default() -> Self {
        Self {
            store: Arc::new(MemoryTokenStore::default()),
            prompt: Arc::new(NoPrompt),
            client_name: "cairn".to_owned(),
            callback_timeout: Duration::from_secs(300),
            max_step_ups: 2,
        }
    }
}

impl std::fmt::Debug for OAuthOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OAuthOptions")
            .field("client_name", &self.client_name)
            .field("callback_timeout", &self.callback_timeout)
            .field("max_step_ups", &self.max_step_ups)
            .finish_non_exhaustive()
    }
}

/// A browser for a headless client (the conformance client): GETs the authorization URL without
/// following redirects and delivers the `Location` it answers with to cairn's loopback redirect
/// listener. Only a redirect to `http://127.0.0.1:` is followed, so this never becomes a way to
/// make cairn fetch an arbitrary URL.
pub async fn headless_authorize(url: &str) -> Result<(), String> {
    let client = crate::http::builder()
        .map_err(|e| e.to_string())?
        .redirect(reqwest13::redirect::Policy::none())
        .timeout(Duration::from_secs(20))
        .build()
        .map_err(|e| e.to_string())?;
    let answer = client.get(url).send().await.map_err(|e| {
        format!(
            "the authorization endpoint did not answer: {}",
            e.without_url()
        )
    })?;
    let location = answer
        .headers()
        .get("location")
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned)
        .ok_or_else(|| {
            format!(
                "the authorization endpoint answered {} without a redirect",
                answer.status()
            )
        })?;
    if !location.starts_with("http://127.0.0.1:") {
        return Err("the authorization endpoint redirected elsewhere than cairn's listener".into());
    }
    client
        .get(&location)
        .send()
        .await
        // Without the URL: it carries the authorization code.
        .map_err(|e| format!("the redirect listener did not answer: {}", e.without_url()))?;
    Ok(())
}
