//! `bleu_score`: BLEU-4 (Papineni et al. 2002) of a candidate against one or more references,
//! per sentence or over a corpus of line-aligned segments.

use cairn_toolkit::reply::{error, text};
use cairn_toolkit::{CallContext, Category, Effect, JsonSchema, Paths, Tool};
use rmcp::model::CallToolResult;
use serde::Deserialize;

use super::source::{self, Input};
use super::words::{bleu_tokens, ngrams, overlap};
use crate::ml::Ml;

/// References taken, whether texts or files.
const MAX_REFERENCES: usize = 16;
/// The n-gram orders: BLEU-4.
const N: usize = 4;

/// The `bleu_score` tool.
pub struct BleuScore;

/// How zero n-gram matches are handled.
#[derive(Debug, Clone, Copy, Deserialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Smoothing {
    None,
    AddOne,
    Exp,
}

/// Arguments of `bleu_score`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// The candidate (system output). With several lines, each line is one segment and corpus BLEU is computed over them.
    candidate: Option<String>,
    /// A workspace file holding the candidate instead, one segment per line.
    candidate_path: Option<String>,
    /// Reference texts, each with as many lines as the candidate (line i is a reference for segment i; an empty line gives none for that segment).
    #[serde(default)]
    references: Vec<String>,
    /// Workspace files holding references, line-aligned like `references`.
    #[serde(default)]
    reference_paths: Vec<String>,
    /// How a zero n-gram match count is handled: "none" (the standard; any order with no match makes BLEU 0, the default), "add_one" (add 1 to matches and totals of orders 2–4, Lin and Och 2004), "exp" (sacrebleu's sentence-level default: the k-th zero count becomes 1/2^k).
    smoothing: Option<Smoothing>,
    /// Compare in lower case. Default false.
    #[serde(default)]
    lowercase: bool,
}

impl Tool for BleuScore {
    type Host = Ml;
    type Args = Args;
    const NAME: &'static str = "bleu_score";
    const TITLE: &'static str = "BLEU score";
    const DESCRIPTION: &'static str = "BLEU-4 of a candidate translation or generated text against one or more references (sentence, or corpus over line-aligned segments), with n-gram precisions, brevity penalty and optional smoothing.";
    const CATEGORY: Category = Category::Ai;
    const EFFECT: Effect = Effect::Read;
    const AGENT_ONLY: bool = false;

    fn paths(args: &Args) -> Paths {
        Paths::read_all(args.reference_paths.iter().map(String::as_str))
            .and_read_opt(args.candidate_path.as_deref())
    }

    async fn call(ml: &Ml, args: Args, cx: CallContext) -> CallToolResult {
        let refs_given = args.references.len() + args.reference_paths.len();
        if refs_given == 0 {
            return error("give at least one reference (`references` or `reference_paths`)");
        }
        if refs_given > MAX_REFERENCES {
            return error(format!(
                "{refs_given} references given; at most {MAX_REFERENCES} are taken"
            ));
        }
        let candidate = match source::load(
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
        let mut references: Vec<Input> = args
            .references
            .into_iter()
            .map(|t| Input {
                text: t,
                note: None,
            })
            .collect();
        for p in args.reference_paths {
            match source::read_file(ml, p).await {
                Ok(i) => references.push(i),
                Err(e) => return error(e),
            }
        }
        let smoothing = args.smoothing.unwrap_or(Smoothing::None);
        let lowercase = args.lowercase;
        // Counting n-grams of megabytes of references takes a moment: off the async threads.
        let scored = tokio::task::spawn_blocking(move || {
            score(&candidate, &references, smoothing, lowercase)
                .map(|t| t + &source::notes(std::iter::once(&candidate).chain(&references)))
        });
        tokio::select! {
            r = scored => match r {
                Ok(Ok(t)) => text(t),
                Ok(Err(e)) => error(e),
                Err(e) => error(format!("bleu_score failed: {e}")),
            },
            () = cx.cancel.cancelled() => error("cancelled"),
        }
    }
}

fn segments(text: &str) -> Vec<&str> {
    let lines: Vec<&str> = text.lines().collect();
    // One sentence without a line break is still one segment.
    if lines.is_empty() { vec![""] } else { lines }
}

fn score(
    candidate: &Input,
    references: &[Input],
    smoothing: Smoothing,
    lowercase: bool,
) -> Result<String, String> {
    let hyp = segments(&candidate.text);
    let refs: Vec<Vec<&str>> = references.iter().map(|r| segments(&r.text)).collect();
    for (k, r) in refs.iter().enumerate() {
        if r.len() != hyp.len() {
            return Err(format!(
                "reference {} has {} lines but the candidate has {}; references must be line-aligned with the candidate (one line per segment)",
                k + 1,
                r.len(),
                hyp.len()
            ));
        }
    }
    let mut matches = [0usize; N];
    let mut totals = [0usize; N];
    let (mut hyp_len, mut ref_len) = (0usize, 0usize);
    for (i, h) in hyp.iter().enumerate() {
        let ht = bleu_tokens(h, lowercase);
        // An empty reference line means this reference has none for the segment, so segments
        // may have different numbers of references.
        let rts: Vec<Vec<String>> = refs
            .iter()
            .map(|r| bleu_tokens(r[i], lowercase))
            .filter(|t| !t.is_empty())
            .collect();
        hyp_len += ht.len();
        // The reference length closest to the candidate's; on a tie, the shorter.
        ref_len += rts
            .iter()
            .map(Vec::len)
            .min_by_key(|&l| (l.abs_diff(ht.len()), l))
            .unwrap_or(0);
        for n in 1..=N {
            let hc = ngrams(&ht, n);
            // Clip each n-gram by its largest count in any one reference.
            let mut max_ref: std::collections::HashMap<&[String], usize> =
                std::collections::HashMap::new();
            for rt in &rts {
                for (g, c) in ngrams(rt, n) {
                    let e = max_ref.entry(g).or_insert(0);
                    *e = (*e).max(c);
                }
            }
            matches[n - 1] += overlap(&hc, &max_ref);
            totals[n - 1] += ht.len().saturating_sub(n - 1);
        }
    }
    let mut precisions = [0.0f64; N];
    let mut zeros = 0;
    for n in 0..N {
        precisions[n] = match smoothing {
            Smoothing::AddOne if n > 0 => (matches[n] + 1) as f64 / (totals[n] + 1) as f64,
            _ if totals[n] == 0 => 0.0,
            Smoothing::Exp if matches[n] == 0 => {
                zeros += 1;
                1.0 / (f64::from(2u32.pow(zeros)) * totals[n] as f64)
            }
            _ => matches[n] as f64 / totals[n] as f64,
        };
    }
    let bp = if hyp_len == 0 {
        0.0
    } else if hyp_len >= ref_len {
        1.0
    } else {
        (1.0 - ref_len as f64 / hyp_len as f64).exp()
    };
    let bleu = if precisions.iter().any(|&p| p <= 0.0) {
        0.0
    } else {
        bp * (precisions.iter().map(|p| p.ln()).sum::<f64>() / N as f64).exp()
    };
    let kind = if hyp.len() == 1 {
        "Sentence BLEU-4"
    } else {
        "Corpus BLEU-4"
    };
    let mut out = format!(
        "{kind}: {:.4} ({:.2} on the 0–100 scale)\n{} segment(s), {} reference(s), smoothing {}{}\n\n| n | matches | total | precision |\n|---:|---:|---:|---:|\n",
        bleu,
        bleu * 100.0,
        hyp.len(),
        refs.len(),
        match smoothing {
            Smoothing::None => "none",
            Smoothing::AddOne => "add_one",
            Smoothing::Exp => "exp",
        },
        if lowercase { ", lower-cased" } else { "" },
    );
    for n in 0..N {
        out.push_str(&format!(
            "| {} | {} | {} | {:.4} |\n",
            n + 1,
            matches[n],
            totals[n],
            precisions[n]
        ));
    }
    out.push_str(&format!(
        "\nBrevity penalty: {bp:.4} (candidate length {hyp_len}, reference length {ref_len})"
    ));
    if bleu == 0.0 && smoothing == Smoothing::None && hyp_len > 0 {
        out.push_str("\nSome order has no match, so unsmoothed BLEU is 0; for single sentences try smoothing \"exp\".");
    }
    Ok(out)
}
