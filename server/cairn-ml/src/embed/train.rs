//! `train_text_classifier`: a small classifier on sentence embeddings of a workspace file's
//! labelled rows, scored on held-out rows and saved as JSON in the workspace.

use std::collections::BTreeMap;

use cairn_toolkit::reply::{error, text, with_edit};
use cairn_toolkit::{CallContext, Category, Effect, JsonSchema, Paths, Tool};
use rmcp::model::CallToolResult;
use serde::Deserialize;

use super::classifier::{self, Classifier, EmbedderId, MAX_LABELS, Method};
use super::common::{self, MAX_TEXT_CHARS, cell};
use crate::ml::Ml;

/// The `train_text_classifier` tool.
pub struct TrainTextClassifier;

/// Arguments of `train_text_classifier`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// The labelled rows: a workspace .csv, .tsv or .jsonl file.
    path: String,
    /// The column (CSV/TSV header) or field (JSONL) holding the text.
    text_column: String,
    /// The column or field holding the label (2 to 50 distinct labels).
    label_column: String,
    /// Where to save the classifier in the workspace, a .json file (replaced if it exists).
    save_to: String,
    /// `logistic` (default; logistic regression, probabilities) or `centroid` (nearest centroid, cosine scores).
    #[serde(default)]
    method: Option<Method>,
    /// The share of each label's rows held out to measure accuracy (0 to 0.5, default 0.2).
    #[serde(default)]
    test_fraction: Option<f32>,
}

impl Tool for TrainTextClassifier {
    type Host = Ml;
    type Args = Args;
    const NAME: &'static str = "train_text_classifier";
    const TITLE: &'static str = "Train a text classifier";
    const DESCRIPTION: &'static str = "Train a small text classifier (logistic regression or nearest centroid on local sentence embeddings) from a workspace CSV/TSV/JSONL file's text and label columns; reports held-out accuracy and confusions, and saves the model as JSON for classify_texts.";
    const CATEGORY: Category = Category::Ai;
    const EFFECT: Effect = Effect::Write;
    const AGENT_ONLY: bool = true;
    const NEEDS_WORKSPACE: bool = true;

    fn paths(args: &Args) -> Paths {
        Paths::read(&args.path).and_write(&args.save_to)
    }

    async fn call(ml: &Ml, args: Args, cx: CallContext) -> CallToolResult {
        let method = args.method.unwrap_or(Method::Logistic);
        let fraction = args.test_fraction.unwrap_or(0.2);
        if !(0.0..=0.5).contains(&fraction) {
            return error("`test_fraction` must be from 0 to 0.5");
        }
        let lower = args.path.to_ascii_lowercase();
        if ![".csv", ".tsv", ".tab", ".jsonl", ".ndjson"]
            .iter()
            .any(|e| lower.ends_with(e))
        {
            return error(format!(
                "{} is not a .csv, .tsv or .jsonl file; labelled rows need a text and a label column",
                args.path
            ));
        }
        if !args.save_to.to_ascii_lowercase().ends_with(".json") {
            return error("`save_to` must name a .json file");
        }
        let rows = match common::read_rows(
            ml,
            args.path.clone(),
            Some(vec![args.text_column.clone(), args.label_column.clone()]),
        )
        .await
        {
            Ok(r) => r,
            Err(e) => return error(e),
        };
        let mut notes = rows.notes;
        let mut texts = Vec::new();
        let mut names: Vec<String> = Vec::new();
        let mut ys = Vec::new();
        let mut skipped = 0;
        for (_, values) in rows.rows {
            let (t, l) = (values[0].trim(), values[1].trim());
            if t.is_empty() || l.is_empty() {
                skipped += 1;
                continue;
            }
            let y = match names.iter().position(|n| n == l) {
                Some(y) => y,
                None => {
                    names.push(l.to_owned());
                    names.len() - 1
                }
            };
            texts.push(t.chars().take(MAX_TEXT_CHARS).collect::<String>());
            ys.push(y);
        }
        if skipped > 0 {
            notes.push(format!(
                "{skipped} rows without a text or label were skipped"
            ));
        }
        if names.len() < 2 || names.len() > MAX_LABELS {
            return error(format!(
                "{} has {} distinct labels in `{}`; a classifier needs from 2 to {MAX_LABELS}",
                args.path,
                names.len(),
                args.label_column
            ));
        }
        // Each label's every k-th row is held out, so every label is measured (labels with a
        // single row train only).
        let mut seen = vec![0usize; names.len()];
        let mut totals = vec![0usize; names.len()];
        ys.iter().for_each(|&y| totals[y] += 1);
        let held: Vec<bool> = ys
            .iter()
            .map(|&y| {
                let j = seen[y];
                seen[y] += 1;
                totals[y] > 1 && ((j + 1) as f32 * fraction).floor() > (j as f32 * fraction).floor()
            })
            .collect();
        let vectors = match common::embed(ml, texts.clone(), &cx).await {
            Ok(v) => v,
            Err(e) => return error(e),
        };
        let labels = names.len();
        let cancel = cx.cancel.clone();
        let fit = tokio::task::spawn_blocking(move || {
            let cancelled = || cancel.is_cancelled();
            let pick = |keep: &dyn Fn(usize) -> bool| -> (Vec<&[f32]>, Vec<usize>) {
                (0..vectors.len())
                    .filter(|&i| keep(i))
                    .map(|i| (vectors[i].as_slice(), ys[i]))
                    .unzip()
            };
            let (train_x, train_y) = pick(&|i| !held[i]);
            let (test_x, test_y) = pick(&|i| held[i]);
            let evaluated = if test_x.is_empty() {
                None
            } else {
                let (w, b) = classifier::train(method, &train_x, &train_y, labels, &cancelled)?;
                Some((
                    w,
                    b,
                    test_x.iter().map(|x| x.to_vec()).collect::<Vec<_>>(),
                    test_y,
                ))
            };
            // The saved model learns from every row.
            let (all_x, all_y) = pick(&|_| true);
            let (w, b) = classifier::train(method, &all_x, &all_y, labels, &cancelled)?;
            Some((
                evaluated,
                w,
                b,
                vectors.len(),
                vectors.first().map_or(0, Vec::len),
            ))
        })
        .await;
        let Ok(Some((evaluated, weights, bias, trained_rows, dim))) = fit else {
            return error("cancelled");
        };
        let model = Classifier {
            format: classifier::FORMAT.into(),
            version: 1,
            embedder: EmbedderId {
                repo: ml.spec.repo.clone(),
                revision: ml.spec.revision.clone(),
            },
            dim,
            method,
            labels: names.clone(),
            weights,
            bias,
            trained_rows,
        };
        let mut out = format!(
            "Trained a {} classifier on {trained_rows} rows of {} ({labels} labels: {}).\n",
            match method {
                Method::Logistic => "logistic-regression",
                Method::Centroid => "nearest-centroid",
            },
            args.path,
            names.iter().map(|n| cell(n)).collect::<Vec<_>>().join(", ")
        );
        match evaluated {
            None => out.push_str("No rows were held out, so accuracy was not measured.\n"),
            Some((w, b, test_x, test_y)) => {
                let probe = Classifier {
                    weights: w,
                    bias: b,
                    ..model.clone()
                };
                let mut confusions: BTreeMap<(usize, usize), usize> = BTreeMap::new();
                let mut right = 0;
                let mut per_label = vec![(0usize, 0usize); labels];
                for (x, &y) in test_x.iter().zip(&test_y) {
                    let p = probe.predict(x);
                    per_label[y].1 += 1;
                    if p == y {
                        right += 1;
                        per_label[y].0 += 1;
                    } else {
                        *confusions.entry((y, p)).or_default() += 1;
                    }
                }
                let total = test_y.len();
                out.push_str(&format!(
                    "Held-out accuracy: {right}/{total} = {:.1}% (a model trained on the other {} rows, tested on {total} held out per label).\n",
                    100.0 * right as f32 / total as f32,
                    trained_rows - total
                ));
                let recalls: Vec<String> = names
                    .iter()
                    .zip(&per_label)
                    .filter(|(_, (_, n))| *n > 0)
                    .take(MAX_LABELS)
                    .map(|(l, (r, n))| format!("{} {r}/{n}", cell(l)))
                    .collect();
                out.push_str(&format!("Right per label: {}.\n", recalls.join(", ")));
                if confusions.is_empty() {
                    out.push_str("No held-out row was confused.\n");
                } else {
                    let mut list: Vec<_> = confusions.into_iter().collect();
                    list.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
                    out.push_str("Confusions (true → predicted: rows):\n");
                    for ((y, p), c) in list.iter().take(20) {
                        out.push_str(&format!(
                            "- {} → {}: {c}\n",
                            cell(&names[*y]),
                            cell(&names[*p])
                        ));
                    }
                }
            }
        }
        let json = match serde_json::to_string(&model) {
            Ok(j) => j,
            Err(e) => return error(format!("internal error: the model did not serialise ({e})")),
        };
        let Ok(ws) = common::workspace(ml) else {
            return error("no workspace is open to save the classifier in");
        };
        let save_to = args.save_to.clone();
        let saved = cairn_workspace::off_thread(&ws, move |ws| {
            let path = ws.resolve(&save_to).map_err(|e| e.to_string())?;
            if ws.open_document(&path).is_some() {
                return Err(format!(
                    "{save_to} is open in the editor; close it or save elsewhere"
                ));
            }
            ws.write_text_atomic(&path, &json)
                .map_err(|e| e.to_string())?;
            Ok(path)
        })
        .await;
        match saved {
            Ok(Ok(path)) => {
                out.push_str(&format!(
                    "Saved to {} (apply it with classify_texts, `model`: \"{}\").",
                    path.display_path(),
                    args.save_to
                ));
                for n in notes {
                    out.push_str(&format!("\n({n})"));
                }
                with_edit(text(out), &path, None)
            }
            Ok(Err(e)) | Err(e) => error(format!("{out}The classifier was not saved: {e}")),
        }
    }
}
