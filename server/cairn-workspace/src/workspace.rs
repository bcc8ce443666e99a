//! The [`Workspace`] itself: its roots, the editor's buffers, its limits and access rules, and
//! [`off_thread`]. What it does is spread over the other modules, each an `impl Workspace` of
//! one concern; this file imports none of them but the types its fields hold.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use cairn_config::access::AccessRules;

use crate::approvals::ExactApprovals;
use crate::checkpoint::{Checkpoints, current_turn, sync_in_turn};
use crate::error::ScopeError;
use crate::overlay::DocumentOverlay;

/// Default cap on the size of a file [`Workspace::read_text`] will read: 8 MiB.
pub const DEFAULT_MAX_FILE_SIZE: u64 = 8 * 1024 * 1024;

/// The workspace roots, the editor's open buffers, and the limits applied to file access.
pub struct Workspace {
    /// Canonical roots, in the order given. Relative paths resolve against the first.
    pub(crate) roots: Vec<PathBuf>,
    pub(crate) overlay: Option<Arc<dyn DocumentOverlay>>,
    pub(crate) max_file_size: u64,
    /// Each root's rules: the user's grants and the deny list. Empty allows everything (tests,
    /// benchmarks).
    pub(crate) access: Vec<(PathBuf, Arc<AccessRules>)>,
    pub(crate) approvals: Arc<ExactApprovals>,
    /// Where changes made during a turn record the prior state of files (`rewind.rs`).
    pub(crate) checkpoints: Option<Arc<Checkpoints>>,
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

    /// The root `path` (canonical, absolute) lies in, preferring the deepest when roots nest.
    pub(crate) fn root_of(&self, path: &Path) -> Option<&Path> {
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
    let turn = current_turn();
    tokio::task::spawn_blocking(move || sync_in_turn(turn, || f(&ws)))
        .await
        .map_err(|e| format!("internal error: the tool failed ({e})"))
}
