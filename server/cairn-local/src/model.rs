//! The transformer: a llama-family decoder (llama, and Qwen2 with its attention biases) over
//! quantized GGUF weights, with a key/value cache that can be cut back to a shared prefix.
//!
//! Written here rather than taken from candle-transformers, for the same reasons as the
//! embedder: two architectures instead of dozens, and the cache can be truncated, so a turn that
//! extends the previous prompt only runs its new tokens.

use candle_core::quantized::{GgmlDType, QMatMul, QTensor, gguf_file};
use candle_core::{D, DType, Device, IndexOp, Module, Tensor};

/// The model families this forward pass implements.
pub const ARCHITECTURES: &[&str] = &["llama", "qwen2"];

/// Quantisations without a SIMD kernel in candle on x86-64: their weights run in half precision.
pub const SLOW: &[GgmlDType] = &[
    GgmlDType::Q4_1,
    GgmlDType::Q5_0,
    GgmlDType::Q5_1,
    GgmlDType::Q8_1,
];

/// Hyperparameters read from the GGUF metadata.
#[derive(Debug, Clone)]
pub struct Hparams {
    pub arch: String,
    pub layers: usize,
    pub heads: usize,
    pub kv_heads: usize,
    pub embedding: usize,
    pub head_dim: usize,
    pub context: usize,
    pub rms_eps: f64,
    pub rope_base: f32,
}

impl Hparams {
    pub fn read(content: &gguf_file::Content) -> candle_core::Result<Self> {
        let arch = content
            .metadata
            .get("general.architecture")
            .and_then(|v| v.to_string().ok())
            .cloned()
            .unwrap_or_default();
        let get = |key: &str| {
            content
                .metadata
                .get(&format!("{arch}.{key}"))
                .ok_or_else(|| candle_core::Error::Msg(format!("missing metadata `{arch}.{key}`")))
        };
        let heads = get("attention.head_count")?.to_u32()? as usize;
        let embedding = get("embedding_length")?.to_u32()? as usize;
        if heads == 0 || !embedding.is_multiple_of(heads) {
            candle_core::bail!("embedding length {embedding} is not a multiple of {heads} heads");
        }
        let kv_heads = get("attention.head_count_kv")
            .and_then(|v| v.to_u32())
            .map_or(heads, |v| v as usize);
        if kv_heads == 0 || !heads.is_multiple_of(kv_heads) {
            candle_core::bail!("{heads} heads cannot share {kv_heads} key/value heads");
        }
        Ok(Self {
            layers: get("block_count")?.to_u32()? as usize,
            heads,
            kv_heads,
            embedding,
            head_dim: embedding / heads,
            context: get("context_length")?.to_u32()? as usize,
            rms_eps: get("attention.layer_norm_rms_epsilon")?.to_f32()? as f64,
            rope_base: get("rope.freq_base")
                .and_then(|v| v.to_f32())
                .unwrap_or(10_000.0),
            arch,
        })
    }

    /// Bytes of key/value cache for `tokens` positions (f32 keys and values in every layer).
    pub fn kv_bytes(&self, tokens: usize) -> u64 {
        2 * self.layers as u64 * tokens as u64 * self.kv_heads as u64 * self.head_dim as u64 * 4
    }
}

struct Layer {
    attn_norm: Tensor,
    wq: QMatMul,
    wk: QMatMul,
    wv: QMatMul,
    bq: Option<Tensor>,
    bk: Option<Tensor>,
    bv: Option<Tensor>,
    wo: QMatMul,
    ffn_norm: Tensor,
    gate: QMatMul,
    up: QMatMul,
    down: QMatMul,
    cache: Option<(Tensor, Tensor)>,
}

/// A loaded model; `forward` is not reentrant (it owns the cache).
pub struct Transformer {
    pub hparams: Hparams,
    embeddings: QTensor,
    layers: Vec<Layer>,
    norm: Tensor,
    output: QMatMul,
    cos: Tensor,
    sin: Tensor,
    /// Llama's GGUF weights are permuted for interleaved rotary pairs; Qwen2 keeps halves.
    interleaved: bool,
    /// How many positions the cache holds.
    cached: usize,
}

fn weight<R: std::io::Read + std::io::Seek>(
    content: &gguf_file::Content,
    reader: &mut R,
    name: &str,
    dense_slow: bool,
) -> candle_core::Result<QMatMul> {
    let tensor = content.tensor(reader, name, &Device::Cpu)?;
    if dense_slow && SLOW.contains(&tensor.dtype()) {
        // candle has no SIMD kernel for these, and its portable one made generation ten times
        // slower than llama.cpp; a dense product is three times faster than that. Widening to
        // Q8_0 (which has a kernel) instead rounded a second time and changed SmolLM2's answers,
        // and half precision has no fast kernel either. The cost is memory, so only a small
        // model gets it (`gguf::DENSE_LIMIT`).
        return QMatMul::from_qtensor(tensor).and_then(|q| match q {
            QMatMul::QTensor(q) => Ok(QMatMul::Tensor(q.dequantize(&Device::Cpu)?)),
            other => Ok(other),
        });
    }
    QMatMul::from_qtensor(tensor)
}

fn vector<R: std::io::Read + std::io::Seek>(
    content: &gguf_file::Content,
    reader: &mut R,
    name: &str,
) -> candle_core::Result<Tensor> {
    content
        .tensor(reader, name, &Device::Cpu)?
        .dequantize(&Device::Cpu)
}

impl Transformer {
    /// `dense_slow`: weights in the [`SLOW`] formats are kept as f32 matrices.
    pub fn load<R: std::io::Read + std::io::Seek>(
        content: &gguf_file::Content,
        reader: &mut R,
        context: usize,
        dense_slow: bool,
    ) -> candle_core::Result<Self> {
        let hparams = Hparams::read(content)?;
        let device = Device::Cpu;
        let embeddings = content.tensor(reader, "token_embd.weight", &device)?;
        let output = if content.tensor_infos.contains_key("output.weight") {
            weight(content, reader, "output.weight", dense_slow)?
        } else {
            // Tied embeddings (SmolLM2, small Qwen2 models).
            weight(content, reader, "token_embd.weight", dense_slow)?
        };
        let norm = vector(content, reader, "output_norm.weight")?;
        let optional = |reader: &mut R, name: &str| -> candle_core::Result<Option<Tensor>> {
            if content.tensor_infos.contains_key(name) {
                vector(content, reader, name).map(Some)
            } else {
                Ok(None)
            }
        };
        let mut layers = Vec::with_capacity(hparams.layers);
        for i in 0..hparams.layers {
            let p = format!("blk.{i}");
            layers.push(Layer {
                attn_norm: vector(content, reader, &format!("{p}.attn_norm.weight"))?,
                wq: weight(content, reader, &format!("{p}.attn_q.weight"), dense_slow)?,
                wk: weight(content, reader, &format!("{p}.attn_k.weight"), dense_slow)?,
                wv: weight(content, reader, &format!("{p}.attn_v.weight"), dense_slow)?,
                bq: optional(reader, &format!("{p}.attn_q.bias"))?,
                bk: optional(reader, &format!("{p}.attn_k.bias"))?,
                bv: optional(reader, &format!("{p}.attn_v.bias"))?,
                wo: weight(
                    content,
                    reader,
                    &format!("{p}.attn_output.weight"),
                    dense_slow,
                )?,
                ffn_norm: vector(content, reader, &format!("{p}.ffn_norm.weight"))?,
                gate: weight(content, reader, &format!("{p}.ffn_gate.weight"), dense_slow)?,
                up: weight(content, reader, &format!("{p}.ffn_up.weight"), dense_slow)?,
                down: weight(content, reader, &format!("{p}.ffn_down.weight"), dense_slow)?,
                cache: None,
            });
        }
        let half = hparams.head_dim / 2;
        let theta: Vec<f32> = (0..half)
            .map(|i| {
                1.0 / hparams
                    .rope_base
                    .powf(2.0 * i as f32 / hparams.head_dim as f32)
            })
            .collect();
        let theta = Tensor::new(theta.as_slice(), &device)?.reshape((1, half))?;
        let positions = Tensor::arange(0u32, context as u32, &device)?
            .to_dtype(DType::F32)?
            .reshape((context, 1))?;
        let angles = positions.matmul(&theta)?;
        Ok(Self {
            interleaved: hparams.arch == "llama",
            hparams,
            embeddings,
            layers,
            norm,
            output,
            cos: angles.cos()?,
            sin: angles.sin()?,
            cached: 0,
        })
    }

    /// The largest number of positions the rotary tables cover.
    pub fn max_positions(&self) -> usize {
        self.cos.dim(0).unwrap_or(0)
    }

    /// Keeps only the first `n` positions of the cache.
    pub fn truncate(&mut self, n: usize) -> candle_core::Result<()> {
        if n >= self.cached {
            return Ok(());
        }
        for layer in &mut self.layers {
            layer.cache = match layer.cache.take() {
                Some((k, v)) if n > 0 => Some((k.narrow(2, 0, n)?, v.narrow(2, 0, n)?)),
                _ => None,
            };
        }
        self.cached = n;
        Ok(())
    }

    /// Runs `tokens` after the cached positions and returns the logits of the last one.
    pub fn forward(&mut self, tokens: &[u32]) -> candle_core::Result<Tensor> {
        let seq = tokens.len();
        let start = self.cached;
        if seq == 0 {
            candle_core::bail!("no tokens to run");
        }
        if start + seq > self.max_positions() {
            candle_core::bail!(
                "{} positions exceed the context of {}",
                start + seq,
                self.max_positions()
            );
        }
        let device = Device::Cpu;
        let ids = Tensor::new(tokens, &device)?;
        let mut x = self.embeddings.embedding(&ids)?.unsqueeze(0)?;
        let cos = self.cos.narrow(0, start, seq)?;
        let sin = self.sin.narrow(0, start, seq)?;
        let mask = if seq > 1 {
            // Row i sees the cache and its own first i+1 tokens.
            let mask: Vec<f32> = (0..seq)
                .flat_map(|i| {
                    (0..start + seq).map(move |j| {
                        if j > start + i {
                            f32::NEG_INFINITY
                        } else {
                            0.0
                        }
                    })
                })
                .collect();
            Some(Tensor::from_vec(mask, (seq, start + seq), &device)?)
        } else {
            None
        };
        let h = &self.hparams;
        for layer in &mut self.layers {
            let residual = x.clone();
            let normed = candle_nn::ops::rms_norm(&x, &layer.attn_norm, h.rms_eps as f32)?;
            let project = |w: &QMatMul, b: &Option<Tensor>| -> candle_core::Result<Tensor> {
                let y = linear(w, &normed)?;
                match b {
                    Some(b) => y.broadcast_add(b),
                    None => Ok(y),
                }
            };
            let q = project(&layer.wq, &layer.bq)?
                .reshape((1, seq, h.heads, h.head_dim))?
                .transpose(1, 2)?
                .contiguous()?;
            let k = project(&layer.wk, &layer.bk)?
                .reshape((1, seq, h.kv_heads, h.head_dim))?
                .transpose(1, 2)?
                .contiguous()?;
            let v = project(&layer.wv, &layer.bv)?
                .reshape((1, seq, h.kv_heads, h.head_dim))?
                .transpose(1, 2)?;
            let (q, k) = if self.interleaved {
                (
                    candle_nn::rotary_emb::rope_i(&q, &cos, &sin)?,
                    candle_nn::rotary_emb::rope_i(&k, &cos, &sin)?,
                )
            } else {
                (
                    candle_nn::rotary_emb::rope(&q, &cos, &sin)?,
                    candle_nn::rotary_emb::rope(&k, &cos, &sin)?,
                )
            };
            let (k, v) = match layer.cache.take() {
                Some((ck, cv)) => (Tensor::cat(&[&ck, &k], 2)?, Tensor::cat(&[&cv, &v], 2)?),
                None => (k, v.contiguous()?),
            };
            layer.cache = Some((k.clone(), v.clone()));
            let groups = h.heads / h.kv_heads;
            let (k, v) = if groups > 1 {
                (repeat_kv(&k, groups)?, repeat_kv(&v, groups)?)
            } else {
                (k, v)
            };
            let scale = 1.0 / (h.head_dim as f64).sqrt();
            let mut att = (q.matmul(&k.t()?.contiguous()?)? * scale)?;
            if let Some(mask) = &mask {
                att = att.broadcast_add(mask)?;
            }
            let att = candle_nn::ops::softmax_last_dim(&att)?;
            let y = att.matmul(&v.contiguous()?)?;
            let y = y.transpose(1, 2)?.reshape((1, seq, h.embedding))?;
            let x1 = (linear(&layer.wo, &y)? + residual)?;
            let normed = candle_nn::ops::rms_norm(&x1, &layer.ffn_norm, h.rms_eps as f32)?;
            let gated = (candle_nn::ops::silu(&linear(&layer.gate, &normed)?)?
                * linear(&layer.up, &normed)?)?;
            x = (linear(&layer.down, &gated)? + x1)?;
        }
        self.cached = start + seq;
        let x = candle_nn::ops::rms_norm(&x, &self.norm, h.rms_eps as f32)?;
        let last = x.i((0, seq - 1))?.unsqueeze(0)?;
        self.output.forward(&last)?.squeeze(0)?.to_dtype(DType::F32)
    }
}

/// Rows at or above which a product runs on dequantized weights.
const DENSE_ROWS: usize = 16;

/// `x · wᵀ`. One row (a generated token) uses the quantized kernel, which reads the weights once
/// in their small form; many rows (a prompt) dequantize the weights and run a dense product:
/// candle's quantized kernel takes each row on its own, and for formats without a SIMD kernel
/// (Q4_1) that made a 2,000-token prompt take minutes. Dequantizing costs one pass over the
/// weights, a small part of a product with hundreds of rows.
fn linear(w: &QMatMul, x: &Tensor) -> candle_core::Result<Tensor> {
    let rows = x.elem_count() / x.dim(D::Minus1)?.max(1);
    match w {
        QMatMul::QTensor(q) if rows >= DENSE_ROWS => {
            let dense = q.dequantize(&Device::Cpu)?;
            x.broadcast_matmul(&dense.t()?)
        }
        _ => w.forward(x),
    }
}

/// Repeats each key/value head `n` times, for grouped-query attention.
fn repeat_kv(x: &Tensor, n: usize) -> candle_core::Result<Tensor> {
    let (b, heads, seq, dim) = x.dims4()?;
    x.unsqueeze(2)?
        .expand((b, heads, n, seq, dim))?
        .reshape((b, heads * n, seq, dim))
}

/// The index of the largest logit.
pub fn argmax(logits: &Tensor) -> candle_core::Result<u32> {
    logits.argmax(D::Minus1)?.to_scalar::<u32>()
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    //! The forward pass against candle-transformers' quantized llama and Qwen2 on a small model
    //! with random weights written as a GGUF here: the same logits, with and without the cache.

    use candle_core::quantized::gguf_file::Value;

    use super::*;

    const VOCAB: usize = 64;
    const DIM: usize = 64;
    const HIDDEN: usize = 128;
    const LAYERS: usize = 2;

    fn random(shape: &[usize], seed: &mut u64) -> Tensor {
        let n: usize = shape.iter().product();
        let data: Vec<f32> = (0..n)
            .map(|_| {
                *seed = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
                ((*seed >> 33) as f32 / (1u64 << 31) as f32 - 0.5) * 0.4
            })
            .collect();
        Tensor::from_vec(data, shape, &Device::Cpu).unwrap()
    }

    /// A GGUF of `arch` with random weights (Q8_0 matrices, F32 vectors); Qwen2 gets biases.
    fn write_model(arch: &str) -> std::io::Cursor<Vec<u8>> {
        let mut seed = 7u64;
        let mut tensors: Vec<(String, QTensor)> = Vec::new();
        let mut add = |name: String, shape: &[usize], q: bool, seed: &mut u64| {
            let t = random(shape, seed);
            let dtype = if q { GgmlDType::Q8_0 } else { GgmlDType::F32 };
            tensors.push((name, QTensor::quantize(&t, dtype).unwrap()));
        };
        add("token_embd.weight".into(), &[VOCAB, DIM], true, &mut seed);
        add("output_norm.weight".into(), &[DIM], false, &mut seed);
        add("output.weight".into(), &[VOCAB, DIM], true, &mut seed);
        let kv = DIM / 2;
        for i in 0..LAYERS {
            let p = format!("blk.{i}");
            add(format!("{p}.attn_norm.weight"), &[DIM], false, &mut seed);
            add(format!("{p}.attn_q.weight"), &[DIM, DIM], true, &mut seed);
            add(format!("{p}.attn_k.weight"), &[kv, DIM], true, &mut seed);
            add(format!("{p}.attn_v.weight"), &[kv, DIM], true, &mut seed);
            if arch == "qwen2" {
                add(format!("{p}.attn_q.bias"), &[DIM], false, &mut seed);
                add(format!("{p}.attn_k.bias"), &[kv], false, &mut seed);
                add(format!("{p}.attn_v.bias"), &[kv], false, &mut seed);
            }
            add(
                format!("{p}.attn_output.weight"),
                &[DIM, DIM],
                true,
                &mut seed,
            );
            add(format!("{p}.ffn_norm.weight"), &[DIM], false, &mut seed);
            add(
                format!("{p}.ffn_gate.weight"),
                &[HIDDEN, DIM],
                true,
                &mut seed,
            );
            add(
                format!("{p}.ffn_up.weight"),
                &[HIDDEN, DIM],
                true,
                &mut seed,
            );
            add(
                format!("{p}.ffn_down.weight"),
                &[DIM, HIDDEN],
                true,
                &mut seed,
            );
        }
        let metadata: Vec<(String, Value)> = vec![
            ("general.architecture".into(), Value::String(arch.into())),
            (format!("{arch}.attention.head_count"), Value::U32(4)),
            (format!("{arch}.attention.head_count_kv"), Value::U32(2)),
            (format!("{arch}.embedding_length"), Value::U32(DIM as u32)),
            (format!("{arch}.block_count"), Value::U32(LAYERS as u32)),
            (format!("{arch}.context_length"), Value::U32(128)),
            (format!("{arch}.rope.dimension_count"), Value::U32(16)),
            (format!("{arch}.rope.freq_base"), Value::F32(10_000.0)),
            (
                format!("{arch}.attention.layer_norm_rms_epsilon"),
                Value::F32(1e-6),
            ),
        ];
        let mut out = std::io::Cursor::new(Vec::new());
        let metadata: Vec<(&str, &Value)> = metadata.iter().map(|(k, v)| (k.as_str(), v)).collect();
        let tensors: Vec<(&str, &QTensor)> = tensors.iter().map(|(k, v)| (k.as_str(), v)).collect();
        gguf_file::write(&mut out, &metadata, &tensors).unwrap();
        out.set_position(0);
        out
    }

    fn max_difference(a: &Tensor, b: &Tensor) -> f32 {
        let a: Vec<f32> = a.flatten_all().unwrap().to_vec1().unwrap();
        let b: Vec<f32> = b.flatten_all().unwrap().to_vec1().unwrap();
        assert_eq!(a.len(), b.len());
        a.iter()
            .zip(&b)
            .map(|(x, y)| (x - y).abs())
            .fold(0.0, f32::max)
    }

    fn compare(arch: &str) {
        let mut file = write_model(arch);
        let content = gguf_file::Content::read(&mut file).unwrap();
        let mut ours = Transformer::load(&content, &mut file, 128, true).unwrap();
        let device = Device::Cpu;
        // Long enough that the whole prompt runs dense and a piece of it quantized.
        let prompt: Vec<u32> = (0..20u32).map(|i| (i * 7 + 3) % VOCAB as u32).collect();
        let step = [9u32];
        let ids = |t: &[u32]| Tensor::new(t, &device).unwrap().unsqueeze(0).unwrap();
        let (theirs_prompt, theirs_step) = match arch {
            "llama" => {
                let mut file = write_model(arch);
                let content = gguf_file::Content::read(&mut file).unwrap();
                let mut m = candle_transformers::models::quantized_llama::ModelWeights::from_gguf(
                    content, &mut file, &device,
                )
                .unwrap();
                let a = m.forward(&ids(&prompt), 0).unwrap();
                let b = m.forward(&ids(&step), prompt.len()).unwrap();
                (a, b)
            }
            _ => {
                let mut file = write_model(arch);
                let content = gguf_file::Content::read(&mut file).unwrap();
                let mut m = candle_transformers::models::quantized_qwen2::ModelWeights::from_gguf(
                    content, &mut file, &device,
                )
                .unwrap();
                let a = m.forward(&ids(&prompt), 0).unwrap();
                let b = m.forward(&ids(&step), prompt.len()).unwrap();
                (a, b)
            }
        };
        // The dense product skips the 8-bit rounding of the activations that the quantized
        // kernel does, hence the bound.
        let a = ours.forward(&prompt).unwrap();
        let d = max_difference(&a, &theirs_prompt);
        assert!(d < 2e-2, "{arch}: prompt differs by {d}");
        let b = ours.forward(&step).unwrap();
        let d = max_difference(&b, &theirs_step);
        assert!(d < 2e-2, "{arch}: step with the cache differs by {d}");
        // Cut the cache back to the prompt and run the step again: the same logits.
        ours.truncate(prompt.len()).unwrap();
        let again = ours.forward(&step).unwrap();
        assert!(max_difference(&again, &b) < 1e-6, "{arch}: after truncate");
        // The prompt in two pieces (quantized, then dense) gives what it gave whole.
        ours.truncate(0).unwrap();
        ours.forward(&prompt[..4]).unwrap();
        let split = ours.forward(&prompt[4..]).unwrap();
        let d = max_difference(&split, &a);
        assert!(d < 2e-2, "{arch}: prompt in pieces differs by {d}");
    }

    #[test]
    fn llama_matches_candle_transformers() {
        compare("llama");
    }

    #[test]
    fn qwen2_with_its_biases_matches_candle_transformers() {
        compare("qwen2");
    }
}
