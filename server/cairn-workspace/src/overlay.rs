//! The editor's open buffers, as the workspace sees them.
//!
//! Reads must see unsaved text, and writes to an open document must go through the editor so
//! the user sees them and can undo them. The LSP front implements [`DocumentOverlay`] with the
//! buffers it is told are open, the ACP front with the client's `fs/*` methods; this crate knows
//! neither protocol, so edits are byte ranges into the text that was read.

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

impl ByteEdit {
    /// `text` with `edits` applied; `None` unless they are ascending, disjoint, within the text
    /// and on character boundaries (an edit from elsewhere is checked, never trusted).
    pub fn apply_all(text: &str, edits: &[ByteEdit]) -> Option<String> {
        let mut out = String::with_capacity(text.len());
        let mut at = 0;
        for edit in edits {
            if edit.start < at || edit.end < edit.start {
                return None;
            }
            out.push_str(text.get(at..edit.start)?);
            text.get(edit.start..edit.end)?;
            out.push_str(&edit.new_text);
            at = edit.end;
        }
        out.push_str(text.get(at..)?);
        Some(out)
    }
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
    /// `true` when [`open_document`](Self::open_document) asks the editor over the wire about
    /// any file (ACP's `fs/read_text_file`) rather than answering from the buffers the front
    /// knows are open (LSP). Such an overlay serves single-file reads and edits only: search
    /// reads the disk instead of asking once per file, and no file is called "open in the
    /// editor" because of it.
    fn asks_the_editor(&self) -> bool {
        false
    }
    /// `true` when edits applied through the editor are also saved to disk (ACP's
    /// `fs/write_text_file` writes the file); an LSP editor only changes the buffer.
    fn saves_edits(&self) -> bool {
        false
    }
}
