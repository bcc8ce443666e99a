//! The tokenizer alone: a GGUF file's vocabulary, loaded by llama.cpp without its weights, that
//! encodes and decodes exactly as the engine does for prompts. It exists so the tokenizer can be
//! held against each family's reference tokenizer on real vocabularies (`tests/tokenizer.rs`),
//! including families whose weights are not at hand.

use std::path::{Path, PathBuf};

use llama_cpp_2::model::LlamaModel;
use llama_cpp_2::model::params::LlamaModelParams;
use llama_cpp_2::token::LlamaToken;

use crate::error::LocalError;
use crate::{engine, gguf};

/// A model file's tokenizer.
pub struct Vocabulary {
    model: LlamaModel,
    path: PathBuf,
}

/// How the engine encodes text: the template writes the BOS token itself where the model wants
/// one, so none is added; the text of a special token (`<|im_start|>`) becomes that token.
pub(crate) fn encode(model: &LlamaModel, text: &str) -> Vec<LlamaToken> {
    model.vocab().tokenize(text.as_bytes(), false, true)
}

impl Vocabulary {
    /// Checks `path` like a model file (bounded header, vocabulary limit, architecture), then
    /// loads its vocabulary only.
    pub fn open(path: &Path) -> Result<Self, LocalError> {
        gguf::check(path, Some(256), None)?;
        let params = LlamaModelParams::default().with_vocab_only(true);
        let model = LlamaModel::load_from_file(engine::backend()?, path, &params).map_err(|e| {
            LocalError::Engine(format!(
                "llama.cpp could not load the vocabulary of {}: {e}",
                path.display()
            ))
        })?;
        Ok(Self {
            model,
            path: path.to_owned(),
        })
    }

    /// The ids of `text` as a prompt: special tokens' text parsed, no BOS added.
    pub fn encode(&self, text: &str) -> Vec<i32> {
        encode(&self.model, text).into_iter().map(|t| t.0).collect()
    }

    /// The ids of `text` as plain text: the text of special tokens stays text, as the reference
    /// corpora of tokenizers encode it.
    pub fn encode_plain(&self, text: &str) -> Vec<i32> {
        self.model
            .vocab()
            .tokenize(text.as_bytes(), false, false)
            .into_iter()
            .map(|t| t.0)
            .collect()
    }

    /// The text of `ids`, special tokens written out.
    pub fn decode(&self, ids: &[i32]) -> String {
        let vocab = self.model.vocab();
        let mut bytes = Vec::new();
        for id in ids {
            vocab.token_to_piece_into(LlamaToken(*id), &mut bytes, true, None);
        }
        String::from_utf8_lossy(&bytes).into_owned()
    }

    /// How many tokens the vocabulary has.
    pub fn len(&self) -> usize {
        usize::try_from(self.model.vocab().n_tokens()).unwrap_or(0)
    }

    /// Whether the vocabulary is empty (never, for a file [`Vocabulary::open`] accepted).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub fn path(&self) -> &Path {
        &self.path
    }
}
