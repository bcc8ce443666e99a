//! A BM25 (Okapi) index over tool texts, for requests that name things literally.
//!
//! The tokenizer lowercases, splits on anything not alphanumeric (so `snake_case` splits), splits
//! `camelCase` and `HTTPServer`-style words, drops one-character tokens and English function
//! words (which match too much to say anything: "list the commits" must not find every tool
//! whose description says "the"), and strips the commonest inflections, so "commits" finds
//! "commit" and "searching" finds "search".

use std::collections::HashMap;

/// Term-frequency saturation.
pub const K1: f32 = 1.2;
/// Document-length normalisation.
pub const B: f32 = 0.75;

/// Splits text into lowercase search tokens.
pub fn tokenize(text: &str) -> Vec<String> {
    let mut tokens = Vec::new();
    for word in text.split(|c: char| !c.is_alphanumeric()) {
        let chars: Vec<char> = word.chars().collect();
        let mut start = 0;
        for i in 1..chars.len() {
            let (prev, cur) = (chars[i - 1], chars[i]);
            let next_lower = chars.get(i + 1).is_some_and(|c| c.is_lowercase());
            // `getForecast` splits before `F`; `HTTPServer` before `S` (the last capital of a
            // run that starts a lowercase word).
            let boundary = (prev.is_lowercase() && cur.is_uppercase())
                || (prev.is_uppercase() && cur.is_uppercase() && next_lower);
            if boundary {
                push_token(&mut tokens, &chars[start..i]);
                start = i;
            }
        }
        push_token(&mut tokens, &chars[start..]);
    }
    tokens
}

fn push_token(tokens: &mut Vec<String>, chars: &[char]) {
    if chars.len() > 1 {
        let word = chars.iter().collect::<String>().to_lowercase();
        if !STOP_WORDS.contains(&word.as_str()) {
            tokens.push(stem(word));
        }
    }
}

/// Words that occur in nearly every request or description and say nothing about a tool.
const STOP_WORDS: &[&str] = &[
    "a", "an", "and", "are", "as", "at", "be", "by", "can", "do", "does", "for", "from", "how",
    "i", "if", "in", "into", "is", "it", "its", "me", "my", "of", "on", "or", "our", "please",
    "so", "that", "the", "their", "then", "there", "these", "this", "to", "us", "was", "we",
    "what", "when", "which", "with", "you", "your",
];

/// A light suffix stripper (plural and verb endings); both documents and queries go through it,
/// so it only has to be consistent, not linguistically right.
fn stem(mut word: String) -> String {
    let len = word.chars().count();
    if len > 4 && word.ends_with("ies") {
        word.truncate(word.len() - 3);
        word.push('y');
    } else if len > 4
        && (word.ends_with("sses")
            || word.ends_with("shes")
            || word.ends_with("ches")
            || word.ends_with("xes"))
    {
        word.truncate(word.len() - 2);
    } else if len > 3 && word.ends_with('s') && !word.ends_with("ss") && !word.ends_with("us") {
        word.truncate(word.len() - 1);
    } else if len > 5 && word.ends_with("ing") {
        word.truncate(word.len() - 3);
    } else if len > 4 && word.ends_with("ed") && !word.ends_with("eed") {
        word.truncate(word.len() - 2);
    }
    word
}

/// An inverted index with BM25 scoring.
#[derive(Debug, Default)]
pub struct Bm25Index {
    /// For each term, the documents holding it and how often.
    postings: HashMap<String, Vec<(u32, u32)>>,
    doc_len: Vec<u32>,
    avg_len: f32,
}

impl Bm25Index {
    /// Indexes `docs`; a document's index is its position.
    pub fn new<S: AsRef<str>>(docs: &[S]) -> Self {
        let mut postings: HashMap<String, Vec<(u32, u32)>> = HashMap::new();
        let mut doc_len = Vec::with_capacity(docs.len());
        for (d, doc) in docs.iter().enumerate() {
            let tokens = tokenize(doc.as_ref());
            doc_len.push(tokens.len() as u32);
            let mut tf: HashMap<String, u32> = HashMap::new();
            for t in tokens {
                *tf.entry(t).or_default() += 1;
            }
            for (t, n) in tf {
                postings.entry(t).or_default().push((d as u32, n));
            }
        }
        let total: u64 = doc_len.iter().map(|&l| u64::from(l)).sum();
        let avg_len = if doc_len.is_empty() {
            0.0
        } else {
            total as f32 / doc_len.len() as f32
        };
        Self {
            postings,
            doc_len,
            avg_len,
        }
    }

    /// Number of indexed documents.
    pub fn len(&self) -> usize {
        self.doc_len.len()
    }

    /// Whether the index is empty.
    pub fn is_empty(&self) -> bool {
        self.doc_len.is_empty()
    }

    /// The BM25 score of every document for `query` (0 where no query term occurs).
    pub fn scores(&self, query: &str) -> Vec<f32> {
        let n = self.doc_len.len() as f32;
        let mut scores = vec![0.0f32; self.doc_len.len()];
        let mut terms = tokenize(query);
        // A term repeated in the query counts once: requests repeat words for grammar, not weight.
        terms.sort();
        terms.dedup();
        for term in terms {
            let Some(list) = self.postings.get(&term) else {
                continue;
            };
            let df = list.len() as f32;
            let idf = (1.0 + (n - df + 0.5) / (df + 0.5)).ln();
            for &(d, tf) in list {
                let tf = tf as f32;
                let len = self.doc_len[d as usize] as f32;
                let norm = K1 * (1.0 - B + B * len / self.avg_len.max(f32::EPSILON));
                scores[d as usize] += idf * tf * (K1 + 1.0) / (tf + norm);
            }
        }
        scores
    }

    /// Documents with a positive score, best first (ties by index, so the order is stable).
    pub fn rank(&self, query: &str) -> Vec<usize> {
        let scores = self.scores(query);
        let mut hits: Vec<usize> = (0..scores.len()).filter(|&d| scores[d] > 0.0).collect();
        hits.sort_by(|&a, &b| scores[b].total_cmp(&scores[a]).then(a.cmp(&b)));
        hits
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokenizer_splits_cases_and_drops_short_tokens() {
        assert_eq!(
            tokenize("getWeatherForecast read_text_file HTTPServer a b2 x"),
            [
                "get", "weather", "forecast", "read", "text", "file", "http", "server", "b2"
            ]
        );
    }

    #[test]
    fn function_words_go_and_inflections_meet() {
        assert_eq!(
            tokenize("list the commits of this repository"),
            ["list", "commit", "repository"]
        );
        assert_eq!(
            tokenize("searches searching searched search"),
            ["search"; 4]
        );
        assert_eq!(
            tokenize("entries entry boxes box"),
            ["entry", "entry", "box", "box"]
        );
        // Short words and -ss/-us endings keep their letters.
        assert_eq!(
            tokenize("class status bus gas"),
            ["class", "status", "bus", "gas"]
        );
    }

    #[test]
    fn a_request_with_function_words_finds_the_tool_by_its_content_words() {
        let docs = [
            "git_log: List recent commits, one line each (id, date, author, summary)",
            "list_sandboxes: List the sandboxes that are running and the images they use",
            "git_tags: The tags of the repository, newest first",
        ];
        let index = Bm25Index::new(&docs);
        assert_eq!(
            index.rank("list the commit history of the repository")[0],
            0
        );
    }

    #[test]
    fn an_exact_name_query_ranks_that_tool_first() {
        let docs = [
            "read_file: Read a file from disk. Parameters: path: the file path",
            "write_file: Write a file to disk. Parameters: path: the file path; content",
            "list_directory: List the files in a directory. Parameters: path",
            "search_files: Search for files matching a pattern in a directory",
            "get_file_info: Metadata of a file (size, times)",
        ];
        let index = Bm25Index::new(&docs);
        assert_eq!(index.len(), 5);
        assert_eq!(index.rank("list_directory")[0], 2);
        assert_eq!(index.rank("get_file_info")[0], 4);
        assert!(index.rank("zebra").is_empty());
    }
}
