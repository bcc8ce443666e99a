//! The GGUF file, checked here before llama.cpp sees it: llama.cpp aborts the process on some
//! malformed files (a failed assertion is `abort()`), so everything it would trust is checked
//! first, with every declared length bounded by what is left of the file before anything is
//! allocated: that it is a GGUF at all, that strings, arrays and the vocabulary are of sane
//! sizes, that every tensor lies inside the file (a cut-short download), that its architecture
//! and quantisations are ones the provider runs, and that it fits in memory with its cache.

use std::io::{BufReader, Read, Seek, SeekFrom};
use std::path::Path;

use crate::error::LocalError;

/// The architectures the provider runs: llama.cpp runs more, but these are the decoder families
/// whose chat templates and tool-call formats cairn renders and parses (`template.rs`).
pub const ARCHITECTURES: &[&str] = &["llama", "qwen2", "qwen3", "phi3", "gemma2", "gemma3"];

/// The most tokens a vocabulary may have: the largest real ones are about 262K (Gemma 3).
pub const MAX_VOCAB: u64 = 1 << 20;
/// The most elements of any metadata array (merges lists are the longest: about 500K).
const MAX_ARRAY: u64 = 4 << 20;
/// The longest metadata string (chat templates are the longest: tens of KB).
const MAX_STRING: u64 = 4 << 20;
/// The most tensors and metadata entries.
const MAX_ENTRIES: u64 = 1 << 16;

/// What was loaded, for messages, `cairn doctor` and the benchmark.
#[derive(Debug, Clone, PartialEq)]
pub struct ModelInfo {
    pub path: std::path::PathBuf,
    pub name: String,
    pub arch: String,
    /// The quantisation most of the weights are in (`Q4_K`, `Q4_1` …), and the file type the
    /// quantizer recorded when there is one (`Q4_K_M`).
    pub quantisation: String,
    pub parameters: u64,
    pub file_bytes: u64,
    /// The context window used (tokens).
    pub context: usize,
    /// The model's own context length.
    pub trained_context: usize,
    /// The vocabulary's size.
    pub vocab: u64,
    /// Threads generation runs on.
    pub threads: usize,
}

/// The header's values the provider uses.
#[derive(Debug, Default)]
pub struct Header {
    pub arch: String,
    pub name: Option<String>,
    pub chat_template: Option<String>,
    pub file_type: Option<u32>,
    pub context: u64,
    pub layers: u64,
    pub embedding: u64,
    pub heads: u64,
    pub kv_heads: u64,
    pub key_length: Option<u64>,
    pub value_length: Option<u64>,
    pub vocab: u64,
}

/// (block size, bytes per block) of the ggml types llama.cpp reads from files.
fn type_size(t: u32) -> Option<(u64, u64, &'static str)> {
    Some(match t {
        0 => (1, 4, "F32"),
        1 => (1, 2, "F16"),
        2 => (32, 18, "Q4_0"),
        3 => (32, 20, "Q4_1"),
        6 => (32, 22, "Q5_0"),
        7 => (32, 24, "Q5_1"),
        8 => (32, 34, "Q8_0"),
        10 => (256, 84, "Q2_K"),
        11 => (256, 110, "Q3_K"),
        12 => (256, 144, "Q4_K"),
        13 => (256, 176, "Q5_K"),
        14 => (256, 210, "Q6_K"),
        16 => (256, 66, "IQ2_XXS"),
        17 => (256, 74, "IQ2_XS"),
        18 => (256, 98, "IQ3_XXS"),
        19 => (256, 50, "IQ1_S"),
        20 => (32, 18, "IQ4_NL"),
        21 => (256, 110, "IQ3_S"),
        22 => (256, 82, "IQ2_S"),
        23 => (256, 136, "IQ4_XS"),
        24 => (1, 1, "I8"),
        25 => (1, 2, "I16"),
        26 => (1, 4, "I32"),
        27 => (1, 8, "I64"),
        28 => (1, 8, "F64"),
        29 => (256, 56, "IQ1_M"),
        30 => (1, 2, "BF16"),
        34 => (256, 54, "TQ1_0"),
        35 => (256, 66, "TQ2_0"),
        39 => (32, 17, "MXFP4"),
        _ => return None,
    })
}

/// The name llama.cpp's quantizer gives `general.file_type`.
fn file_type_name(t: u32) -> Option<&'static str> {
    Some(match t {
        0 => "F32",
        1 => "F16",
        2 => "Q4_0",
        3 => "Q4_1",
        7 => "Q8_0",
        8 => "Q5_0",
        9 => "Q5_1",
        10 => "Q2_K",
        11 => "Q3_K_S",
        12 => "Q3_K_M",
        13 => "Q3_K_L",
        14 => "Q4_K_S",
        15 => "Q4_K_M",
        16 => "Q5_K_S",
        17 => "Q5_K_M",
        18 => "Q6_K",
        32 => "BF16",
        _ => return None,
    })
}

/// A reader that knows how much of the file is left, so no declared length is trusted.
struct Cursor<R> {
    inner: R,
    left: u64,
}

enum Bad {
    /// Not GGUF, or a value that cannot be (the detail says which).
    Format(String),
    /// A declared size past a limit: (what, declared, limit).
    Limit(&'static str, u64, u64),
}

impl<R: Read> Cursor<R> {
    fn bytes(&mut self, n: u64) -> Result<Vec<u8>, Bad> {
        if n > self.left {
            return Err(Bad::Format(format!(
                "a value of {n} bytes runs past the end of the file"
            )));
        }
        let mut out = vec![0; n as usize];
        self.inner
            .read_exact(&mut out)
            .map_err(|e| Bad::Format(e.to_string()))?;
        self.left -= n;
        Ok(out)
    }
    fn skip(&mut self, n: u64) -> Result<(), Bad> {
        if n > self.left {
            return Err(Bad::Format(format!(
                "a value of {n} bytes runs past the end of the file"
            )));
        }
        std::io::copy(&mut (&mut self.inner).take(n), &mut std::io::sink())
            .map_err(|e| Bad::Format(e.to_string()))?;
        self.left -= n;
        Ok(())
    }
    fn u32(&mut self) -> Result<u32, Bad> {
        let b = self.bytes(4)?;
        Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }
    fn u64(&mut self) -> Result<u64, Bad> {
        let b = self.bytes(8)?;
        let mut a = [0u8; 8];
        a.copy_from_slice(&b);
        Ok(u64::from_le_bytes(a))
    }
    fn string(&mut self, limit: u64) -> Result<String, Bad> {
        let n = self.u64()?;
        if n > limit {
            return Err(Bad::Limit("a metadata string", n, limit));
        }
        String::from_utf8(self.bytes(n)?).map_err(|_| Bad::Format("a string is not UTF-8".into()))
    }
    fn skip_string(&mut self, limit: u64) -> Result<(), Bad> {
        let n = self.u64()?;
        if n > limit {
            return Err(Bad::Limit("a metadata string", n, limit));
        }
        self.skip(n)
    }
}

/// A metadata value as far as the provider cares: an integer, a string, or something skipped.
enum Value {
    Int(u64),
    Str(String),
    Array(u64),
    Other,
}

/// Bytes of one scalar of GGUF value type `t`, or `None` for strings and arrays.
fn scalar_size(t: u32) -> Result<Option<u64>, Bad> {
    Ok(Some(match t {
        0 | 1 | 7 => 1,
        2 | 3 => 2,
        4..=6 => 4,
        10..=12 => 8,
        8 | 9 => return Ok(None),
        other => return Err(Bad::Format(format!("unknown metadata type {other}"))),
    }))
}

/// One value of type `t`; an array may have at most `array_limit.0` elements (`.1` names it).
fn value<R: Read>(
    c: &mut Cursor<R>,
    t: u32,
    keep_string: bool,
    array_limit: (u64, &'static str),
) -> Result<Value, Bad> {
    match t {
        8 if keep_string => Ok(Value::Str(c.string(MAX_STRING)?)),
        8 => c.skip_string(MAX_STRING).map(|()| Value::Other),
        9 => {
            let inner = c.u32()?;
            let n = c.u64()?;
            if n > array_limit.0 {
                return Err(Bad::Limit(array_limit.1, n, array_limit.0));
            }
            match scalar_size(inner)? {
                Some(size) => c.skip(n.saturating_mul(size))?,
                None if inner == 8 => {
                    for _ in 0..n {
                        // Tokens are short; a long one is garbage.
                        c.skip_string(1 << 16)?;
                    }
                }
                None => return Err(Bad::Format("an array of arrays".into())),
            }
            Ok(Value::Array(n))
        }
        4 | 5 => Ok(Value::Int(u64::from(c.u32()?))),
        10 | 11 => Ok(Value::Int(c.u64()?)),
        0 | 1 => Ok(Value::Int(u64::from(c.bytes(1)?[0]))),
        other => {
            let size = scalar_size(other)?.unwrap_or(0);
            c.skip(size).map(|()| Value::Other)
        }
    }
}

/// Reads the header and checks the file. Nothing is written anywhere.
pub fn check(
    path: &Path,
    context: Option<usize>,
    max_memory_mib: Option<u64>,
) -> Result<(Header, ModelInfo), LocalError> {
    let open_err = |source| LocalError::Open {
        path: path.to_owned(),
        source,
    };
    let file = std::fs::File::open(path).map_err(open_err)?;
    let size = file.metadata().map_err(open_err)?.len();
    let mut cursor = Cursor {
        inner: BufReader::new(file),
        left: size,
    };
    let not_gguf = |detail: String| LocalError::NotGguf {
        path: path.to_owned(),
        detail,
    };
    let bad = |b: Bad| match b {
        Bad::Format(detail) => not_gguf(detail),
        Bad::Limit(what, declared, limit) => LocalError::Limit {
            path: path.to_owned(),
            what,
            declared,
            limit,
        },
    };
    let (header, tensors, data_start) = read_header(&mut cursor).map_err(bad)?;
    if !ARCHITECTURES.contains(&header.arch.as_str()) {
        return Err(LocalError::Architecture {
            arch: header.arch,
            supported: ARCHITECTURES.join(", "),
        });
    }
    if header.vocab == 0 {
        return Err(not_gguf(
            "it has no vocabulary (tokenizer.ggml.tokens)".into(),
        ));
    }
    // Tensor data starts at the next alignment boundary; a file without tensors (a vocabulary
    // alone) has no padding up to it, so only the tensors' ends count.
    let mut needed = 0u64;
    let mut weights = 0u64;
    let mut parameters = 0u64;
    let mut counts: Vec<(&'static str, u64)> = Vec::new();
    for (dims, t, offset) in tensors {
        let Some((block, bytes_per_block, type_name)) = type_size(t) else {
            return Err(LocalError::Quantisation {
                detail: format!("ggml type {t}"),
            });
        };
        let elems = dims
            .iter()
            .try_fold(1u64, |a, d| a.checked_mul(*d))
            .ok_or_else(|| not_gguf("a tensor's shape overflows".into()))?;
        if dims.first().is_some_and(|d| d % block != 0) {
            return Err(not_gguf(format!(
                "a {type_name} tensor's rows are not whole blocks of {block}"
            )));
        }
        let bytes = (elems / block)
            .checked_mul(bytes_per_block)
            .ok_or_else(|| not_gguf("a tensor's size overflows".into()))?;
        let end = data_start
            .checked_add(offset)
            .and_then(|e| e.checked_add(bytes))
            .ok_or_else(|| not_gguf("a tensor's offset overflows".into()))?;
        needed = needed.max(end);
        weights += bytes;
        parameters += elems;
        match counts.iter_mut().find(|(d, _)| *d == type_name) {
            Some((_, n)) => *n += elems,
            None => counts.push((type_name, elems)),
        }
    }
    if needed > size {
        return Err(LocalError::Truncated {
            path: path.to_owned(),
            size,
            needed,
        });
    }
    let context = context
        .unwrap_or(crate::settings::DEFAULT_CONTEXT)
        .min(usize::try_from(header.context).unwrap_or(usize::MAX))
        .max(256);
    let cache = kv_bytes(&header, context as u64);
    let mib = |b: u64| b.div_ceil(1 << 20);
    // Weights (mapped, but every page is touched once a token), the cache, the logits and
    // compute buffers (a batch of 512 over the vocabulary), and room for the rest.
    let compute = header.vocab * 4 * 512 + (128 << 20);
    let total = weights + cache + compute;
    let available = max_memory_mib.or_else(available_mib);
    if let Some(available) = available
        && mib(total) > available
    {
        return Err(LocalError::TooLarge {
            path: path.to_owned(),
            needed_mib: mib(total),
            weights_mib: mib(weights),
            cache_mib: mib(cache),
            context,
            available_mib: available,
        });
    }
    counts.sort_by_key(|(_, n)| std::cmp::Reverse(*n));
    let main = counts.first().map(|(d, _)| *d).unwrap_or_default();
    let quantisation = match header.file_type.and_then(file_type_name) {
        Some(ft) if ft != main => format!("{ft} (mostly {main})"),
        _ => main.to_owned(),
    };
    let name = header.name.clone().unwrap_or_else(|| {
        path.file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default()
    });
    let info = ModelInfo {
        path: path.to_owned(),
        name,
        arch: header.arch.clone(),
        quantisation,
        parameters,
        file_bytes: size,
        context,
        trained_context: usize::try_from(header.context).unwrap_or(usize::MAX),
        vocab: header.vocab,
        threads: crate::settings::default_threads(),
    };
    Ok((header, info))
}

/// Bytes of the f16 key and value cache for `context` tokens.
fn kv_bytes(h: &Header, context: u64) -> u64 {
    let head = h.embedding / h.heads.max(1);
    let k = h.key_length.unwrap_or(head) * h.kv_heads.max(1);
    let v = h.value_length.unwrap_or(head) * h.kv_heads.max(1);
    h.layers * context * (k + v) * 2
}

type Tensors = Vec<(Vec<u64>, u32, u64)>;

fn read_header<R: Read + Seek>(c: &mut Cursor<R>) -> Result<(Header, Tensors, u64), Bad> {
    let magic = c
        .bytes(4)
        .map_err(|_| Bad::Format("shorter than a GGUF header".into()))?;
    if magic != b"GGUF" {
        return Err(Bad::Format("it does not start with `GGUF`".into()));
    }
    let version = c.u32()?;
    if !(2..=3).contains(&version) {
        return Err(Bad::Format(format!("GGUF version {version}, not 2 or 3")));
    }
    let n_tensors = c.u64()?;
    if n_tensors > MAX_ENTRIES {
        return Err(Bad::Limit("tensors", n_tensors, MAX_ENTRIES));
    }
    let n_kv = c.u64()?;
    if n_kv > MAX_ENTRIES {
        return Err(Bad::Limit("metadata entries", n_kv, MAX_ENTRIES));
    }
    let mut h = Header::default();
    let mut ints: Vec<(String, u64)> = Vec::new();
    let mut alignment = 32u64;
    for _ in 0..n_kv {
        let key = c.string(1 << 16)?;
        let t = c.u32()?;
        let keep = matches!(
            key.as_str(),
            "general.architecture" | "general.name" | "tokenizer.chat_template"
        );
        let limit = if key == "tokenizer.ggml.tokens" {
            (MAX_VOCAB, "a vocabulary")
        } else {
            (MAX_ARRAY, "a metadata array")
        };
        match (value(c, t, keep, limit)?, key.as_str()) {
            (Value::Str(s), "general.architecture") => h.arch = s,
            (Value::Str(s), "general.name") => h.name = Some(s),
            (Value::Str(s), "tokenizer.chat_template") => h.chat_template = Some(s),
            (Value::Array(n), "tokenizer.ggml.tokens") => h.vocab = n,
            (Value::Int(v), "general.alignment") => alignment = v,
            (Value::Int(v), "general.file_type") => h.file_type = u32::try_from(v).ok(),
            (Value::Int(v), _) => ints.push((key, v)),
            _ => {}
        }
    }
    if alignment == 0 || alignment > 1 << 20 || !alignment.is_power_of_two() {
        return Err(Bad::Format(format!("alignment {alignment}")));
    }
    let int = |name: &str| {
        let key = format!("{}.{name}", h.arch);
        ints.iter().find(|(k, _)| *k == key).map(|(_, v)| *v)
    };
    h.context = int("context_length").unwrap_or(4096);
    h.layers = int("block_count").unwrap_or(0);
    h.embedding = int("embedding_length").unwrap_or(0);
    h.heads = int("attention.head_count").unwrap_or(1);
    h.kv_heads = int("attention.head_count_kv").unwrap_or(h.heads);
    h.key_length = int("attention.key_length");
    h.value_length = int("attention.value_length");
    let mut tensors = Vec::with_capacity(n_tensors as usize);
    for _ in 0..n_tensors {
        c.skip_string(1 << 16)?;
        let n_dims = c.u32()?;
        if n_dims == 0 || n_dims > 4 {
            return Err(Bad::Format(format!("a tensor of {n_dims} dimensions")));
        }
        let dims = (0..n_dims)
            .map(|_| c.u64())
            .collect::<Result<Vec<_>, _>>()?;
        let t = c.u32()?;
        let offset = c.u64()?;
        tensors.push((dims, t, offset));
    }
    let read = c
        .inner
        .stream_position()
        .map_err(|e| Bad::Format(e.to_string()))?;
    let data_start = read.div_ceil(alignment) * alignment;
    let _ = c.inner.seek(SeekFrom::Start(0));
    Ok((h, tensors, data_start))
}

/// `MemAvailable` from `/proc/meminfo`, in MiB; `None` where there is no such file.
fn available_mib() -> Option<u64> {
    std::fs::read_to_string("/proc/meminfo")
        .ok()?
        .lines()
        .find_map(|line| line.strip_prefix("MemAvailable:"))
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|kib| kib.parse::<u64>().ok())
        .map(|kib| kib / 1024)
}
