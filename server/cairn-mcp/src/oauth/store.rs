//! Grants between runs: what is kept of an authorization ([`StoredGrant`]), the
//! [`TokenStore`] seam the binary implements on the vault, and the in-memory default.

use std::collections::HashMap;
use std::sync::Mutex;

use futures::future::BoxFuture;
use serde::{Deserialize, Serialize};

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
