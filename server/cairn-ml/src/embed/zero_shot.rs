//! `classify_zero_shot`: each text's closest labels, the labels given as words or short
//! descriptions, by embedding both.

use cairn_toolkit::reply::{error, text};
use cairn_toolkit::{CallContext, Category, Effect, JsonSchema, Paths, Tool};
use rmcp::model::CallToolResult;
use serde::Deserialize;

use super::common::{self, MAX_SHOWN, cell};
use super::vector::dot;
use crate::ml::Ml;

/// Labels one call takes at most.
const MAX_LABELS: usize = 50;
/// Characters of one label.
const MAX_LABEL_CHARS: usize = 200;

/// The `classify_zero_shot` tool.
pub struct ClassifyZeroShot;

/// Arguments of `classify_zero_shot`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// The candidate labels (2 to 50): words or short descriptions, e.g. "billing problem".
    labels: Vec<String>,
    /// The texts to label (or give `path`).
    #[serde(default)]
    texts: Option<Vec<String>>,
    /// A workspace file whose non-empty lines, or `column` of a CSV/TSV/JSONL file, are the texts.
    #[serde(default)]
    path: Option<String>,
    /// The column (CSV/TSV header) or field (JSONL) holding the text, for such a file in `path`.
    #[serde(default)]
    column: Option<String>,
    /// How many best labels to show per text (default 2).
    #[serde(default)]
    top: Option<usize>,
    /// The sentence each label is put in before embedding, with `{label}` where it goes
    /// (default "This text is about {label}.").
    #[serde(default)]
    template: Option<String>,
}

/// A bare word sits far from any sentence in the embedding space; put in a sentence, labels
/// compare with texts far better (the usual zero-shot hypothesis).
const DEFAULT_TEMPLATE: &str = "This text is about {label}.";

impl Tool for ClassifyZeroShot {
    type Host = Ml;
    type Args = Args;
    const NAME: &'static str = "classify_zero_shot";
    const TITLE: &'static str = "Zero-shot text classification";
    const DESCRIPTION: &'static str = "Label texts (a list, or a workspace file's lines or CSV/JSONL column) with the closest of the labels given (words or short descriptions), by local sentence embeddings, without training; each text's best labels with scores.";
    const CATEGORY: Category = Category::Ai;
    const EFFECT: Effect = Effect::Read;
    const AGENT_ONLY: bool = false;

    fn paths(args: &Args) -> Paths {
        Paths::none().and_read_opt(args.path.as_deref())
    }

    async fn call(ml: &Ml, args: Args, cx: CallContext) -> CallToolResult {
        let labels: Vec<String> = args.labels.iter().map(|l| l.trim().to_owned()).collect();
        if labels.len() < 2 || labels.len() > MAX_LABELS {
            return error(format!(
                "give from 2 to {MAX_LABELS} labels ({} given)",
                labels.len()
            ));
        }
        if let Some(bad) = labels
            .iter()
            .find(|l| l.is_empty() || l.chars().count() > MAX_LABEL_CHARS)
        {
            return error(format!(
                "every label must be a word or short description of 1 to {MAX_LABEL_CHARS} characters (not \"{}\")",
                cell(bad)
            ));
        }
        let template = args.template.unwrap_or_else(|| DEFAULT_TEMPLATE.to_owned());
        if !template.contains("{label}") || template.chars().count() > MAX_LABEL_CHARS {
            return error(format!(
                "`template` must contain `{{label}}` and be at most {MAX_LABEL_CHARS} characters"
            ));
        }
        let top = args.top.unwrap_or(2).clamp(1, labels.len());
        let loaded = match common::load(ml, args.texts, args.path, args.column).await {
            Ok(l) => l,
            Err(e) => return error(e),
        };
        let mut all: Vec<String> = labels
            .iter()
            .map(|l| template.replace("{label}", l))
            .collect();
        all.extend(loaded.items.iter().map(|i| i.text.clone()));
        let vectors = match common::embed(ml, all, &cx).await {
            Ok(v) => v,
            Err(e) => return error(e),
        };
        let (label_vectors, text_vectors) = vectors.split_at(labels.len());
        let mut counts = vec![0usize; labels.len()];
        let mut rows = String::new();
        for (i, v) in text_vectors.iter().enumerate() {
            let mut scored: Vec<(f32, usize)> = label_vectors
                .iter()
                .enumerate()
                .map(|(l, lv)| (dot(v, lv), l))
                .collect();
            scored.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
            counts[scored[0].1] += 1;
            if i < MAX_SHOWN {
                let best: Vec<String> = scored
                    .iter()
                    .take(top)
                    .map(|(s, l)| format!("{} {s:.3}", cell(&labels[*l])))
                    .collect();
                let item = &loaded.items[i];
                rows.push_str(&format!(
                    "| {} | {} | {} |\n",
                    item.origin,
                    cell(&item.text),
                    best.join(", ")
                ));
            }
        }
        let n = text_vectors.len();
        let mut out = format!(
            "{n} texts labelled by cosine similarity to each label (higher is closer; compare within a text, not across texts).\n\n| # | text | best labels |\n| --- | --- | --- |\n{rows}"
        );
        if n > MAX_SHOWN {
            out.push_str(&format!(
                "({} more texts left out of the table; counted below)\n",
                n - MAX_SHOWN
            ));
        }
        let summary: Vec<String> = labels
            .iter()
            .zip(&counts)
            .filter(|(_, c)| **c > 0)
            .map(|(l, c)| format!("{} {c}", cell(l)))
            .collect();
        out.push_str(&format!("\nBest label counts: {}\n", summary.join(", ")));
        out.push_str(&loaded.notes_text());
        text(out)
    }
}
