//! The small classifiers `train_text_classifier` saves and `classify_texts` applies: linear
//! scores over sentence embeddings (nearest centroid or multinomial logistic regression), kept
//! as a small JSON file that names the embedder it was trained with.

use serde::{Deserialize, Serialize};

use super::vector::{dot, normalised};
use crate::embed::cluster::mean;

/// The `format` of a saved classifier.
pub(crate) const FORMAT: &str = "cairn-text-classifier";
/// Labels a classifier may have.
pub(crate) const MAX_LABELS: usize = 50;

/// How a classifier scores.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Method {
    // No doc comments on the variants: the schema stays a plain string enum.
    Centroid,
    Logistic,
}

/// The embedder a classifier was trained with; another one's vectors mean nothing to it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct EmbedderId {
    pub repo: String,
    pub revision: String,
}

/// A saved classifier: one weight row and bias per label.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct Classifier {
    pub format: String,
    pub version: u32,
    pub embedder: EmbedderId,
    pub dim: usize,
    pub method: Method,
    pub labels: Vec<String>,
    pub weights: Vec<Vec<f32>>,
    pub bias: Vec<f32>,
    /// Rows it was trained on.
    pub trained_rows: usize,
}

impl Classifier {
    /// Whether a file's classifier is whole and usable with `embedder`; why not.
    pub fn check(&self, embedder: &EmbedderId) -> Result<(), String> {
        if self.format != FORMAT || self.version != 1 {
            return Err(format!(
                "it is not a classifier saved by train_text_classifier (format `{}` version {})",
                self.format, self.version
            ));
        }
        if &self.embedder != embedder {
            return Err(format!(
                "it was trained with the embedder {} at {}, not the one configured ({} at {}); train it again",
                self.embedder.repo, self.embedder.revision, embedder.repo, embedder.revision
            ));
        }
        let n = self.labels.len();
        if !(2..=MAX_LABELS).contains(&n)
            || self.weights.len() != n
            || self.bias.len() != n
            || self.weights.iter().any(|w| w.len() != self.dim)
            || !self
                .weights
                .iter()
                .flatten()
                .chain(&self.bias)
                .all(|x| x.is_finite())
        {
            return Err("its labels, weights and biases do not fit together (the file is damaged); train it again".into());
        }
        Ok(())
    }

    /// The labels of `x` best first, with their scores: the cosine to each centroid, or the
    /// logistic model's probabilities.
    pub fn scores(&self, x: &[f32]) -> Vec<(f32, usize)> {
        let raw: Vec<f32> = self
            .weights
            .iter()
            .zip(&self.bias)
            .map(|(w, b)| dot(w, x) + b)
            .collect();
        let scores = match self.method {
            Method::Centroid => raw,
            Method::Logistic => softmax(&raw),
        };
        let mut ranked: Vec<(f32, usize)> = scores
            .into_iter()
            .enumerate()
            .map(|(i, s)| (s, i))
            .collect();
        ranked.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
        ranked
    }

    /// The best label's index.
    pub fn predict(&self, x: &[f32]) -> usize {
        self.scores(x).first().map_or(0, |s| s.1)
    }
}

fn softmax(z: &[f32]) -> Vec<f32> {
    let m = z.iter().copied().fold(f32::NEG_INFINITY, f32::max);
    let e: Vec<f32> = z.iter().map(|v| (v - m).exp()).collect();
    let s: f32 = e.iter().sum();
    e.into_iter().map(|v| v / s).collect()
}

/// Trains on `xs` (unit vectors) with `ys` (label indices below `labels`); `None` when cancelled.
pub(crate) fn train(
    method: Method,
    xs: &[&[f32]],
    ys: &[usize],
    labels: usize,
    cancelled: &dyn Fn() -> bool,
) -> Option<(Vec<Vec<f32>>, Vec<f32>)> {
    let dim = xs.first().map_or(0, |x| x.len());
    match method {
        Method::Centroid => {
            let weights = (0..labels)
                .map(|l| {
                    let m = mean(xs.iter().zip(ys).filter(|(_, y)| **y == l).map(|(x, _)| *x));
                    if m.is_empty() {
                        vec![0.0; dim]
                    } else {
                        normalised(m)
                    }
                })
                .collect();
            Some((weights, vec![0.0; labels]))
        }
        Method::Logistic => {
            // Full-batch gradient descent on the mean cross-entropy with a little L2; unit
            // inputs keep the curvature under 1/2, so a step of 2 is stable.
            const STEPS: usize = 300;
            const RATE: f32 = 2.0;
            const L2: f32 = 1e-4;
            let n = xs.len() as f32;
            let mut w = vec![vec![0f32; dim]; labels];
            let mut b = vec![0f32; labels];
            for _ in 0..STEPS {
                if cancelled() {
                    return None;
                }
                let mut gw = vec![vec![0f32; dim]; labels];
                let mut gb = vec![0f32; labels];
                for (x, &y) in xs.iter().zip(ys) {
                    let z: Vec<f32> = w.iter().zip(&b).map(|(wl, bl)| dot(wl, x) + bl).collect();
                    let p = softmax(&z);
                    for l in 0..labels {
                        let err = p[l] - f32::from(u8::from(l == y));
                        gb[l] += err;
                        gw[l]
                            .iter_mut()
                            .zip(x.iter())
                            .for_each(|(g, xi)| *g += err * xi);
                    }
                }
                for l in 0..labels {
                    b[l] -= RATE * gb[l] / n;
                    w[l].iter_mut()
                        .zip(&gw[l])
                        .for_each(|(wi, g)| *wi -= RATE * (g / n + L2 * *wi));
                }
            }
            Some((w, b))
        }
    }
}
