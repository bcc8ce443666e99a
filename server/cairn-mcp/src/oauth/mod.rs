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
mod error;
mod fetch;
mod flow;
mod options;
mod store;

use std::time::Duration;

pub(crate) use client::AuthClient;
pub use error::OAuthError;
pub use flow::{Authorizer, CallbackListener, pkce_challenge};
pub use options::{AuthorizationPrompt, NoPrompt, OAuthOptions};
pub use store::{MemoryTokenStore, StoredGrant, TokenStore};

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
