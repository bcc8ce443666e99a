//! Why a workspace operation was refused or failed.

use std::path::PathBuf;

/// A refused or failed workspace operation. Messages name what was asked and why it was refused,
/// because the model reads them and should be able to correct its request.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ScopeError {
    /// A workspace needs at least one root.
    #[error("no workspace roots were given")]
    NoRoots,
    /// The path string itself is unacceptable (NUL byte, `~`, empty, dangling symlink...).
    #[error("refused path `{requested}`: {reason}")]
    InvalidPath { requested: String, reason: String },
    /// The path resolves outside every workspace root.
    #[error("refused path `{requested}`: it resolves to {}, which is outside the workspace", resolved.display())]
    OutsideWorkspace {
        requested: String,
        resolved: PathBuf,
    },
    /// A symlink on the path leads outside every workspace root.
    #[error("refused path `{requested}`: a symlink on it leads to {}, outside the workspace", target.display())]
    SymlinkEscape { requested: String, target: PathBuf },
    #[error("{} does not exist", path.display())]
    NotFound { path: PathBuf },
    #[error("{} is a directory, not a file", path.display())]
    IsADirectory { path: PathBuf },
    #[error("{} is not a directory", path.display())]
    NotADirectory { path: PathBuf },
    /// FIFOs, sockets and devices are never read or written: they can block or never end.
    #[error("refused {}: it is a {kind}, not a regular file", path.display())]
    NotRegularFile { path: PathBuf, kind: &'static str },
    #[error("refused {}: it is {size} bytes, over the {limit}-byte limit", path.display())]
    TooLarge {
        path: PathBuf,
        size: u64,
        limit: u64,
    },
    /// A NUL byte in the first 8 KiB.
    #[error("{} looks like a binary file; it was not read", path.display())]
    Binary { path: PathBuf },
    #[error("{} is not valid UTF-8 (first bad byte at offset {valid_up_to})", path.display())]
    InvalidUtf8 { path: PathBuf, valid_up_to: usize },
    /// The user's policy grants no such access to this path.
    #[error("refused to {operation} `{path}`: {why}")]
    NotGranted {
        path: String,
        operation: &'static str,
        why: String,
    },
    /// The path is on the built-in deny list; only the user's approval of this very path
    /// (not `--yes`, not "allow for this session") lets the operation through.
    #[error(
        "refused to {operation} `{path}`: it is protected ({why}); only the user's approval of this exact path lets it through"
    )]
    Protected {
        path: String,
        /// The canonical path an approval must name.
        abs: PathBuf,
        operation: &'static str,
        why: &'static str,
    },
    /// An exclusive create, a copy or a move found something already at the target.
    #[error("{} already exists", path.display())]
    AlreadyExists { path: PathBuf },
    #[error("invalid glob `{glob}`: {reason}")]
    InvalidGlob { glob: String, reason: String },
    #[error("i/o error on {}: {source}", path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

impl ScopeError {
    /// True for refusals of the scope itself (as opposed to a missing file or an I/O failure).
    pub fn is_denial(&self) -> bool {
        matches!(
            self,
            ScopeError::InvalidPath { .. }
                | ScopeError::OutsideWorkspace { .. }
                | ScopeError::SymlinkEscape { .. }
                | ScopeError::NotRegularFile { .. }
                | ScopeError::NotGranted { .. }
                | ScopeError::Protected { .. }
        )
    }

    pub(crate) fn io(path: impl Into<PathBuf>, source: std::io::Error) -> ScopeError {
        let path = path.into();
        if source.kind() == std::io::ErrorKind::NotFound {
            ScopeError::NotFound { path }
        } else if source.kind() == std::io::ErrorKind::AlreadyExists {
            ScopeError::AlreadyExists { path }
        } else {
            ScopeError::Io { path, source }
        }
    }
}
