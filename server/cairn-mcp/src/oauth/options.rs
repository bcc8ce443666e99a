//! How the hub authorizes to HTTP servers ([`OAuthOptions`]): the token store, the
//! [`AuthorizationPrompt`] that shows the user where to sign in, and the limits of a sign-in.

use std::sync::Arc;
use std::time::Duration;

use futures::future::BoxFuture;

use super::store::{MemoryTokenStore, TokenStore};

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
