//! The seam through which secrets are taken out of text before it reaches the model or the
//! editor. The implementation (vault values and credential patterns) lives outside this crate,
//! which stays free of vault dependencies.

/// Replaces secrets in text with `[REDACTED:name]` markers.
pub trait Redact: Send + Sync {
    fn redact(&self, text: &str) -> String;
}
