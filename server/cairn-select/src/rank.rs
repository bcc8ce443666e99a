//! Ranking tools for a request: dense (cosine of sentence embeddings), lexical (BM25), and their
//! fusion.
//!
//! The default, [`Strategy::Hybrid`], fuses *scores* ([`Fusion::DEFAULT`]): each list is
//! standardised over the catalog (z-scores: minus the mean, over the standard deviation), which
//! puts cosines and BM25 on one scale, and the lexical list is added at weight
//! [`LEXICAL_WEIGHT`] times its *standout* ([`lexical_standout`]: how far BM25's best score stands
//! above its tenth, as a share of the best). BM25 thus speaks up when a few tools share the
//! request's rarer words and keeps quiet when many share them about equally, which is what a
//! large catalog of real MCP tools does to a paraphrased request. The dense score of a tool is its
//! best cosine over the request and the request's clauses ([`clauses`]), so a request that needs
//! several tools finds each through the clause that names it.
//!
//! Why this one (docs/benchmarks.md, "Choosing the fusion"; `scripts/tune-fusion` re-runs it):
//! sixteen candidates ([`Fusion::candidates`]: z-score sums at lexical weights 0 to 1, with and
//! without clauses, RRF plain and weighted, the max of z-scores, and the adaptive weight) were
//! measured on the `tune` half of every shared set and of cairn's own, each alone and with the
//! 5,013 Docker-registry tools as distractors. The pick is the one whose worst loss of recall@50
//! against the best candidate on a set is smallest: 0.015 (the fixed weight 0.5 used before lost
//! 0.037, on MetaTool with the distractors; RRF lost 0.04 to 0.08 on the replica with them).
//! A fixed weight cannot serve both kinds of set: requests that name their tools (Seal-Tools,
//! cairn's) want BM25 loud, paraphrases among thousands of real tools (MetaTool + Docker) want it
//! quiet; the standout tells the two apart per request.
//! Equal-weight RRF stays available as [`Strategy::Rrf`], and [`weighted_rrf`] for callers that
//! only have ranks.

use crate::bm25::Bm25Index;
use crate::embed::{EmbedError, Embedder};

/// The RRF constant from Cormack et al. (2009): it damps the weight of the very first ranks so
/// one list cannot overrule the other with a single confident hit.
pub const RRF_K: f32 = 60.0;

/// The largest weight of the standardised BM25 score against the standardised dense score
/// (weight 1) in [`Fusion::DEFAULT`], reached when BM25's best score stands out fully (see
/// [`lexical_standout`]). Chosen on the tune halves with the rest of the fusion: 0.75 lost least
/// on the worst set; 1.0 and 1.5 lost more on MetaTool with the distractors.
pub const LEXICAL_WEIGHT: f32 = 0.75;

/// How to rank.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub enum Strategy {
    Dense,
    Lexical,
    /// [`Fusion::DEFAULT`]: standardised dense (over the request and its clauses) plus
    /// standardised lexical at a weight that follows how much BM25's best stands out.
    #[default]
    Hybrid,
    /// Equal-weight reciprocal rank fusion of dense and lexical (the first hybrid, kept for
    /// comparison).
    Rrf,
}

impl Strategy {
    pub const ALL: [Strategy; 4] = [
        Strategy::Dense,
        Strategy::Lexical,
        Strategy::Rrf,
        Strategy::Hybrid,
    ];

    /// Whether ranking needs the query's embedding (everything but [`Strategy::Lexical`]).
    pub fn uses_embeddings(self) -> bool {
        self != Strategy::Lexical
    }

    pub fn name(self) -> &'static str {
        match self {
            Strategy::Dense => "dense",
            Strategy::Lexical => "lexical",
            Strategy::Hybrid => "hybrid",
            Strategy::Rrf => "rrf",
        }
    }
}

/// Dot products of `query` with every row of `vectors` (cosine, both being normalised).
pub fn cosine_scores(query: &[f32], vectors: &[Vec<f32>]) -> Vec<f32> {
    vectors
        .iter()
        .map(|v| v.iter().zip(query).map(|(a, b)| a * b).sum())
        .collect()
}

/// All indices, best score first (ties by index, so the order is stable).
pub fn dense_rank(query: &[f32], vectors: &[Vec<f32>]) -> Vec<usize> {
    let scores = cosine_scores(query, vectors);
    let mut order: Vec<usize> = (0..scores.len()).collect();
    order.sort_by(|&a, &b| scores[b].total_cmp(&scores[a]).then(a.cmp(&b)));
    order
}

/// Cosine scores of every tool for several query vectors (a request and its clauses): per tool,
/// the best of them. With one vector this is [`cosine_scores`].
pub fn max_cosine_scores(queries: &[&[f32]], vectors: &[Vec<f32>]) -> Vec<f32> {
    let mut best = vec![f32::NEG_INFINITY; vectors.len()];
    for query in queries {
        for (b, s) in best.iter_mut().zip(cosine_scores(query, vectors)) {
            *b = b.max(s);
        }
    }
    best
}

/// Standardises `scores` to mean 0 and standard deviation 1 over the catalog. Non-finite
/// entries (a tool with no vector yet, say) count as average: they get 0 and are left out of the
/// mean and deviation. A list with no spread (BM25 when no query word occurs) is all zeros, so it
/// adds nothing to a fusion.
pub fn z_scores(scores: &[f32]) -> Vec<f32> {
    let finite = scores.iter().filter(|s| s.is_finite());
    let n = finite.clone().count();
    if n == 0 {
        return vec![0.0; scores.len()];
    }
    let mean = finite.clone().map(|&s| f64::from(s)).sum::<f64>() / n as f64;
    let var = finite.map(|&s| (f64::from(s) - mean).powi(2)).sum::<f64>() / n as f64;
    let sd = var.sqrt();
    if sd < 1e-9 {
        return vec![0.0; scores.len()];
    }
    scores
        .iter()
        .map(|&s| {
            if s.is_finite() {
                ((f64::from(s) - mean) / sd) as f32
            } else {
                0.0
            }
        })
        .collect()
}

/// Weighted sum of standardised score lists (all of the catalog's length): the fused score of
/// tool i is the sum over lists of `weight * z_scores(list)[i]`.
pub fn z_fusion(lists: &[(&[f32], f32)]) -> Vec<f32> {
    let n = lists.first().map_or(0, |(l, _)| l.len());
    let mut fused = vec![0.0f32; n];
    for (list, weight) in lists {
        for (f, z) in fused.iter_mut().zip(z_scores(list)) {
            *f += weight * z;
        }
    }
    fused
}

/// How a [`Fusion`] combines the dense and the lexical list.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum FusionMethod {
    /// `z(dense) + w · z(lexical)`: each list speaks as loudly as its score stands out.
    ZSum,
    /// `max(z(dense), w · z(lexical))`: a tool comes in when either list is sure of it, and
    /// agreement earns nothing extra.
    ZMax,
    /// [`FusionMethod::ZSum`] with `w` scaled by how far BM25's best score stands above its
    /// tenth ([`lexical_standout`]): when many tools share the request's words, BM25 says little
    /// and is turned down.
    ZAdaptive,
    /// Weighted reciprocal rank fusion over the two rankings: `1 / (k + r_dense) + w / (k +
    /// r_lexical)`; a tool no query word occurs in gets nothing from the lexical list.
    Rrf,
}

/// One way to fuse the dense and the lexical scores of a request: a method and its parameters,
/// so candidates are data (see [`Fusion::candidates`]) and the default is one of them.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Fusion {
    pub method: FusionMethod,
    /// The weight of the lexical list against the dense list's 1.
    pub lexical_weight: f32,
    /// Whether the dense score is the best cosine over the request *and its [`clauses`]*
    /// (otherwise the request alone).
    pub clauses: bool,
    /// The RRF constant; only [`FusionMethod::Rrf`] reads it.
    pub rrf_k: f32,
}

/// The BM25 rank whose score [`lexical_standout`] compares the best one with.
const STANDOUT_RANK: usize = 10;

impl Fusion {
    /// The fusion [`Strategy::Hybrid`] and the live selector use: see the module docs for why.
    pub const DEFAULT: Fusion = Fusion {
        method: FusionMethod::ZAdaptive,
        lexical_weight: LEXICAL_WEIGHT,
        clauses: true,
        rrf_k: RRF_K,
    };

    /// The default before 2026-12-02 (kept to compare with): z-sum at lexical weight 0.5.
    pub const PREVIOUS: Fusion = Fusion::z_sum(0.5);

    /// Z-score sum at lexical weight `w`, dense over the request and its clauses.
    pub const fn z_sum(w: f32) -> Fusion {
        Fusion {
            method: FusionMethod::ZSum,
            lexical_weight: w,
            clauses: true,
            rrf_k: RRF_K,
        }
    }

    /// The candidates `cairn bench select --tune` measures (the default among them).
    pub fn candidates() -> Vec<Fusion> {
        let with = |method, lexical_weight, clauses, rrf_k| Fusion {
            method,
            lexical_weight,
            clauses,
            rrf_k,
        };
        use FusionMethod::{Rrf, ZAdaptive, ZMax, ZSum};
        vec![
            with(ZSum, 0.0, true, RRF_K),
            with(ZSum, 0.25, true, RRF_K),
            with(ZSum, 0.5, true, RRF_K),
            with(ZSum, 0.75, true, RRF_K),
            with(ZSum, 1.0, true, RRF_K),
            with(ZSum, 0.5, false, RRF_K),
            with(Rrf, 1.0, true, RRF_K),
            with(Rrf, 1.0, false, RRF_K),
            with(Rrf, 0.5, true, RRF_K),
            with(Rrf, 0.75, true, RRF_K),
            with(Rrf, 1.0, true, 20.0),
            with(ZMax, 0.75, true, RRF_K),
            with(ZMax, 1.0, true, RRF_K),
            with(ZAdaptive, 0.75, true, RRF_K),
            with(ZAdaptive, 1.0, true, RRF_K),
            with(ZAdaptive, 1.5, true, RRF_K),
        ]
    }

    /// A short name for tables, e.g. `zsum w=0.50`, `rrf w=1.00 k=60 noclauses`.
    pub fn name(&self) -> String {
        let method = match self.method {
            FusionMethod::ZSum => "zsum",
            FusionMethod::ZMax => "zmax",
            FusionMethod::ZAdaptive => "zadapt",
            FusionMethod::Rrf => "rrf",
        };
        let mut name = format!("{method} w={:.2}", self.lexical_weight);
        if self.method == FusionMethod::Rrf {
            name.push_str(&format!(" k={}", self.rrf_k));
        }
        if !self.clauses {
            name.push_str(" noclauses");
        }
        name
    }

    /// The fused score of every tool from its dense score (cosine; non-finite for a tool with no
    /// vector yet, which counts as average, or last for RRF) and its BM25 score. Higher is
    /// better; order with [`order_by_score`]. Which dense scores to pass (with or without the
    /// clauses) is [`Fusion::clauses`]'s to say.
    pub fn scores(&self, dense: &[f32], lexical: &[f32]) -> Vec<f32> {
        let w = self.lexical_weight;
        match self.method {
            FusionMethod::ZSum => z_fusion(&[(dense, 1.0), (lexical, w)]),
            FusionMethod::ZAdaptive => {
                z_fusion(&[(dense, 1.0), (lexical, w * lexical_standout(lexical))])
            }
            FusionMethod::ZMax => z_scores(dense)
                .into_iter()
                .zip(z_scores(lexical))
                .map(|(d, l)| d.max(w * l))
                .collect(),
            FusionMethod::Rrf => {
                let mut fused = vec![0.0f32; dense.len()];
                for (r, &i) in order_by_score(dense).iter().enumerate() {
                    if dense[i].is_finite() {
                        fused[i] += 1.0 / (self.rrf_k + r as f32 + 1.0);
                    }
                }
                for (r, &i) in order_by_score(lexical).iter().enumerate() {
                    if lexical[i] > 0.0 {
                        fused[i] += w / (self.rrf_k + r as f32 + 1.0);
                    }
                }
                fused
            }
        }
    }
}

/// How far BM25's best score stands above its [`STANDOUT_RANK`]-th, as a share of the best: 1
/// when few tools share the request's words (BM25 points somewhere), near 0 when many share them
/// about equally (it points nowhere), 0 when none does.
pub fn lexical_standout(lexical: &[f32]) -> f32 {
    let mut top: Vec<f32> = lexical
        .iter()
        .copied()
        .filter(|s| s.is_finite() && *s > 0.0)
        .collect();
    top.sort_by(|a, b| b.total_cmp(a));
    match top.first() {
        Some(&best) => (best - top.get(STANDOUT_RANK - 1).copied().unwrap_or(0.0)) / best,
        None => 0.0,
    }
}

/// The default hybrid score of every tool: [`Fusion::DEFAULT`] of the dense scores (see
/// [`max_cosine_scores`]) and the BM25 scores of the request. Higher is better; order with
/// [`order_by_score`]. The bench's [`Strategy::Hybrid`] and the live selector both score through
/// this one function.
pub fn hybrid_scores(dense: &[f32], lexical: &[f32]) -> Vec<f32> {
    Fusion::DEFAULT.scores(dense, lexical)
}

/// All indices, best score first (ties by index, so the order is stable).
pub fn order_by_score(scores: &[f32]) -> Vec<usize> {
    let mut order: Vec<usize> = (0..scores.len()).collect();
    order.sort_by(|&a, &b| scores[b].total_cmp(&scores[a]).then(a.cmp(&b)));
    order
}

/// The clauses of a request worth embedding on their own, split at sentence ends, semicolons
/// and the conjunctions that chain steps ("and", "then", "also"); clauses of fewer than three
/// words are dropped, as too short to mean a task. Empty unless there are at least two clauses,
/// since a single one is the request itself.
///
/// A request for several tools embeds as an average of its parts and can sit far from each
/// tool; each clause sits near its own. On Seal-Tools (three in four requests need several
/// tools) this lifted hybrid recall@20 from 0.96 to 0.98; it never lowered another set's.
pub fn clauses(query: &str) -> Vec<String> {
    const SEPARATORS: [&str; 11] = [
        ". ",
        "? ",
        "! ",
        "; ",
        " and then ",
        ", then ",
        " then ",
        ", and ",
        " and ",
        ", also ",
        " also ",
    ];
    let mut parts = vec![query.to_owned()];
    for sep in SEPARATORS {
        parts = parts
            .iter()
            .flat_map(|p| p.split(sep).map(str::to_owned).collect::<Vec<_>>())
            .collect();
    }
    let parts: Vec<String> = parts
        .into_iter()
        .map(|p| p.trim().to_owned())
        .filter(|p| p.split_whitespace().count() >= 3)
        .collect();
    if parts.len() > 1 { parts } else { Vec::new() }
}

/// Weighted reciprocal rank fusion: list `l` with weight `w` gives an item at rank `r` (from 1)
/// `w / (RRF_K + r)`; items are returned by the sum, best first. An item missing from a list
/// gets nothing from it, and items in no list are not returned.
pub fn weighted_rrf(lists: &[(&[usize], f32)], n: usize) -> Vec<usize> {
    let mut score = vec![0.0f32; n];
    let mut seen = vec![false; n];
    for (list, weight) in lists {
        for (r, &i) in list.iter().enumerate() {
            if i < n {
                score[i] += weight / (RRF_K + r as f32 + 1.0);
                seen[i] = true;
            }
        }
    }
    let mut order: Vec<usize> = (0..n).filter(|&i| seen[i]).collect();
    order.sort_by(|&a, &b| score[b].total_cmp(&score[a]).then(a.cmp(&b)));
    order
}

/// Reciprocal rank fusion: each list gives an item `1 / (RRF_K + rank)` (rank from 1); items
/// are returned by the sum, best first. An item missing from a list gets nothing from it.
pub fn rrf(lists: &[&[usize]], n: usize) -> Vec<usize> {
    let weighted: Vec<(&[usize], f32)> = lists.iter().map(|&l| (l, 1.0)).collect();
    weighted_rrf(&weighted, n)
}

/// An indexed catalog: one embedding and one BM25 document per tool text.
#[derive(Debug)]
pub struct Index {
    pub vectors: Vec<Vec<f32>>,
    pub bm25: Bm25Index,
}

impl Index {
    /// Embeds and indexes `texts` (the embedder batches them itself).
    pub fn build(embedder: &Embedder, texts: &[String]) -> Result<Self, EmbedError> {
        let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
        Ok(Self::from_vectors(embedder.embed(&refs)?, texts))
    }

    /// Indexes `texts` whose embeddings are already known (`vectors[i]` is `texts[i]`'s).
    pub fn from_vectors(vectors: Vec<Vec<f32>>, texts: &[String]) -> Self {
        Self {
            vectors,
            bm25: Bm25Index::new(texts),
        }
    }

    /// Every tool index, best first, for `query` whose embedding is `vector` (ignored, and may be
    /// empty, for [`Strategy::Lexical`]). [`Strategy::Hybrid`] uses no clauses here; see
    /// [`Self::rank_with_clauses`].
    pub fn rank(&self, query: &str, vector: &[f32], strategy: Strategy) -> Vec<usize> {
        self.rank_with_clauses(query, &[vector], strategy)
    }

    /// Like [`Self::rank`], with `vectors` the embeddings of the request first and then of its
    /// [`clauses`] (only [`Strategy::Hybrid`] looks past the first).
    pub fn rank_with_clauses(
        &self,
        query: &str,
        vectors: &[&[f32]],
        strategy: Strategy,
    ) -> Vec<usize> {
        let first = vectors.first().copied().unwrap_or(&[]);
        match strategy {
            Strategy::Lexical => self.bm25.rank(query),
            Strategy::Dense => dense_rank(first, &self.vectors),
            Strategy::Rrf => {
                let dense = dense_rank(first, &self.vectors);
                let lexical = self.bm25.rank(query);
                rrf(&[&dense, &lexical], self.vectors.len())
            }
            Strategy::Hybrid => self.fused(query, vectors, &Fusion::DEFAULT),
        }
    }

    /// Every tool index, best first, under `fusion`, with `vectors` as for
    /// [`Self::rank_with_clauses`] (the clauses' are ignored unless [`Fusion::clauses`]).
    pub fn fused(&self, query: &str, vectors: &[&[f32]], fusion: &Fusion) -> Vec<usize> {
        let vectors = if fusion.clauses {
            vectors
        } else {
            &vectors[..vectors.len().min(1)]
        };
        let dense = max_cosine_scores(vectors, &self.vectors);
        let lexical = self.bm25.scores(query);
        order_by_score(&fusion.scores(&dense, &lexical))
    }

    /// The indices of the best `k` tools for `query` under `strategy`.
    pub fn top_k(
        &self,
        embedder: &Embedder,
        query: &str,
        strategy: Strategy,
        k: usize,
    ) -> Result<Vec<usize>, EmbedError> {
        let mut texts = vec![query.to_owned()];
        if strategy == Strategy::Hybrid && Fusion::DEFAULT.clauses {
            texts.extend(clauses(query));
        }
        let vectors = if strategy.uses_embeddings() {
            let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
            embedder.embed(&refs)?
        } else {
            Vec::new()
        };
        let refs: Vec<&[f32]> = vectors.iter().map(Vec::as_slice).collect();
        let mut order = self.rank_with_clauses(query, &refs, strategy);
        order.truncate(k);
        Ok(order)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rrf_rewards_agreement_between_lists() {
        // 2 is second in both lists and beats 0 and 3, each first in one list but absent in
        // the other.
        let dense = [0, 2, 1];
        let lexical = [3, 2];
        let fused = rrf(&[&dense, &lexical], 5);
        assert_eq!(fused, [2, 0, 3, 1]);
        // 4 is in neither list, so it is not returned at all.
        assert!(!fused.contains(&4));
    }

    #[test]
    fn weighted_rrf_lets_the_heavier_list_win() {
        let dense = [0, 1];
        let lexical = [1, 0];
        assert_eq!(weighted_rrf(&[(&dense, 1.0), (&lexical, 0.5)], 2), [0, 1]);
        assert_eq!(weighted_rrf(&[(&dense, 0.5), (&lexical, 1.0)], 2), [1, 0]);
    }

    #[test]
    fn z_scores_standardise_and_ignore_missing_or_flat_lists() {
        let z = z_scores(&[1.0, 2.0, 3.0, f32::NEG_INFINITY]);
        assert!(
            (z[0] + z[2]).abs() < 1e-6 && z[1].abs() < 1e-6 && z[3] == 0.0,
            "{z:?}"
        );
        assert!((z[2] - 1.224_744_9).abs() < 1e-5, "{z:?}");
        assert_eq!(z_scores(&[0.0, 0.0]), [0.0, 0.0]);
        assert!(z_scores(&[]).is_empty());
    }

    #[test]
    fn hybrid_scores_follow_dense_unless_lexical_stands_out() {
        // Dense slightly prefers 0; BM25 finds only 1, strongly: 1 wins.
        let dense = [0.50, 0.48, 0.10, 0.12];
        let lexical = [0.0, 9.0, 0.0, 0.0];
        assert_eq!(order_by_score(&hybrid_scores(&dense, &lexical))[0], 1);
        // No query word anywhere: dense order stands.
        let flat = [0.0; 4];
        assert_eq!(order_by_score(&hybrid_scores(&dense, &flat)), [0, 1, 3, 2]);
    }

    #[test]
    fn candidates_are_distinct_and_hold_the_default_and_the_previous_one() {
        let candidates = Fusion::candidates();
        let names: std::collections::HashSet<String> =
            candidates.iter().map(Fusion::name).collect();
        assert_eq!(names.len(), candidates.len(), "{names:?}");
        assert!(candidates.contains(&Fusion::DEFAULT));
        assert!(candidates.contains(&Fusion::PREVIOUS));
        assert_eq!(Fusion::PREVIOUS.name(), "zsum w=0.50");
    }

    #[test]
    fn every_method_lets_a_standout_lexical_hit_in_and_follows_dense_otherwise() {
        let dense = [0.50, 0.48, 0.10, 0.12];
        let lexical = [0.0, 9.0, 0.0, 0.0];
        let flat = [0.0; 4];
        for fusion in Fusion::candidates() {
            if fusion.lexical_weight == 0.0 {
                continue;
            }
            let name = fusion.name();
            // RRF gives rank 1 of either list the same, so 1 (first lexically, second densely)
            // wins there too.
            assert_eq!(
                order_by_score(&fusion.scores(&dense, &lexical))[0],
                1,
                "{name}"
            );
            // (zmax flattens every below-average tool to the lexical 0, so only the top is
            // compared.)
            assert_eq!(
                order_by_score(&fusion.scores(&dense, &flat))[..2],
                [0, 1],
                "{name}"
            );
        }
    }

    #[test]
    fn rrf_scores_put_a_tool_without_a_vector_after_the_ranked_ones() {
        let rrf = Fusion {
            method: FusionMethod::Rrf,
            lexical_weight: 1.0,
            clauses: true,
            rrf_k: RRF_K,
        };
        let scores = rrf.scores(&[0.3, f32::NAN, 0.5], &[0.0, 0.0, 0.0]);
        assert_eq!(order_by_score(&scores), [2, 0, 1]);
        assert_eq!(scores[1], 0.0);
    }

    #[test]
    fn lexical_standout_is_high_for_one_hit_and_low_for_many_equal_ones() {
        assert_eq!(lexical_standout(&[0.0, 5.0, 0.0]), 1.0);
        assert_eq!(lexical_standout(&[0.0; 3]), 0.0);
        let many = [3.0; 12];
        assert_eq!(lexical_standout(&many), 0.0);
        let mut one = [1.0f32; 12];
        one[3] = 4.0;
        assert!((lexical_standout(&one) - 0.75).abs() < 1e-6);
    }

    #[test]
    fn clauses_split_chained_steps_only() {
        assert_eq!(
            clauses(
                "Find the nurses in Kenya and then book a flight to Nairobi. Also email Ann the itinerary please"
            ),
            [
                "Find the nurses in Kenya",
                "book a flight to Nairobi",
                "Also email Ann the itinerary please"
            ]
        );
        assert!(clauses("What is the weather in Paris and Rome?").is_empty());
        assert!(clauses("read a file").is_empty());
    }

    #[test]
    fn dense_rank_orders_by_dot_product() {
        let vectors = vec![vec![1.0, 0.0], vec![0.6, 0.8], vec![0.0, 1.0]];
        assert_eq!(dense_rank(&[0.0, 1.0], &vectors), [2, 1, 0]);
    }
}
