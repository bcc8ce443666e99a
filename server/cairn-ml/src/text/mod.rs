//! Text tools that need no model: metrics (edit distance, BLEU, ROUGE), language detection, keywords, token counts.
