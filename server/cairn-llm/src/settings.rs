//! Provider settings: which API, where, which model, the key, and the timing knobs.

use std::time::Duration;

use crate::key::ApiKey;
use crate::kind::ProviderKind;
use crate::wire::RequestOptions;

/// Everything needed to talk to one provider.
#[derive(Debug, Clone)]
pub struct ProviderSettings {
    pub kind: ProviderKind,
    pub model: String,
    pub base_url: String,
    /// `None` is fine for a loopback server; elsewhere it is a configuration error.
    pub api_key: Option<ApiKey>,
    /// What the user should set to provide the key, e.g. `OPENAI_API_KEY`; named in errors.
    pub api_key_setting: String,
    /// Retries of transient failures (429, 5xx, 529, connection errors) after the first try.
    pub max_retries: u32,
    pub connect_timeout: Duration,
    /// Longest silence accepted while waiting for the answer; longer is `Stalled`.
    pub idle_timeout: Duration,
    /// Output token limit sent with each request; 0 sends none where the API allows that.
    pub max_tokens: u32,
    /// First retry delay; doubles per retry, capped.
    pub retry_base_delay: Duration,
    /// Whether the model reads pictures in user messages.
    pub images: bool,
    /// The context window in tokens, when configured; otherwise the model's known one.
    pub context_window: Option<u64>,
}

impl ProviderSettings {
    /// Settings with the usual defaults for everything but the essentials.
    pub fn new(kind: ProviderKind, model: impl Into<String>, base_url: impl Into<String>) -> Self {
        let model: String = model.into();
        Self {
            kind,
            images: guess_images(kind, &model),
            model,
            base_url: base_url.into(),
            api_key: None,
            api_key_setting: kind.default_key_setting().to_owned(),
            max_retries: 3,
            connect_timeout: Duration::from_secs(10),
            idle_timeout: Duration::from_secs(120),
            max_tokens: 8192,
            retry_base_delay: Duration::from_millis(500),
            context_window: None,
        }
    }

    /// What a request body needs of these settings.
    pub(crate) fn request_options(&self) -> RequestOptions<'_> {
        RequestOptions {
            model: &self.model,
            max_tokens: self.max_tokens,
        }
    }
}

/// Whether a model of this name reads pictures, as far as its name tells: every Claude model
/// the Messages API serves does; of the others, the families known to.
pub fn guess_images(kind: ProviderKind, model: &str) -> bool {
    let model = model.to_ascii_lowercase();
    kind.wire().serves_claude()
        || [
            "claude", "gpt-4o", "gpt-4.1", "gpt-5", "o3", "o4", "vision", "-vl", "llava",
        ]
        .iter()
        .any(|family| model.contains(family))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_never_print() {
        let mut settings = ProviderSettings::new(ProviderKind::Anthropic, "m", "http://x");
        settings.api_key = Some(ApiKey::new("sk-secret"));
        assert!(!format!("{settings:?}").contains("sk-secret"));
        assert_eq!(ApiKey::new("sk-secret").to_string(), "[REDACTED]");
    }
}
