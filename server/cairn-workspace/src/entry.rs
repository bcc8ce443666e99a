//! What listings and stats report about a file: [`EntryKind`], [`DirEntry`], [`FileStat`].
//! Apart from `fs.rs` because the rewind and walk code read them too.

#[cfg(doc)]
use crate::workspace::Workspace;

/// What a directory entry is, without following symlinks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EntryKind {
    File,
    Dir,
    Symlink,
    /// FIFO, socket or device.
    Other,
}

/// One entry of [`Workspace::list_dir`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DirEntry {
    /// The file name; not valid UTF-8 bytes are replaced.
    pub name: String,
    pub kind: EntryKind,
}

/// What [`Workspace::stat`] reports; a final symlink is described, not followed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileStat {
    pub kind: EntryKind,
    /// Size in bytes on disk.
    pub len: u64,
    /// Last modification, in seconds since the Unix epoch, when known.
    pub modified_unix: Option<u64>,
    /// Unix permission bits (`0o644`), when known.
    pub mode: Option<u32>,
    pub readonly: bool,
}
