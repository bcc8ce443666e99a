//! Why authorization to a server failed ([`OAuthError`]): one variant per denial, none
//! carrying a token.

use std::time::Duration;

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
