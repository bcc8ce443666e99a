//! Splitting text into the tokens the metrics count, and counting n-grams.

use std::collections::HashMap;

/// BLEU's tokens, after sacrebleu's `13a` tokenizer (the WMT `mteval-v13a` rules): the ASCII
/// punctuation except `'` `,` `-` `.` is split off; `.` and `,` are split off unless between
/// two digits; `-` is split off after a digit. Its HTML-entity and `<skipped>` rules are
/// left out: plain text carries neither.
pub(crate) fn bleu_tokens(text: &str, lowercase: bool) -> Vec<String> {
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len() + 16);
    for (i, &c) in chars.iter().enumerate() {
        let prev_digit = i > 0 && chars[i - 1].is_ascii_digit();
        let next_digit = chars.get(i + 1).is_some_and(char::is_ascii_digit);
        let split = match c {
            '.' | ',' => !(prev_digit && next_digit),
            '-' => prev_digit,
            '\'' => false,
            _ => c.is_ascii_punctuation(),
        };
        if split {
            out.push(' ');
            out.push(c);
            out.push(' ');
        } else if lowercase {
            out.extend(c.to_lowercase());
        } else {
            out.push(c);
        }
    }
    out.split_whitespace().map(str::to_owned).collect()
}

/// ROUGE's tokens, as the `rouge-score` package makes them: lower case, anything not a letter
/// or digit is a separator (letters of every script count, not only ASCII).
pub(crate) fn rouge_tokens(text: &str) -> Vec<String> {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect()
}

/// How many times each `n`-gram of `tokens` occurs.
pub(crate) fn ngrams(tokens: &[String], n: usize) -> HashMap<&[String], usize> {
    let mut counts = HashMap::new();
    if n > 0 {
        for gram in tokens.windows(n) {
            *counts.entry(gram).or_insert(0) += 1;
        }
    }
    counts
}

/// How many `n`-grams of `candidate` also occur in `reference`, each counted at most as often
/// as it occurs there (clipped).
pub(crate) fn overlap(
    candidate: &HashMap<&[String], usize>,
    reference: &HashMap<&[String], usize>,
) -> usize {
    candidate
        .iter()
        .map(|(gram, &c)| c.min(reference.get(gram).copied().unwrap_or(0)))
        .sum()
}
