//! Reading, writing and listing resolved paths.
//!
//! Every function here takes a [`WorkspacePath`], so it only ever touches a path that passed
//! [`Workspace::resolve`]. Opening is done so that a path swapped for a symlink or a FIFO after
//! resolution fails instead of escaping or blocking: reads open with `O_NOFOLLOW | O_NONBLOCK`
//! and check the opened file's type, writes rename a fresh temp file over the target (a rename
//! replaces a symlink, it never follows it). Closing the remaining check-then-open window for
//! parent directories is left to `openat2(RESOLVE_BENEATH)` later.

use std::fs::{File, Metadata};
use std::io::{Read, Write};
use std::path::Path;

use crate::{ScopeError, Workspace, WorkspacePath};

/// How many leading bytes are searched for a NUL to call a file binary.
const BINARY_SNIFF_LEN: usize = 8 * 1024;

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

impl Workspace {
    /// The text of a file: the editor's unsaved text and its version when the file is open,
    /// otherwise the file on disk (version `None`).
    ///
    /// Refuses, with a typed error and without blocking: directories, non-regular files, files
    /// over the size cap (judged from metadata before reading), binary files (a NUL in the
    /// first 8 KiB) and invalid UTF-8.
    pub fn read_text(&self, path: &WorkspacePath) -> Result<(String, Option<i32>), ScopeError> {
        if let Some(doc) = self.open_document(path) {
            return Ok((doc.text, Some(doc.version)));
        }
        let abs = path.as_path();
        let file = open_read(abs)?;
        let meta = file.metadata().map_err(|e| ScopeError::io(abs, e))?;
        check_regular(abs, &meta)?;
        let limit = self.max_file_size;
        if meta.len() > limit {
            return Err(ScopeError::TooLarge {
                path: abs.to_owned(),
                size: meta.len(),
                limit,
            });
        }
        let mut bytes = Vec::with_capacity(usize::try_from(meta.len()).unwrap_or(0));
        // The file may grow after the metadata check; never read past the cap.
        file.take(limit.saturating_add(1))
            .read_to_end(&mut bytes)
            .map_err(|e| ScopeError::io(abs, e))?;
        let size = u64::try_from(bytes.len()).unwrap_or(u64::MAX);
        if size > limit {
            return Err(ScopeError::TooLarge {
                path: abs.to_owned(),
                size,
                limit,
            });
        }
        decode_text(abs, bytes).map(|text| (text, None))
    }

    /// Replace (or create) a file's content atomically: a temp file in the same directory,
    /// then a rename over the target. An existing file keeps its permission mode; a new file
    /// gets `0o666` less the umask. Missing parent directories are created (they are inside
    /// the root: [`Workspace::resolve`] checked the canonical existing prefix).
    ///
    /// This does not go through the editor; callers check [`Workspace::open_document`] first.
    pub fn write_text_atomic(&self, path: &WorkspacePath, text: &str) -> Result<(), ScopeError> {
        let abs = path.as_path();
        let parent = match abs.parent() {
            Some(parent) if !path.is_root() => parent,
            _ => {
                return Err(ScopeError::IsADirectory {
                    path: abs.to_owned(),
                });
            }
        };
        let existing = match std::fs::symlink_metadata(abs) {
            Ok(meta) => Some(meta),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
            Err(e) => return Err(ScopeError::io(abs, e)),
        };
        if let Some(meta) = &existing {
            if meta.file_type().is_symlink() {
                // Resolution canonicalised the path, so a symlink here appeared since then.
                return Err(ScopeError::InvalidPath {
                    requested: path.display_path(),
                    reason: "it became a symlink; writes never follow symlinks".to_owned(),
                });
            }
            check_regular(abs, meta)?;
        } else {
            self.create_parents(path, parent)?;
        }

        let mut builder = tempfile::Builder::new();
        builder.prefix(".cairn-edit-").suffix(".tmp");
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            // Applied at creation, so the umask trims it; an existing mode is set exactly below.
            builder.permissions(std::fs::Permissions::from_mode(0o666));
        }
        let mut tmp = builder
            .tempfile_in(parent)
            .map_err(|e| ScopeError::io(parent, e))?;
        if let Some(meta) = &existing {
            tmp.as_file()
                .set_permissions(meta.permissions())
                .map_err(|e| ScopeError::io(tmp.path(), e))?;
        }
        tmp.write_all(text.as_bytes())
            .map_err(|e| ScopeError::io(tmp.path(), e))?;
        tmp.as_file()
            .sync_all()
            .map_err(|e| ScopeError::io(tmp.path(), e))?;
        let persisted = if existing.is_some() {
            tmp.persist(abs).map(drop)
        } else {
            // Someone may have created the file meanwhile (maybe as a symlink): do not clobber.
            tmp.persist_noclobber(abs).map(drop)
        };
        persisted.map_err(|e| ScopeError::io(abs, e.error))
    }

    /// The entries of a directory, sorted by name; symlinks are reported, never followed.
    pub fn list_dir(&self, path: &WorkspacePath) -> Result<Vec<DirEntry>, ScopeError> {
        let abs = path.as_path();
        let meta = std::fs::symlink_metadata(abs).map_err(|e| ScopeError::io(abs, e))?;
        if !meta.is_dir() {
            return Err(ScopeError::NotADirectory {
                path: abs.to_owned(),
            });
        }
        let mut entries = Vec::new();
        for entry in std::fs::read_dir(abs).map_err(|e| ScopeError::io(abs, e))? {
            let entry = entry.map_err(|e| ScopeError::io(abs, e))?;
            let kind = match entry.file_type() {
                Ok(t) if t.is_symlink() => EntryKind::Symlink,
                Ok(t) if t.is_dir() => EntryKind::Dir,
                Ok(t) if t.is_file() => EntryKind::File,
                _ => EntryKind::Other,
            };
            entries.push(DirEntry {
                name: entry.file_name().to_string_lossy().into_owned(),
                kind,
            });
        }
        entries.sort_by(|a, b| a.name.cmp(&b.name));
        Ok(entries)
    }

    /// What `path` is (without following a final symlink); `NotFound` when it does not exist.
    pub fn kind_of(&self, path: &WorkspacePath) -> Result<EntryKind, ScopeError> {
        let abs = path.as_path();
        let meta = std::fs::symlink_metadata(abs).map_err(|e| ScopeError::io(abs, e))?;
        let t = meta.file_type();
        Ok(if t.is_symlink() {
            EntryKind::Symlink
        } else if t.is_dir() {
            EntryKind::Dir
        } else if t.is_file() {
            EntryKind::File
        } else {
            EntryKind::Other
        })
    }

    /// Create the missing directories above a new file, then check again that the canonical
    /// parent is still inside the root (a directory may have been swapped meanwhile).
    fn create_parents(&self, path: &WorkspacePath, parent: &Path) -> Result<(), ScopeError> {
        std::fs::create_dir_all(parent).map_err(|e| ScopeError::io(parent, e))?;
        let canonical = std::fs::canonicalize(parent).map_err(|e| ScopeError::io(parent, e))?;
        if canonical.starts_with(path.root()) {
            Ok(())
        } else {
            Err(ScopeError::SymlinkEscape {
                requested: path.display_path(),
                target: canonical,
            })
        }
    }
}

/// Open for reading without following a final symlink and without blocking on a FIFO.
fn open_read(abs: &Path) -> Result<File, ScopeError> {
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK);
    }
    options.open(abs).map_err(|e| ScopeError::io(abs, e))
}

fn check_regular(abs: &Path, meta: &Metadata) -> Result<(), ScopeError> {
    let t = meta.file_type();
    if t.is_file() {
        Ok(())
    } else if t.is_dir() {
        Err(ScopeError::IsADirectory {
            path: abs.to_owned(),
        })
    } else {
        Err(ScopeError::NotRegularFile {
            path: abs.to_owned(),
            kind: special_kind(meta),
        })
    }
}

fn special_kind(meta: &Metadata) -> &'static str {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        let t = meta.file_type();
        if t.is_fifo() {
            return "FIFO";
        } else if t.is_socket() {
            return "socket";
        } else if t.is_char_device() {
            return "character device";
        } else if t.is_block_device() {
            return "block device";
        }
    }
    if meta.file_type().is_symlink() {
        "symlink"
    } else {
        "special file"
    }
}

fn decode_text(abs: &Path, bytes: Vec<u8>) -> Result<String, ScopeError> {
    let sniff = bytes.get(..BINARY_SNIFF_LEN).unwrap_or(&bytes);
    if sniff.contains(&0) {
        return Err(ScopeError::Binary {
            path: abs.to_owned(),
        });
    }
    String::from_utf8(bytes).map_err(|e| ScopeError::InvalidUtf8 {
        path: abs.to_owned(),
        valid_up_to: e.utf8_error().valid_up_to(),
    })
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

impl Workspace {
    /// Create a new file with `text`; [`ScopeError::AlreadyExists`] when anything (a file, a
    /// directory, a symlink) is already there. Missing parents are created inside the root.
    /// The content is written to a temp file first and linked into place without clobbering,
    /// so the file never appears half-written.
    pub fn create_text_exclusive(
        &self,
        path: &WorkspacePath,
        text: &str,
    ) -> Result<(), ScopeError> {
        let abs = path.as_path();
        let parent = self.parent_of(path)?;
        if std::fs::symlink_metadata(abs).is_ok() {
            return Err(ScopeError::AlreadyExists {
                path: abs.to_owned(),
            });
        }
        self.create_parents(path, parent)?;
        let tmp = new_temp(parent, None)?;
        write_temp(tmp, text.as_bytes(), abs, false)
    }

    /// Delete a regular file. Directories, symlinks and special files are refused (a symlink
    /// inside the root resolves to its target, which this would delete; so is the root).
    pub fn remove_file(&self, path: &WorkspacePath) -> Result<(), ScopeError> {
        let abs = path.as_path();
        self.parent_of(path)?;
        let meta = std::fs::symlink_metadata(abs).map_err(|e| ScopeError::io(abs, e))?;
        check_regular(abs, &meta)?;
        std::fs::remove_file(abs).map_err(|e| ScopeError::io(abs, e))
    }

    /// Create a directory and its missing parents; an existing directory is fine, an existing
    /// file is [`ScopeError::NotADirectory`].
    pub fn create_dir(&self, path: &WorkspacePath) -> Result<(), ScopeError> {
        let abs = path.as_path();
        match std::fs::symlink_metadata(abs) {
            Ok(meta) if meta.is_dir() => return Ok(()),
            Ok(_) => {
                return Err(ScopeError::NotADirectory {
                    path: abs.to_owned(),
                });
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(ScopeError::io(abs, e)),
        }
        self.create_parents(path, abs)
    }

    /// Move a regular file or a directory to `to`, which must not exist (never clobbers;
    /// missing parents of `to` are created). The root itself cannot be moved; a symlink or
    /// special file at `from` is refused. Both paths were resolved inside the workspace, and
    /// a rename moves the entry itself, never what a symlink in it points to.
    pub fn rename(&self, from: &WorkspacePath, to: &WorkspacePath) -> Result<(), ScopeError> {
        let src = from.as_path();
        let dst = to.as_path();
        self.parent_of(from)?;
        let to_parent = self.parent_of(to)?;
        let meta = std::fs::symlink_metadata(src).map_err(|e| ScopeError::io(src, e))?;
        if !meta.is_dir() {
            check_regular(src, &meta)?;
        }
        if dst.starts_with(src) {
            return Err(ScopeError::InvalidPath {
                requested: to.display_path(),
                reason: format!("it is inside {}, which is being moved", from.display_path()),
            });
        }
        if std::fs::symlink_metadata(dst).is_ok() {
            return Err(ScopeError::AlreadyExists {
                path: dst.to_owned(),
            });
        }
        self.create_parents(to, to_parent)?;
        if meta.is_file() {
            // A hard link fails when the target appeared meanwhile: no clobbering.
            match std::fs::hard_link(src, dst) {
                Ok(()) => return std::fs::remove_file(src).map_err(|e| ScopeError::io(src, e)),
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                    return Err(ScopeError::AlreadyExists {
                        path: dst.to_owned(),
                    });
                }
                // Hard links unsupported here: fall back to a checked rename.
                Err(_) => {}
            }
        }
        std::fs::rename(src, dst).map_err(|e| ScopeError::io(dst, e))
    }

    /// Copy a regular file's bytes to `to` (a new file; never clobbers, never follows a symlink
    /// at either end). The source must be under the size cap; the copy keeps its mode.
    pub fn copy_file(&self, from: &WorkspacePath, to: &WorkspacePath) -> Result<u64, ScopeError> {
        let src = from.as_path();
        let dst = to.as_path();
        let to_parent = self.parent_of(to)?;
        let file = open_read(src)?;
        let meta = file.metadata().map_err(|e| ScopeError::io(src, e))?;
        check_regular(src, &meta)?;
        if meta.len() > self.max_file_size {
            return Err(ScopeError::TooLarge {
                path: src.to_owned(),
                size: meta.len(),
                limit: self.max_file_size,
            });
        }
        if std::fs::symlink_metadata(dst).is_ok() {
            return Err(ScopeError::AlreadyExists {
                path: dst.to_owned(),
            });
        }
        let mut bytes = Vec::new();
        file.take(self.max_file_size.saturating_add(1))
            .read_to_end(&mut bytes)
            .map_err(|e| ScopeError::io(src, e))?;
        self.create_parents(to, to_parent)?;
        let tmp = new_temp(to_parent, Some(&meta))?;
        write_temp(tmp, &bytes, dst, false)?;
        Ok(u64::try_from(bytes.len()).unwrap_or(u64::MAX))
    }

    /// Metadata of `path`, without following a final symlink.
    pub fn stat(&self, path: &WorkspacePath) -> Result<FileStat, ScopeError> {
        let abs = path.as_path();
        let meta = std::fs::symlink_metadata(abs).map_err(|e| ScopeError::io(abs, e))?;
        let kind = self.kind_of(path)?;
        let modified_unix = meta
            .modified()
            .ok()
            .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
            .map(|d| d.as_secs());
        #[cfg(unix)]
        let mode = {
            use std::os::unix::fs::PermissionsExt;
            Some(meta.permissions().mode() & 0o7777)
        };
        #[cfg(not(unix))]
        let mode = None;
        Ok(FileStat {
            kind,
            len: meta.len(),
            modified_unix,
            mode,
            readonly: meta.permissions().readonly(),
        })
    }

    /// The parent directory of a path that is not a root.
    fn parent_of<'a>(&self, path: &'a WorkspacePath) -> Result<&'a Path, ScopeError> {
        match path.as_path().parent() {
            Some(parent) if !path.is_root() => Ok(parent),
            _ => Err(ScopeError::InvalidPath {
                requested: path.display_path(),
                reason: "it is a workspace root, which cannot be changed this way".to_owned(),
            }),
        }
    }
}

/// A temp file in `dir`, with the mode of `like` or `0o666` less the umask.
fn new_temp(dir: &Path, like: Option<&Metadata>) -> Result<tempfile::NamedTempFile, ScopeError> {
    let mut builder = tempfile::Builder::new();
    builder.prefix(".cairn-edit-").suffix(".tmp");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        builder.permissions(std::fs::Permissions::from_mode(0o666));
    }
    let tmp = builder
        .tempfile_in(dir)
        .map_err(|e| ScopeError::io(dir, e))?;
    if let Some(meta) = like {
        tmp.as_file()
            .set_permissions(meta.permissions())
            .map_err(|e| ScopeError::io(tmp.path(), e))?;
    }
    Ok(tmp)
}

/// Fill a temp file, sync it and move it to `target` (`clobber` false: fail if it exists).
fn write_temp(
    mut tmp: tempfile::NamedTempFile,
    bytes: &[u8],
    target: &Path,
    clobber: bool,
) -> Result<(), ScopeError> {
    tmp.write_all(bytes)
        .map_err(|e| ScopeError::io(tmp.path(), e))?;
    tmp.as_file()
        .sync_all()
        .map_err(|e| ScopeError::io(tmp.path(), e))?;
    let persisted = if clobber {
        tmp.persist(target).map(drop)
    } else {
        tmp.persist_noclobber(target).map(drop)
    };
    persisted.map_err(|e| ScopeError::io(target, e.error))
}
