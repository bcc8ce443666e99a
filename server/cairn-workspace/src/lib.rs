//! Scoped access to workspace files.
//!
//! Architecture invariant: this is the only crate that opens, reads or writes workspace files.
//! Every path is resolved beneath a root, and nothing escapes it through `..`, absolute paths
//! or symlinks, not even a symlink swapped in between the check and the use: a resolved path is
//! opened from a handle on its root, by its canonical relative path, following no symlink
//! (`openat2(RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS)` on Linux, an `openat(O_NOFOLLOW)` walk one
//! component at a time elsewhere; see the `open` module), and changes are made by name inside
//! the parent directory's handle.
//!
//! The entry point is [`Workspace`]: [`Workspace::resolve`] turns a requested path string into a
//! [`WorkspacePath`] (which nothing else can build), and every operation takes a
//! [`WorkspacePath`]. Denials are typed [`ScopeError`] variants that say what was asked and why it
//! was refused.
//!
//! Not here yet (later hardening): per-user permissions and the secret / execution-vector deny
//! lists. The seams are [`Workspace::resolve`] (policy on names) and the `fs` module (what is
//! done with a resolved path).

// Opening beneath a directory handle needs the `*at` calls of a Unix.
#[cfg(not(unix))]
compile_error!("cairn-workspace opens files relative to directory handles and needs a Unix");

mod access;
pub mod archive;
pub mod checkpoint;
mod error;
mod fs;
mod masks;
mod open;
pub mod overlay;
mod path;
mod rewind;
mod search;
mod walk;

use std::path::{Path, PathBuf};
use std::sync::Arc;

pub use access::ExactApprovals;
pub use cairn_config::access::{Access, AccessPolicy, AccessRules, Operation};
pub use error::ScopeError;
pub use fs::{DirEntry, EntryKind, FileStat};
pub use masks::{MaskError, MaskLimits, Masks};
pub use overlay::{
    ByteEdit, Diagnostic, DocumentOverlay, FileDiagnostics, OpenDocument, OverlayError,
    PathDiagnostics, Severity, path_of_file_uri,
};
pub use path::WorkspacePath;
pub use rewind::{NotRestored, ProgramSnapshot, RewindReport, rewind};
pub use search::SearchBuf;
pub use walk::{WalkOptions, WalkedFiles, Walker};

/// Default cap on the size of a file [`Workspace::read_text`] will read: 8 MiB.
pub const DEFAULT_MAX_FILE_SIZE: u64 = 8 * 1024 * 1024;

/// The workspace roots, the editor's open buffers, and the limits applied to file access.
pub struct Workspace {
    /// Canonical roots, in the order given. Relative paths resolve against the first.
    roots: Vec<PathBuf>,
    overlay: Option<Arc<dyn DocumentOverlay>>,
    max_file_size: u64,
    /// Each root's rules: the user's grants and the deny list. Empty allows everything (tests,
    /// benchmarks).
    access: Vec<(PathBuf, Arc<AccessRules>)>,
    approvals: Arc<ExactApprovals>,
    /// Where changes made during a turn record the prior state of files (`rewind.rs`).
    checkpoints: Option<Arc<checkpoint::Checkpoints>>,
}

impl std::fmt::Debug for Workspace {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Workspace")
            .field("roots", &self.roots)
            .field("overlay", &self.overlay.is_some())
            .field("max_file_size", &self.max_file_size)
            .field("access", &!self.access.is_empty())
            .field("checkpoints", &self.checkpoints.is_some())
            .finish()
    }
}

impl Workspace {
    /// A workspace over `roots`, each canonicalised; every root must be an existing directory.
    pub fn new(roots: Vec<PathBuf>) -> Result<Workspace, ScopeError> {
        if roots.is_empty() {
            return Err(ScopeError::NoRoots);
        }
        let mut canonical = Vec::with_capacity(roots.len());
        for root in roots {
            let c = std::fs::canonicalize(&root).map_err(|source| ScopeError::Io {
                path: root.clone(),
                source,
            })?;
            if !c.is_dir() {
                return Err(ScopeError::NotADirectory { path: c });
            }
            if !canonical.contains(&c) {
                canonical.push(c);
            }
        }
        Ok(Workspace {
            roots: canonical,
            overlay: None,
            max_file_size: DEFAULT_MAX_FILE_SIZE,
            access: Vec::new(),
            approvals: Arc::default(),
            checkpoints: None,
        })
    }

    /// Reads see the editor's unsaved text, and edits to open documents go through the editor.
    pub fn with_overlay(mut self, overlay: Arc<dyn DocumentOverlay>) -> Workspace {
        self.overlay = Some(overlay);
        self
    }

    /// Cap on the size of files read (checked from metadata before reading).
    pub fn with_max_file_size(mut self, bytes: u64) -> Workspace {
        self.max_file_size = bytes;
        self
    }

    /// The canonical roots; the first is the one relative paths resolve against.
    pub fn roots(&self) -> &[PathBuf] {
        &self.roots
    }

    pub fn max_file_size(&self) -> u64 {
        self.max_file_size
    }

    /// The editor's open document at `path`, if an overlay is plugged in and it is open.
    pub fn open_document(&self, path: &WorkspacePath) -> Option<OpenDocument> {
        self.overlay
            .as_ref()
            .and_then(|o| o.open_document(path.as_path()))
    }

    /// A buffer the front knows is open in the editor (never asking the editor over the wire):
    /// for searches over many files, and for telling the model a file is open.
    pub fn open_buffer(&self, path: &WorkspacePath) -> Option<OpenDocument> {
        self.overlay
            .as_ref()
            .filter(|o| !o.asks_the_editor())
            .and_then(|o| o.open_document(path.as_path()))
    }

    /// How an edit applied through the editor ends, for the model's result: saved to disk, or
    /// only in the editor's buffer (then a program run on the files does not see it yet).
    pub fn editor_note(&self) -> &'static str {
        match &self.overlay {
            Some(o) if o.saves_edits() => "through the editor (saved)",
            _ => "in the editor (not saved yet)",
        }
    }

    /// Apply edits to a document open in the editor, at the version that was read.
    pub async fn apply_edits_in_editor(
        &self,
        path: &WorkspacePath,
        version: i32,
        edits: Vec<ByteEdit>,
    ) -> Result<(), OverlayError> {
        self.check(path, Operation::Write)
            .map_err(|e| OverlayError::Rejected {
                reason: e.to_string(),
            })?;
        let Some(overlay) = &self.overlay else {
            return Err(OverlayError::Closed);
        };
        let pending = self.before_change(path);
        // What the buffer will hold, for the checkpoint (an editor that saves is read back).
        let after = match pending.as_ref().and_then(|_| self.buffer_text(path)) {
            Some(text) if !overlay.saves_edits() => ByteEdit::apply_all(&text, &edits),
            _ => None,
        };
        overlay.apply_edits(path.as_path(), version, edits).await?;
        match &after {
            Some(text) => self.after_change(pending, rewind::After::Bytes(text.as_bytes())),
            None => self.after_change(pending, rewind::After::Disk(path)),
        }
        Ok(())
    }

    /// The root `path` (canonical, absolute) lies in, preferring the deepest when roots nest.
    fn root_of(&self, path: &Path) -> Option<&Path> {
        self.roots
            .iter()
            .filter(|r| path.starts_with(r))
            .max_by_key(|r| r.components().count())
            .map(PathBuf::as_path)
    }
}

/// Runs `f` on the workspace on a blocking thread, off the async executor (file work blocks);
/// a panic there becomes an error message instead of taking the caller down. The changes `f`
/// makes belong to the caller's turn (the task-local is carried over).
pub async fn off_thread<T: Send + 'static>(
    ws: &Arc<Workspace>,
    f: impl FnOnce(&Workspace) -> T + Send + 'static,
) -> Result<T, String> {
    let ws = ws.clone();
    let turn = checkpoint::current_turn();
    tokio::task::spawn_blocking(move || checkpoint::sync_in_turn(turn, || f(&ws)))
        .await
        .map_err(|e| format!("internal error: the tool failed ({e})"))
}

#[cfg(test)]
mod tests;
