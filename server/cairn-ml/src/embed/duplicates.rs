//! `find_near_duplicates`: pairs of texts that say the same thing, exact duplicates first.

use std::collections::HashMap;

use cairn_toolkit::reply::{error, text};
use cairn_toolkit::{CallContext, Category, Effect, JsonSchema, Paths, Tool};
use rmcp::model::CallToolResult;
use serde::Deserialize;

use super::common::{self, MAX_SHOWN, cell};
use super::vector::dot;
use crate::ml::Ml;

/// The similarity above which two texts are near-duplicates, unless told.
const DEFAULT_THRESHOLD: f32 = 0.9;

/// The `find_near_duplicates` tool.
pub struct FindNearDuplicates;

/// Arguments of `find_near_duplicates`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// The texts to compare (or give `path`).
    #[serde(default)]
    texts: Option<Vec<String>>,
    /// A workspace file whose non-empty lines, or `column` of a CSV/TSV/JSONL file, are the texts.
    #[serde(default)]
    path: Option<String>,
    /// The column (CSV/TSV header) or field (JSONL) holding the text, for such a file in `path`.
    #[serde(default)]
    column: Option<String>,
    /// Cosine similarity from which a pair counts (0.5 to 1; default 0.9: paraphrases and small edits).
    #[serde(default)]
    threshold: Option<f32>,
}

impl Tool for FindNearDuplicates {
    type Host = Ml;
    type Args = Args;
    const NAME: &'static str = "find_near_duplicates";
    const TITLE: &'static str = "Find near-duplicate texts";
    const DESCRIPTION: &'static str = "Find texts (a list, or a workspace file's lines or CSV/JSONL column) that are exact or near duplicates in meaning, by local sentence embeddings: exact duplicate groups first, then pairs above a similarity threshold.";
    const CATEGORY: Category = Category::Ai;
    const EFFECT: Effect = Effect::Read;
    const AGENT_ONLY: bool = false;

    fn paths(args: &Args) -> Paths {
        Paths::none().and_read_opt(args.path.as_deref())
    }

    async fn call(ml: &Ml, args: Args, cx: CallContext) -> CallToolResult {
        let threshold = args.threshold.unwrap_or(DEFAULT_THRESHOLD);
        if !(0.5..=1.0).contains(&threshold) {
            return error(
                "`threshold` must be from 0.5 to 1 (cosine similarity; 0.9 finds paraphrases and small edits)",
            );
        }
        let loaded = match common::load(ml, args.texts, args.path, args.column).await {
            Ok(l) => l,
            Err(e) => return error(e),
        };
        let items = &loaded.items;
        // Exact duplicates (after trimming and case folding whitespace runs) need no model.
        let mut groups: HashMap<String, Vec<usize>> = HashMap::new();
        let mut firsts = Vec::new();
        for (i, item) in items.iter().enumerate() {
            let key = item
                .text
                .split_whitespace()
                .collect::<Vec<_>>()
                .join(" ")
                .to_lowercase();
            let group = groups.entry(key).or_default();
            if group.is_empty() {
                firsts.push(i);
            }
            group.push(i);
        }
        let mut exact: Vec<&Vec<usize>> = groups.values().filter(|g| g.len() > 1).collect();
        exact.sort_by_key(|g| g[0]);
        // One text per distinct content is embedded and compared.
        let vectors = match common::embed(
            ml,
            firsts.iter().map(|&i| items[i].text.clone()).collect(),
            &cx,
        )
        .await
        {
            Ok(v) => v,
            Err(e) => return error(e),
        };
        let cancel = cx.cancel.clone();
        let pairs = tokio::task::spawn_blocking(move || {
            let mut pairs = Vec::new();
            for a in 0..vectors.len() {
                if cancel.is_cancelled() {
                    return None;
                }
                for b in a + 1..vectors.len() {
                    let s = dot(&vectors[a], &vectors[b]);
                    if s >= threshold {
                        pairs.push((s, a, b));
                    }
                }
            }
            pairs.sort_by(|x, y| y.0.total_cmp(&x.0).then((x.1, x.2).cmp(&(y.1, y.2))));
            Some(pairs)
        })
        .await;
        let Ok(Some(pairs)) = pairs else {
            return error("cancelled");
        };
        let mut out = format!("{} texts compared (threshold {threshold}).\n", items.len());
        if exact.is_empty() {
            out.push_str("\nNo exact duplicates.\n");
        } else {
            out.push_str(&format!(
                "\nExact duplicates ({} groups, ignoring case and spacing):\n",
                exact.len()
            ));
            for g in exact.iter().take(MAX_SHOWN) {
                let at: Vec<&str> = g.iter().map(|&i| items[i].origin.as_str()).collect();
                out.push_str(&format!(
                    "- \"{}\" at {}\n",
                    cell(&items[g[0]].text),
                    at.join(", ")
                ));
            }
            if exact.len() > MAX_SHOWN {
                out.push_str(&format!("- … {} more groups\n", exact.len() - MAX_SHOWN));
            }
        }
        if pairs.is_empty() {
            out.push_str("\nNo near-duplicate pairs at this threshold.\n");
        } else {
            out.push_str(&format!(
                "\nNear duplicates ({} pairs, most similar first):\n\n| score | text | at | text | at |\n| --- | --- | --- | --- | --- |\n",
                pairs.len()
            ));
            for &(s, a, b) in pairs.iter().take(MAX_SHOWN) {
                let (x, y) = (&items[firsts[a]], &items[firsts[b]]);
                out.push_str(&format!(
                    "| {s:.4} | {} | {} | {} | {} |\n",
                    cell(&x.text),
                    x.origin,
                    cell(&y.text),
                    y.origin
                ));
            }
            if pairs.len() > MAX_SHOWN {
                out.push_str(&format!(
                    "({} less similar pairs left out: raise `threshold` to see fewer)\n",
                    pairs.len() - MAX_SHOWN
                ));
            }
        }
        out.push_str(&loaded.notes_text());
        text(out)
    }
}
