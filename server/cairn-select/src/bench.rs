//! The tool-selection benchmark behind `cairn bench select`: load a catalog (plus optional
//! distractor catalogs) and labelled queries, rank every query under each strategy, and measure
//! recall@k, complete@k, nDCG@10, the tokens of the selected definitions, and time per query.
//!
//! Relevance is judged only against the first catalog: distractors exist to make selection
//! harder, and a distractor that happens to share an id or name with a labelled tool must not
//! count as a hit.

use std::collections::{HashMap, HashSet};
use std::path::PathBuf;
use std::time::Instant;

use serde::Serialize;

use crate::catalog::{self, CatalogError, Duplicates, Tool};
use crate::embed::{EmbedError, Embedder, ModelSpec};
use crate::rank::{Index, Strategy};

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
}

/// Why the benchmark could not run.
#[derive(Debug, thiserror::Error)]
pub enum BenchError {
    #[error(transparent)]
    Catalog(#[from] CatalogError),
    #[error(transparent)]
    Embed(#[from] EmbedError),
    #[error("the token counter (o200k_base) could not load: {0}")]
    Tokenizer(String),
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
    pub index_secs: f64,
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

/// Runs the benchmark.
pub fn run(config: &BenchConfig) -> Result<Report, BenchError> {
    let Some((primary, distractors)) = config.catalogs.split_first() else {
        return Err(BenchError::Usage("at least one --catalog is needed".into()));
    };
    let mut ks = config.ks.clone();
    ks.sort_unstable();
    ks.dedup();
    ks.retain(|&k| k > 0);
    if ks.is_empty() {
        return Err(BenchError::Usage(
            "--k needs at least one positive k".into(),
        ));
    }

    let mut tools: Vec<Tool> = catalog::load_catalog(primary)?;
    let scored_tools = tools.len();
    let mut skipped_duplicates = Vec::new();
    for path in distractors {
        let (more, skipped) = catalog::load_catalog_with(path, Duplicates::KeepFirst)?;
        tools.extend(more);
        skipped_duplicates.extend(skipped.into_iter().map(|s| SkippedTool {
            file: path.display().to_string(),
            line: s.line,
            id: s.id,
        }));
    }
    let mut queries = catalog::load_queries(&config.queries)?;
    if let Some(limit) = config.limit {
        queries.truncate(limit);
    }

    // Relevance units: a number per id (or per name) of the first catalog.
    let mut units: HashMap<String, u32> = HashMap::new();
    let mut unit_of: Vec<Option<u32>> = vec![None; tools.len()];
    let mut id_unit: HashMap<&str, u32> = HashMap::new();
    for (i, tool) in tools[..scored_tools].iter().enumerate() {
        let key = match config.match_by {
            MatchBy::Id => &tool.id,
            MatchBy::Name => &tool.name,
        };
        let next = units.len() as u32;
        let unit = *units.entry(key.clone()).or_insert(next);
        unit_of[i] = Some(unit);
        id_unit.insert(&tool.id, unit);
    }
    let mut next_unknown = units.len() as u32;
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

    let embedder = Embedder::load(ModelSpec::default())?;
    let texts: Vec<String> = tools.iter().map(Tool::retrieval_text).collect();
    let start = Instant::now();
    let index = Index::build(&embedder, &texts)?;
    let index_secs = start.elapsed().as_secs_f64();

    let depth = ks
        .iter()
        .copied()
        .max()
        .unwrap_or(NDCG_DEPTH)
        .max(NDCG_DEPTH);
    let n = labelled.len().max(1) as f64;
    let mut strategies = Vec::new();
    for &strategy in &config.strategies {
        let mut recall = vec![0.0; ks.len()];
        let mut complete = vec![0.0; ks.len()];
        let mut tokens_top = vec![0.0; ks.len()];
        let mut ndcg = 0.0;
        let mut times = Vec::with_capacity(labelled.len());
        for (query, rel) in &labelled {
            let start = Instant::now();
            let ranked = index.top_k(&embedder, query, strategy, depth)?;
            times.push(start.elapsed().as_secs_f64() * 1000.0);
            let s = score(&ranked, &unit_of, rel, &ks);
            for (j, &k) in ks.iter().enumerate() {
                recall[j] += s.recall[j];
                complete[j] += f64::from(u8::from(s.complete[j]));
                tokens_top[j] += ranked.iter().take(k).map(|&t| tokens[t]).sum::<usize>() as f64;
            }
            ndcg += s.ndcg10;
        }
        times.sort_by(f64::total_cmp);
        strategies.push(StrategyReport {
            strategy: strategy.name().to_owned(),
            recall: recall.iter().map(|x| x / n).collect(),
            complete: complete.iter().map(|x| x / n).collect(),
            ndcg10: ndcg / n,
            tokens_top: tokens_top.iter().map(|x| x / n).collect(),
            mean_ms: times.iter().sum::<f64>() / n,
            p50_ms: times.get(times.len() / 2).copied().unwrap_or(0.0),
        });
    }

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
        strategies,
    })
}

/// The report as a Markdown table, with a line of context above it.
pub fn markdown(report: &Report) -> String {
    let mut out = format!(
        "{} queries ({} skipped, {} unknown relevant ids) over {} tools ({} scored, {} distractors), match by {}; embedding the catalog took {:.1} s; all definitions: {} tokens (o200k_base)\n\n",
        report.queries,
        report.skipped_queries,
        report.unknown_relevant,
        report.tools,
        report.scored_tools,
        report.tools - report.scored_tools,
        report.match_by,
        report.index_secs,
        report.tokens_all,
    );
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
    use super::*;

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
