//! Tools on the local sentence embedder: similarity, clustering, near-duplicates, zero-shot labels, small classifiers.
