//! Ranking tools for a request: dense (cosine of sentence embeddings), lexical (BM25), and hybrid
//! (reciprocal rank fusion of the two).
//!
//! Fusion uses ranks, not scores, because cosine similarities and BM25 scores live on scales that
//! cannot be compared; RRF needs no tuning beyond its constant.

use crate::bm25::Bm25Index;
use crate::embed::{EmbedError, Embedder};

/// The RRF constant from Cormack et al. (2009): it damps the weight of the very first ranks so
/// one list cannot overrule the other with a single confident hit.
pub const RRF_K: f32 = 60.0;

/// How to rank.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Strategy {
    Dense,
    Lexical,
    Hybrid,
}

impl Strategy {
    pub const ALL: [Strategy; 3] = [Strategy::Dense, Strategy::Lexical, Strategy::Hybrid];

    /// Whether ranking needs the query's embedding (everything but [`Strategy::Lexical`]).
    pub fn uses_embeddings(self) -> bool {
        self != Strategy::Lexical
    }

    pub fn name(self) -> &'static str {
        match self {
            Strategy::Dense => "dense",
            Strategy::Lexical => "lexical",
            Strategy::Hybrid => "hybrid",
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

/// Reciprocal rank fusion: each list gives an item `1 / (RRF_K + rank)` (rank from 1); items
/// are returned by the sum, best first. An item missing from a list gets nothing from it.
pub fn rrf(lists: &[&[usize]], n: usize) -> Vec<usize> {
    let mut score = vec![0.0f32; n];
    let mut seen = vec![false; n];
    for list in lists {
        for (r, &i) in list.iter().enumerate() {
            if i < n {
                score[i] += 1.0 / (RRF_K + r as f32 + 1.0);
                seen[i] = true;
            }
        }
    }
    let mut order: Vec<usize> = (0..n).filter(|&i| seen[i]).collect();
    order.sort_by(|&a, &b| score[b].total_cmp(&score[a]).then(a.cmp(&b)));
    order
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
    /// empty, for [`Strategy::Lexical`]).
    pub fn rank(&self, query: &str, vector: &[f32], strategy: Strategy) -> Vec<usize> {
        match strategy {
            Strategy::Lexical => self.bm25.rank(query),
            Strategy::Dense => dense_rank(vector, &self.vectors),
            Strategy::Hybrid => {
                let dense = dense_rank(vector, &self.vectors);
                let lexical = self.bm25.rank(query);
                rrf(&[&dense, &lexical], self.vectors.len())
            }
        }
    }

    /// The indices of the best `k` tools for `query` under `strategy`.
    pub fn top_k(
        &self,
        embedder: &Embedder,
        query: &str,
        strategy: Strategy,
        k: usize,
    ) -> Result<Vec<usize>, EmbedError> {
        let vector = if strategy.uses_embeddings() {
            embed_one(embedder, query)?
        } else {
            Vec::new()
        };
        let mut order = self.rank(query, &vector, strategy);
        order.truncate(k);
        Ok(order)
    }
}

fn embed_one(embedder: &Embedder, text: &str) -> Result<Vec<f32>, EmbedError> {
    Ok(embedder
        .embed(&[text])?
        .into_iter()
        .next()
        .unwrap_or_default())
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
    fn dense_rank_orders_by_dot_product() {
        let vectors = vec![vec![1.0, 0.0], vec![0.6, 0.8], vec![0.0, 1.0]];
        assert_eq!(dense_rank(&[0.0, 1.0], &vectors), [2, 1, 0]);
    }
}
