//! The API key, which never prints.
//!
//! Its own file so that the wire formats, which build the key header, need not depend on the
//! settings (which name the provider kinds, which name the wire formats).

use std::fmt;

/// An API key. It prints as `[REDACTED]` and is not serializable, so it cannot leak into
/// logs, errors or transcripts by accident; [`ApiKey::expose`] is the one way to read it.
#[derive(Clone, PartialEq, Eq)]
pub struct ApiKey(String);

impl ApiKey {
    pub fn new(key: impl Into<String>) -> Self {
        Self(key.into())
    }

    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl From<String> for ApiKey {
    fn from(key: String) -> Self {
        Self(key)
    }
}

impl fmt::Debug for ApiKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("[REDACTED]")
    }
}

impl fmt::Display for ApiKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("[REDACTED]")
    }
}
