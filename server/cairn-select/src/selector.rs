//! The long-lived selection engine the agent asks on every step: which tools of the current
//! catalog suit the request.
//!
//! It never makes a step wait for the embedding model. The model loads in a background thread
//! ([`Selector::warm_up`]); until it is ready, and for good if it cannot load, ranking is lexical
//! (BM25) and [`Ranked::lexical_only`] says why. Tool descriptions are embedded by one background
//! worker as they appear, through the on-disk [`EmbeddingCache`], so a restart or a second
//! process re-embeds nothing; a tool whose vector is not ready yet still takes part through BM25.
//! Requests themselves are embedded inline once the model is ready (a short text takes a few
//! milliseconds), and are never written to disk.
//!
//! The score of a ranked tool is [`crate::rank::hybrid_scores`], the one fusion the benchmark's
//! hybrid measures too ([`crate::rank::Fusion::DEFAULT`], chosen for its worst set on held-apart
//! halves of every benchmark set; the reasons are in `rank`'s module docs): for each query, the
//! best cosine over the query and its clauses, standardised, plus the standardised BM25 score at
//! a weight that shrinks when BM25's best does not stand out; with sub-queries (the request, the
//! recent context), a tool keeps its best. Each step of a multi-step request thus gets its own
//! best tools, where a sum would favour tools matching every step weakly. Without the model the
//! score is the standardised BM25 score, and only tools sharing a word with a query are returned.
//! Scores order tools within one call only.

use std::collections::{HashMap, HashSet, VecDeque};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::PathBuf;
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};

use crate::bm25::Bm25Index;
use crate::cache::{EmbeddingCache, TextKey, chain, text_key};
use crate::catalog::Tool;
use crate::embed::{DownloadReport, EmbedError, Embedder, ModelSpec};
use crate::rank::{Fusion, Strategy, clauses, hybrid_scores, z_fusion, z_scores};

/// Texts the background worker embeds per step: small, so vectors arrive steadily and a
/// changed catalog is picked up soon.
const WORKER_BATCH: usize = 8;

/// Request vectors kept in memory: an agent asks again with the same request on every step of
/// a turn.
const QUERY_CACHE: usize = 64;

/// One tool of the catalog, as the agent knows it.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolEntry {
    pub name: String,
    pub server: String,
    pub description: String,
    pub input_schema: serde_json::Value,
}

impl ToolEntry {
    /// The text the tool is retrieved by, built (and capped) exactly as
    /// [`Tool::retrieval_text`] builds it.
    pub fn retrieval_text(&self) -> String {
        Tool {
            id: self.name.clone(),
            server: self.server.clone(),
            name: self.name.clone(),
            description: self.description.clone(),
            input_schema: self.input_schema.clone(),
        }
        .retrieval_text()
    }
}

/// How a [`Selector`] ranks.
#[derive(Debug, Clone, PartialEq)]
pub struct SelectorOptions {
    /// The embedding model.
    pub model: ModelSpec,
    /// Where embeddings are cached; `None` means [`EmbeddingCache::default_dir`], and without
    /// that, memory only.
    pub cache_dir: Option<PathBuf>,
    /// Default [`Strategy::Hybrid`]; [`Strategy::Lexical`] never loads the model.
    pub strategy: Strategy,
    /// `false`: lexical only, the model is never touched.
    pub load_model: bool,
}

impl Default for SelectorOptions {
    fn default() -> Self {
        Self {
            model: ModelSpec::default(),
            cache_dir: None,
            strategy: Strategy::Hybrid,
            load_model: true,
        }
    }
}

/// Where the embedding model is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ModelStatus {
    NotStarted,
    Loading,
    /// Fetching the model from the Hub: which file, and how far (0 to 100).
    Downloading {
        file: String,
        percent: u8,
    },
    Ready,
    /// It could not load; `message` says why and how to fix it.
    Unavailable {
        message: String,
    },
}

/// The outcome of [`Selector::rank`].
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Ranked {
    /// Index into the tools slice and fused score, best first, at most `k`.
    pub order: Vec<(usize, f32)>,
    /// Why dense ranking was not used, for the user; `None` when it was.
    pub lexical_only: Option<String>,
    /// Tools without a vector yet, which took part through BM25 only (0 when dense ranking is
    /// off or unavailable, as they will never have one).
    pub pending: usize,
}

type StatusCallback = Arc<dyn Fn(&ModelStatus) + Send + Sync>;

/// Ranks tools for requests; see the module docs. Share it as `Arc<Selector>`.
pub struct Selector {
    options: SelectorOptions,
    model: Mutex<ModelState>,
    /// Signalled on every status change, for [`Selector::prepare`].
    model_changed: Condvar,
    callbacks: Mutex<Vec<StatusCallback>>,
    catalog: Mutex<CatalogIndex>,
    work: Arc<WorkQueue>,
    /// Recent request vectors, oldest first.
    queries: Mutex<VecDeque<(String, Arc<Vec<f32>>)>>,
}

impl std::fmt::Debug for Selector {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Selector")
            .field("options", &self.options)
            .field("status", &self.status())
            .finish_non_exhaustive()
    }
}

struct ModelState {
    status: ModelStatus,
    embedder: Option<Arc<Embedder>>,
    cache: Option<Arc<EmbeddingCache>>,
}

/// The catalog as last ranked: rebuilt only when its texts change.
#[derive(Default)]
struct CatalogIndex {
    texts: Vec<String>,
    keys: Vec<TextKey>,
    bm25: Bm25Index,
    vectors: Vec<Option<Arc<Vec<f32>>>>,
}

impl CatalogIndex {
    fn new(texts: Vec<String>) -> Self {
        Self {
            keys: texts.iter().map(|t| text_key(t)).collect(),
            bm25: Bm25Index::new(&texts),
            vectors: vec![None; texts.len()],
            texts,
        }
    }

    /// Takes the vectors that arrived in the cache since the last call.
    /// The texts without a vector yet, for the embedding worker.
    fn missing(&self) -> Vec<(TextKey, String)> {
        (0..self.texts.len())
            .filter(|&i| self.vectors[i].is_none())
            .map(|i| (self.keys[i], self.texts[i].clone()))
            .collect()
    }

    fn fill(&mut self, cache: &EmbeddingCache, dim: usize) {
        for (slot, key) in self.vectors.iter_mut().zip(&self.keys) {
            if slot.is_none() {
                *slot = cache.get_key(key).filter(|v| v.len() == dim).map(Arc::new);
            }
        }
    }
}

/// The background worker's queue of texts to embed.
struct WorkQueue {
    state: Mutex<Work>,
    wake: Condvar,
}

#[derive(Default)]
struct Work {
    queue: VecDeque<(TextKey, String)>,
    /// Queued or being embedded, so a text is never queued twice.
    queued: HashSet<TextKey>,
    /// Texts the model failed on; not retried until they change.
    failed: HashSet<TextKey>,
    closed: bool,
}

impl WorkQueue {
    fn push(&self, items: Vec<(TextKey, String)>) {
        let mut work = lock(&self.state);
        let mut added = false;
        for (key, text) in items {
            if !work.failed.contains(&key) && work.queued.insert(key) {
                work.queue.push_back((key, text));
                added = true;
            }
        }
        if added {
            self.wake.notify_one();
        }
    }

    /// Drops queued texts no tool has any more.
    fn retain(&self, keys: &HashSet<TextKey>) {
        let mut work = lock(&self.state);
        let Work { queue, queued, .. } = &mut *work;
        queue.retain(|(key, _)| {
            let keep = keys.contains(key);
            if !keep {
                queued.remove(key);
            }
            keep
        });
    }

    fn close(&self) {
        lock(&self.state).closed = true;
        self.wake.notify_all();
    }

    /// The worker: embeds queued texts in small batches until the selector is dropped.
    fn run(&self, embedder: &Embedder, cache: &EmbeddingCache) {
        loop {
            let batch: Vec<(TextKey, String)> = {
                let mut work = lock(&self.state);
                while work.queue.is_empty() && !work.closed {
                    work = self.wake.wait(work).unwrap_or_else(PoisonError::into_inner);
                }
                if work.closed {
                    return;
                }
                let n = work.queue.len().min(WORKER_BATCH);
                work.queue.drain(..n).collect()
            };
            let texts: Vec<&str> = batch.iter().map(|(_, t)| t.as_str()).collect();
            let result = catch_unwind(AssertUnwindSafe(|| cache.embed_all(embedder, &texts)));
            let mut work = lock(&self.state);
            for (key, _) in &batch {
                work.queued.remove(key);
            }
            let failure = match result {
                Ok(Ok(_)) => None,
                Ok(Err(err)) => Some(chain(&err)),
                Err(_) => Some("the embedder panicked".to_owned()),
            };
            if let Some(error) = failure {
                tracing::warn!(
                    %error,
                    tools = batch.len(),
                    "cannot embed tool descriptions; they are ranked by keywords"
                );
                work.failed.extend(batch.iter().map(|(key, _)| *key));
            }
        }
    }
}

impl Selector {
    /// A selector that has loaded nothing yet: [`Selector::warm_up`] or the first
    /// [`Selector::rank`] starts the model.
    pub fn new(options: SelectorOptions) -> Arc<Selector> {
        Arc::new(Selector {
            options,
            model: Mutex::new(ModelState {
                status: ModelStatus::NotStarted,
                embedder: None,
                cache: None,
            }),
            model_changed: Condvar::new(),
            callbacks: Mutex::new(Vec::new()),
            catalog: Mutex::new(CatalogIndex::default()),
            work: Arc::new(WorkQueue {
                state: Mutex::new(Work::default()),
                wake: Condvar::new(),
            }),
            queries: Mutex::new(VecDeque::new()),
        })
    }

    /// The options the selector was made with.
    pub fn options(&self) -> &SelectorOptions {
        &self.options
    }

    /// Whether this selector ever uses the model.
    fn dense_enabled(&self) -> bool {
        self.options.load_model && self.options.strategy != Strategy::Lexical
    }

    /// Starts loading the model in a background thread if not started (idempotent, never
    /// blocks). Does nothing when dense ranking is off.
    pub fn warm_up(self: &Arc<Self>) {
        if !self.dense_enabled() {
            return;
        }
        {
            let mut model = lock(&self.model);
            if model.status != ModelStatus::NotStarted {
                return;
            }
            model.status = ModelStatus::Loading;
        }
        self.status_changed(&ModelStatus::Loading);
        let this = Arc::clone(self);
        let spawned = std::thread::Builder::new()
            .name("cairn-select-load".to_owned())
            .spawn(move || this.load());
        if let Err(err) = spawned {
            self.set_status(
                ModelStatus::Unavailable {
                    message: format!("cannot start a thread to load the embedding model: {err}"),
                },
                None,
            );
        }
    }

    /// The loading thread's body.
    fn load(&self) {
        // The status changes at each whole percent, not at each network read.
        let report = |file: &str, done: u64, total: u64| {
            let percent = done
                .saturating_mul(100)
                .checked_div(total)
                .map_or(0, |p| p.min(100) as u8);
            self.set_status(
                ModelStatus::Downloading {
                    file: file.to_owned(),
                    percent,
                },
                None,
            );
        };
        match load_embedder(&self.options.model, &report) {
            Ok(embedder) => {
                if let Err(err) = self.install(embedder) {
                    let message = chain(&err);
                    self.set_status(ModelStatus::Unavailable { message }, None);
                }
            }
            Err(err) => self.set_status(
                ModelStatus::Unavailable {
                    message: chain(&err),
                },
                None,
            ),
        }
    }

    /// Opens the cache, starts the worker, and makes the model ready.
    fn install(&self, embedder: Embedder) -> Result<(), EmbedError> {
        let embedder = Arc::new(embedder);
        let cache = Arc::new(self.open_cache());
        // Embedding nothing makes the cache drop vectors of another dimension than the model's.
        let _ = cache.embed_all(&embedder, &[]);
        let (work, worker_embedder, worker_cache) = (
            Arc::clone(&self.work),
            Arc::clone(&embedder),
            Arc::clone(&cache),
        );
        std::thread::Builder::new()
            .name("cairn-select-embed".to_owned())
            .spawn(move || work.run(&worker_embedder, &worker_cache))
            .map_err(EmbedError::Thread)?;
        // The catalog the last request saw is embedded now, not at the next request, so the
        // first turns after loading are not left to keywords.
        {
            let mut catalog = lock(&self.catalog);
            catalog.fill(&cache, embedder.dim());
            let missing = catalog.missing();
            if !missing.is_empty() {
                self.work.push(missing);
            }
        }
        self.set_status(ModelStatus::Ready, Some((embedder, cache)));
        Ok(())
    }

    fn open_cache(&self) -> EmbeddingCache {
        let spec = &self.options.model;
        let Some(dir) = self
            .options
            .cache_dir
            .clone()
            .or_else(EmbeddingCache::default_dir)
        else {
            tracing::warn!(
                "no cache directory (HOME is not set); tool embeddings are kept in memory only"
            );
            return EmbeddingCache::in_memory(spec);
        };
        match EmbeddingCache::open(&dir, spec) {
            Ok(cache) => cache,
            Err(err) => {
                tracing::warn!(
                    error = %chain(&err),
                    "cannot open the embedding cache; tool embeddings are kept in memory only"
                );
                EmbeddingCache::in_memory(spec)
            }
        }
    }

    fn set_status(&self, status: ModelStatus, ready: Option<(Arc<Embedder>, Arc<EmbeddingCache>)>) {
        {
            let mut model = lock(&self.model);
            if model.status == status {
                return;
            }
            model.status = status.clone();
            if let Some((embedder, cache)) = ready {
                model.embedder = Some(embedder);
                model.cache = Some(cache);
            }
        }
        self.model_changed.notify_all();
        self.status_changed(&status);
    }

    /// Calls the callbacks outside every lock, so one may call back into the selector.
    fn status_changed(&self, status: &ModelStatus) {
        let callbacks: Vec<StatusCallback> = lock(&self.callbacks).clone();
        for callback in callbacks {
            callback(status);
        }
    }

    /// Where the embedding model is now.
    pub fn status(&self) -> ModelStatus {
        lock(&self.model).status.clone()
    }

    /// Registers a callback called on every status change (the LSP layer shows progress / a
    /// warning with it). It runs on whichever thread changed the status.
    pub fn on_status(&self, f: Box<dyn Fn(&ModelStatus) + Send + Sync>) {
        lock(&self.callbacks).push(Arc::from(f));
    }

    /// How many tool texts this selector ran through the model; texts whose vectors came from
    /// the disk cache, and requests, are not counted.
    pub fn embedded_count(&self) -> usize {
        lock(&self.model)
            .cache
            .as_ref()
            .map_or(0, |cache| cache.embedded_count())
    }

    /// Ranks `tools` for the queries (sub-queries: the request, the recent context), best first,
    /// at most k; see the module docs for the score.
    ///
    /// Never blocks on model loading or catalog embedding: tools whose vectors are not ready
    /// yet take part through BM25 only; while the model is loading or unavailable the ranking
    /// is lexical only and `lexical_only` says why. Starts loading the model if no one did.
    pub fn rank(self: &Arc<Self>, queries: &[String], tools: &[ToolEntry], k: usize) -> Ranked {
        self.warm_up();
        let queries: Vec<&str> = queries
            .iter()
            .map(|q| q.trim())
            .filter(|q| !q.is_empty())
            .collect();
        let texts: Vec<String> = tools.iter().map(ToolEntry::retrieval_text).collect();
        let (status, embedder, cache) = {
            let model = lock(&self.model);
            (
                model.status.clone(),
                model.embedder.clone(),
                model.cache.clone(),
            )
        };

        let mut lexical_only = match (&status, &embedder) {
            _ if !self.dense_enabled() => {
                Some("semantic tool ranking is off; tools are ranked by keywords".to_owned())
            }
            (ModelStatus::Ready, Some(_)) => None,
            (ModelStatus::Unavailable { message }, _) => Some(format!(
                "the embedding model is unavailable, so tools are ranked by keywords: {message}"
            )),
            _ => Some(
                "the embedding model is still loading; tools are ranked by keywords for now"
                    .to_owned(),
            ),
        };
        // Each request is embedded with its clauses (the steps of a multi-step request), before
        // the catalog is locked, so concurrent calls wait less.
        let mut embed_texts: Vec<String> = Vec::new();
        let mut spans: Vec<std::ops::Range<usize>> = Vec::new();
        for query in &queries {
            let start = embed_texts.len();
            embed_texts.push((*query).to_owned());
            if Fusion::DEFAULT.clauses {
                embed_texts.extend(clauses(query));
            }
            spans.push(start..embed_texts.len());
        }
        let mut query_vectors = Vec::new();
        if let (None, Some(embedder)) = (&lexical_only, &embedder) {
            let refs: Vec<&str> = embed_texts.iter().map(String::as_str).collect();
            match self.query_vectors(embedder, &refs) {
                Ok(vectors) => query_vectors = vectors,
                Err(err) => {
                    lexical_only = Some(format!(
                        "embedding the request failed, so tools are ranked by keywords: {}",
                        chain(&err)
                    ))
                }
            }
        }

        let mut catalog = lock(&self.catalog);
        if catalog.texts != texts {
            *catalog = CatalogIndex::new(texts);
            self.work.retain(&catalog.keys.iter().copied().collect());
        }
        if let (Some(cache), Some(embedder)) = (&cache, &embedder) {
            catalog.fill(cache, embedder.dim());
            let missing = catalog.missing();
            if !missing.is_empty() {
                self.work.push(missing);
            }
        }
        let n = catalog.texts.len();
        let ready = catalog.vectors.iter().filter(|v| v.is_some()).count();
        let dense_possible = self.dense_enabled()
            && matches!(
                status,
                ModelStatus::NotStarted
                    | ModelStatus::Loading
                    | ModelStatus::Downloading { .. }
                    | ModelStatus::Ready
            );
        let pending = if dense_possible { n - ready } else { 0 };
        if lexical_only.is_none() && ready == 0 && n > 0 {
            lexical_only = Some(
                "the tool descriptions are still being embedded; tools are ranked by keywords for now"
                    .to_owned(),
            );
        }
        let dense = lexical_only.is_none() && query_vectors.len() == embed_texts.len();

        // Per query, one standardised score per tool; a tool keeps its best over the queries.
        let mut best = vec![f32::NEG_INFINITY; n];
        let mut matched = vec![false; n];
        for (qi, query) in queries.iter().enumerate() {
            let lexical = catalog.bm25.scores(query);
            for (m, l) in matched.iter_mut().zip(&lexical) {
                *m |= *l > 0.0;
            }
            let score = if dense {
                let vectors: Vec<&[f32]> = query_vectors[spans[qi].clone()]
                    .iter()
                    .map(|v| v.as_slice())
                    .collect();
                // A tool not embedded yet has no dense score (NaN counts as average) and comes
                // in through BM25.
                let dense_scores: Vec<f32> = catalog
                    .vectors
                    .iter()
                    .map(|v| match v {
                        Some(v) => vectors
                            .iter()
                            .map(|q| dot(q, v))
                            .fold(f32::NEG_INFINITY, f32::max),
                        None => f32::NAN,
                    })
                    .collect();
                match self.options.strategy {
                    Strategy::Dense => z_fusion(&[(&dense_scores, 1.0)]),
                    _ => hybrid_scores(&dense_scores, &lexical),
                }
            } else {
                z_scores(&lexical)
            };
            for (b, s) in best.iter_mut().zip(score) {
                *b = b.max(s);
            }
        }
        // Ranked by keywords alone, a tool that shares no word with the request is not a
        // candidate at all.
        let mut order: Vec<(usize, f32)> = (0..n)
            .filter(|&i| best[i].is_finite() && (dense || matched[i]))
            .map(|i| (i, best[i]))
            .collect();
        order.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        order.truncate(k);
        Ranked {
            order,
            lexical_only,
            pending,
        }
    }

    /// The vectors of `queries`, from the recent-request cache or embedded now.
    fn query_vectors(
        &self,
        embedder: &Embedder,
        queries: &[&str],
    ) -> Result<Vec<Arc<Vec<f32>>>, EmbedError> {
        let mut found: Vec<Option<Arc<Vec<f32>>>> = {
            let recent = lock(&self.queries);
            queries
                .iter()
                .map(|q| {
                    recent
                        .iter()
                        .find(|(text, _)| text == q)
                        .map(|(_, v)| Arc::clone(v))
                })
                .collect()
        };
        let missing: Vec<&str> = queries
            .iter()
            .zip(&found)
            .filter(|(_, v)| v.is_none())
            .map(|(q, _)| *q)
            .collect();
        if !missing.is_empty() {
            // Embedded without holding the lock: other calls still read their cached requests.
            let fresh: HashMap<&str, Arc<Vec<f32>>> = missing
                .iter()
                .copied()
                .zip(embedder.embed(&missing)?.into_iter().map(Arc::new))
                .collect();
            let mut recent = lock(&self.queries);
            for (text, vector) in &fresh {
                if !recent.iter().any(|(t, _)| t == text) {
                    recent.push_back(((*text).to_owned(), Arc::clone(vector)));
                }
            }
            while recent.len() > QUERY_CACHE {
                recent.pop_front();
            }
            for (slot, q) in found.iter_mut().zip(queries) {
                if slot.is_none() {
                    *slot = fresh.get(q).cloned();
                }
            }
        }
        Ok(found.into_iter().flatten().collect())
    }

    /// Blocks until the model is loaded (or failed) and every tool of `tools` is embedded: for
    /// the CLI and benchmarks. If the background load failed, loading is tried once more here,
    /// so the caller gets the error itself. With dense ranking off it does nothing.
    pub fn prepare(self: &Arc<Self>, tools: &[ToolEntry]) -> Result<(), EmbedError> {
        if !self.dense_enabled() {
            return Ok(());
        }
        self.warm_up();
        let ready = {
            let mut model = lock(&self.model);
            while matches!(
                model.status,
                ModelStatus::NotStarted | ModelStatus::Loading | ModelStatus::Downloading { .. }
            ) {
                model = self
                    .model_changed
                    .wait(model)
                    .unwrap_or_else(PoisonError::into_inner);
            }
            model.embedder.clone().zip(model.cache.clone())
        };
        let (embedder, cache) = match ready {
            Some(ready) => ready,
            None => {
                let embedder = load_embedder(&self.options.model, &|_: &str, _: u64, _: u64| {})?;
                self.install(embedder)?;
                let model = lock(&self.model);
                match model.embedder.clone().zip(model.cache.clone()) {
                    Some(ready) => ready,
                    None => {
                        return Err(EmbedError::Unsupported(
                            "the embedding model did not become ready".to_owned(),
                        ));
                    }
                }
            }
        };
        let texts: Vec<String> = tools.iter().map(ToolEntry::retrieval_text).collect();
        let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
        cache.embed_all(&embedder, &refs)?;
        Ok(())
    }
}

impl Drop for Selector {
    fn drop(&mut self) {
        // The worker holds only the queue, the embedder and the cache; closing ends it.
        self.work.close();
    }
}

/// Loads the model, turning a panic in the model code into an error.
fn load_embedder(spec: &ModelSpec, report: &DownloadReport<'_>) -> Result<Embedder, EmbedError> {
    let spec = spec.clone();
    catch_unwind(AssertUnwindSafe(move || {
        Embedder::load_reporting(spec, report)
    }))
    .unwrap_or_else(|_| {
        Err(EmbedError::Unsupported(
            "loading the embedding model panicked".to_owned(),
        ))
    })
}

/// The cosine of two unit vectors.
fn dot(a: &[f32], b: &[f32]) -> f32 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    // Every value behind these locks stays consistent between statements, so a panic elsewhere
    // leaves nothing half done that matters.
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}
