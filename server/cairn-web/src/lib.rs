//! The web guard: the one place where cairn's tools open outbound connections.
//!
//! Every request goes through [`WebGuard::fetch`], which
//! - accepts `http` and `https` only and refuses credentials in the URL;
//! - decides on the host as parsed by the `url` crate (WHATWG: IDNA, lower case, and the
//!   decimal, octal and hex IPv4 spellings such as `2130706433` or `0x7f.1` normalised), never
//!   on string matching;
//! - checks the host against the user's deny list and the malicious-URL [`Blocklist`] (the
//!   user's allow list can lift a blocklist entry, never an address check);
//! - resolves the host itself (through a [`Resolver`], injectable for tests), classifies every
//!   address ([`classify`]) and refuses the request when any is private, loopback (unless
//!   [`GuardConfig::allow_loopback`]), link-local, CGNAT, multicast, reserved, or an IPv6 form
//!   embedding one of those;
//! - pins the connection to the checked addresses (`reqwest::ClientBuilder::resolve_to_addrs`,
//!   a fresh client per hop whose own DNS resolver refuses every name), so a second DNS answer
//!   (rebinding) is never consulted and an unpinned name fails instead of being looked up;
//! - ignores environment proxies unless one is configured, follows redirects by hand (each hop
//!   checked again, at most [`GuardConfig::max_redirects`]);
//! - streams the body and stops at [`GuardConfig::max_bytes`], marking the response truncated;
//!   the cap counts the bytes handed back, after any content decoding, and reqwest is built
//!   without decoders here, so no `Accept-Encoding` is sent and a body compressed anyway comes
//!   back as received (a gzip bomb never expands);
//! - applies connect and total timeouts, and per-user and per-host rate limits whose refusal
//!   says when the next request may go;
//! - attaches a vault secret a tool asked for ([`CredentialUse`]) itself, per hop, only for a
//!   host the secret is bound to ([`Credentials`]).
//!
//! ```no_run
//! # async fn demo() -> Result<(), cairn_web::WebError> {
//! use cairn_web::{GuardConfig, WebGuard, WebRequest};
//! let guard = WebGuard::new(GuardConfig::default())?;
//! let page = guard.fetch(WebRequest::get("https://example.com/")).await?;
//! let text = String::from_utf8_lossy(&page.body);
//! # let _ = (text, page.truncated);
//! # Ok(()) }
//! ```

mod blocklist;
mod classify;
mod config;
mod connect;
mod credentials;
mod error;
mod guard;
mod limits;
mod resolve;
pub mod sign;
mod tls;

pub use blocklist::{Blocklist, BlocklistMatch};
pub use classify::{AddressClass, classify};
pub use config::GuardConfig;
pub use credentials::{CredentialRefusal, CredentialUse, Credentials, NoCredentials, Placement};
pub use error::WebError;
pub use guard::{StreamedResponse, WebGuard, WebRequest, WebResponse};
pub use resolve::{BoxFuture, Resolver, SystemResolver};
pub use tls::{ChainError, PeerCertificates};

/// Re-exported so callers build requests without depending on reqwest themselves.
pub use reqwest::Method;
/// Re-exported: the status of a [`WebResponse`].
pub use reqwest::StatusCode;
/// Re-exported header types ([`WebRequest::headers`], [`WebResponse::headers`]).
pub use reqwest::header;
