//! Text tools that need no model: metrics (edit distance, BLEU, ROUGE), language detection,
//! keywords, and token counts for a named model's tokenizer.

pub(crate) mod bleu_score;
pub(crate) mod count_tokens;
pub(crate) mod detect_language;
pub(crate) mod edit_distance;
pub(crate) mod extract_keywords;
pub(crate) mod rouge_score;
pub(crate) mod source;
mod tokenizer;
pub(crate) mod truncate_tokens;
mod words;
