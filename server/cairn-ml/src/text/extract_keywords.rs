//! `extract_keywords`: the keyphrases of a text or file by RAKE (Rose et al. 2010, "Automatic
//! keyword extraction from individual documents"), with their scores.

use std::collections::HashMap;

use cairn_toolkit::reply::{error, text};
use cairn_toolkit::{CallContext, Category, Effect, JsonSchema, Paths, Tool};
use rmcp::model::CallToolResult;
use serde::Deserialize;

use super::source;
use crate::ml::Ml;

/// Phrases listed by default, and at most.
const DEFAULT_TOP: usize = 10;
const MAX_TOP: usize = 50;

/// English stopwords (NLTK's list): they and punctuation delimit the candidate phrases.
const STOPWORDS: &[&str] = &[
    "i",
    "me",
    "my",
    "myself",
    "we",
    "our",
    "ours",
    "ourselves",
    "you",
    "your",
    "yours",
    "yourself",
    "yourselves",
    "he",
    "him",
    "his",
    "himself",
    "she",
    "her",
    "hers",
    "herself",
    "it",
    "its",
    "itself",
    "they",
    "them",
    "their",
    "theirs",
    "themselves",
    "what",
    "which",
    "who",
    "whom",
    "this",
    "that",
    "these",
    "those",
    "am",
    "is",
    "are",
    "was",
    "were",
    "be",
    "been",
    "being",
    "have",
    "has",
    "had",
    "having",
    "do",
    "does",
    "did",
    "doing",
    "a",
    "an",
    "the",
    "and",
    "but",
    "if",
    "or",
    "because",
    "as",
    "until",
    "while",
    "of",
    "at",
    "by",
    "for",
    "with",
    "about",
    "against",
    "between",
    "into",
    "through",
    "during",
    "before",
    "after",
    "above",
    "below",
    "to",
    "from",
    "up",
    "down",
    "in",
    "out",
    "on",
    "off",
    "over",
    "under",
    "again",
    "further",
    "then",
    "once",
    "here",
    "there",
    "when",
    "where",
    "why",
    "how",
    "all",
    "any",
    "both",
    "each",
    "few",
    "more",
    "most",
    "other",
    "some",
    "such",
    "no",
    "nor",
    "not",
    "only",
    "own",
    "same",
    "so",
    "than",
    "too",
    "very",
    "s",
    "t",
    "can",
    "will",
    "just",
    "don",
    "should",
    "now",
    "d",
    "ll",
    "m",
    "o",
    "re",
    "ve",
    "y",
    "ain",
    "aren",
    "couldn",
    "didn",
    "doesn",
    "hadn",
    "hasn",
    "haven",
    "isn",
    "ma",
    "mightn",
    "mustn",
    "needn",
    "shan",
    "shouldn",
    "wasn",
    "weren",
    "won",
    "wouldn",
];

/// The `extract_keywords` tool.
pub struct ExtractKeywords;

/// Arguments of `extract_keywords`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// The text, or give `path`.
    text: Option<String>,
    /// A workspace file whose text to read.
    path: Option<String>,
    /// How many keyphrases to list, best first (default 10, at most 50).
    top: Option<usize>,
    /// Longest keyphrase in words; longer candidate phrases are dropped (default 4).
    max_words: Option<usize>,
}

impl Tool for ExtractKeywords {
    type Host = Ml;
    type Args = Args;
    const NAME: &'static str = "extract_keywords";
    const TITLE: &'static str = "Extract keywords";
    const DESCRIPTION: &'static str = "The key phrases of an English text or workspace file by RAKE (phrases between stopwords and punctuation, scored by word degree over frequency), best first with scores and counts.";
    const CATEGORY: Category = Category::Ai;
    const EFFECT: Effect = Effect::Read;
    const AGENT_ONLY: bool = false;

    fn paths(args: &Args) -> Paths {
        Paths::none().and_read_opt(args.path.as_deref())
    }

    async fn call(ml: &Ml, args: Args, _: CallContext) -> CallToolResult {
        let input = match source::load(ml, args.text, args.path, "text", "path").await {
            Ok(i) => i,
            Err(e) => return error(e),
        };
        let top = args.top.unwrap_or(DEFAULT_TOP).clamp(1, MAX_TOP);
        let max_words = args.max_words.unwrap_or(4).max(1);
        let notes = source::notes([&input]);
        let ranked = match tokio::task::spawn_blocking(move || rake(&input.text, max_words)).await {
            Ok(r) => r,
            Err(e) => return error(format!("extract_keywords failed: {e}")),
        };
        if ranked.is_empty() {
            return text(format!(
                "No keyphrases: the text has no words outside the stopwords.{notes}"
            ));
        }
        let mut out = format!(
            "{} distinct candidate phrases; the top {} by RAKE score (sum over the phrase's words of degree / frequency):\n\n| # | phrase | score | count |\n|---:|---|---:|---:|\n",
            ranked.len(),
            top.min(ranked.len())
        );
        for (i, (phrase, score, count)) in ranked.iter().take(top).enumerate() {
            out.push_str(&format!(
                "| {} | {phrase} | {score:.2} | {count} |\n",
                i + 1
            ));
        }
        text(out.trim_end().to_owned() + &notes)
    }
}

/// The distinct candidate phrases of `text` with their scores and counts, best first (ties in
/// order of first appearance).
fn rake(text: &str, max_words: usize) -> Vec<(String, f64, usize)> {
    let lower = text.to_lowercase();
    let mut phrases: Vec<Vec<&str>> = Vec::new();
    let mut current: Vec<&str> = Vec::new();
    // Words keep inner apostrophes and hyphens; any other non-alphanumeric character ends a phrase.
    let mut start = None;
    let bytes: Vec<(usize, char)> = lower.char_indices().collect();
    let mut i = 0;
    while i <= bytes.len() {
        let c = bytes.get(i).map(|&(_, c)| c);
        let is_word = c.is_some_and(|c| c.is_alphanumeric() || c == '\'' || c == '-');
        match (is_word, start) {
            (true, None) => start = Some(i),
            (false, Some(s)) => {
                let from = bytes[s].0;
                let to = bytes.get(i).map_or(lower.len(), |&(b, _)| b);
                let word = lower[from..to].trim_matches(|c| c == '\'' || c == '-');
                start = None;
                if word.is_empty()
                    || STOPWORDS.contains(&word)
                    || word.chars().all(|c| c.is_numeric())
                {
                    end_phrase(&mut phrases, &mut current);
                } else {
                    current.push(word);
                }
                if c.is_some_and(|c| !c.is_whitespace()) {
                    end_phrase(&mut phrases, &mut current);
                }
            }
            (false, None) => {
                if c.is_none_or(|c| !c.is_whitespace()) {
                    end_phrase(&mut phrases, &mut current);
                }
            }
            (true, Some(_)) => {}
        }
        i += 1;
    }
    end_phrase(&mut phrases, &mut current);
    phrases.retain(|p| p.len() <= max_words);

    let mut freq: HashMap<&str, usize> = HashMap::new();
    let mut degree: HashMap<&str, usize> = HashMap::new();
    for p in &phrases {
        for w in p {
            *freq.entry(w).or_insert(0) += 1;
            *degree.entry(w).or_insert(0) += p.len();
        }
    }
    let mut seen: HashMap<String, usize> = HashMap::new();
    let mut ranked: Vec<(String, f64, usize)> = Vec::new();
    for p in &phrases {
        let key = p.join(" ");
        if let Some(&at) = seen.get(&key) {
            ranked[at].2 += 1;
            continue;
        }
        let score = p.iter().map(|w| degree[w] as f64 / freq[w] as f64).sum();
        seen.insert(key.clone(), ranked.len());
        ranked.push((key, score, 1));
    }
    // A stable sort keeps first appearance among equal scores.
    ranked.sort_by(|a, b| b.1.total_cmp(&a.1));
    ranked
}

fn end_phrase<'a>(phrases: &mut Vec<Vec<&'a str>>, current: &mut Vec<&'a str>) {
    if !current.is_empty() {
        phrases.push(std::mem::take(current));
    }
}
