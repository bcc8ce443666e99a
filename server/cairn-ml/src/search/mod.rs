//! Semantic search over the workspace: one index of the workspace's text files, cut into
//! overlapping line windows, each embedded by the local sentence embedder and indexed for BM25,
//! kept on disk under the user's cache and brought up to date at every query.
//!
//! - `index`: the chunks, the walk that finds what changed, the re-embedding of only that, and
//!   the ranking (cosine and BM25, fused by cairn-select's standardised score fusion);
//! - `store`: the file on disk (a versioned header with a checksum; anything else is rebuilt);
//! - `run`: what both tools share: the host's index, one refresh and one ranking per call;
//! - `semantic_search` and `similar_code`: the tools.

pub(crate) mod index;
pub(crate) mod run;
pub(crate) mod semantic_search;
pub(crate) mod similar_code;
pub(crate) mod store;

use std::path::PathBuf;

/// The host's search state: where the index is kept, and the index once loaded (one per host,
/// kept in memory between queries; its memory is bounded by the caps in `index`).
#[derive(Debug, Default)]
pub(crate) struct SearchState {
    /// The directory holding one subdirectory per workspace; `None` keeps the index in memory.
    pub dir: Option<PathBuf>,
    /// The index, loaded (or built) by the first query; a lock, so two queries never update it
    /// at once.
    pub index: tokio::sync::Mutex<Option<index::Index>>,
}
