//! `cluster_texts`: groups texts by meaning, k-means or agglomerative, k given or chosen by
//! the silhouette score.

use cairn_toolkit::reply::{error, text};
use cairn_toolkit::{CallContext, Category, Effect, JsonSchema, Paths, Tool};
use rmcp::model::CallToolResult;
use serde::Deserialize;

use super::common::{self, cell};
use super::vector::{dot, normalised};
use crate::ml::Ml;

/// Agglomerative clustering is cubic in the texts; past this, k-means.
const MAX_AGGLOMERATIVE: usize = 500;
/// The largest k tried when choosing it.
const MAX_AUTO_K: usize = 10;
/// The largest k asked for.
const MAX_K: usize = 50;
/// Members listed per cluster.
const SHOWN_MEMBERS: usize = 10;

/// The `cluster_texts` tool.
pub struct ClusterTexts;

/// How to cluster.
#[derive(Debug, Clone, Copy, Deserialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Method {
    // No doc comments on the variants: the schema stays a plain string enum.
    Kmeans,
    Agglomerative,
}

/// Arguments of `cluster_texts`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// The texts to cluster (or give `path`).
    #[serde(default)]
    texts: Option<Vec<String>>,
    /// A workspace file whose non-empty lines, or `column` of a CSV/TSV/JSONL file, are the texts.
    #[serde(default)]
    path: Option<String>,
    /// The column (CSV/TSV header) or field (JSONL) holding the text, for such a file in `path`.
    #[serde(default)]
    column: Option<String>,
    /// The number of clusters (2 to 50); left out, the best from 2 to 10 by silhouette score.
    #[serde(default)]
    k: Option<usize>,
    /// `kmeans` (default; spherical k-means) or `agglomerative` (average linkage, up to 500 texts).
    #[serde(default)]
    method: Option<Method>,
}

impl Tool for ClusterTexts {
    type Host = Ml;
    type Args = Args;
    const NAME: &'static str = "cluster_texts";
    const TITLE: &'static str = "Cluster texts";
    const DESCRIPTION: &'static str = "Group texts (a list, or a workspace file's lines or CSV/JSONL column) by meaning with local sentence embeddings, k-means or agglomerative, k given or chosen by silhouette; each cluster with its size, a representative and members.";
    const CATEGORY: Category = Category::Ai;
    const EFFECT: Effect = Effect::Read;
    const AGENT_ONLY: bool = false;

    fn paths(args: &Args) -> Paths {
        Paths::none().and_read_opt(args.path.as_deref())
    }

    async fn call(ml: &Ml, args: Args, cx: CallContext) -> CallToolResult {
        let method = args.method.unwrap_or(Method::Kmeans);
        if let Some(k) = args.k
            && !(2..=MAX_K).contains(&k)
        {
            return error(format!(
                "`k` must be from 2 to {MAX_K}; leave it out to choose it by silhouette"
            ));
        }
        let loaded = match common::load(ml, args.texts, args.path, args.column).await {
            Ok(l) => l,
            Err(e) => return error(e),
        };
        let n = loaded.items.len();
        let least = args.k.unwrap_or(2).max(3);
        if n < least {
            return error(format!(
                "{n} texts are too few to cluster: give at least {least}"
            ));
        }
        if method == Method::Agglomerative && n > MAX_AGGLOMERATIVE {
            return error(format!(
                "agglomerative clustering takes at most {MAX_AGGLOMERATIVE} texts ({n} given); use `kmeans`"
            ));
        }
        let vectors = match common::embed(
            ml,
            loaded.texts().iter().map(|t| (*t).to_owned()).collect(),
            &cx,
        )
        .await
        {
            Ok(v) => v,
            Err(e) => return error(e),
        };
        let cancel = cx.cancel.clone();
        let fixed = args.k;
        let work = tokio::task::spawn_blocking(move || {
            let candidates: Vec<usize> = match fixed {
                Some(k) => vec![k],
                None => (2..=MAX_AUTO_K.min(n - 1)).collect(),
            };
            let labelings = match method {
                Method::Kmeans => candidates
                    .iter()
                    .map(|&k| kmeans(&vectors, k, &|| cancel.is_cancelled()))
                    .collect::<Vec<_>>(),
                Method::Agglomerative => agglomerative(&vectors, &candidates),
            };
            if cancel.is_cancelled() {
                return None;
            }
            let distances = distance_matrix(&vectors);
            let best = labelings
                .into_iter()
                .map(|labels| (silhouette(&distances, &labels), labels))
                .max_by(|a, b| a.0.total_cmp(&b.0))?;
            Some((best, vectors))
        });
        let Ok(Some(((score, labels), vectors))) = work.await else {
            return error("cancelled");
        };
        let k = labels.iter().max().map_or(1, |m| m + 1);
        let mut clusters: Vec<Vec<usize>> = vec![Vec::new(); k];
        for (i, &c) in labels.iter().enumerate() {
            clusters[c].push(i);
        }
        clusters.retain(|c| !c.is_empty());
        clusters.sort_by(|a, b| b.len().cmp(&a.len()).then(a[0].cmp(&b[0])));
        let how = match fixed {
            Some(_) => "k given".to_owned(),
            None => "k chosen by silhouette".to_owned(),
        };
        let mut out = format!(
            "{n} texts in {} clusters ({}, {how}; silhouette {score:.3}, from -1 to 1, higher is better separated)\n",
            clusters.len(),
            match method {
                Method::Kmeans => "k-means",
                Method::Agglomerative => "agglomerative, average linkage",
            }
        );
        for (c, members) in clusters.iter().enumerate() {
            let centroid = normalised(mean(members.iter().map(|&i| vectors[i].as_slice())));
            let rep = members
                .iter()
                .copied()
                .max_by(|&a, &b| {
                    dot(&vectors[a], &centroid).total_cmp(&dot(&vectors[b], &centroid))
                })
                .unwrap_or(members[0]);
            out.push_str(&format!(
                "\nCluster {} ({} texts), representative: \"{}\" ({})\n",
                c + 1,
                members.len(),
                cell(&loaded.items[rep].text),
                loaded.items[rep].origin
            ));
            for &i in members.iter().take(SHOWN_MEMBERS) {
                out.push_str(&format!(
                    "- {} ({})\n",
                    cell(&loaded.items[i].text),
                    loaded.items[i].origin
                ));
            }
            if members.len() > SHOWN_MEMBERS {
                out.push_str(&format!("- … {} more\n", members.len() - SHOWN_MEMBERS));
            }
        }
        out.push_str(&loaded.notes_text());
        text(out)
    }
}

/// The mean of `vectors` (not normalised).
pub(crate) fn mean<'a>(vectors: impl Iterator<Item = &'a [f32]>) -> Vec<f32> {
    let mut sum: Vec<f32> = Vec::new();
    let mut count = 0f32;
    for v in vectors {
        if sum.is_empty() {
            sum = vec![0.0; v.len()];
        }
        sum.iter_mut().zip(v).for_each(|(s, x)| *s += x);
        count += 1.0;
    }
    if count > 0.0 {
        sum.iter_mut().for_each(|s| *s /= count);
    }
    sum
}

/// Spherical k-means (cosine), seeded deterministically by farthest-first traversal from the
/// text nearest the mean, so the same texts always cluster the same way.
fn kmeans(vectors: &[Vec<f32>], k: usize, cancelled: &dyn Fn() -> bool) -> Vec<usize> {
    let n = vectors.len();
    let centre = normalised(mean(vectors.iter().map(Vec::as_slice)));
    let first = (0..n)
        .max_by(|&a, &b| dot(&vectors[a], &centre).total_cmp(&dot(&vectors[b], &centre)))
        .unwrap_or(0);
    let mut centroids = vec![vectors[first].clone()];
    let mut nearest: Vec<f32> = vectors.iter().map(|v| dot(v, &centroids[0])).collect();
    while centroids.len() < k {
        // The text least like any centroid so far seeds the next.
        let next = (0..n)
            .min_by(|&a, &b| nearest[a].total_cmp(&nearest[b]))
            .unwrap_or(0);
        centroids.push(vectors[next].clone());
        for (i, v) in vectors.iter().enumerate() {
            nearest[i] = nearest[i].max(dot(v, &vectors[next]));
        }
    }
    let mut labels = vec![usize::MAX; n];
    for _ in 0..100 {
        if cancelled() {
            break;
        }
        let mut changed = false;
        for (i, v) in vectors.iter().enumerate() {
            let best = (0..k)
                .max_by(|&a, &b| {
                    dot(v, &centroids[a])
                        .total_cmp(&dot(v, &centroids[b]))
                        .then(b.cmp(&a))
                })
                .unwrap_or(0);
            if labels[i] != best {
                labels[i] = best;
                changed = true;
            }
        }
        if !changed {
            break;
        }
        for (c, centroid) in centroids.iter_mut().enumerate() {
            let members = vectors.iter().zip(&labels).filter(|(_, l)| **l == c);
            let m = mean(members.map(|(v, _)| v.as_slice()));
            // An emptied cluster keeps its old centroid.
            if !m.is_empty() {
                *centroid = normalised(m);
            }
        }
    }
    compact(labels)
}

/// Labels renumbered 0.. in order of first appearance (empty clusters dropped).
fn compact(labels: Vec<usize>) -> Vec<usize> {
    let mut map = std::collections::HashMap::new();
    labels
        .into_iter()
        .map(|l| {
            let next = map.len();
            *map.entry(l).or_insert(next)
        })
        .collect()
}

/// Average-linkage agglomerative clustering, cut at each of `ks` clusters.
fn agglomerative(vectors: &[Vec<f32>], ks: &[usize]) -> Vec<Vec<usize>> {
    let n = vectors.len();
    let mut d = distance_matrix(vectors);
    let mut size = vec![1usize; n];
    let mut alive: Vec<bool> = vec![true; n];
    // Each text's cluster, named by the index of a surviving member.
    let mut owner: Vec<usize> = (0..n).collect();
    let mut cuts = Vec::new();
    let mut count = n;
    while count > 1 {
        if ks.contains(&count) {
            cuts.push((count, compact(owner.clone())));
        }
        let mut best = (f32::INFINITY, 0, 0);
        for i in 0..n {
            if !alive[i] {
                continue;
            }
            for j in i + 1..n {
                if alive[j] && d[i * n + j] < best.0 {
                    best = (d[i * n + j], i, j);
                }
            }
        }
        let (_, a, b) = best;
        for k in 0..n {
            if alive[k] && k != a && k != b {
                let merged = (size[a] as f32 * d[a * n + k] + size[b] as f32 * d[b * n + k])
                    / (size[a] + size[b]) as f32;
                d[a * n + k] = merged;
                d[k * n + a] = merged;
            }
        }
        size[a] += size[b];
        alive[b] = false;
        owner.iter_mut().filter(|o| **o == b).for_each(|o| *o = a);
        count -= 1;
    }
    // In the order of `ks`, as k-means gives them.
    ks.iter()
        .filter_map(|k| cuts.iter().find(|(c, _)| c == k).map(|(_, l)| l.clone()))
        .collect()
}

/// Cosine distances, row-major n×n.
fn distance_matrix(vectors: &[Vec<f32>]) -> Vec<f32> {
    let n = vectors.len();
    let mut d = vec![0f32; n * n];
    for i in 0..n {
        for j in i + 1..n {
            let v = 1.0 - dot(&vectors[i], &vectors[j]);
            d[i * n + j] = v;
            d[j * n + i] = v;
        }
    }
    d
}

/// The mean silhouette of a labelling (a text alone in its cluster counts 0).
fn silhouette(d: &[f32], labels: &[usize]) -> f32 {
    let n = labels.len();
    let k = labels.iter().max().map_or(0, |m| m + 1);
    if k < 2 {
        return -1.0;
    }
    let mut total = 0f32;
    for i in 0..n {
        let mut sums = vec![0f32; k];
        let mut counts = vec![0usize; k];
        for j in 0..n {
            if i != j {
                sums[labels[j]] += d[i * n + j];
                counts[labels[j]] += 1;
            }
        }
        let own = labels[i];
        if counts[own] == 0 {
            continue;
        }
        let a = sums[own] / counts[own] as f32;
        let b = (0..k)
            .filter(|&c| c != own && counts[c] > 0)
            .map(|c| sums[c] / counts[c] as f32)
            .fold(f32::INFINITY, f32::min);
        if b.is_finite() {
            total += (b - a) / a.max(b).max(f32::EPSILON);
        }
    }
    total / n as f32
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    /// Two pairs of identical unit vectors at right angles: cosine distance 0 within a pair,
    /// 1 across.
    fn two_pairs() -> Vec<Vec<f32>> {
        vec![
            vec![1.0, 0.0],
            vec![0.0, 1.0],
            vec![1.0, 0.0],
            vec![0.0, 1.0],
        ]
    }

    #[test]
    fn separated_pairs_cluster_apart_with_silhouette_one() {
        let v = two_pairs();
        let d = distance_matrix(&v);
        // Each point: a = 0 (its twin), b = 1 (the other pair): s = (1 - 0) / 1.
        assert_eq!(kmeans(&v, 2, &|| false), vec![0, 1, 0, 1]);
        assert_eq!(agglomerative(&v, &[2]), vec![vec![0, 1, 0, 1]]);
        assert!((silhouette(&d, &[0, 1, 0, 1]) - 1.0).abs() < 1e-6);
        // The wrong split, by hand for point 0 in {0, 1}: a = d(0,1) = 1,
        // b = mean(d(0,2), d(0,3)) = 0.5, s = (0.5 - 1) / 1 = -0.5; every point alike.
        assert!((silhouette(&d, &[0, 0, 1, 1]) + 0.5).abs() < 1e-6);
    }
}
