//! The editor's open buffers, as the workspace sees them.
//!
//! Reads must see unsaved text, and writes to an open document must go through the editor so
//! the user sees them and can undo them. The LSP front implements [`DocumentOverlay`]; this
//! crate knows nothing of LSP, so edits are byte ranges into the text that was read.

use std::path::Path;

use futures::future::BoxFuture;

/// An open document's text and the editor's version of it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OpenDocument {
    pub text: String,
    pub version: i32,
}

/// Replace `start..end` (byte offsets into the text of the given version) by `new_text`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ByteEdit {
    pub start: usize,
    pub end: usize,
    pub new_text: String,
}

/// Why the editor did not apply an edit.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum OverlayError {
    /// The document changed since it was read; the edit was not applied.
    #[error(
        "the document changed in the editor (version {expected} is now {actual}); read it again"
    )]
    Stale { expected: i32, actual: i32 },
    /// The editor refused the edit (the user rejected it, or it failed).
    #[error("the editor did not apply the edit: {reason}")]
    Rejected { reason: String },
    /// The document is no longer open.
    #[error("the document is no longer open in the editor")]
    Closed,
}

/// Open documents of the editor. Paths are absolute, canonical paths inside a workspace root.
pub trait DocumentOverlay: Send + Sync {
    /// The editor's current text of `path`, if it is open.
    fn open_document(&self, path: &Path) -> Option<OpenDocument>;
    /// Apply edits to the open document at `version` through the editor.
    fn apply_edits(
        &self,
        path: &Path,
        version: i32,
        edits: Vec<ByteEdit>,
    ) -> BoxFuture<'_, Result<(), OverlayError>>;
}
