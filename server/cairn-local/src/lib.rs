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
mod error;
mod gguf;
mod settings;
mod template;
mod vocab;

use std::sync::{Arc, Mutex};

use cairn_agent::model::{ModelClient, ModelError, ModelEvent, ModelRequest, ModelStream};
use futures::future::BoxFuture;

pub use calls::{CallParser, MALFORMED, Piece};
pub use engine::Timings;
pub use error::{LocalError, PROVIDER};
pub use gguf::{ARCHITECTURES, MAX_VOCAB, ModelInfo};
pub use settings::{
    DEFAULT_CONTEXT, DEFAULT_MODEL, DEFAULT_REVISION, LocalSettings, ModelSource, SMOLLM2,
    StatusFn, default_threads,
};
pub use template::{ChatTemplate, Family};
pub use vocab::Vocabulary;

/// The engine, for `cairn doctor` and the benchmark.
pub const ENGINE: &str = "llama.cpp (llama-cpp-2, built from source)";

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
