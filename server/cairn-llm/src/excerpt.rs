//! Quoting a provider's text in an error: cut to a length a message can carry.
//!
//! Its own file because both the transport (error bodies) and the provider decoders
//! (malformed events) quote, and neither should import the other.

/// Characters of a provider's response quoted in errors.
pub(crate) const EXCERPT: usize = 200;

/// At most [`EXCERPT`] characters, marked when cut.
pub(crate) fn excerpt(text: &str) -> String {
    let mut chars = text.chars();
    let cut: String = chars.by_ref().take(EXCERPT).collect();
    if chars.next().is_some() {
        format!("{cut}…")
    } else {
        cut
    }
}
