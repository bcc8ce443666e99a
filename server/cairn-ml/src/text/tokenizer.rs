//! The tokenizer a model name stands for, for `count_tokens` and `truncate_tokens`: a
//! `tokenizer.json` in the Hugging Face cache (the local embedding model by default), OpenAI's
//! BPE encodings (built into tiktoken-rs, exact), or an approximation for Claude, whose
//! tokenizer is not published.

use std::path::PathBuf;

use tiktoken_rs::CoreBPE;
use tiktoken_rs::tokenizer::Tokenizer as OpenAiEncoding;
use tokenizers::Tokenizer;

use crate::ml::Ml;

/// Characters per token of English text assumed for Claude: Anthropic's documentation gives
/// about 3.5; code and other languages differ, hence "approximate".
const CLAUDE_CHARS_PER_TOKEN: f64 = 3.5;

/// A loaded tokenizer and what to call it.
pub(crate) enum Counter {
    /// A Hugging Face tokenizer from the cache.
    Hf {
        tokenizer: Box<Tokenizer>,
        repo: String,
    },
    /// An OpenAI encoding: exact.
    OpenAi {
        bpe: &'static CoreBPE,
        encoding: &'static str,
        model: String,
    },
    /// An estimate from the character count.
    Approx { model: String },
}

impl Counter {
    /// What the count is of, for the reply.
    pub(crate) fn label(&self) -> String {
        match self {
            Counter::Hf { repo, .. } => {
                format!("{repo} (its tokenizer.json from the Hugging Face cache)")
            }
            Counter::OpenAi {
                encoding, model, ..
            } => format!("{model} ({encoding}, exact)"),
            Counter::Approx { model } => format!(
                "{model} (APPROXIMATE: about {CLAUDE_CHARS_PER_TOKEN} characters per token; Claude's tokenizer is not published, Anthropic's count_tokens API gives the exact number)"
            ),
        }
    }

    /// The tokens of `text`, without special tokens.
    pub(crate) fn count(&self, text: &str) -> Result<usize, String> {
        match self {
            Counter::Hf { tokenizer, .. } => tokenizer
                .encode(text, false)
                .map(|e| e.get_ids().len())
                .map_err(|e| format!("tokenizing failed: {e}")),
            Counter::OpenAi { bpe, .. } => Ok(bpe.encode_ordinary(text).len()),
            Counter::Approx { .. } => Ok(approx(text.chars().count())),
        }
    }

    /// The special tokens the model adds around one input (a BERT's `[CLS]` and `[SEP]`),
    /// when that is known.
    pub(crate) fn specials(&self, text: &str) -> Result<Option<usize>, String> {
        match self {
            Counter::Hf { tokenizer, .. } => {
                let with = tokenizer
                    .encode(text, true)
                    .map_err(|e| format!("tokenizing failed: {e}"))?
                    .get_ids()
                    .len();
                Ok(Some(with.saturating_sub(self.count(text)?)))
            }
            _ => Ok(None),
        }
    }

    /// The longest prefix of `text` with at most `max` tokens.
    pub(crate) fn truncate<'a>(
        &self,
        text: &'a str,
        max: usize,
    ) -> Result<std::borrow::Cow<'a, str>, String> {
        use std::borrow::Cow;
        match self {
            Counter::Hf { tokenizer, .. } => {
                let enc = tokenizer
                    .encode(text, false)
                    .map_err(|e| format!("tokenizing failed: {e}"))?;
                if enc.get_ids().len() <= max {
                    return Ok(Cow::Borrowed(text));
                }
                if max == 0 {
                    return Ok(Cow::Borrowed(""));
                }
                // Offsets are bytes of the original text, whatever the normaliser did.
                let mut end = enc.get_offsets()[max - 1].1.min(text.len());
                while !text.is_char_boundary(end) {
                    end -= 1;
                }
                Ok(Cow::Borrowed(&text[..end]))
            }
            Counter::OpenAi { bpe, .. } => {
                let ids = bpe.encode_ordinary(text);
                if ids.len() <= max {
                    return Ok(Cow::Borrowed(text));
                }
                // A cut can fall inside a character's bytes: drop tokens until it decodes.
                let mut n = max;
                loop {
                    if let Ok(s) = bpe.decode(ids[..n].to_vec()) {
                        return Ok(Cow::Owned(s));
                    }
                    if n == 0 {
                        return Ok(Cow::Borrowed(""));
                    }
                    n -= 1;
                }
            }
            Counter::Approx { .. } => {
                let keep = (max as f64 * CLAUDE_CHARS_PER_TOKEN).floor() as usize;
                match text.char_indices().nth(keep) {
                    None => Ok(Cow::Borrowed(text)),
                    Some((end, _)) => Ok(Cow::Borrowed(&text[..end])),
                }
            }
        }
    }
}

fn approx(chars: usize) -> usize {
    (chars as f64 / CLAUDE_CHARS_PER_TOKEN).ceil() as usize
}

/// The tokenizer `model` names (see the tools' `model` field); `None` is the local embedding
/// model. Loading reads files, so this runs on a blocking thread.
pub(crate) async fn resolve(ml: &Ml, model: Option<String>) -> Result<Counter, String> {
    let model = model.map(|m| m.trim().to_owned()).filter(|m| !m.is_empty());
    let (repo, revision) = match model.as_deref() {
        None | Some("local") => (ml.spec.repo.clone(), ml.spec.revision.clone()),
        Some(m) if m == ml.spec.repo => (ml.spec.repo.clone(), ml.spec.revision.clone()),
        Some(m) if m.contains('/') => (m.to_owned(), "main".to_owned()),
        Some(m) => return named(m),
    };
    tokio::task::spawn_blocking(move || {
        let path = cached(&repo, &revision)?;
        let mut tokenizer = Tokenizer::from_file(&path)
            .map_err(|e| format!("could not load {}: {e}", path.display()))?;
        // Counting sees the whole text: no truncation to the model's input length, no padding.
        tokenizer
            .with_truncation(None)
            .map_err(|e| format!("could not load {}: {e}", path.display()))?;
        tokenizer.with_padding(None);
        Ok(Counter::Hf {
            tokenizer: Box::new(tokenizer),
            repo,
        })
    })
    .await
    .map_err(|e| format!("loading the tokenizer failed: {e}"))?
}

/// `tokenizer.json` of `repo` at `revision` in the Hugging Face cache; nothing is downloaded.
fn cached(repo: &str, revision: &str) -> Result<PathBuf, String> {
    let (found, cache) = cairn_select::embed::cached_model_file(repo, revision, "tokenizer.json");
    found.ok_or_else(|| {
        format!(
            "no tokenizer.json of {repo} (revision {revision}) in the Hugging Face cache at {}; cairn does not download tokenizers. Use a model whose files are in the cache, an OpenAI model name (e.g. \"gpt-4o\"), or \"claude\" for an estimate",
            cache.display()
        )
    })
}

/// A model known by name: OpenAI's (exact) or Claude (approximate).
fn named(model: &str) -> Result<Counter, String> {
    let lower = model.to_lowercase();
    if lower.starts_with("claude") || lower == "anthropic" {
        return Ok(Counter::Approx {
            model: model.to_owned(),
        });
    }
    let (bpe, encoding): (&'static CoreBPE, &'static str) =
        match tiktoken_rs::tokenizer::get_tokenizer(&lower) {
            Some(OpenAiEncoding::O200kBase) => (tiktoken_rs::o200k_base_singleton(), "o200k_base"),
            Some(OpenAiEncoding::O200kHarmony) => {
                (tiktoken_rs::o200k_harmony_singleton(), "o200k_harmony")
            }
            Some(OpenAiEncoding::Cl100kBase) => {
                (tiktoken_rs::cl100k_base_singleton(), "cl100k_base")
            }
            Some(OpenAiEncoding::P50kBase) => (tiktoken_rs::p50k_base_singleton(), "p50k_base"),
            Some(OpenAiEncoding::P50kEdit) => (tiktoken_rs::p50k_edit_singleton(), "p50k_edit"),
            Some(OpenAiEncoding::R50kBase | OpenAiEncoding::Gpt2) => {
                (tiktoken_rs::r50k_base_singleton(), "r50k_base")
            }
            None => {
                return Err(format!(
                    "unknown model \"{model}\": give \"local\" (the embedding model, the default), a Hugging Face repo id whose tokenizer.json is in the cache (e.g. \"sentence-transformers/all-MiniLM-L6-v2\"), an OpenAI model (e.g. \"gpt-4o\", \"gpt-4\", \"text-embedding-3-small\") or a Claude model (approximate)"
                ));
            }
        };
    Ok(Counter::OpenAi {
        bpe,
        encoding,
        model: model.to_owned(),
    })
}
