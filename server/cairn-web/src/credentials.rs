//! Credentials attached by the HTTP layer, never by the model.
//!
//! A tool names a vault secret (`auth: {"secret": "github"}`); the model never sees or writes
//! its value, and text such as `{{vault.github}}` or `secret:github` inside a URL, header or body
//! the model wrote is sent as it is, never expanded. The guard asks its [`Credentials`] source
//! for the value at each hop, for that hop's host: the first hop is refused when the secret is
//! not bound to its host, and a redirect to a host it is not bound to goes on without it.

use cairn_vault::Secret;

/// Where a source of secrets says why a secret may not be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{reason}")]
pub struct CredentialRefusal {
    pub reason: String,
}

/// Where the guard gets secret values (the binary's vault; tests give a fixed map).
pub trait Credentials: Send + Sync {
    /// The value of secret `name`, if it may be sent to `host` (lower-case, no port).
    fn for_host(&self, name: &str, host: &str) -> Result<Secret, CredentialRefusal>;
}

/// How the secret goes into the request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Placement {
    /// `Authorization: Bearer <value>`.
    Bearer,
    /// `Authorization: Basic base64(<username>:<value>)`.
    Basic { username: String },
    /// `<header>: <value>`, e.g. `X-Api-Key`.
    Header(String),
    /// `?<param>=<value>` added to the URL sent (the URL reported back does not carry it).
    Query(String),
    /// AWS Signature Version 4 (`Authorization: AWS4-HMAC-SHA256 ...`): the secret is the
    /// secret access key; the request is signed as sent, body included.
    AwsSigV4 {
        access_key_id: String,
        region: String,
        /// The signing name of the service (`s3`, `sqs`, `dynamodb`, ...).
        service: String,
    },
    /// Azure Storage Shared Key (`Authorization: SharedKey account:signature`): the secret is
    /// the base64 account key. Tables sign a shorter string than blobs and queues.
    AzureSharedKey { account: String, table: bool },
    /// A shared access signature: the secret is the token (`sv=...&sig=...`), whose parameters
    /// are added to the URL sent (the URL reported back does not carry them).
    SasToken,
}

/// A request's use of a vault secret: which one, and where it goes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CredentialUse {
    pub secret: String,
    pub placement: Placement,
}

impl CredentialUse {
    pub fn bearer(secret: impl Into<String>) -> Self {
        Self {
            secret: secret.into(),
            placement: Placement::Bearer,
        }
    }
}

/// The source used when none is configured: every secret is refused.
#[derive(Debug, Default)]
pub struct NoCredentials;

impl Credentials for NoCredentials {
    fn for_host(&self, name: &str, _host: &str) -> Result<Secret, CredentialRefusal> {
        Err(CredentialRefusal {
            reason: format!("secret `{name}` cannot be used: no vault is configured"),
        })
    }
}
