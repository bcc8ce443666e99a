//! Why a request was refused or failed.
//!
//! The denial variants name what was refused and why, in words a user can act on; they are
//! what a tool shows the model and the user. [`WebError::is_denial`] separates policy
//! refusals (nothing was sent) from transport failures.

use std::net::IpAddr;
use std::path::PathBuf;
use std::time::Duration;

use crate::classify::AddressClass;

/// A refused or failed web request.
#[derive(Debug, thiserror::Error)]
pub enum WebError {
    /// The URL does not parse, or has no host.
    #[error("refused {url:?}: not a usable URL ({reason})")]
    InvalidUrl { url: String, reason: String },

    /// Only `http` and `https` are fetched.
    #[error("refused {url}: the {scheme}: scheme is not allowed (only http and https)")]
    SchemeNotAllowed { url: String, scheme: String },

    /// Credentials in the URL (`http://user:pass@host/`) are refused: they hide the real host
    /// from a reader (`http://allowed.com@evil.test/`) and would leak to the server.
    #[error("refused {url}: URLs with a user name or password are not allowed")]
    UserinfoInUrl { url: String },

    /// The host, or one of the addresses it resolves to, is not a public address.
    #[error("refused {host}: it resolves to {addr}, a {class} address")]
    AddressRefused {
        host: String,
        addr: IpAddr,
        class: AddressClass,
    },

    /// The host or URL is on the malicious-URL blocklist.
    #[error("refused {url}: {entry} is on the blocklist")]
    Blocklisted { url: String, entry: String },

    /// The host is on the user's deny list.
    #[error("refused {url}: {entry} is on the deny list")]
    DeniedHost { url: String, entry: String },

    /// A redirect hop was refused; `source` says why.
    #[error("redirect {hop} from {from} to {location} refused: {source}")]
    RedirectRefused {
        hop: usize,
        from: String,
        location: String,
        source: Box<WebError>,
    },

    /// A vault secret was asked for on a host it is not bound to.
    #[error("refused {url}: secret `{secret}` may not be sent to {host}: {reason}")]
    CredentialRefused {
        url: String,
        secret: String,
        host: String,
        reason: String,
    },

    /// The server kept redirecting.
    #[error("refused {url}: more than {limit} redirects")]
    TooManyRedirects { url: String, limit: usize },

    /// Too many requests for this user or host within the window.
    #[error("rate limit for {scope} reached: try again in {} s", retry_secs(*retry_after))]
    RateLimited {
        scope: String,
        retry_after: Duration,
    },

    /// The host name did not resolve.
    #[error("could not resolve {host}: {source}")]
    Resolve {
        host: String,
        source: std::io::Error,
    },

    /// The host name resolved to no address at all.
    #[error("could not resolve {host}: no addresses")]
    NoAddresses { host: String },

    /// The whole exchange (all hops and the body) took longer than the total timeout.
    #[error("{url} did not finish within {} s", after.as_secs_f64())]
    Timeout { url: String, after: Duration },

    /// Writing a streamed body ([`crate::WebGuard::fetch_to`]) failed.
    #[error("writing the body of {url} failed: {reason}")]
    Write { url: String, reason: String },

    /// Connecting, sending or receiving failed.
    #[error("request to {url} failed: {source}")]
    Http { url: String, source: reqwest::Error },

    /// A TLS handshake the guard made itself (to read a host's certificates) failed, or cannot
    /// be made as configured.
    #[error("TLS handshake with {host} failed: {reason}")]
    Tls { host: String, reason: String },

    /// A raw connection the guard dials itself (SMTP, IMAP) could not be made, or cannot be
    /// made as configured.
    #[error("connecting to {host} failed: {reason}")]
    Connect { host: String, reason: String },

    /// The guard's configuration cannot work.
    #[error("web guard configuration: {0}")]
    Config(String),

    /// A blocklist file could not be read.
    #[error("could not read blocklist {path}: {source}")]
    BlocklistIo {
        path: PathBuf,
        source: std::io::Error,
    },
}

/// Whole seconds to wait, rounded up so "try again in 0 s" is never said while still limited.
fn retry_secs(d: Duration) -> u64 {
    let secs = d.as_secs();
    if d.subsec_nanos() > 0 { secs + 1 } else { secs }
}

impl WebError {
    /// True for policy refusals: nothing was sent to the refused destination.
    pub fn is_denial(&self) -> bool {
        matches!(
            self,
            WebError::InvalidUrl { .. }
                | WebError::SchemeNotAllowed { .. }
                | WebError::UserinfoInUrl { .. }
                | WebError::AddressRefused { .. }
                | WebError::Blocklisted { .. }
                | WebError::DeniedHost { .. }
                | WebError::RedirectRefused { .. }
                | WebError::TooManyRedirects { .. }
                | WebError::RateLimited { .. }
                | WebError::CredentialRefused { .. }
        )
    }

    /// The refusal at the end of a redirect chain (the error itself when it is not a hop).
    pub fn root(&self) -> &WebError {
        match self {
            WebError::RedirectRefused { source, .. } => source.root(),
            other => other,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rate_limit_message_says_when() {
        let e = WebError::RateLimited {
            scope: "user local".into(),
            retry_after: Duration::from_millis(41_200),
        };
        assert_eq!(
            e.to_string(),
            "rate limit for user local reached: try again in 42 s"
        );
    }
}
