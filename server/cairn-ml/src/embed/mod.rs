//! Tools on the local sentence embedder: similarity, clustering, near-duplicates, zero-shot labels, small classifiers.

pub(crate) mod apply;
pub(crate) mod classifier;
pub(crate) mod cluster;
pub(crate) mod common;
pub(crate) mod duplicates;
pub(crate) mod similarity;
pub(crate) mod train;
pub(crate) mod vector;
pub(crate) mod zero_shot;
