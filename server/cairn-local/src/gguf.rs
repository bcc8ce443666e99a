//! The GGUF file, checked before anything large is read: that it is a GGUF at all, that every
//! tensor lies inside the file (a cut-short download), that its architecture and quantisations
//! are ones the forward pass runs, and that it fits in memory with its cache.

use std::io::Read;
use std::path::Path;

use candle_core::quantized::{GgmlDType, gguf_file};

use crate::LocalError;
use crate::model::{ARCHITECTURES, Hparams};

/// Weights in formats without a fast kernel ([`crate::model::SLOW`]) run as f32 matrices when
/// that takes at most this many bytes (a model of up to about 500M parameters).
pub const DENSE_LIMIT: u64 = 2 << 30;

/// What was loaded, for messages, `cairn doctor` and the benchmark.
#[derive(Debug, Clone, PartialEq)]
pub struct ModelInfo {
    pub path: std::path::PathBuf,
    pub name: String,
    pub arch: String,
    pub quantisation: String,
    pub parameters: u64,
    pub file_bytes: u64,
    /// The context window used (tokens).
    pub context: usize,
    /// The model's own context length.
    pub trained_context: usize,
    /// Whether the weights in slow formats run as f32 ([`DENSE_LIMIT`]).
    pub dense_slow: bool,
}

/// Reads the header and checks the file; the open file is returned for reading the tensors
/// (each is read at its own offset).
pub fn open(
    path: &Path,
    context: Option<usize>,
    max_memory_mib: Option<u64>,
) -> Result<(gguf_file::Content, std::fs::File, ModelInfo), LocalError> {
    let mut file = std::fs::File::open(path).map_err(|source| LocalError::Open {
        path: path.to_owned(),
        source,
    })?;
    let size = file
        .metadata()
        .map_err(|source| LocalError::Open {
            path: path.to_owned(),
            source,
        })?
        .len();
    let content = gguf_file::Content::read(&mut file).map_err(|e| {
        let detail = e.to_string();
        // candle names a ggml type it does not implement this way, as it reads the header.
        if detail.contains("unknown dtype") {
            LocalError::Quantisation { detail }
        } else {
            LocalError::NotGguf {
                path: path.to_owned(),
                detail,
            }
        }
    })?;
    let arch = content
        .metadata
        .get("general.architecture")
        .and_then(|v| v.to_string().ok())
        .cloned()
        .unwrap_or_else(|| "(none)".into());
    if !ARCHITECTURES.contains(&arch.as_str()) {
        return Err(LocalError::Architecture {
            arch,
            supported: ARCHITECTURES.join(" and "),
        });
    }
    let mut needed = 0u64;
    let mut weights = 0u64;
    let mut parameters = 0u64;
    let mut counts: Vec<(GgmlDType, u64)> = Vec::new();
    for info in content.tensor_infos.values() {
        let elems = info.shape.elem_count() as u64;
        let block = info.ggml_dtype.block_size() as u64;
        let bytes = elems / block.max(1) * info.ggml_dtype.type_size() as u64;
        needed = needed.max(content.tensor_data_offset + info.offset + bytes);
        weights += bytes;
        parameters += elems;
        match counts.iter_mut().find(|(d, _)| *d == info.ggml_dtype) {
            Some((_, n)) => *n += elems,
            None => counts.push((info.ggml_dtype, elems)),
        }
    }
    if needed > size {
        return Err(LocalError::Truncated {
            path: path.to_owned(),
            size,
            needed,
        });
    }
    let hparams = Hparams::read(&content).map_err(|e| LocalError::NotGguf {
        path: path.to_owned(),
        detail: e.to_string(),
    })?;
    let context = context
        .unwrap_or(crate::DEFAULT_CONTEXT)
        .min(hparams.context)
        .max(256);
    let cache = hparams.kv_bytes(context);
    let slow: u64 = counts
        .iter()
        .filter(|(d, _)| crate::model::SLOW.contains(d))
        .map(|(_, n)| n * 4)
        .sum();
    let dense_slow = slow <= DENSE_LIMIT;
    let widened = if dense_slow { slow } else { 0 };
    let mib = |b: u64| b.div_ceil(1 << 20);
    // Weights, their f32 copies, the cache, and room for activations and the tokenizer.
    let total = weights + widened + cache + (256 << 20);
    let available = max_memory_mib.or_else(available_mib);
    if let Some(available) = available
        && mib(total) > available
    {
        return Err(LocalError::TooLarge {
            needed_mib: mib(total),
            weights_mib: mib(weights + widened),
            cache_mib: mib(cache),
            context,
            available_mib: available,
        });
    }
    counts.sort_by_key(|(_, n)| std::cmp::Reverse(*n));
    let quantisation = counts
        .first()
        .map(|(d, _)| format!("{d:?}"))
        .unwrap_or_default();
    let name = content
        .metadata
        .get("general.name")
        .and_then(|v| v.to_string().ok())
        .cloned()
        .unwrap_or_else(|| {
            path.file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_default()
        });
    let info = ModelInfo {
        path: path.to_owned(),
        name,
        arch,
        quantisation,
        parameters,
        file_bytes: size,
        context,
        trained_context: hparams.context,
        dense_slow,
    };
    Ok((content, file, info))
}

/// `MemAvailable` from `/proc/meminfo`, in MiB; `None` where there is no such file.
fn available_mib() -> Option<u64> {
    let mut text = String::new();
    std::fs::File::open("/proc/meminfo")
        .ok()?
        .read_to_string(&mut text)
        .ok()?;
    text.lines()
        .find_map(|line| line.strip_prefix("MemAvailable:"))
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|kib| kib.parse::<u64>().ok())
        .map(|kib| kib / 1024)
}
