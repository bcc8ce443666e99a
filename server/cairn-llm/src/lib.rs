//! Model providers for cairn: OpenAI-compatible chat completions (OpenAI, Ollama, vLLM,
//! llama.cpp server, LM Studio, OpenRouter) and Anthropic messages.
//!
//! Both implement [`cairn_agent::model::ModelClient`]: they stream answers over SSE,
//! assemble streamed tool calls, retry transient HTTP failures, and turn every failure
//! into a [`ModelError`] that names what the user can change.
//! The API key is held in [`ApiKey`], which never prints and never enters an error.

mod anthropic;
mod excerpt;
mod key;
mod kind;
mod openai;
mod settings;
mod sse;
mod tokens;
mod transport;
mod wire;

use std::sync::Arc;

use cairn_agent::model::{ModelClient, ModelError};

pub use key::ApiKey;
pub use kind::ProviderKind;
pub use settings::ProviderSettings;

/// Build a client for `settings`; fails when the settings cannot work (bad URL, no key).
pub fn client(settings: ProviderSettings) -> Result<Arc<dyn ModelClient>, ModelError> {
    let wire = settings.kind.wire();
    Ok(Arc::new(transport::Provider::new(wire, settings)?))
}

/// Check that the provider answers and accepts the key, by listing its models
/// (for `cairn doctor`). Returns a one-line summary.
pub async fn probe(settings: &ProviderSettings) -> Result<String, ModelError> {
    transport::Provider::new(settings.kind.wire(), settings.clone())?
        .probe()
        .await
}
