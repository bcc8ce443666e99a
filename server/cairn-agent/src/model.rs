//! The model seam: what the agent asks of a chat model, and the events it streams back.
//!
//! Providers (`cairn-llm`) implement [`ModelClient`]; the agent never sees HTTP.

use std::sync::Arc;

use futures::future::BoxFuture;
use futures::stream::BoxStream;
use serde::{Deserialize, Serialize};

/// A tool as the model sees it: name, one-line description, JSON schema of its arguments.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolSpec {
    pub name: String,
    pub description: String,
    pub input_schema: serde_json::Value,
}

/// One tool call the model asked for. `arguments` is the raw JSON text the model produced,
/// kept as text because models do produce invalid JSON and the agent must answer that, not crash.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolCallRequest {
    pub id: String,
    pub name: String,
    pub arguments: String,
}

/// One message of the conversation, provider-neutral.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(
    tag = "role",
    rename_all = "camelCase",
    rename_all_fields = "camelCase"
)]
pub enum Message {
    User {
        text: String,
        /// Pictures sent with the text (a tool's own request, such as `describe_image`); only
        /// to a provider that accepts images ([`ModelClient::accepts_images`]).
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        images: Vec<ImageInput>,
    },
    Assistant {
        text: String,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        tool_calls: Vec<ToolCallRequest>,
    },
    Tool {
        call_id: String,
        name: String,
        content: String,
        is_error: bool,
    },
}

/// A picture in a user message: its media type (`image/png`) and its bytes in base64.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ImageInput {
    pub mime_type: String,
    pub data: String,
}

/// Everything one model call needs.
#[derive(Debug, Clone, PartialEq)]
pub struct ModelRequest {
    pub system: String,
    pub messages: Vec<Message>,
    pub tools: Vec<ToolSpec>,
}

/// Token counts reported by the provider.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Usage {
    pub input_tokens: u64,
    pub output_tokens: u64,
}

impl std::ops::AddAssign for Usage {
    fn add_assign(&mut self, other: Self) {
        self.input_tokens += other.input_tokens;
        self.output_tokens += other.output_tokens;
    }
}

/// What a model stream yields. Tool calls arrive whole: providers assemble the argument
/// fragments of a streamed call before emitting it.
#[derive(Debug, Clone, PartialEq)]
pub enum ModelEvent {
    TextDelta(String),
    ToolCall(ToolCallRequest),
    Usage(Usage),
    /// The provider said the answer is complete. A stream that ends without it was cut.
    Finished {
        stop_reason: Option<String>,
    },
}

/// Why a model call failed. Each message names the provider and, where the user can fix it,
/// the setting to change.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum ModelError {
    #[error("{provider}: authentication failed (HTTP {status}); set {setting}")]
    Auth {
        provider: String,
        status: u16,
        setting: String,
    },
    #[error(
        "{provider}: model `{model}` was not found (HTTP {status}); set provider.model or CAIRN_MODEL"
    )]
    ModelNotFound {
        provider: String,
        model: String,
        status: u16,
    },
    #[error("{provider}: HTTP {status}: {message}")]
    Http {
        provider: String,
        status: u16,
        message: String,
    },
    #[error("{provider}: cannot reach {url}: {message}; check provider.base_url")]
    Connect {
        provider: String,
        url: String,
        message: String,
    },
    #[error("{provider}: no data for {seconds} s, the stream stalled")]
    Stalled { provider: String, seconds: u64 },
    #[error("{provider}: the stream ended before the answer was complete")]
    Truncated { provider: String },
    #[error("{provider}: malformed response: {detail}")]
    Malformed { provider: String, detail: String },
    #[error("{provider}: not configured: {message}")]
    NotConfigured { provider: String, message: String },
}

/// The model the built-in tools may ask for a completion of their own (summarise, translate,
/// extract): the front's current one, set each time it builds an agent, so a tool always asks
/// the model the user configured. Empty until then.
#[derive(Clone, Default)]
pub struct SharedModel(Arc<std::sync::RwLock<Option<Arc<dyn ModelClient>>>>);

impl std::fmt::Debug for SharedModel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("SharedModel").finish_non_exhaustive()
    }
}

impl SharedModel {
    /// Makes `model` the one tools ask from now on.
    pub fn set(&self, model: Arc<dyn ModelClient>) {
        *self
            .0
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = Some(model);
    }

    /// The current model, if a front has set one.
    pub fn get(&self) -> Option<Arc<dyn ModelClient>> {
        self.0
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }
}

/// What a provider that runs on this machine is doing, for the fronts to show (a progress bar on
/// the terminal, `$/progress` and messages in the editor).
#[derive(Debug, Clone, PartialEq)]
pub enum ProviderStatus {
    /// Said once: which model answers, and how to choose another.
    Notice { message: String },
    /// Bytes of `file` downloaded so far, of `total`.
    Downloading { file: String, done: u64, total: u64 },
    /// Reading the weights into memory.
    Loading { model: String },
    /// Loaded, with a one-line description.
    Ready { description: String },
    /// Could not load; the message says what to do.
    Failed { message: String },
    /// One answer's speed: the time to its first token (prompt processing included), the
    /// prompt tokens run (those the cache did not already hold) and generated tokens a second.
    Speed {
        first_token_ms: u64,
        prompt_tokens: u64,
        prompt_tokens_per_s: f64,
        tokens: u64,
        tokens_per_s: f64,
    },
}

impl ProviderStatus {
    /// The speed line the terminal and the editors show.
    pub fn speed_line(&self) -> Option<String> {
        match self {
            Self::Speed {
                first_token_ms,
                prompt_tokens,
                prompt_tokens_per_s,
                tokens,
                tokens_per_s,
            } => Some(format!(
                "{tokens} tokens at {tokens_per_s:.1} tokens/s, first token after {:.2} s ({prompt_tokens} prompt tokens at {prompt_tokens_per_s:.0} tokens/s)",
                *first_token_ms as f64 / 1000.0
            )),
            _ => None,
        }
    }
}

/// A stream of model events.
pub type ModelStream = BoxStream<'static, Result<ModelEvent, ModelError>>;

/// A chat model that streams. Dropping the stream aborts the HTTP request.
pub trait ModelClient: Send + Sync {
    /// Provider and model, for messages: `openai-compatible (gpt-4o-mini)`.
    fn describe(&self) -> String;
    /// Start one completion. Retries of transient HTTP failures happen inside.
    fn stream(&self, request: ModelRequest) -> BoxFuture<'_, Result<ModelStream, ModelError>>;
    /// Whether the model reads pictures in user messages; a request with pictures goes only to
    /// a model that does.
    fn accepts_images(&self) -> bool {
        false
    }
    /// How many tokens a request and its answer may take together, when known (the configured
    /// `provider.context_window`, or the known window of the model).
    fn context_window(&self) -> Option<u64> {
        None
    }
    /// The tokens `request` takes, with the model's own tokenizer where the provider has it;
    /// otherwise an estimate.
    fn count_tokens(&self, request: &ModelRequest) -> u64 {
        estimate_tokens(request)
    }
}

/// Counts a request's tokens the rough way: about four characters a token, plus a little for
/// each message's framing. Providers with a known tokenizer count exactly.
pub fn estimate_tokens(request: &ModelRequest) -> u64 {
    let chars = request.system.len()
        + request.messages.iter().map(message_chars).sum::<usize>()
        + request
            .tools
            .iter()
            .map(|t| t.name.len() + t.description.len() + t.input_schema.to_string().len())
            .sum::<usize>();
    (chars as u64).div_ceil(4) + 4 * request.messages.len() as u64
}

fn message_chars(m: &Message) -> usize {
    match m {
        Message::User { text, images } => text.len() + images.len() * 1000,
        Message::Assistant { text, tool_calls } => {
            text.len()
                + tool_calls
                    .iter()
                    .map(|c| c.name.len() + c.arguments.len())
                    .sum::<usize>()
        }
        Message::Tool { content, name, .. } => content.len() + name.len(),
    }
}
