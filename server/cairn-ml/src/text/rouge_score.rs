//! `rouge_score`: ROUGE-1, ROUGE-2 and ROUGE-L (Lin 2004) precision, recall and F1 of a
//! candidate summary against a reference.

use cairn_toolkit::reply::{error, text};
use cairn_toolkit::{CallContext, Category, Effect, JsonSchema, Paths, Tool};
use rmcp::model::CallToolResult;
use serde::Deserialize;

use super::source;
use super::words::{ngrams, overlap, rouge_tokens};
use crate::ml::Ml;

/// Tokens of either side ROUGE-L's table is built over (`len × len` cells).
const MAX_LCS_TOKENS: usize = 20_000;

/// The `rouge_score` tool.
pub struct RougeScore;

/// Arguments of `rouge_score`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// The candidate (generated) text, or give `candidate_path`.
    candidate: Option<String>,
    /// A workspace file holding the candidate.
    candidate_path: Option<String>,
    /// The reference text, or give `reference_path`.
    reference: Option<String>,
    /// A workspace file holding the reference.
    reference_path: Option<String>,
}

impl Tool for RougeScore {
    type Host = Ml;
    type Args = Args;
    const NAME: &'static str = "rouge_score";
    const TITLE: &'static str = "ROUGE score";
    const DESCRIPTION: &'static str = "ROUGE-1, ROUGE-2 and ROUGE-L precision, recall and F1 of a candidate text (a summary) against a reference, texts or workspace files.";
    const CATEGORY: Category = Category::Ai;
    const EFFECT: Effect = Effect::Read;
    const AGENT_ONLY: bool = false;

    fn paths(args: &Args) -> Paths {
        Paths::none()
            .and_read_opt(args.candidate_path.as_deref())
            .and_read_opt(args.reference_path.as_deref())
    }

    async fn call(ml: &Ml, args: Args, cx: CallContext) -> CallToolResult {
        let cand = match source::load(
            ml,
            args.candidate,
            args.candidate_path,
            "candidate",
            "candidate_path",
        )
        .await
        {
            Ok(i) => i,
            Err(e) => return error(e),
        };
        let refr = match source::load(
            ml,
            args.reference,
            args.reference_path,
            "reference",
            "reference_path",
        )
        .await
        {
            Ok(i) => i,
            Err(e) => return error(e),
        };
        let (c, r) = (rouge_tokens(&cand.text), rouge_tokens(&refr.text));
        if c.len() > MAX_LCS_TOKENS || r.len() > MAX_LCS_TOKENS {
            return error(format!(
                "the texts have {} and {} words; ROUGE-L compares at most {MAX_LCS_TOKENS} each. Score shorter parts (e.g. per section)",
                c.len(),
                r.len()
            ));
        }
        let notes = source::notes([&cand, &refr]);
        let work = tokio::task::spawn_blocking(move || {
            let mut out = format!(
                "ROUGE of the candidate ({} words) against the reference ({} words), lower-cased, punctuation ignored, no stemming:\n\n| metric | precision | recall | F1 |\n|---|---:|---:|---:|\n",
                c.len(),
                r.len()
            );
            for n in [1, 2] {
                let (hc, rc) = (ngrams(&c, n), ngrams(&r, n));
                let m = overlap(&hc, &rc);
                out.push_str(&row(
                    &format!("ROUGE-{n}"),
                    m,
                    c.len().saturating_sub(n - 1),
                    r.len().saturating_sub(n - 1),
                ));
            }
            out.push_str(&row("ROUGE-L", lcs(&c, &r), c.len(), r.len()));
            out
        });
        tokio::select! {
            r = work => match r {
                Ok(t) => text(t.trim_end().to_owned() + &notes),
                Err(e) => error(format!("rouge_score failed: {e}")),
            },
            () = cx.cancel.cancelled() => error("cancelled"),
        }
    }
}

/// One table row from matches over the candidate's and the reference's totals.
fn row(name: &str, matches: usize, cand_total: usize, ref_total: usize) -> String {
    let p = if cand_total == 0 {
        0.0
    } else {
        matches as f64 / cand_total as f64
    };
    let r = if ref_total == 0 {
        0.0
    } else {
        matches as f64 / ref_total as f64
    };
    let f = if p + r == 0.0 {
        0.0
    } else {
        2.0 * p * r / (p + r)
    };
    format!("| {name} | {p:.4} | {r:.4} | {f:.4} |\n")
}

/// The length of the longest common subsequence, in two rolling rows.
fn lcs(a: &[String], b: &[String]) -> usize {
    let mut prev = vec![0usize; b.len() + 1];
    let mut cur = vec![0usize; b.len() + 1];
    for x in a {
        for (j, y) in b.iter().enumerate() {
            cur[j + 1] = if x == y {
                prev[j] + 1
            } else {
                prev[j + 1].max(cur[j])
            };
        }
        std::mem::swap(&mut prev, &mut cur);
    }
    prev[b.len()]
}
