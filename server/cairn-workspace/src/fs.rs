//! Reading, writing and listing resolved paths.
//!
//! Every function here takes a [`WorkspacePath`], so it only ever touches a path that passed
//! [`Workspace::resolve`], and reaches it through the `open` module: from a handle on its root,
//! by its canonical relative path, following no symlink (`openat2(RESOLVE_BENEATH |
//! RESOLVE_NO_SYMLINKS)` on Linux, a component-by-component `openat(O_NOFOLLOW)` walk
//! elsewhere). A directory on the path swapped for a symlink after resolution therefore makes
//! the operation fail instead of escaping the root. Reads check the type of what they opened
//! (a FIFO or device is refused without blocking) and its size before reading; writes rename a
//! fresh temp file over the target inside the parent's handle (a rename replaces a symlink, it
//! never follows it).

use std::ffi::OsStr;
use std::io::Read;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use rustix::fs::FileType;

use crate::rewind::After;
use cairn_config::access::Operation;

use crate::entry::{DirEntry, EntryKind, FileStat};
use crate::error::ScopeError;
use crate::open;
use crate::path::WorkspacePath;
use crate::workspace::Workspace;

/// How many leading bytes are searched for a NUL to call a file binary.
const BINARY_SNIFF_LEN: usize = 8 * 1024;

impl Workspace {
    /// The text of a file: the editor's unsaved text and its version when the file is open,
    /// otherwise the file on disk (version `None`).
    ///
    /// Refuses, with a typed error and without blocking: directories, non-regular files, files
    /// over the size cap (judged from metadata before reading), binary files (a NUL in the
    /// first 8 KiB) and invalid UTF-8.
    pub fn read_text(&self, path: &WorkspacePath) -> Result<(String, Option<i32>), ScopeError> {
        self.check(path, Operation::Read)?;
        let abs = path.as_path();
        let limit = self.max_file_size;
        if let Some(doc) = self.open_document(path) {
            // The editor's text is held to the same cap as the disk's.
            let size = u64::try_from(doc.text.len()).unwrap_or(u64::MAX);
            if size > limit {
                return Err(ScopeError::TooLarge {
                    path: abs.to_owned(),
                    size,
                    limit,
                });
            }
            return Ok((doc.text, Some(doc.version)));
        }
        let (file, st) = open::open_regular(path, limit)?;
        let mut bytes = Vec::with_capacity(usize::try_from(open::size(&st)).unwrap_or(0));
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

    /// A regular file opened for a streaming read through the scope, with no size cap: for
    /// callers that read a bounded amount at a time (the data tools over multi-gigabyte files).
    /// Never the editor's unsaved text; the same type checks as [`Workspace::read_text`].
    pub fn open_read(&self, path: &WorkspacePath) -> Result<std::fs::File, ScopeError> {
        self.check(path, Operation::Read)?;
        open::open_regular(path, u64::MAX).map(|(file, _)| file)
    }

    /// Replace (or create) a file's content atomically: a temp file in the same directory,
    /// then a rename over the target. An existing file keeps its permission mode; a new file
    /// gets `0o666` less the umask. Missing parent directories are created beneath the root's
    /// handle, never through a symlink.
    ///
    /// This does not go through the editor; callers check [`Workspace::open_document`] first.
    pub fn write_text_atomic(&self, path: &WorkspacePath, text: &str) -> Result<(), ScopeError> {
        self.write_bytes_atomic(path, text.as_bytes())
    }

    /// [`Workspace::write_text_atomic`] for any bytes (a download, which need not be text).
    pub fn write_bytes_atomic(&self, path: &WorkspacePath, bytes: &[u8]) -> Result<(), ScopeError> {
        self.check(path, Operation::Write)?;
        let abs = path.as_path();
        if path.is_root() {
            return Err(ScopeError::IsADirectory {
                path: abs.to_owned(),
            });
        }
        let parent = open::Parent::open(path, true)?;
        let existing = parent.lstat()?;
        if let Some(st) = &existing {
            if open::file_type(st) == FileType::Symlink {
                // Resolution canonicalised the path, so a symlink here appeared since then.
                return Err(ScopeError::InvalidPath {
                    requested: path.display_path(),
                    reason: "it became a symlink; writes never follow symlinks".to_owned(),
                });
            }
            open::check_regular(abs, open::file_type(st))?;
        }
        // A new file never clobbers: someone may have created it meanwhile (maybe as a symlink).
        let mode = existing.as_ref().map(open::permissions);
        let pending = self.before_change(path);
        parent.write_file(bytes, mode, existing.is_some())?;
        self.after_change(pending, After::Bytes(bytes));
        Ok(())
    }

    /// A file's content copied from `source` (a download too large for memory), as
    /// [`Workspace::write_bytes_atomic`] writes (`replace`) or
    /// [`Workspace::create_bytes_exclusive`] creates (not `replace`): through a temp file
    /// renamed into place, with the same checks.
    pub fn write_from(
        &self,
        path: &WorkspacePath,
        source: &mut dyn Read,
        replace: bool,
    ) -> Result<(), ScopeError> {
        self.check(path, Operation::Write)?;
        let abs = path.as_path();
        if path.is_root() {
            return Err(ScopeError::IsADirectory {
                path: abs.to_owned(),
            });
        }
        self.parent_of(path)?;
        let parent = open::Parent::open(path, true)?;
        let existing = parent.lstat()?;
        match &existing {
            Some(_) if !replace => {
                return Err(ScopeError::AlreadyExists {
                    path: abs.to_owned(),
                });
            }
            Some(st) if open::file_type(st) == FileType::Symlink => {
                return Err(ScopeError::InvalidPath {
                    requested: path.display_path(),
                    reason: "it became a symlink; writes never follow symlinks".to_owned(),
                });
            }
            Some(st) => open::check_regular(abs, open::file_type(st))?,
            None => {}
        }
        let mode = existing.as_ref().map(open::permissions);
        let pending = self.before_change(path);
        parent.write_file_from(source, mode, existing.is_some())?;
        self.after_change(pending, After::Disk(path));
        Ok(())
    }

    /// The entries of a directory, sorted by name; symlinks are reported, never followed.
    pub fn list_dir(&self, path: &WorkspacePath) -> Result<Vec<DirEntry>, ScopeError> {
        let abs = path.as_path();
        let fd = open::open_dir(path)?;
        let mut dir = rustix::fs::Dir::new(fd).map_err(|e| ScopeError::io(abs, e.into()))?;
        let mut entries = Vec::new();
        while let Some(entry) = dir.read() {
            let entry = entry.map_err(|e| ScopeError::io(abs, e.into()))?;
            let name = OsStr::from_bytes(entry.file_name().to_bytes());
            if name == "." || name == ".." {
                continue;
            }
            let kind = match entry.file_type() {
                // Some file systems do not say in the entry: ask, without following.
                FileType::Unknown => {
                    let st = dir.fd().and_then(|fd| open::lstat_at(fd, name));
                    match st {
                        Ok(Some(st)) => entry_kind(open::file_type(&st)),
                        _ => EntryKind::Other,
                    }
                }
                t => entry_kind(t),
            };
            entries.push(DirEntry {
                name: name.to_string_lossy().into_owned(),
                kind,
            });
        }
        entries.sort_by(|a, b| a.name.cmp(&b.name));
        Ok(entries)
    }

    /// What `path` is (without following a final symlink); `NotFound` when it does not exist.
    pub fn kind_of(&self, path: &WorkspacePath) -> Result<EntryKind, ScopeError> {
        Ok(entry_kind(open::file_type(&open::lstat(path)?)))
    }

    /// Whether anything (a file, a directory, a symlink) is at `path`.
    fn exists(&self, path: &WorkspacePath) -> Result<bool, ScopeError> {
        match open::lstat(path) {
            Ok(_) => Ok(true),
            Err(ScopeError::NotFound { .. }) => Ok(false),
            Err(e) => Err(e),
        }
    }
}

fn entry_kind(t: FileType) -> EntryKind {
    match t {
        FileType::Symlink => EntryKind::Symlink,
        FileType::Directory => EntryKind::Dir,
        FileType::RegularFile => EntryKind::File,
        _ => EntryKind::Other,
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
        self.create_bytes_exclusive(path, text.as_bytes())
    }

    /// [`Workspace::create_text_exclusive`] for any bytes (a download, which need not be text).
    pub fn create_bytes_exclusive(
        &self,
        path: &WorkspacePath,
        bytes: &[u8],
    ) -> Result<(), ScopeError> {
        self.check(path, Operation::Write)?;
        let abs = path.as_path();
        self.parent_of(path)?;
        let parent = open::Parent::open(path, true)?;
        if parent.lstat()?.is_some() {
            return Err(ScopeError::AlreadyExists {
                path: abs.to_owned(),
            });
        }
        let pending = self.before_change(path);
        parent.write_file(bytes, None, false)?;
        self.after_change(pending, After::Bytes(bytes));
        Ok(())
    }

    /// Delete a regular file. Directories, symlinks and special files are refused (a symlink
    /// inside the root resolves to its target, which this would delete; so is the root).
    pub fn remove_file(&self, path: &WorkspacePath) -> Result<(), ScopeError> {
        self.check(path, Operation::Write)?;
        let abs = path.as_path();
        self.parent_of(path)?;
        let parent = open::Parent::open(path, false)?;
        let st = parent.lstat()?.ok_or_else(|| ScopeError::NotFound {
            path: abs.to_owned(),
        })?;
        open::check_regular(abs, open::file_type(&st))?;
        let pending = self.before_change(path);
        parent.unlink()?;
        self.after_change(pending, After::Absent);
        Ok(())
    }

    /// Create a directory and its missing parents; an existing directory is fine, an existing
    /// file is [`ScopeError::NotADirectory`].
    pub fn create_dir(&self, path: &WorkspacePath) -> Result<(), ScopeError> {
        self.check(path, Operation::Write)?;
        open::create_dir_all(path)
    }

    /// Move a regular file or a directory to `to`, which must not exist (never clobbers;
    /// missing parents of `to` are created). The root itself cannot be moved; a symlink or
    /// special file at `from` is refused. Both paths were resolved inside the workspace, and
    /// a rename moves the entry itself, never what a symlink in it points to.
    pub fn rename(&self, from: &WorkspacePath, to: &WorkspacePath) -> Result<(), ScopeError> {
        self.check(from, Operation::Write)?;
        self.check(to, Operation::Write)?;
        let src = from.as_path();
        let dst = to.as_path();
        self.parent_of(from)?;
        self.parent_of(to)?;
        let from_parent = open::Parent::open(from, false)?;
        let st = from_parent.lstat()?.ok_or_else(|| ScopeError::NotFound {
            path: src.to_owned(),
        })?;
        let t = open::file_type(&st);
        if t != FileType::Directory {
            open::check_regular(src, t)?;
        }
        if dst.starts_with(src) {
            return Err(ScopeError::InvalidPath {
                requested: to.display_path(),
                reason: format!("it is inside {}, which is being moved", from.display_path()),
            });
        }
        if self.exists(to)? {
            return Err(ScopeError::AlreadyExists {
                path: dst.to_owned(),
            });
        }
        let to_parent = open::Parent::open(to, true)?;
        let is_file = t == FileType::RegularFile;
        if !is_file {
            self.note_not_checkpointed(from, "moving a directory is not checkpointed");
        }
        let pending = is_file.then(|| (self.before_change(from), self.before_change(to)));
        // Fails when the target appeared meanwhile: no clobbering.
        from_parent.move_to(&to_parent, is_file)?;
        if let Some((from_pending, to_pending)) = pending {
            self.after_change(from_pending, After::Absent);
            self.after_change(to_pending, After::Disk(to));
        }
        Ok(())
    }

    /// Copy a regular file's bytes to `to` (a new file; never clobbers, never follows a symlink
    /// at either end). The source must be under the size cap; the copy keeps its mode.
    pub fn copy_file(&self, from: &WorkspacePath, to: &WorkspacePath) -> Result<u64, ScopeError> {
        self.check(from, Operation::Read)?;
        self.check(to, Operation::Write)?;
        let src = from.as_path();
        let dst = to.as_path();
        self.parent_of(to)?;
        let limit = self.max_file_size;
        let (file, st) = open::open_regular(from, limit)?;
        if self.exists(to)? {
            return Err(ScopeError::AlreadyExists {
                path: dst.to_owned(),
            });
        }
        let mut bytes = Vec::new();
        file.take(limit.saturating_add(1))
            .read_to_end(&mut bytes)
            .map_err(|e| ScopeError::io(src, e))?;
        let size = u64::try_from(bytes.len()).unwrap_or(u64::MAX);
        // It grew after the size check.
        if size > limit {
            return Err(ScopeError::TooLarge {
                path: src.to_owned(),
                size,
                limit,
            });
        }
        let to_parent = open::Parent::open(to, true)?;
        let pending = self.before_change(to);
        to_parent.write_file(&bytes, Some(open::permissions(&st)), false)?;
        self.after_change(pending, After::Bytes(&bytes));
        Ok(size)
    }

    /// The file a download may be saved to at `requested`, checked before anything is fetched:
    /// inside the scope, writable by the user (a protected path passes only with its approval
    /// held), a file (not a root or a directory), replaced only with `overwrite`, and not open
    /// in the editor with unsaved text. Returns the path and whether a file is there now.
    pub fn download_target(
        &self,
        requested: &str,
        overwrite: bool,
    ) -> Result<(WorkspacePath, bool), String> {
        let path = self.resolve(requested).map_err(|e| e.to_string())?;
        if path.is_root() {
            return Err(format!(
                "refused path `{requested}`: it is a workspace root; name a file inside it"
            ));
        }
        self.check(&path, Operation::Write)
            .map_err(|e| e.to_string())?;
        match self.stat(&path) {
            Ok(stat) if stat.kind != EntryKind::File => Err(format!(
                "refused path `{}`: something other than a file is there ({:?})",
                path.display_path(),
                stat.kind
            )),
            Ok(_) if !overwrite => Err(format!(
                "{} already exists; pass overwrite: true to replace it, or choose another path",
                path.display_path()
            )),
            Ok(_) if self.open_buffer(&path).is_some() => Err(format!(
                "{} is open in the editor; close it first, so its unsaved text is not lost",
                path.display_path()
            )),
            Ok(_) => Ok((path, true)),
            Err(ScopeError::NotFound { .. }) => Ok((path, false)),
            Err(e) => Err(e.to_string()),
        }
    }

    /// Metadata of `path`, without following a final symlink.
    pub fn stat(&self, path: &WorkspacePath) -> Result<FileStat, ScopeError> {
        let st = open::lstat(path)?;
        let mode = open::mode_bits(&st);
        Ok(FileStat {
            kind: entry_kind(open::file_type(&st)),
            len: open::size(&st),
            modified_unix: u64::try_from(st.st_mtime).ok(),
            mode: Some(mode),
            readonly: mode & 0o222 == 0,
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
