//! `classify_texts`: a classifier saved by `train_text_classifier` applied to texts.

use cairn_toolkit::reply::{error, text};
use cairn_toolkit::{CallContext, Category, Effect, JsonSchema, Paths, Tool};
use rmcp::model::CallToolResult;
use serde::Deserialize;

use super::classifier::{Classifier, EmbedderId, Method};
use super::common::{self, MAX_SHOWN, cell};
use crate::ml::Ml;

/// The `classify_texts` tool.
pub struct ClassifyTexts;

/// Arguments of `classify_texts`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// The classifier: a .json file in the workspace saved by train_text_classifier.
    model: String,
    /// The texts to classify (or give `path`).
    #[serde(default)]
    texts: Option<Vec<String>>,
    /// A workspace file whose non-empty lines, or `column` of a CSV/TSV/JSONL file, are the texts.
    #[serde(default)]
    path: Option<String>,
    /// The column (CSV/TSV header) or field (JSONL) holding the text, for such a file in `path`.
    #[serde(default)]
    column: Option<String>,
}

impl Tool for ClassifyTexts {
    type Host = Ml;
    type Args = Args;
    const NAME: &'static str = "classify_texts";
    const TITLE: &'static str = "Classify texts";
    const DESCRIPTION: &'static str = "Apply a classifier saved by train_text_classifier to texts (a list, or a workspace file's lines or CSV/JSONL column): each text's predicted label with its score, and the counts per label.";
    const CATEGORY: Category = Category::Ai;
    const EFFECT: Effect = Effect::Read;
    const AGENT_ONLY: bool = false;
    const NEEDS_WORKSPACE: bool = true;

    fn paths(args: &Args) -> Paths {
        Paths::read(&args.model).and_read_opt(args.path.as_deref())
    }

    async fn call(ml: &Ml, args: Args, cx: CallContext) -> CallToolResult {
        let ws = match common::workspace(ml) {
            Ok(ws) => ws,
            Err(e) => return error(e),
        };
        let name = args.model.clone();
        let read = cairn_workspace::off_thread(&ws, move |ws| {
            let path = ws.resolve(&name).map_err(|e| e.to_string())?;
            let (json, _) = ws.read_text(&path).map_err(|e| e.to_string())?;
            serde_json::from_str::<Classifier>(&json).map_err(|e| {
                format!("{name} is not a classifier saved by train_text_classifier ({e})")
            })
        })
        .await;
        let model = match read {
            Ok(Ok(m)) => m,
            Ok(Err(e)) | Err(e) => return error(e),
        };
        let ours = EmbedderId {
            repo: ml.spec.repo.clone(),
            revision: ml.spec.revision.clone(),
        };
        if let Err(why) = model.check(&ours) {
            return error(format!("{} cannot be used: {why}", args.model));
        }
        let loaded = match common::load(ml, args.texts, args.path, args.column).await {
            Ok(l) => l,
            Err(e) => return error(e),
        };
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
        if vectors.first().is_some_and(|v| v.len() != model.dim) {
            return error(format!(
                "{} expects {}-dimensional embeddings, the embedder gives {}; train it again",
                args.model,
                model.dim,
                vectors[0].len()
            ));
        }
        let score_name = match model.method {
            Method::Logistic => "probability",
            Method::Centroid => "cosine to the label's centroid",
        };
        let mut counts = vec![0usize; model.labels.len()];
        let mut out = format!(
            "{} texts classified with {} ({} labels; score: {score_name}).\n\n| # | text | label | score | next |\n| --- | --- | --- | --- | --- |\n",
            vectors.len(),
            args.model,
            model.labels.len()
        );
        for (i, v) in vectors.iter().enumerate() {
            let ranked = model.scores(v);
            let (s, best) = ranked[0];
            counts[best] += 1;
            if i < MAX_SHOWN {
                let next = ranked
                    .get(1)
                    .map(|(s2, l2)| format!("{} {s2:.3}", cell(&model.labels[*l2])))
                    .unwrap_or_default();
                let item = &loaded.items[i];
                out.push_str(&format!(
                    "| {} | {} | {} | {s:.3} | {next} |\n",
                    item.origin,
                    cell(&item.text),
                    cell(&model.labels[best])
                ));
            }
        }
        if vectors.len() > MAX_SHOWN {
            out.push_str(&format!(
                "({} more texts left out of the table; counted below)\n",
                vectors.len() - MAX_SHOWN
            ));
        }
        let summary: Vec<String> = model
            .labels
            .iter()
            .zip(&counts)
            .map(|(l, c)| format!("{} {c}", cell(l)))
            .collect();
        out.push_str(&format!("\nCounts: {}\n", summary.join(", ")));
        out.push_str(&loaded.notes_text());
        text(out)
    }
}
