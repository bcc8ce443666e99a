//! The editor's open buffers, as the workspace sees them.
//!
//! Reads must see unsaved text, and writes to an open document must go through the editor so
//! the user sees them and can undo them. The LSP front implements [`DocumentOverlay`] with the
//! buffers it is told are open, the ACP front with the client's `fs/*` methods; this crate knows
//! neither protocol, so edits are byte ranges into the text that was read.
//!
//! An editor that holds diagnostics (its language servers' errors and warnings) may share them
//! too ([`DocumentOverlay::diagnostics`]); the workspace hands the tools only those of files the
//! user may read ([`Workspace::diagnostics`]).

use std::path::{Path, PathBuf};

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
    /// The diagnostics the editor holds, one entry per file it published for (an empty list
    /// once it cleared them); `None` when this editor does not send diagnostics (Helix, ACP
    /// clients).
    fn diagnostics(&self) -> Option<Vec<FileDiagnostics>> {
        None
    }
    /// The stamp of the editor's latest publication: a later one for a file has a larger
    /// [`FileDiagnostics::stamp`]. `None` when this editor does not send diagnostics.
    fn diagnostics_mark(&self) -> Option<u64> {
        None
    }
    /// Resolves once the editor has published diagnostics for `path` with a stamp above
    /// `after`. Callers bound the wait; an editor that does not send diagnostics never
    /// resolves it.
    fn diagnostics_published(&self, path: &Path, after: u64) -> BoxFuture<'_, ()> {
        let _ = (path, after);
        Box::pin(futures::future::pending())
    }
}

/// How serious a diagnostic is, as LSP ranks them (most serious first).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Severity {
    Error,
    Warning,
    Information,
    Hint,
}

impl Severity {
    /// The word the model reads.
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Error => "error",
            Severity::Warning => "warning",
            Severity::Information => "info",
            Severity::Hint => "hint",
        }
    }
}

/// One diagnostic of a file, as the editor holds it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Diagnostic {
    /// 1-based line of its start.
    pub line: u32,
    /// 1-based column of its start, in the editor's units (UTF-16 code units unless the editor
    /// chose UTF-8 or UTF-32).
    pub column: u32,
    pub severity: Severity,
    /// What produced it (`rustc`, `eslint`), when the editor says.
    pub source: Option<String>,
    /// Its code (`E0425`), when it has one.
    pub code: Option<String>,
    pub message: String,
}

/// The editor's diagnostics of one file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileDiagnostics {
    /// Absolute path (canonical when the file exists).
    pub path: PathBuf,
    /// When the editor published them (see [`DocumentOverlay::diagnostics_mark`]).
    pub stamp: u64,
    pub diagnostics: Vec<Diagnostic>,
}

/// The path of a `file://` URI (percent-decoded), `None` for any other URI. The inverse of
/// [`WorkspacePath::uri`], for the edit reports that carry URIs.
pub fn path_of_file_uri(uri: &str) -> Option<PathBuf> {
    let rest = uri.strip_prefix("file://")?;
    // `file://host/path` names another machine; only the empty host (or `localhost`) is ours.
    let rest = rest.strip_prefix("localhost").unwrap_or(rest);
    if !rest.starts_with('/') {
        return None;
    }
    let bytes = rest.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while let Some(&b) = bytes.get(i) {
        if b == b'%' {
            let hex = rest.get(i + 1..i + 3)?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(b);
            i += 1;
        }
    }
    #[cfg(unix)]
    {
        use std::os::unix::ffi::OsStringExt;
        Some(PathBuf::from(std::ffi::OsString::from_vec(out)))
    }
    #[cfg(not(unix))]
    {
        String::from_utf8(out).ok().map(PathBuf::from)
    }
}
