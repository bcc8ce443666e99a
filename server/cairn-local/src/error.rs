//! Why the local model could not run ([`LocalError`]), each reason a message that says what to
//! do, and how it reaches the agent as a [`ModelError`].

use std::path::PathBuf;

use cairn_agent::model::ModelError;

/// The provider's name in messages.
pub const PROVIDER: &str = "local";

/// Why the local model could not run.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum LocalError {
    #[error(
        "provider.model `{given}` is neither `owner/repo:file.gguf[@revision]` (a GGUF file on the Hugging Face Hub) nor a path to a `.gguf` file"
    )]
    ModelName { given: String },
    /// Boxed: the file's names and the hint make it the largest variant by far.
    #[error(transparent)]
    Files(Box<cairn_select::hub::HubError>),
    #[error("cannot open {path}: {source}")]
    Open {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error(
        "{path} is not a readable GGUF file ({detail}); it may be damaged or cut short: delete it and download it again"
    )]
    NotGguf { path: PathBuf, detail: String },
    #[error(
        "{path} is cut short: it has {size} bytes, its tensors need {needed}; delete it and download it again (an interrupted download is resumed by cairn, a copied file is not)"
    )]
    Truncated {
        path: PathBuf,
        size: u64,
        needed: u64,
    },
    #[error(
        "{path} declares {what} of {declared}, more than the local provider's limit of {limit}; it is damaged or not a chat model cairn runs"
    )]
    Limit {
        path: PathBuf,
        what: &'static str,
        declared: u64,
        limit: u64,
    },
    #[error(
        "the model's architecture `{arch}` is not supported by the local provider (it runs {supported}); choose a model of those families, or serve this one with llama.cpp or Ollama and set provider.kind = \"openai\""
    )]
    Architecture { arch: String, supported: String },
    #[error(
        "the model's quantisation is not supported ({detail}); choose a file quantised as Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, Q2_K to Q6_K, IQ1 to IQ4, F16, BF16 or F32"
    )]
    Quantisation { detail: String },
    #[error(
        "{path}: the model needs about {needed_mib} MiB ({weights_mib} MiB of weights, {cache_mib} MiB of cache for {context} tokens) and {available_mib} MiB are available (provider.max_memory_mib or the memory free now); choose a smaller model or quantisation, or a smaller provider.context"
    )]
    TooLarge {
        path: PathBuf,
        needed_mib: u64,
        weights_mib: u64,
        cache_mib: u64,
        context: usize,
        available_mib: u64,
    },
    #[error(
        "the chat template of {path} cannot be rendered: {detail}; set provider.kind to a server that runs this model, or choose another file"
    )]
    Template { path: PathBuf, detail: String },
    #[error(
        "the request needs {needed} tokens with its answer, and the context of {path} holds {context}; shorten the system prompt or offer fewer tools (selection.max_tools), or raise provider.context"
    )]
    ContextTooSmall {
        path: PathBuf,
        needed: usize,
        context: usize,
    },
    #[error("{0}")]
    Engine(String),
}

impl From<cairn_select::hub::HubError> for LocalError {
    fn from(e: cairn_select::hub::HubError) -> Self {
        Self::Files(Box::new(e))
    }
}

impl LocalError {
    pub(crate) fn to_model_error(&self) -> ModelError {
        ModelError::NotConfigured {
            provider: PROVIDER.into(),
            message: self.to_string(),
        }
    }
}
