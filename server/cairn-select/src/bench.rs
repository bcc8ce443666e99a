//! The tool-selection benchmark behind `cairn bench select`: load a catalog (plus optional
//! distractor catalogs) and labelled queries, rank every query under each strategy, and measure
//! recall@k, complete@k, nDCG@10, the tokens of the selected definitions, and time per query.
//!
//! Relevance is judged only against the first catalog: distractors exist to make selection
//! harder, and a distractor that happens to share an id or name with a labelled tool must not
//! count as a hit.
//!
//! Catalog vectors go through the on-disk [`EmbeddingCache`], so only the first run over a
//! catalog pays for embedding it (the 5,015 Docker-registry tools take minutes on two cores).
//! Queries are always embedded afresh, one at a time, because their timing is one of the figures:
//! a selection is measured as the query's embedding plus the ranking over the whole catalog.

use std::collections::{HashMap, HashSet};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Instant;

use serde::Serialize;

use crate::cache::{CacheError, EmbeddingCache};
use crate::catalog::{self, CatalogError, Duplicates, Query, Tool};
use crate::embed::{EmbedError, Embedder, ModelSpec};
use crate::rank::{Fusion, Index, Strategy, clauses, max_cosine_scores, order_by_score};

/// nDCG is reported at this depth, whatever `ks` holds.
pub const NDCG_DEPTH: usize = 10;

/// What counts as finding a relevant tool.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MatchBy {
    /// The exact tool id.
    Id,
    /// Any tool of the first catalog with the same name (BFCL pools near-identical functions).
    Name,
}

/// What to run.
#[derive(Debug, Clone)]
pub struct BenchConfig {
    /// The first is scored; the rest are distractors.
    pub catalogs: Vec<PathBuf>,
    pub queries: PathBuf,
    pub ks: Vec<usize>,
    pub match_by: MatchBy,
    pub strategies: Vec<Strategy>,
    /// Use only the first this-many queries.
    pub limit: Option<usize>,
    /// Use this many queries spread evenly over the file (every n-th), after `limit`: query
    /// files are grouped by tool (MetaTool's first 500 name only 3 tools), so a prefix is no
    /// sample.
    pub sample: Option<usize>,
    /// The embedding cache directory; `None` embeds the whole catalog on every run.
    pub cache_dir: Option<PathBuf>,
    /// Keep only this half of the queries (before `limit` and `sample`), so weights can be
    /// chosen on one half and reported on the other.
    pub split: Option<Split>,
    /// Fusions to measure after the strategies, each reported under its [`Fusion::name`]
    /// (`cairn bench select --tune`).
    pub fusions: Vec<Fusion>,
}

/// One of two disjoint halves of a query file, by a stable hash of each query's `qid` (not by
/// position: files are grouped by tool, so a positional half would hold other tools).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Split {
    /// The half fusion weights are chosen on.
    Tune,
    /// The half the choice is reported on.
    Test,
}

impl Split {
    /// The half `qid` belongs to: the top bit of its FNV-1a hash, mixed (the splitmix64
    /// finaliser) because FNV's low bits follow the parity of the bytes. Stable across runs,
    /// platforms and Rust versions, unlike `std`'s hasher.
    pub fn of(qid: &str) -> Split {
        let mut h: u64 = 0xcbf2_9ce4_8422_2325;
        for b in qid.bytes() {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0000_0100_0000_01b3);
        }
        h ^= h >> 30;
        h = h.wrapping_mul(0xbf58_476d_1ce4_e5b9);
        h ^= h >> 27;
        h = h.wrapping_mul(0x94d0_49bb_1331_11eb);
        h ^= h >> 31;
        if h >> 63 == 0 {
            Split::Tune
        } else {
            Split::Test
        }
    }
}

/// Catalog texts embedded per model call when filling the cache: long enough for batches of
/// similar length to form, short enough that an interrupted run keeps most of its work.
const CACHE_CHUNK: usize = 512;

/// Why the benchmark could not run.
#[derive(Debug, thiserror::Error)]
pub enum BenchError {
    #[error(transparent)]
    Catalog(#[from] CatalogError),
    #[error(transparent)]
    Embed(#[from] EmbedError),
    #[error("the token counter (o200k_base) could not load: {0}")]
    Tokenizer(String),
    #[error(transparent)]
    Cache(#[from] CacheError),
    #[error("cannot write {}: {source}", path.display())]
    Write {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{0}")]
    Usage(String),
}

/// Figures for one strategy.
#[derive(Debug, Clone, Serialize)]
pub struct StrategyReport {
    pub strategy: String,
    /// Per k, in the order of `Report::ks`.
    pub recall: Vec<f64>,
    pub complete: Vec<f64>,
    pub ndcg10: f64,
    /// Mean tokens of the top-k definitions, per k.
    pub tokens_top: Vec<f64>,
    /// A whole selection: embedding the query (lexical: none) and ranking the whole catalog.
    pub mean_ms: f64,
    pub p50_ms: f64,
}

/// The whole run.
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    pub catalogs: Vec<String>,
    pub queries_file: String,
    pub tools: usize,
    pub scored_tools: usize,
    pub queries: usize,
    /// Queries left out because they name no relevant tool.
    pub skipped_queries: usize,
    /// Relevant ids that are not in the first catalog (they can never be found).
    pub unknown_relevant: usize,
    /// Distractor tools left out because their id came earlier in the same file.
    pub skipped_duplicates: Vec<SkippedTool>,
    pub match_by: String,
    pub ks: Vec<usize>,
    pub tokens_all: usize,
    /// Building the index: reading cached vectors, embedding the rest, BM25.
    pub index_secs: f64,
    /// Catalog texts run through the model in this run (the others came from the cache).
    pub embedded_tools: usize,
    /// Seconds spent embedding those texts.
    pub embed_secs: f64,
    /// Embedding one query, alone (as the live selector does).
    pub query_embed_p50_ms: f64,
    pub query_embed_mean_ms: f64,
    pub strategies: Vec<StrategyReport>,
}

/// A distractor tool that was not loaded.
#[derive(Debug, Clone, Serialize)]
pub struct SkippedTool {
    pub file: String,
    pub line: usize,
    pub id: String,
}

/// Scores of one ranked list.
#[derive(Debug, Clone, PartialEq)]
pub struct QueryScore {
    /// Per k: share of relevant units in the top k.
    pub recall: Vec<f64>,
    /// Per k: whether every relevant unit is in the top k.
    pub complete: Vec<bool>,
    pub ndcg10: f64,
}

/// Scores `ranked` (tool indices, best first). `unit_of[tool]` is the relevance unit a tool
/// satisfies (its id, or its name, as a number; `None` for distractors); a unit is credited once,
/// however many tools share it.
pub fn score(
    ranked: &[usize],
    unit_of: &[Option<u32>],
    relevant: &HashSet<u32>,
    ks: &[usize],
) -> QueryScore {
    let total = relevant.len().max(1) as f64;
    let mut found = HashSet::new();
    // found_at[r] = units credited within the first r + 1 ranks.
    let mut found_at = Vec::with_capacity(ranked.len());
    let mut dcg = 0.0;
    for (r, &tool) in ranked.iter().enumerate() {
        if let Some(unit) = unit_of.get(tool).copied().flatten()
            && relevant.contains(&unit)
            && found.insert(unit)
            && r < NDCG_DEPTH
        {
            dcg += 1.0 / ((r + 2) as f64).log2();
        }
        found_at.push(found.len());
    }
    let ideal: f64 = (0..relevant.len().min(NDCG_DEPTH))
        .map(|r| 1.0 / ((r + 2) as f64).log2())
        .sum();
    let at = |k: usize| {
        if k == 0 || found_at.is_empty() {
            0
        } else {
            found_at[k.min(found_at.len()) - 1]
        }
    };
    QueryScore {
        recall: ks.iter().map(|&k| at(k) as f64 / total).collect(),
        complete: ks.iter().map(|&k| at(k) == relevant.len()).collect(),
        ndcg10: if ideal > 0.0 { dcg / ideal } else { 0.0 },
    }
}

/// The tools of every catalog (the scored one first) and the queries, as the benchmark loads
/// them.
#[derive(Debug)]
pub struct Loaded {
    pub tools: Vec<Tool>,
    /// How many of `tools`, from the start, belong to the scored catalog.
    pub scored_tools: usize,
    pub skipped_duplicates: Vec<SkippedTool>,
    pub queries: Vec<Query>,
}

/// The tools of several catalog files, in order.
#[derive(Debug)]
pub struct Catalogs {
    pub tools: Vec<Tool>,
    /// How many tools each file gave (the first is the scored catalog).
    pub counts: Vec<usize>,
    /// Distractor lines left out because their id came earlier in the same file.
    pub skipped: Vec<SkippedTool>,
}

/// The tools of `paths` (the scored catalog first, strict; distractor catalogs keep the first of
/// repeated ids).
pub fn load_catalogs(paths: &[PathBuf]) -> Result<Catalogs, BenchError> {
    let Some((primary, distractors)) = paths.split_first() else {
        return Err(BenchError::Usage("at least one --catalog is needed".into()));
    };
    let mut tools: Vec<Tool> = catalog::load_catalog(primary)?;
    let mut counts = vec![tools.len()];
    let mut skipped_duplicates = Vec::new();
    for path in distractors {
        let (more, skipped) = catalog::load_catalog_with(path, Duplicates::KeepFirst)?;
        counts.push(more.len());
        tools.extend(more);
        skipped_duplicates.extend(skipped.into_iter().map(|s| SkippedTool {
            file: path.display().to_string(),
            line: s.line,
            id: s.id,
        }));
    }
    Ok(Catalogs {
        tools,
        counts,
        skipped: skipped_duplicates,
    })
}

/// Relevance units: a number per id (or, matching by name, per name) of the first `scored`
/// tools. Returns each tool's unit (`None` for distractors) and each scored id's unit.
pub fn relevance_units(
    tools: &[Tool],
    scored: usize,
    match_by: MatchBy,
) -> (Vec<Option<u32>>, HashMap<String, u32>) {
    let mut units: HashMap<&str, u32> = HashMap::new();
    let mut unit_of = vec![None; tools.len()];
    let mut id_unit = HashMap::new();
    for (i, tool) in tools[..scored.min(tools.len())].iter().enumerate() {
        let key = match match_by {
            MatchBy::Id => tool.id.as_str(),
            MatchBy::Name => tool.name.as_str(),
        };
        let next = units.len() as u32;
        let unit = *units.entry(key).or_insert(next);
        unit_of[i] = Some(unit);
        id_unit.insert(tool.id.clone(), unit);
    }
    (unit_of, id_unit)
}

/// Loads the catalogs and queries of `config` (see [`load_catalogs`]).
pub fn load(config: &BenchConfig) -> Result<Loaded, BenchError> {
    let Catalogs {
        tools,
        counts,
        skipped: skipped_duplicates,
    } = load_catalogs(&config.catalogs)?;
    let scored_tools = counts[0];
    let mut queries = catalog::load_queries(&config.queries)?;
    if let Some(split) = config.split {
        queries.retain(|q| Split::of(&q.qid) == split);
    }
    if let Some(limit) = config.limit {
        queries.truncate(limit);
    }
    if let Some(sample) = config.sample {
        queries = spread(queries, sample);
    }
    Ok(Loaded {
        tools,
        scored_tools,
        skipped_duplicates,
        queries,
    })
}

/// `n` items spread evenly over `items` (the first, then every `len / n`-th), in order.
pub fn spread<T>(items: Vec<T>, n: usize) -> Vec<T> {
    let len = items.len();
    if n >= len {
        return items;
    }
    // Items j · len / n for j in 0..n: strictly increasing because len > n.
    let mut next = 0;
    items
        .into_iter()
        .enumerate()
        .filter(|&(i, _)| {
            let keep = next < n && i == next * len / n;
            if keep {
                next += 1;
            }
            keep
        })
        .map(|(_, x)| x)
        .collect()
}

/// Writes the exact texts the benchmark embeds, as JSON Lines: `{"kind":"tool","id","text"}` for
/// every tool of every catalog, then `{"kind":"query","qid","text"}` for every query, so another
/// implementation (`scripts/compare-embedder`) can embed the same inputs. Returns the counts.
pub fn dump_texts(config: &BenchConfig, out: &Path) -> Result<(usize, usize), BenchError> {
    let loaded = load(config)?;
    let write_err = |source| BenchError::Write {
        path: out.to_owned(),
        source,
    };
    let file = std::fs::File::create(out).map_err(write_err)?;
    let mut w = std::io::BufWriter::new(file);
    for tool in &loaded.tools {
        let line =
            serde_json::json!({"kind": "tool", "id": tool.id, "text": tool.retrieval_text()});
        writeln!(w, "{line}").map_err(write_err)?;
    }
    for q in &loaded.queries {
        let line = serde_json::json!({"kind": "query", "qid": q.qid, "text": q.query});
        writeln!(w, "{line}").map_err(write_err)?;
    }
    w.flush().map_err(write_err)?;
    Ok((loaded.tools.len(), loaded.queries.len()))
}

/// Vectors for `texts`: from `cache` where it has them, the rest embedded longest first in
/// large batches (and stored). Returns the vectors and how many texts were embedded.
pub fn embed_catalog(
    embedder: &Embedder,
    cache: Option<&EmbeddingCache>,
    texts: &[&str],
) -> Result<(Vec<Vec<f32>>, usize), BenchError> {
    let Some(cache) = cache else {
        return Ok((embedder.embed(texts)?, texts.len()));
    };
    let mut out: Vec<Option<Vec<f32>>> = texts.iter().map(|t| cache.get(t)).collect();
    let mut missing: Vec<usize> = (0..texts.len()).filter(|&i| out[i].is_none()).collect();
    // Sorted by length across the whole catalog, so each chunk is one or two uniform batches;
    // the embedder sorts within a call, but a chunk of mixed lengths would still pad.
    let counts = embedder.token_counts(&missing.iter().map(|&i| texts[i]).collect::<Vec<_>>())?;
    let count_of: HashMap<usize, usize> = missing.iter().copied().zip(counts).collect();
    missing.sort_by_key(|i| (std::cmp::Reverse(count_of.get(i).copied().unwrap_or(0)), *i));
    for chunk in missing.chunks(CACHE_CHUNK) {
        let batch: Vec<&str> = chunk.iter().map(|&i| texts[i]).collect();
        let vectors = embedder.embed(&batch)?;
        let entries: Vec<(&str, &[f32])> = batch
            .iter()
            .copied()
            .zip(vectors.iter().map(Vec::as_slice))
            .collect();
        // A cache that cannot be written costs the next run time, not this run its figures.
        if let Err(err) = cache.insert(&entries) {
            tracing::warn!("embedding cache not written: {err}");
        }
        for (&i, v) in chunk.iter().zip(vectors) {
            out[i] = Some(v);
        }
    }
    let embedded = missing.len();
    Ok((
        out.into_iter().map(Option::unwrap_or_default).collect(),
        embedded,
    ))
}

/// Runs the benchmark.
pub fn run(config: &BenchConfig) -> Result<Report, BenchError> {
    let mut ks = config.ks.clone();
    ks.sort_unstable();
    ks.dedup();
    ks.retain(|&k| k > 0);
    if ks.is_empty() {
        return Err(BenchError::Usage(
            "--k needs at least one positive k".into(),
        ));
    }
    let Loaded {
        tools,
        scored_tools,
        skipped_duplicates,
        queries,
    } = load(config)?;

    let (unit_of, id_unit) = relevance_units(&tools, scored_tools, config.match_by);
    // Past every known unit: ids not in the catalog each get one no tool has.
    let mut next_unknown = id_unit.values().max().map_or(0, |u| u + 1);
    let mut unknown_relevant = 0;
    let mut skipped_queries = 0;
    let mut labelled: Vec<(&str, HashSet<u32>)> = Vec::new();
    for q in &queries {
        if q.relevant.is_empty() {
            skipped_queries += 1;
            continue;
        }
        let mut rel = HashSet::new();
        for id in &q.relevant {
            match id_unit.get(id.as_str()) {
                Some(&u) => {
                    rel.insert(u);
                }
                None => {
                    // Still relevant, never findable: dropping it would flatter the figures.
                    unknown_relevant += 1;
                    rel.insert(next_unknown);
                    next_unknown += 1;
                }
            }
        }
        labelled.push((q.query.as_str(), rel));
    }

    let bpe = tiktoken_rs::o200k_base().map_err(|e| BenchError::Tokenizer(e.to_string()))?;
    let tokens: Vec<usize> = tools
        .iter()
        .map(|t| bpe.encode_ordinary(&t.definition_json()).len())
        .collect();
    let tokens_all = tokens.iter().sum();

    let spec = ModelSpec::default();
    let embedder = Embedder::load(spec.clone())?;
    let cache = match &config.cache_dir {
        Some(dir) => Some(EmbeddingCache::open(dir, &spec)?),
        None => None,
    };
    let texts: Vec<String> = tools.iter().map(Tool::retrieval_text).collect();
    let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
    let start = Instant::now();
    let (vectors, embedded_tools) = embed_catalog(&embedder, cache.as_ref(), &refs)?;
    let embed_secs = start.elapsed().as_secs_f64();
    let index = Index::from_vectors(vectors, &texts);
    let index_secs = start.elapsed().as_secs_f64();

    // Each query once, alone, timed: the same vector then serves every strategy. The hybrid
    // also embeds the query's clauses (one more call, timed apart and added to its selections).
    let needs_vectors =
        config.strategies.iter().any(|s| s.uses_embeddings()) || !config.fusions.is_empty();
    let needs_clauses =
        config.strategies.contains(&Strategy::Hybrid) || config.fusions.iter().any(|f| f.clauses);
    let mut query_vectors: Vec<Vec<Vec<f32>>> = Vec::with_capacity(labelled.len());
    let mut embed_ms = Vec::with_capacity(labelled.len());
    let mut clause_ms = Vec::with_capacity(labelled.len());
    if needs_vectors {
        for (query, _) in &labelled {
            let start = Instant::now();
            let vector = embedder
                .embed(&[query])?
                .into_iter()
                .next()
                .unwrap_or_default();
            embed_ms.push(start.elapsed().as_secs_f64() * 1000.0);
            let mut vectors = vec![vector];
            let parts = if needs_clauses {
                clauses(query)
            } else {
                Vec::new()
            };
            let start = Instant::now();
            if !parts.is_empty() {
                let refs: Vec<&str> = parts.iter().map(String::as_str).collect();
                vectors.extend(embedder.embed(&refs)?);
            }
            clause_ms.push(start.elapsed().as_secs_f64() * 1000.0);
            query_vectors.push(vectors);
        }
    }

    let depth = ks
        .iter()
        .copied()
        .max()
        .unwrap_or(NDCG_DEPTH)
        .max(NDCG_DEPTH);
    let mut strategies = Vec::new();
    for &strategy in &config.strategies {
        let mut tally = Tally::new(ks.len());
        for (qi, (query, rel)) in labelled.iter().enumerate() {
            let vectors: Vec<&[f32]> = query_vectors
                .get(qi)
                .map(|v| v.iter().map(Vec::as_slice).collect())
                .unwrap_or_default();
            let start = Instant::now();
            let mut ranked = index.rank_with_clauses(query, &vectors, strategy);
            ranked.truncate(depth);
            let rank_ms = start.elapsed().as_secs_f64() * 1000.0;
            let embed = match strategy {
                Strategy::Lexical => 0.0,
                Strategy::Hybrid => {
                    embed_ms.get(qi).copied().unwrap_or(0.0)
                        + clause_ms.get(qi).copied().unwrap_or(0.0)
                }
                Strategy::Dense | Strategy::Rrf => embed_ms.get(qi).copied().unwrap_or(0.0),
            };
            tally.add(&ranked, &unit_of, rel, &ks, &tokens, embed + rank_ms);
        }
        strategies.push(tally.report(strategy.name().to_owned(), labelled.len()));
    }
    strategies.extend(measure_fusions(
        &config.fusions,
        &index,
        &labelled,
        &query_vectors,
        &unit_of,
        &ks,
        &tokens,
    ));
    let (query_embed_mean_ms, query_embed_p50_ms) = mean_p50(&mut embed_ms);

    Ok(Report {
        catalogs: config
            .catalogs
            .iter()
            .map(|p| p.display().to_string())
            .collect(),
        queries_file: config.queries.display().to_string(),
        tools: tools.len(),
        scored_tools,
        queries: labelled.len(),
        skipped_queries,
        unknown_relevant,
        skipped_duplicates,
        match_by: match config.match_by {
            MatchBy::Id => "id",
            MatchBy::Name => "name",
        }
        .to_owned(),
        ks,
        tokens_all,
        index_secs,
        embedded_tools,
        embed_secs,
        query_embed_p50_ms,
        query_embed_mean_ms,
        strategies,
    })
}

/// Figures for each of `fusions` over the same query vectors (`query_vectors[q]`: the request's,
/// then its clauses'). The dense and BM25 scores of a query are computed once for every fusion;
/// times are of the fusion and ordering alone, without embedding.
fn measure_fusions(
    fusions: &[Fusion],
    index: &Index,
    labelled: &[(&str, HashSet<u32>)],
    query_vectors: &[Vec<Vec<f32>>],
    unit_of: &[Option<u32>],
    ks: &[usize],
    tokens: &[usize],
) -> Vec<StrategyReport> {
    let depth = ks.iter().copied().max().unwrap_or(0).max(NDCG_DEPTH);
    let mut tallies: Vec<Tally> = fusions.iter().map(|_| Tally::new(ks.len())).collect();
    for (qi, (query, rel)) in labelled.iter().enumerate() {
        let vectors: Vec<&[f32]> = query_vectors
            .get(qi)
            .map(|v| v.iter().map(Vec::as_slice).collect())
            .unwrap_or_default();
        let with_clauses = max_cosine_scores(&vectors, &index.vectors);
        let plain = max_cosine_scores(&vectors[..vectors.len().min(1)], &index.vectors);
        let lexical = index.bm25.scores(query);
        for (fusion, tally) in fusions.iter().zip(&mut tallies) {
            let dense = if fusion.clauses {
                &with_clauses
            } else {
                &plain
            };
            let start = Instant::now();
            let mut ranked = order_by_score(&fusion.scores(dense, &lexical));
            ranked.truncate(depth);
            let ms = start.elapsed().as_secs_f64() * 1000.0;
            tally.add(&ranked, unit_of, rel, ks, tokens, ms);
        }
    }
    fusions
        .iter()
        .zip(tallies)
        .map(|(fusion, tally)| tally.report(fusion.name(), labelled.len()))
        .collect()
}

/// One strategy's figures summed over the queries, then averaged by [`Tally::report`].
struct Tally {
    recall: Vec<f64>,
    complete: Vec<f64>,
    tokens_top: Vec<f64>,
    ndcg: f64,
    times: Vec<f64>,
}

impl Tally {
    fn new(ks: usize) -> Self {
        Self {
            recall: vec![0.0; ks],
            complete: vec![0.0; ks],
            tokens_top: vec![0.0; ks],
            ndcg: 0.0,
            times: Vec::new(),
        }
    }

    /// Adds one query's ranking (best first), which took `ms`.
    fn add(
        &mut self,
        ranked: &[usize],
        unit_of: &[Option<u32>],
        relevant: &HashSet<u32>,
        ks: &[usize],
        tokens: &[usize],
        ms: f64,
    ) {
        let s = score(ranked, unit_of, relevant, ks);
        for (j, &k) in ks.iter().enumerate() {
            self.recall[j] += s.recall[j];
            self.complete[j] += f64::from(u8::from(s.complete[j]));
            self.tokens_top[j] += ranked.iter().take(k).map(|&t| tokens[t]).sum::<usize>() as f64;
        }
        self.ndcg += s.ndcg10;
        self.times.push(ms);
    }

    /// The means over `queries` queries.
    fn report(mut self, strategy: String, queries: usize) -> StrategyReport {
        let n = queries.max(1) as f64;
        let (mean_ms, p50_ms) = mean_p50(&mut self.times);
        StrategyReport {
            strategy,
            recall: self.recall.iter().map(|x| x / n).collect(),
            complete: self.complete.iter().map(|x| x / n).collect(),
            ndcg10: self.ndcg / n,
            tokens_top: self.tokens_top.iter().map(|x| x / n).collect(),
            mean_ms,
            p50_ms,
        }
    }
}

/// Mean and median of `times` (sorted in place); zeros when empty.
pub fn mean_p50(times: &mut [f64]) -> (f64, f64) {
    if times.is_empty() {
        return (0.0, 0.0);
    }
    times.sort_by(f64::total_cmp);
    let mean = times.iter().sum::<f64>() / times.len() as f64;
    (mean, times[times.len() / 2])
}

/// The report as a Markdown table, with a line of context above it.
pub fn markdown(report: &Report) -> String {
    let mut out = format!(
        "{} queries ({} skipped, {} unknown relevant ids) over {} tools ({} scored, {} distractors), match by {}; all definitions: {} tokens (o200k_base)\n",
        report.queries,
        report.skipped_queries,
        report.unknown_relevant,
        report.tools,
        report.scored_tools,
        report.tools - report.scored_tools,
        report.match_by,
        report.tokens_all,
    );
    let embedded = if report.embedded_tools == 0 {
        "every tool vector from the cache".to_owned()
    } else {
        format!(
            "embedded {} tools in {:.1} s ({:.1} ms per tool), the rest from the cache",
            report.embedded_tools,
            report.embed_secs,
            report.embed_secs * 1000.0 / report.embedded_tools as f64
        )
    };
    out.push_str(&format!(
        "index: {embedded}; ready in {:.1} s\nembedding one query: p50 {:.1} ms, mean {:.1} ms; ms columns: a whole selection (query embedding + ranking of all {} tools)\n\n",
        report.index_secs, report.query_embed_p50_ms, report.query_embed_mean_ms, report.tools,
    ));
    let mut header = String::from("| strategy |");
    for k in &report.ks {
        header.push_str(&format!(" recall@{k} |"));
    }
    for k in &report.ks {
        header.push_str(&format!(" complete@{k} |"));
    }
    header.push_str(" nDCG@10 |");
    for k in &report.ks {
        header.push_str(&format!(" tokens top-{k} |"));
    }
    header.push_str(" mean ms | p50 ms |\n");
    out.push_str(&header);
    let columns = 3 * report.ks.len() + 3;
    out.push_str("| --- |");
    out.push_str(&" ---: |".repeat(columns));
    out.push('\n');
    for s in &report.strategies {
        out.push_str(&format!("| {} |", s.strategy));
        for x in s.recall.iter().chain(&s.complete) {
            out.push_str(&format!(" {x:.3} |"));
        }
        out.push_str(&format!(" {:.3} |", s.ndcg10));
        for t in &s.tokens_top {
            out.push_str(&format!(" {t:.0} |"));
        }
        out.push_str(&format!(" {:.2} | {:.2} |\n", s.mean_ms, s.p50_ms));
    }
    out
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    /// The halves of "q0", "q1", "q2", "metatool-17", "seal-3", as first computed.
    const FIXED_SPLITS: [Split; 5] = [
        Split::Test,
        Split::Tune,
        Split::Tune,
        Split::Tune,
        Split::Test,
    ];

    #[test]
    fn recall_complete_and_ndcg_on_a_hand_made_ranking() {
        // Tools 0..6; tools 1 and 4 share unit 1 (same name); tool 5 is a distractor.
        let unit_of = [Some(0), Some(1), Some(2), Some(3), Some(1), None];
        let relevant: HashSet<u32> = [1, 3].into();
        // Ranked: distractor, unit 1, unit 1 again (no double credit), unit 3.
        let ranked = [5, 1, 4, 3, 0, 2];
        let s = score(&ranked, &unit_of, &relevant, &[1, 2, 4]);
        assert_eq!(s.recall, [0.0, 0.5, 1.0]);
        assert_eq!(s.complete, [false, false, true]);
        // DCG = 1/log2(3) + 1/log2(5); ideal = 1/log2(2) + 1/log2(3).
        let dcg = 1.0 / 3f64.log2() + 1.0 / 5f64.log2();
        let ideal = 1.0 + 1.0 / 3f64.log2();
        assert!((s.ndcg10 - dcg / ideal).abs() < 1e-12, "{}", s.ndcg10);

        // A relevant unit no tool satisfies caps recall below 1.
        let relevant: HashSet<u32> = [0, 99].into();
        let s = score(&ranked, &unit_of, &relevant, &[6]);
        assert_eq!(s.recall, [0.5]);
        assert_eq!(s.complete, [false]);
    }

    #[test]
    fn a_k_beyond_the_ranking_counts_what_was_ranked() {
        let unit_of = [Some(0)];
        let relevant: HashSet<u32> = [0].into();
        let s = score(&[0], &unit_of, &relevant, &[20]);
        assert_eq!(s.recall, [1.0]);
        assert!(s.complete[0]);
        assert!((s.ndcg10 - 1.0).abs() < 1e-12);
    }

    #[test]
    fn the_split_halves_are_disjoint_cover_every_query_and_are_stable() {
        let qids: Vec<String> = (0..2000).map(|i| format!("q{i}")).collect();
        let tune: HashSet<&str> = qids
            .iter()
            .filter(|q| Split::of(q) == Split::Tune)
            .map(String::as_str)
            .collect();
        let test: HashSet<&str> = qids
            .iter()
            .filter(|q| Split::of(q) == Split::Test)
            .map(String::as_str)
            .collect();
        assert!(tune.is_disjoint(&test));
        assert_eq!(tune.len() + test.len(), qids.len());
        // Sequential ids (as files number them) split about evenly.
        assert!((900..1100).contains(&tune.len()), "{}", tune.len());
        // The same qid always lands in the same half: these are fixed, so a change of the hash
        // (which would silently mix the halves of earlier runs) fails here.
        let fixed: Vec<Split> = ["q0", "q1", "q2", "metatool-17", "seal-3"]
            .iter()
            .map(|q| Split::of(q))
            .collect();
        assert_eq!(fixed, FIXED_SPLITS);
    }

    #[test]
    fn loading_a_split_keeps_only_its_half_before_sampling() {
        let dir = tempfile::tempdir().unwrap();
        let catalog = dir.path().join("catalog.jsonl");
        std::fs::write(
            &catalog,
            r#"{"id":"a","server":"s","name":"a","description":"d","inputSchema":{}}"#,
        )
        .unwrap();
        let queries = dir.path().join("queries.jsonl");
        let lines: Vec<String> = (0..40)
            .map(|i| format!(r#"{{"qid":"q{i}","query":"x","relevant":["a"]}}"#))
            .collect();
        std::fs::write(&queries, lines.join("\n")).unwrap();
        let mut config = BenchConfig {
            catalogs: vec![catalog],
            queries,
            ks: vec![1],
            match_by: MatchBy::Id,
            strategies: Vec::new(),
            limit: None,
            sample: None,
            cache_dir: None,
            split: Some(Split::Tune),
            fusions: Vec::new(),
        };
        let tune: Vec<String> = load(&config)
            .unwrap()
            .queries
            .into_iter()
            .map(|q| q.qid)
            .collect();
        config.split = Some(Split::Test);
        let test: Vec<String> = load(&config)
            .unwrap()
            .queries
            .into_iter()
            .map(|q| q.qid)
            .collect();
        assert_eq!(tune.len() + test.len(), 40);
        assert!(tune.iter().all(|q| !test.contains(q)));
        assert!(tune.iter().all(|q| Split::of(q) == Split::Tune));
        config.sample = Some(5);
        let sampled = load(&config).unwrap().queries;
        assert_eq!(sampled.len(), 5);
        assert!(sampled.iter().all(|q| Split::of(&q.qid) == Split::Test));
    }

    #[test]
    fn spread_takes_an_even_sample() {
        let picked = spread((0..10).collect(), 3);
        assert_eq!(picked.len(), 3);
        assert_eq!(picked[0], 0);
        assert!(picked.windows(2).all(|w| w[1] - w[0] >= 3), "{picked:?}");
        assert_eq!(spread((0..4).collect(), 10), [0, 1, 2, 3]);
        assert_eq!(spread((0..100).collect::<Vec<_>>(), 7).len(), 7);
        assert!(spread((0..5).collect::<Vec<i32>>(), 0).is_empty());
    }

    #[test]
    fn the_markdown_table_has_as_many_columns_in_every_row() {
        let report = Report {
            catalogs: vec!["c".into()],
            queries_file: "q".into(),
            tools: 2,
            scored_tools: 2,
            queries: 1,
            skipped_queries: 0,
            unknown_relevant: 0,
            skipped_duplicates: Vec::new(),
            match_by: "id".into(),
            ks: vec![5, 10],
            tokens_all: 100,
            index_secs: 0.1,
            embedded_tools: 2,
            embed_secs: 0.1,
            query_embed_p50_ms: 1.0,
            query_embed_mean_ms: 1.0,
            strategies: vec![StrategyReport {
                strategy: "dense".into(),
                recall: vec![1.0, 1.0],
                complete: vec![1.0, 1.0],
                ndcg10: 1.0,
                tokens_top: vec![10.0, 20.0],
                mean_ms: 1.0,
                p50_ms: 1.0,
            }],
        };
        let text = markdown(&report);
        let rows: Vec<usize> = text
            .lines()
            .filter(|l| l.starts_with('|'))
            .map(|l| l.matches('|').count())
            .collect();
        assert_eq!(rows.len(), 3);
        assert!(rows.iter().all(|&n| n == rows[0]), "{text}");
    }
}
