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
mod approvals;
pub mod archive;
pub mod checkpoint;
mod editor;
mod entry;
mod error;
mod fs;
mod masks;
mod open;
pub mod overlay;
mod path;
mod rewind;
mod search;
mod walk;
mod workspace;

pub use approvals::ExactApprovals;
pub use cairn_config::access::{Access, AccessPolicy, AccessRules, Operation};
pub use editor::PathDiagnostics;
pub use entry::{DirEntry, EntryKind, FileStat};
pub use error::ScopeError;
pub use masks::{MaskError, MaskLimits, Masks};
pub use overlay::{
    ByteEdit, Diagnostic, DocumentOverlay, FileDiagnostics, OpenDocument, OverlayError, Severity,
    path_of_file_uri,
};
pub use path::WorkspacePath;
pub use rewind::{NotRestored, ProgramSnapshot, RewindReport, rewind};
pub use search::SearchBuf;
pub use walk::{WalkOptions, WalkedFiles, Walker};
pub use workspace::{DEFAULT_MAX_FILE_SIZE, Workspace, off_thread};

#[cfg(test)]
mod tests;
