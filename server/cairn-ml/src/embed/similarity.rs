//! `text_similarity`: how close in meaning two texts are, or a list ranked against a query.

use cairn_toolkit::reply::{error, text};
use cairn_toolkit::{CallContext, Category, Effect, JsonSchema, Paths, Tool};
use rmcp::model::CallToolResult;
use serde::Deserialize;

use super::common::{self, MAX_SHOWN, cell};
use super::vector::dot;
use crate::ml::Ml;

/// The `text_similarity` tool.
pub struct TextSimilarity;

/// Arguments of `text_similarity`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// The query (or the first of two texts).
    query: String,
    /// The texts to compare with the query: one for a single score, several to rank them.
    texts: Vec<String>,
}

impl Tool for TextSimilarity {
    type Host = Ml;
    type Args = Args;
    const NAME: &'static str = "text_similarity";
    const TITLE: &'static str = "Text similarity";
    const DESCRIPTION: &'static str = "Cosine similarity in meaning (local sentence embeddings) between a query and one text, or a list of texts ranked by it; use it to compare phrasings or pick the closest candidates.";
    const CATEGORY: Category = Category::Ai;
    const EFFECT: Effect = Effect::Read;
    const AGENT_ONLY: bool = false;

    fn paths(_: &Args) -> Paths {
        Paths::none()
    }

    async fn call(ml: &Ml, args: Args, cx: CallContext) -> CallToolResult {
        let loaded = match common::from_list(args.texts) {
            Ok(l) => l,
            Err(e) => return error(e),
        };
        let (query, cut) = match common::from_list(vec![args.query]) {
            Ok(mut q) => (q.items.remove(0).text, !q.notes.is_empty()),
            Err(e) => return error(e),
        };
        let mut all = vec![query];
        all.extend(loaded.items.iter().map(|i| i.text.clone()));
        let vectors = match common::embed(ml, all, &cx).await {
            Ok(v) => v,
            Err(e) => return error(e),
        };
        let mut notes = loaded.notes_text();
        if cut {
            notes.push_str("\n(the query was cut to its first characters)");
        }
        let scores: Vec<f32> = vectors[1..].iter().map(|v| dot(&vectors[0], v)).collect();
        if scores.len() == 1 {
            return text(format!(
                "cosine similarity: {:.4} (1 = same meaning, around 0 = unrelated){notes}",
                scores[0]
            ));
        }
        let mut order: Vec<usize> = (0..scores.len()).collect();
        order.sort_by(|&a, &b| scores[b].total_cmp(&scores[a]).then(a.cmp(&b)));
        let mut out = String::from(
            "Texts ranked by cosine similarity to the query (1 = same meaning):\n\n| rank | score | text | # |\n| --- | --- | --- | --- |\n",
        );
        for (rank, &i) in order.iter().take(MAX_SHOWN).enumerate() {
            out.push_str(&format!(
                "| {} | {:.4} | {} | {} |\n",
                rank + 1,
                scores[i],
                cell(&loaded.items[i].text),
                loaded.items[i].origin
            ));
        }
        if order.len() > MAX_SHOWN {
            out.push_str(&format!(
                "({} lower-ranked texts left out)\n",
                order.len() - MAX_SHOWN
            ));
        }
        out.push_str(&notes);
        text(out)
    }
}
