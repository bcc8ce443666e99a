//! Opening resolved paths beneath a handle on their root, so a swapped directory cannot
//! redirect an operation out of the workspace.
//!
//! [`Workspace::resolve`](crate::Workspace::resolve) proves that a path lies in a root by
//! canonicalising it, but that proof holds at the moment of the check only. If a directory on
//! the path is then swapped for a symlink to `/`, opening the absolute path string would follow
//! the link out of the root. So nothing here opens an absolute path except the root itself:
//! every path is opened from a directory handle on its root, by its canonical relative path,
//! without following any symlink.
//!
//! - On Linux (5.6 and later) one `openat2` call does it, with `RESOLVE_BENEATH |
//!   RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS`: the kernel refuses `..` above the handle,
//!   absolute steps (`EXDEV`) and any symlink (`ELOOP`).
//! - Where `openat2` is missing (`ENOSYS` on older kernels or filtered by seccomp, other
//!   Unixes) the path is walked one component at a time, each directory opened with
//!   `openat(dir, name, O_NOFOLLOW | O_DIRECTORY)` from the previous handle and the last
//!   component with `O_NOFOLLOW`, which follows no symlink either.
//!
//! Why no symlinks at all rather than symlinks that stay beneath the root: the relative path is
//! canonical, so every symlink that existed on it was resolved when it was checked. A symlink
//! met now appeared after the check and is refused whatever it points at. That is the strictest
//! rule, and the fallback walk enforces exactly the same one.
//!
//! Changes then act on a name inside the parent directory's handle ([`Parent`]): a temp file
//! made with `openat(O_CREAT | O_EXCL | O_NOFOLLOW)` and renamed over the target with
//! `renameat`, `unlinkat`, `mkdirat`, `linkat`. No operation re-resolves a path string after
//! the check.
//!
//! The root itself is opened by its canonical absolute path (its last component with
//! `O_NOFOLLOW`): the user chose it, and nothing a tool can write lies above it.

use std::ffi::{OsStr, OsString};
use std::fs::File;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::path::{Component, Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use rustix::fs::{AtFlags, FileType, Mode, OFlags, Stat};
use rustix::io::Errno;

use crate::error::ScopeError;
use crate::path::WorkspacePath;

/// Directory handles used only as the base of `*at` calls. On Linux `O_PATH` needs no read
/// permission on the directory, as plain path lookup does not.
#[cfg(any(target_os = "linux", target_os = "android"))]
const DIR_HANDLE: OFlags = OFlags::PATH.union(OFlags::DIRECTORY).union(OFlags::CLOEXEC);
#[cfg(not(any(target_os = "linux", target_os = "android")))]
const DIR_HANDLE: OFlags = OFlags::RDONLY
    .union(OFlags::DIRECTORY)
    .union(OFlags::CLOEXEC);

/// Reads never block (a FIFO opens at once) and never make a terminal ours.
const READ: OFlags = OFlags::RDONLY
    .union(OFlags::NONBLOCK)
    .union(OFlags::NOCTTY)
    .union(OFlags::CLOEXEC);

/// Why an open failed when a symlink was met where the checked path had none.
const SWAPPED: &str = "a symlink appeared on it after it was checked, and files are opened \
                       without following symlinks";

/// The type of a file from its `stat`.
pub(crate) fn file_type(st: &Stat) -> FileType {
    FileType::from_raw_mode(raw_mode(st))
}

/// Permission bits (with set-id and sticky bits) from a `stat`.
pub(crate) fn permissions(st: &Stat) -> Mode {
    Mode::from_raw_mode(raw_mode(st))
}

// `st_mode` is narrower than `RawMode` on some Unixes and the same type on Linux.
#[allow(clippy::unnecessary_cast)]
fn raw_mode(st: &Stat) -> rustix::fs::RawMode {
    st.st_mode as rustix::fs::RawMode
}

/// Permission bits (`0o644`, with set-id and sticky bits) from a `stat`.
// `st_mode` is narrower than `u32` on some Unixes and the same type on Linux.
#[allow(clippy::unnecessary_cast)]
pub(crate) fn mode_bits(st: &Stat) -> u32 {
    (st.st_mode as u32) & 0o7777
}

/// Size in bytes from a `stat`.
pub(crate) fn size(st: &Stat) -> u64 {
    u64::try_from(st.st_size).unwrap_or(0)
}

/// The handle on `path`'s root.
fn open_root(path: &WorkspacePath) -> Result<OwnedFd, ScopeError> {
    let root = path.root();
    rustix::fs::open(root, DIR_HANDLE | OFlags::NOFOLLOW, Mode::empty())
        .map_err(|e| ScopeError::io(root, e.into()))
}

/// Map a failed open beneath the root: a symlink or an escape met on the way is a denial.
fn open_failed(path: &WorkspacePath, at: &Path, e: Errno) -> ScopeError {
    match e {
        Errno::LOOP | Errno::XDEV => ScopeError::InvalidPath {
            requested: path.display_path(),
            reason: SWAPPED.to_owned(),
        },
        Errno::NOENT => ScopeError::NotFound {
            path: path.as_path().to_owned(),
        },
        e => ScopeError::io(at, e.into()),
    }
}

/// Open a regular file of at most `limit` bytes for reading.
///
/// Its type is checked from `lstat` before opening (so a device is never even opened) and from
/// `fstat` of what was opened (so a swap in between is caught); FIFOs, sockets and devices are
/// refused without blocking, and the size cap is judged from `fstat` before any byte is read.
pub(crate) fn open_regular(path: &WorkspacePath, limit: u64) -> Result<(File, Stat), ScopeError> {
    let abs = path.as_path();
    if path.is_root() {
        return Err(ScopeError::IsADirectory {
            path: abs.to_owned(),
        });
    }
    let parent = Parent::open(path, false)?;
    open_regular_in(parent.dir.as_fd(), path, limit)
}

/// The directory holding `path` (not a root), opened beneath the root as [`Parent`] does, so
/// that a search reading many files of one directory resolves it once ([`open_regular_in`]).
pub(crate) fn open_parent(path: &WorkspacePath) -> Result<OwnedFd, ScopeError> {
    Parent::open(path, false).map(|parent| parent.dir)
}

/// [`open_regular`] of `path` from `dir`, the handle of its parent directory.
pub(crate) fn open_regular_in(
    dir: BorrowedFd<'_>,
    path: &WorkspacePath,
    limit: u64,
) -> Result<(File, Stat), ScopeError> {
    let abs = path.as_path();
    let name = match path.relative().file_name() {
        Some(name) if !path.is_root() => name,
        _ => {
            return Err(ScopeError::IsADirectory {
                path: abs.to_owned(),
            });
        }
    };
    let before = lstat_at(dir, name)
        .map_err(|e| ScopeError::io(abs, e.into()))?
        .ok_or_else(|| ScopeError::NotFound {
            path: abs.to_owned(),
        })?;
    check_regular(abs, file_type(&before))?;
    let fd = open_component(dir, name, READ | OFlags::NOFOLLOW, Mode::empty())
        .map_err(|e| open_failed(path, abs, e))?;
    let st = rustix::fs::fstat(&fd).map_err(|e| ScopeError::io(abs, e.into()))?;
    check_regular(abs, file_type(&st))?;
    if size(&st) > limit {
        return Err(ScopeError::TooLarge {
            path: abs.to_owned(),
            size: size(&st),
            limit,
        });
    }
    Ok((File::from(fd), st))
}

/// Open a directory for listing its entries.
pub(crate) fn open_dir(path: &WorkspacePath) -> Result<OwnedFd, ScopeError> {
    let abs = path.as_path();
    let root = open_root(path)?;
    let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC;
    open_beneath(root.as_fd(), path.relative(), flags, Mode::empty()).map_err(|e| match e {
        Errno::NOTDIR => ScopeError::NotADirectory {
            path: abs.to_owned(),
        },
        e => open_failed(path, abs, e),
    })
}

/// `lstat` of `path`: a final symlink is described, not followed.
pub(crate) fn lstat(path: &WorkspacePath) -> Result<Stat, ScopeError> {
    let abs = path.as_path();
    if path.is_root() {
        let root = open_root(path)?;
        return rustix::fs::fstat(&root).map_err(|e| ScopeError::io(abs, e.into()));
    }
    Parent::open(path, false)?
        .lstat()?
        .ok_or_else(|| ScopeError::NotFound {
            path: abs.to_owned(),
        })
}

/// `lstat` of the entry `name` in `dir`; `None` when there is none.
pub(crate) fn lstat_at(dir: BorrowedFd<'_>, name: &OsStr) -> Result<Option<Stat>, Errno> {
    match rustix::fs::statat(dir, name, AtFlags::SYMLINK_NOFOLLOW) {
        Ok(st) => Ok(Some(st)),
        Err(Errno::NOENT) => Ok(None),
        Err(e) => Err(e),
    }
}

/// Create `path` as a directory, with its missing parents; an existing directory is fine.
pub(crate) fn create_dir_all(path: &WorkspacePath) -> Result<(), ScopeError> {
    let root = open_root(path)?;
    open_dirs(path, root.as_fd(), path.relative(), true).map(drop)
}

/// Refuse anything but a regular file, naming what it is.
pub(crate) fn check_regular(abs: &Path, t: FileType) -> Result<(), ScopeError> {
    match t {
        FileType::RegularFile => Ok(()),
        FileType::Directory => Err(ScopeError::IsADirectory {
            path: abs.to_owned(),
        }),
        other => Err(ScopeError::NotRegularFile {
            path: abs.to_owned(),
            kind: match other {
                FileType::Fifo => "FIFO",
                FileType::Socket => "socket",
                FileType::CharacterDevice => "character device",
                FileType::BlockDevice => "block device",
                FileType::Symlink => "symlink",
                _ => "special file",
            },
        }),
    }
}

/// The directory holding a path's last component, opened beneath the root, and that name.
/// Every change to the path is made through it.
pub(crate) struct Parent<'a> {
    path: &'a WorkspacePath,
    dir: OwnedFd,
    name: &'a OsStr,
}

impl<'a> Parent<'a> {
    /// Open the parent of `path` (not a root), creating missing directories when `create`.
    pub(crate) fn open(path: &'a WorkspacePath, create: bool) -> Result<Parent<'a>, ScopeError> {
        let rel = path.relative();
        let (Some(name), Some(rel_dir)) = (rel.file_name(), rel.parent()) else {
            return Err(ScopeError::InvalidPath {
                requested: path.display_path(),
                reason: "it is a workspace root, which cannot be changed this way".to_owned(),
            });
        };
        let root = open_root(path)?;
        let dir = open_dirs(path, root.as_fd(), rel_dir, create)?;
        Ok(Parent { path, dir, name })
    }

    /// `lstat` of the entry; `None` when there is none.
    pub(crate) fn lstat(&self) -> Result<Option<Stat>, ScopeError> {
        lstat_at(self.dir.as_fd(), self.name)
            .map_err(|e| ScopeError::io(self.path.as_path(), e.into()))
    }

    pub(crate) fn unlink(&self) -> Result<(), ScopeError> {
        rustix::fs::unlinkat(&self.dir, self.name, AtFlags::empty())
            .map_err(|e| ScopeError::io(self.path.as_path(), e.into()))
    }

    /// Give the entry the content `bytes` atomically: a temp file in the same directory, then a
    /// rename over the entry (`clobber`) or to a name that must still be free (not `clobber`;
    /// [`ScopeError::AlreadyExists`] otherwise). A rename replaces a symlink at the target,
    /// never follows it. The file gets `mode`, or `0o666` less the umask.
    pub(crate) fn write_file(
        &self,
        bytes: &[u8],
        mode: Option<Mode>,
        clobber: bool,
    ) -> Result<(), ScopeError> {
        self.write_file_from(&mut &bytes[..], mode, clobber)
    }

    /// [`Parent::write_file`] with the content copied from `source` (a download too large to
    /// hold in memory), still into a temp file renamed into place.
    pub(crate) fn write_file_from(
        &self,
        source: &mut dyn std::io::Read,
        mode: Option<Mode>,
        clobber: bool,
    ) -> Result<(), ScopeError> {
        let target = self.path.as_path();
        let parent_abs = target.parent().unwrap_or(target);
        let (tmp_name, fd) =
            create_temp(self.dir.as_fd()).map_err(|e| ScopeError::io(parent_abs, e.into()))?;
        let tmp = TempGuard {
            dir: self.dir.as_fd(),
            name: Some(tmp_name),
        };
        let tmp_abs = parent_abs.join(tmp.name());
        if let Some(mode) = mode {
            rustix::fs::fchmod(&fd, mode).map_err(|e| ScopeError::io(&tmp_abs, e.into()))?;
        }
        let mut file = File::from(fd);
        std::io::copy(source, &mut file).map_err(|e| ScopeError::io(&tmp_abs, e))?;
        file.sync_all().map_err(|e| ScopeError::io(&tmp_abs, e))?;
        drop(file);
        let moved = if clobber {
            rustix::fs::renameat(&self.dir, tmp.name(), &self.dir, self.name)
        } else {
            rename_noclobber(
                self.dir.as_fd(),
                tmp.name(),
                self.dir.as_fd(),
                self.name,
                true,
            )
        };
        moved.map_err(|e| ScopeError::io(target, e.into()))?;
        tmp.disarm();
        Ok(())
    }

    /// Move the entry to `to`'s name, never replacing anything there
    /// ([`ScopeError::AlreadyExists`]). `is_file` allows a hard link and unlink where the file
    /// system cannot rename without replacing.
    pub(crate) fn move_to(&self, to: &Parent<'_>, is_file: bool) -> Result<(), ScopeError> {
        rename_noclobber(
            self.dir.as_fd(),
            self.name,
            to.dir.as_fd(),
            to.name,
            is_file,
        )
        .map_err(|e| ScopeError::io(to.path.as_path(), e.into()))
    }
}

/// Open the directory `rel_dir` beneath `root`, creating what is missing when `create`.
fn open_dirs(
    path: &WorkspacePath,
    root: BorrowedFd<'_>,
    rel_dir: &Path,
    create: bool,
) -> Result<OwnedFd, ScopeError> {
    let abs_of = |rel: &Path| path.root().join(rel);
    let not_dir = |at: PathBuf, e: Errno| match e {
        Errno::NOTDIR | Errno::EXIST => ScopeError::NotADirectory { path: at },
        Errno::LOOP | Errno::XDEV => ScopeError::InvalidPath {
            requested: path.display_path(),
            reason: SWAPPED.to_owned(),
        },
        e => ScopeError::io(at, e.into()),
    };
    match open_beneath(root, rel_dir, DIR_HANDLE, Mode::empty()) {
        Ok(dir) => return Ok(dir),
        Err(Errno::NOENT) if create => {}
        Err(Errno::NOENT) => {
            return Err(ScopeError::NotFound {
                path: path.as_path().to_owned(),
            });
        }
        Err(e) => return Err(not_dir(abs_of(rel_dir), e)),
    }
    // Create what is missing one name at a time, each from the handle of the one above.
    let mut dir = open_component(root, OsStr::new("."), DIR_HANDLE, Mode::empty())
        .map_err(|e| ScopeError::io(path.root(), e.into()))?;
    let mut done = PathBuf::new();
    for name in normal_components(rel_dir).map_err(|e| not_dir(abs_of(rel_dir), e))? {
        done.push(name);
        let next = match open_component(dir.as_fd(), name, DIR_HANDLE, Mode::empty()) {
            Err(Errno::NOENT) => {
                match rustix::fs::mkdirat(&dir, name, Mode::RWXU | Mode::RWXG | Mode::RWXO) {
                    // Someone made it meanwhile: it is opened (without following) below.
                    Ok(()) | Err(Errno::EXIST) => {}
                    Err(e) => return Err(not_dir(abs_of(&done), e)),
                }
                open_component(dir.as_fd(), name, DIR_HANDLE, Mode::empty())
            }
            other => other,
        };
        dir = next.map_err(|e| not_dir(abs_of(&done), e))?;
    }
    Ok(dir)
}

/// The names of a canonical relative path; `..` or an absolute part is an escape (`EXDEV`).
fn normal_components(rel: &Path) -> Result<Vec<&OsStr>, Errno> {
    let mut names = Vec::new();
    for c in rel.components() {
        match c {
            Component::Normal(n) => names.push(n),
            Component::CurDir => {}
            Component::ParentDir | Component::RootDir | Component::Prefix(_) => {
                return Err(Errno::XDEV);
            }
        }
    }
    Ok(names)
}

/// Open `rel` (canonical and relative) beneath `root` without following any symlink.
/// `flags` must not create: creation is done by name in a [`Parent`].
pub(crate) fn open_beneath(
    root: BorrowedFd<'_>,
    rel: &Path,
    flags: OFlags,
    mode: Mode,
) -> Result<OwnedFd, Errno> {
    let rel = if rel.as_os_str().is_empty() {
        Path::new(".")
    } else {
        rel
    };
    #[cfg(any(target_os = "linux", target_os = "android"))]
    if let Some(result) = linux::open_beneath(root, rel, flags, mode) {
        return result;
    }
    walk_beneath(root, rel, flags, mode)
}

/// The portable way: one `openat` per component, none of them following a symlink.
pub(crate) fn walk_beneath(
    root: BorrowedFd<'_>,
    rel: &Path,
    flags: OFlags,
    mode: Mode,
) -> Result<OwnedFd, Errno> {
    let names = normal_components(rel)?;
    let Some((last, dirs)) = names.split_last() else {
        return open_component(root, OsStr::new("."), flags, mode);
    };
    let mut dir: Option<OwnedFd> = None;
    for name in dirs {
        let at = dir.as_ref().map_or(root, AsFd::as_fd);
        dir = Some(open_component(at, name, DIR_HANDLE, Mode::empty())?);
    }
    open_component(dir.as_ref().map_or(root, AsFd::as_fd), last, flags, mode)
}

/// Open one name in `dir` without following it. A symlink is reported as `ELOOP` whatever the
/// flags (with `O_DIRECTORY` the kernel says `ENOTDIR`, with `O_PATH` it would open the link).
fn open_component(
    dir: BorrowedFd<'_>,
    name: &OsStr,
    flags: OFlags,
    mode: Mode,
) -> Result<OwnedFd, Errno> {
    if name.is_empty() || name == ".." || name.as_encoded_bytes().contains(&b'/') {
        return Err(Errno::XDEV);
    }
    match rustix::fs::openat(dir, name, flags | OFlags::NOFOLLOW | OFlags::CLOEXEC, mode) {
        Ok(fd) => {
            if flags.contains(OFlags::PATH) && !flags.contains(OFlags::DIRECTORY) {
                let st = rustix::fs::fstat(&fd)?;
                if file_type(&st) == FileType::Symlink {
                    return Err(Errno::LOOP);
                }
            }
            Ok(fd)
        }
        Err(Errno::NOTDIR) if is_symlink(dir, name) => Err(Errno::LOOP),
        Err(e) => Err(e),
    }
}

fn is_symlink(dir: BorrowedFd<'_>, name: &OsStr) -> bool {
    matches!(lstat_at(dir, name), Ok(Some(st)) if file_type(&st) == FileType::Symlink)
}

/// Rename without replacing anything at the target. `renameat2(RENAME_NOREPLACE)` where the
/// kernel and file system have it; otherwise a hard link (which fails on an existing target)
/// and an unlink for files, and a check then a rename for directories.
fn rename_noclobber(
    from_dir: BorrowedFd<'_>,
    from: &OsStr,
    to_dir: BorrowedFd<'_>,
    to: &OsStr,
    is_file: bool,
) -> Result<(), Errno> {
    #[cfg(any(target_os = "linux", target_os = "android"))]
    match rustix::fs::renameat_with(
        from_dir,
        from,
        to_dir,
        to,
        rustix::fs::RenameFlags::NOREPLACE,
    ) {
        Err(Errno::INVAL | Errno::NOSYS | Errno::NOTSUP) => {}
        other => return other,
    }
    if is_file {
        match rustix::fs::linkat(from_dir, from, to_dir, to, AtFlags::empty()) {
            Ok(()) => return rustix::fs::unlinkat(from_dir, from, AtFlags::empty()),
            Err(Errno::EXIST) => return Err(Errno::EXIST),
            // No hard links on this file system: fall back to the checked rename.
            Err(_) => {}
        }
    }
    if lstat_at(to_dir, to)?.is_some() {
        return Err(Errno::EXIST);
    }
    rustix::fs::renameat(from_dir, from, to_dir, to)
}

/// Create a new, empty temp file in `dir` under a random name nobody else uses.
fn create_temp(dir: BorrowedFd<'_>) -> Result<(OsString, OwnedFd), Errno> {
    let flags = OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL;
    let mode = Mode::RUSR | Mode::WUSR | Mode::RGRP | Mode::WGRP | Mode::ROTH | Mode::WOTH;
    let mut last = Errno::EXIST;
    for _ in 0..16 {
        let name = temp_name();
        match open_component(dir, &name, flags, mode) {
            Ok(fd) => return Ok((name, fd)),
            Err(Errno::EXIST) => last = Errno::EXIST,
            Err(e) => return Err(e),
        }
    }
    Err(last)
}

/// `.cairn-edit-<random>.tmp`: unpredictable, so nobody can plant a file under it first
/// (`O_EXCL` would refuse it anyway).
fn temp_name() -> OsString {
    use std::hash::{BuildHasher, Hasher};
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    // `RandomState` is seeded from the OS's randomness.
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u64(COUNTER.fetch_add(1, Ordering::Relaxed));
    h.write_u32(std::process::id());
    if let Ok(t) = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH) {
        h.write_u128(t.as_nanos());
    }
    OsString::from(format!(".cairn-edit-{:016x}.tmp", h.finish()))
}

/// Removes a temp file that was not renamed into place.
struct TempGuard<'a> {
    dir: BorrowedFd<'a>,
    name: Option<OsString>,
}

impl TempGuard<'_> {
    fn name(&self) -> &OsStr {
        self.name.as_deref().unwrap_or_default()
    }

    fn disarm(mut self) {
        self.name = None;
    }
}

impl Drop for TempGuard<'_> {
    fn drop(&mut self) {
        if let Some(name) = self.name.take() {
            // Best effort: the error that brought us here is the one worth reporting.
            let _ = rustix::fs::unlinkat(self.dir, &name, AtFlags::empty());
        }
    }
}

#[cfg(any(target_os = "linux", target_os = "android"))]
mod linux {
    use std::os::fd::{BorrowedFd, OwnedFd};
    use std::path::Path;
    use std::sync::atomic::{AtomicBool, Ordering};

    use rustix::fs::{Mode, OFlags, ResolveFlags};
    use rustix::io::Errno;

    /// Cleared at the first `ENOSYS`, so an old kernel costs one failed call per process.
    static OPENAT2: AtomicBool = AtomicBool::new(true);

    /// `RESOLVE_NO_SYMLINKS` (see the module docs for why no symlink at all) implies
    /// `RESOLVE_NO_MAGICLINKS`; both are named so the intent survives an edit.
    pub(super) const RESOLVE: ResolveFlags = ResolveFlags::BENEATH
        .union(ResolveFlags::NO_SYMLINKS)
        .union(ResolveFlags::NO_MAGICLINKS);

    /// `None` when `openat2` cannot decide and the walk must.
    pub(super) fn open_beneath(
        root: BorrowedFd<'_>,
        rel: &Path,
        flags: OFlags,
        mode: Mode,
    ) -> Option<Result<OwnedFd, Errno>> {
        if !OPENAT2.load(Ordering::Relaxed) {
            return None;
        }
        match openat2(root, rel, flags, mode) {
            Err(Errno::NOSYS) => {
                OPENAT2.store(false, Ordering::Relaxed);
                None
            }
            // Some container seccomp profiles answer EPERM for syscalls they do not know, and
            // EAGAIN means a concurrent rename made the kernel unsure: the walk decides both.
            Err(Errno::PERM | Errno::AGAIN) => None,
            other => Some(other),
        }
    }

    pub(super) fn openat2(
        root: BorrowedFd<'_>,
        rel: &Path,
        flags: OFlags,
        mode: Mode,
    ) -> Result<OwnedFd, Errno> {
        rustix::fs::openat2(root, rel, flags | OFlags::CLOEXEC, mode, RESOLVE)
    }
}

#[cfg(test)]
mod tests {
    //! Both ways of opening beneath a root refuse the same escapes; the Linux one is also run
    //! through the public API by `tests/escape.rs`, the walk only here.

    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use std::os::unix::fs::symlink;

    use super::*;

    type Opener = fn(BorrowedFd<'_>, &Path, OFlags, Mode) -> Result<OwnedFd, Errno>;

    fn openers() -> Vec<(&'static str, Opener)> {
        let mut v: Vec<(&'static str, Opener)> = vec![("walk", walk_beneath)];
        #[cfg(any(target_os = "linux", target_os = "android"))]
        {
            let probe = tempfile::tempdir().unwrap();
            let fd = rustix::fs::open(probe.path(), DIR_HANDLE, Mode::empty()).unwrap();
            // A kernel without openat2 leaves only the walk to test.
            let probe = linux::openat2(fd.as_fd(), Path::new("."), DIR_HANDLE, Mode::empty());
            if probe.err() != Some(Errno::NOSYS) {
                v.push(("openat2", linux::openat2));
            }
        }
        v
    }

    #[test]
    fn both_openers_refuse_escapes() {
        let tmp = tempfile::tempdir().unwrap();
        let base = tmp.path();
        std::fs::create_dir_all(base.join("ws/d")).unwrap();
        std::fs::create_dir_all(base.join("outside")).unwrap();
        std::fs::write(base.join("ws/d/f"), "inside").unwrap();
        std::fs::write(base.join("outside/f"), "outside").unwrap();
        symlink(base.join("outside"), base.join("ws/abs")).unwrap();
        symlink("../outside", base.join("ws/rel")).unwrap();
        symlink("d", base.join("ws/inner")).unwrap();
        symlink("/proc/self/root", base.join("ws/magic")).unwrap();
        let root = rustix::fs::open(base.join("ws"), DIR_HANDLE, Mode::empty()).unwrap();
        for (how, open) in openers() {
            let check = |rel: &str, expected: Result<(), Errno>| {
                let got = open(root.as_fd(), Path::new(rel), READ, Mode::empty()).map(drop);
                assert_eq!(got, expected, "{how}: {rel}");
            };
            check("d/f", Ok(()));
            check(".", Ok(()));
            check("abs/f", Err(Errno::LOOP));
            check("rel/f", Err(Errno::LOOP));
            check("abs", Err(Errno::LOOP));
            // Even a symlink that stays inside: the canonical path has none.
            check("inner/f", Err(Errno::LOOP));
            check("magic/etc/passwd", Err(Errno::LOOP));
            check("missing/f", Err(Errno::NOENT));
            let parent = open(root.as_fd(), Path::new("../outside/f"), READ, Mode::empty());
            assert_eq!(parent.map(drop), Err(Errno::XDEV), "{how}: ..");
            let dir_of_link = open(root.as_fd(), Path::new("abs"), DIR_HANDLE, Mode::empty());
            assert_eq!(dir_of_link.map(drop), Err(Errno::LOOP), "{how}: dir handle");
        }
    }

    /// The walk under the race of `tests/escape.rs`, which only reaches `openat2` on Linux.
    #[test]
    fn walk_never_leaves_the_root_under_a_race() {
        let tmp = tempfile::tempdir().unwrap();
        let base = tmp.path().to_owned();
        std::fs::create_dir_all(base.join("ws/d")).unwrap();
        std::fs::create_dir_all(base.join("outside")).unwrap();
        std::fs::write(base.join("ws/d/f"), "inside").unwrap();
        std::fs::write(base.join("outside/f"), "SENTINEL").unwrap();
        let root = rustix::fs::open(base.join("ws"), DIR_HANDLE, Mode::empty()).unwrap();
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let flipper = {
            let (base, stop) = (base.clone(), stop.clone());
            std::thread::spawn(move || {
                let (d, real, link) = (base.join("ws/d"), base.join("ws/real"), base.join("ws/l"));
                std::fs::rename(&d, &real).unwrap();
                symlink(base.join("outside"), &link).unwrap();
                let mut i = 0;
                while !stop.load(Ordering::Relaxed) && i < 20_000 {
                    std::fs::rename(if i % 2 == 0 { &link } else { &real }, &d).unwrap();
                    std::fs::rename(&d, if i % 2 == 0 { &link } else { &real }).unwrap();
                    i += 1;
                }
            })
        };
        for _ in 0..5_000 {
            if let Ok(fd) = walk_beneath(root.as_fd(), Path::new("d/f"), READ, Mode::empty()) {
                let text = std::io::read_to_string(File::from(fd)).unwrap();
                assert_eq!(text, "inside");
            }
        }
        stop.store(true, Ordering::Relaxed);
        flipper.join().unwrap();
    }
}
