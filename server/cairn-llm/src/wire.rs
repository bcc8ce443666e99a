//! The provider wire-format seam: everything one provider's API differs in, behind
//! [`WireFormat`] (its addresses, its key header, its request body) and [`Decoder`] (its
//! streamed events).
//!
//! The transport is written against these traits only, so a new provider is one file that
//! implements them plus one line in [`crate::kind`]; nothing else names a provider.

use cairn_agent::model::{ModelError, ModelEvent, ModelRequest};
use serde_json::Value;

use crate::key::ApiKey;
use crate::sse::SseEvent;

/// The two addresses a provider answers at.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Endpoints {
    /// Where a streamed request is POSTed.
    pub chat: String,
    /// Where the models are listed (for the probe of `cairn doctor`).
    pub models: String,
}

/// The settings a request body carries; a narrow view of
/// [`crate::settings::ProviderSettings`], so that provider files need not know the rest.
#[derive(Debug, Clone, Copy)]
pub(crate) struct RequestOptions<'a> {
    pub model: &'a str,
    /// Output token limit; 0 means none where the API allows that.
    pub max_tokens: u32,
}

/// One provider's API as seen on the wire.
pub(crate) trait WireFormat: Send + Sync {
    /// The name used in messages and errors.
    fn name(&self) -> &'static str;

    /// The environment variable users conventionally set for this provider's key.
    fn default_key_setting(&self) -> &'static str;

    /// Whether every model behind this API is a Claude model: then all of them read pictures
    /// and their tokens are estimated at Claude's ratio, whatever the model is called.
    fn serves_claude(&self) -> bool {
        false
    }

    /// The addresses under `base`, which has no trailing `/`.
    fn endpoints(&self, base: &str) -> Endpoints;

    /// The header that carries the key, and its value. The one place a provider reads the key
    /// ([`ApiKey::expose`]): where the header is built.
    fn key_header(&self, key: &ApiKey) -> (&'static str, String);

    /// Headers sent with every request besides the key (an API version).
    fn fixed_headers(&self) -> &'static [(&'static str, &'static str)] {
        &[]
    }

    /// The JSON body of a streamed request.
    fn request_body(&self, options: RequestOptions<'_>, request: &ModelRequest) -> Value;

    /// A fresh decoder for one streamed answer.
    fn decoder(&self) -> Box<dyn Decoder>;
}

/// Turns a provider's SSE events into model events.
pub(crate) trait Decoder: Send {
    /// Handle one event; pushes what it produced.
    fn event(&mut self, event: &SseEvent, out: &mut Vec<ModelEvent>) -> Result<(), ModelError>;
    /// The provider's end-of-stream marker arrived; nothing more needs reading.
    fn done(&self) -> bool;
    /// The body ended. Pushes the final events and returns true when the answer was
    /// complete, false when it was cut short.
    fn finish(&mut self, out: &mut Vec<ModelEvent>) -> bool;
}
