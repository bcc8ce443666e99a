//! A workspace root sent to a container as a tar archive, and what a writable run changed
//! brought back through the scope.
//!
//! A container on another machine cannot mount the workspace, so it gets a copy: every file a
//! mount would show, which is the root less its [`Masks`] (protected and unreadable files,
//! `.git`, special files, directories hidden whole), read through the scope and sent complete or
//! not at all. Past the size cap the run is refused before anything is sent.
//!
//! What comes back is untrusted: the program in the container wrote it. [`Workspace::apply_returned`]
//! compares it with what was sent and applies only the differences, each through the scope's
//! write primitives, so the user's grants, the protected paths and the checkpoints of a rewind
//! apply exactly as to any other tool: a protected path is refused, a file changed on disk
//! since it was sent is a conflict left alone, and symlinks, hard links and special files the
//! run made are not brought back. Past the caps on files or bytes nothing at all is applied.

use std::collections::{BTreeMap, HashSet};
use std::io::Read;
use std::path::{Component, Path, PathBuf};

use cairn_config::access::Operation;

use crate::checkpoint::hash_bytes;
use crate::error::ScopeError;
use crate::masks::Masks;
use crate::path::WorkspacePath;
use crate::workspace::Workspace;

/// What one file looked like when it was sent: its size and content hash.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sent {
    pub len: u64,
    pub hash: String,
}

/// A root packed for a container.
#[derive(Debug, Clone, Default)]
pub struct Packed {
    /// The tar archive, paths relative to the root.
    pub tar: Vec<u8>,
    /// Each regular file sent, by its path relative to the root.
    pub files: BTreeMap<PathBuf, Sent>,
    /// Symlinks sent, with their targets (relative path -> target as written).
    pub links: BTreeMap<PathBuf, PathBuf>,
    /// Bytes of file content sent.
    pub bytes: u64,
}

/// How a packed tree is laid out for the container's user.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PackMode {
    /// Files `0644` (`0755` when executable) and directories `0755`: readable by the sandbox's
    /// user, writable by nobody but root, which the sandbox never is.
    ReadOnly,
    /// Files `0666` (`0777`) and directories `0777`: the run may change anything, and what it
    /// changed comes back through [`Workspace::apply_returned`].
    Writable,
}

/// Why a root was not packed or what came back was not applied.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[non_exhaustive]
pub enum ArchiveError {
    #[error(
        "refused to send the workspace `{root}` to the sandbox: its files come to {} in {files} \
         files, over the {} of `sandbox.workspace_max_mib`; nothing was sent. Open a smaller \
         folder as the workspace, hide bulky directories from the sandbox with a read rule, \
         or raise `sandbox.workspace_max_mib`",
        size(*bytes), size(*limit)
    )]
    TooBig {
        root: String,
        bytes: u64,
        files: usize,
        limit: u64,
    },
    #[error("refused to send the workspace `{root}` to the sandbox: {reason}; nothing was sent")]
    Unreadable { root: String, reason: String },
    #[error(
        "the run's changes were not applied: {what}, over the limit of {limit} \
         (`sandbox.{key}`); nothing in the workspace was changed"
    )]
    TooMuchBack {
        what: String,
        limit: String,
        key: &'static str,
    },
    #[error(
        "the run's changes were not applied: the archive it returned is damaged ({0}); nothing in the workspace was changed"
    )]
    Damaged(String),
}

/// `bytes` as people read sizes.
fn size(bytes: u64) -> String {
    const MIB: f64 = 1024.0 * 1024.0;
    #[allow(clippy::cast_precision_loss)]
    let b = bytes as f64;
    if b >= 1024.0 * MIB {
        format!("{:.1} GiB", b / (1024.0 * MIB))
    } else if b >= MIB {
        format!("{:.1} MiB", b / MIB)
    } else {
        format!("{bytes} bytes")
    }
}

/// What a writable run changed and what became of each change.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Applied {
    /// Changed files written, created files and deleted files (paths as shown to the user).
    pub changed: Vec<String>,
    pub created: Vec<String>,
    pub deleted: Vec<String>,
    /// Changes not applied, with why (a protected path, a grant, a symlink...).
    pub refused: Vec<(String, String)>,
    /// Files changed on disk while the run ran: the run's version was not applied.
    pub conflicts: Vec<String>,
    /// The workspace directory the paths above are relative to.
    pub root: PathBuf,
}

impl Applied {
    pub fn is_empty(&self) -> bool {
        self.changed.is_empty()
            && self.created.is_empty()
            && self.deleted.is_empty()
            && self.refused.is_empty()
            && self.conflicts.is_empty()
    }

    /// What the run's result says about the workspace.
    pub fn to_text(&self) -> String {
        if self.is_empty() {
            return "The run changed no file in the workspace.".to_owned();
        }
        let mut out = String::new();
        let mut list = |title: &str, items: &[String]| {
            if !items.is_empty() {
                out.push_str(&format!("{title}: {}\n", items.join(", ")));
            }
        };
        list("Changed in the workspace", &self.changed);
        list("Created in the workspace", &self.created);
        list("Deleted from the workspace", &self.deleted);
        list(
            "Not applied, changed on disk while the run ran",
            &self.conflicts,
        );
        for (path, why) in &self.refused {
            out.push_str(&format!("Not applied: {path}: {why}\n"));
        }
        out.trim_end().to_owned()
    }

    /// Each file the run touched, for the editor: (`file://` URI, applied, why
    /// not), as the file tools report their edits.
    pub fn edits(&self) -> Vec<(String, bool, Option<String>)> {
        let uri = |shown: &str| crate::path::file_uri(&self.root.join(shown));
        let done = self
            .changed
            .iter()
            .chain(&self.created)
            .chain(&self.deleted);
        let mut out: Vec<_> = done.map(|p| (uri(p), true, None)).collect();
        out.extend(self.conflicts.iter().map(|p| {
            (
                uri(p),
                false,
                Some("changed on disk while the run ran".to_owned()),
            )
        }));
        out.extend(
            self.refused
                .iter()
                .map(|(p, why)| (uri(p), false, Some(why.clone()))),
        );
        out
    }
}

/// The caps on what a writable run may bring back.
#[derive(Debug, Clone, Copy)]
pub struct ReturnLimits {
    pub max_files: usize,
    pub max_bytes: u64,
}

impl Workspace {
    /// The files under `root` a container may see, less `masks`, as a tar archive; refused
    /// whole when their content is over `max_bytes`.
    pub fn pack(
        &self,
        root: &WorkspacePath,
        masks: &Masks,
        mode: PackMode,
        max_bytes: u64,
    ) -> Result<Packed, ArchiveError> {
        use std::os::unix::fs::PermissionsExt;
        let root_path = root.as_path();
        let display = || root_path.display().to_string();
        let hidden_files: HashSet<&Path> = masks.files.iter().map(PathBuf::as_path).collect();
        let hidden_dirs: HashSet<&Path> = masks.dirs.iter().map(PathBuf::as_path).collect();
        // Walk first: the size is known, and a workspace too big is refused before any read.
        let mut dirs: Vec<PathBuf> = Vec::new();
        let mut files: Vec<(PathBuf, u64, bool)> = Vec::new();
        let mut links: Vec<(PathBuf, PathBuf)> = Vec::new();
        let mut total = 0u64;
        let mut pending = vec![root_path.to_path_buf()];
        while let Some(dir) = pending.pop() {
            let listing = std::fs::read_dir(&dir).map_err(|e| ArchiveError::Unreadable {
                root: display(),
                reason: format!("{} cannot be listed ({e})", dir.display()),
            })?;
            let mut entries: Vec<_> = listing.filter_map(Result::ok).collect();
            entries.sort_by_key(std::fs::DirEntry::file_name);
            for entry in entries {
                let path = entry.path();
                let Ok(kind) = entry.file_type() else {
                    continue;
                };
                if kind.is_dir() {
                    if !hidden_dirs.contains(path.as_path()) {
                        dirs.push(path.clone());
                        pending.push(path);
                    }
                } else if kind.is_symlink() {
                    // Sent as written: inside the container it resolves among the files sent,
                    // where nothing hidden exists.
                    if let Ok(target) = std::fs::read_link(&path) {
                        links.push((path, target));
                    }
                } else if kind.is_file() && !hidden_files.contains(path.as_path()) {
                    let Ok(meta) = entry.metadata() else { continue };
                    total = total.saturating_add(meta.len());
                    let exec = meta.permissions().mode() & 0o111 != 0;
                    files.push((path, meta.len(), exec));
                }
                // Special files are masked, hence never sent.
            }
        }
        if total > max_bytes {
            return Err(ArchiveError::TooBig {
                root: display(),
                bytes: total,
                files: files.len(),
                limit: max_bytes,
            });
        }
        let (file_mode, exec_mode, dir_mode) = match mode {
            PackMode::ReadOnly => (0o644, 0o755, 0o755),
            PackMode::Writable => (0o666, 0o777, 0o777),
        };
        let rel = |p: &Path| p.strip_prefix(root_path).map(Path::to_path_buf).ok();
        let mut packed = Packed::default();
        let mut tar = tar::Builder::new(Vec::new());
        let io = |e: std::io::Error| ArchiveError::Unreadable {
            root: display(),
            reason: e.to_string(),
        };
        // Parents before their children: `dirs` is in walk order.
        dirs.sort();
        for dir in &dirs {
            let Some(r) = rel(dir) else { continue };
            let mut header = header(tar::EntryType::Directory, dir_mode, 0);
            tar.append_data(&mut header, &r, std::io::empty())
                .map_err(io)?;
        }
        for (path, _, exec) in files {
            let Some(r) = rel(&path) else { continue };
            let wp = WorkspacePath::new(root.root(), path.clone(), true);
            // Through the scope: a file swapped for a symlink since the walk is not followed.
            let bytes = match self.open_read(&wp) {
                Ok(mut file) => {
                    let mut bytes = Vec::new();
                    file.read_to_end(&mut bytes).map_err(io)?;
                    bytes
                }
                // Gone since the walk, or no longer a regular file: not sent.
                Err(ScopeError::NotFound { .. } | ScopeError::InvalidPath { .. }) => continue,
                Err(e) => {
                    return Err(ArchiveError::Unreadable {
                        root: display(),
                        reason: e.to_string(),
                    });
                }
            };
            let len = bytes.len() as u64;
            packed.bytes = packed.bytes.saturating_add(len);
            if packed.bytes > max_bytes {
                return Err(ArchiveError::TooBig {
                    root: display(),
                    bytes: packed.bytes,
                    files: packed.files.len(),
                    limit: max_bytes,
                });
            }
            let mut header = header(
                tar::EntryType::Regular,
                if exec { exec_mode } else { file_mode },
                len,
            );
            tar.append_data(&mut header, &r, bytes.as_slice())
                .map_err(io)?;
            packed.files.insert(
                r,
                Sent {
                    len,
                    hash: hash_bytes(&bytes),
                },
            );
        }
        for (path, target) in links {
            let Some(r) = rel(&path) else { continue };
            let mut header = header(tar::EntryType::Symlink, 0o777, 0);
            tar.append_link(&mut header, &r, &target).map_err(io)?;
            packed.links.insert(r, target);
        }
        packed.tar = tar.into_inner().map_err(io)?;
        Ok(packed)
    }

    /// Applies what a writable run left in its copy of `root` (`tar`, paths relative to the
    /// root, as the container returned them) against what was `sent`: each change through the
    /// scope, or refused, or a conflict; nothing at all past `limits`.
    pub fn apply_returned(
        &self,
        root: &WorkspacePath,
        tar: &[u8],
        sent: &Packed,
        limits: ReturnLimits,
    ) -> Result<Applied, ArchiveError> {
        let returned = read_returned(tar, limits)?;
        let mut applied = Applied {
            root: root.as_path().to_path_buf(),
            ..Applied::default()
        };
        let show = |rel: &Path| rel.display().to_string();
        for (rel, why) in returned.refused {
            applied.refused.push((show(&rel), why));
        }
        for (rel, target) in &returned.links {
            if sent.links.get(rel) != Some(target) {
                applied.refused.push((
                    show(rel),
                    "the run made a symlink; symlinks are not brought back from a sandbox"
                        .to_owned(),
                ));
            }
        }
        for (rel, bytes) in &returned.files {
            let hash = hash_bytes(bytes);
            let before = sent.files.get(rel);
            if before.is_some_and(|s| s.hash == hash) {
                continue;
            }
            let Some(wp) = self.returned_path(root, rel, &mut applied) else {
                continue;
            };
            let on_disk = crate::rewind::disk_hash(&wp).ok().flatten();
            let result = match before {
                Some(s) if on_disk.as_deref() != Some(s.hash.as_str()) => {
                    applied.conflicts.push(show(rel));
                    continue;
                }
                Some(_) => self
                    .write_bytes_atomic(&wp, bytes)
                    .map(|()| &mut applied.changed),
                None if on_disk.is_some() => {
                    // Hidden from the run (a protected file) or created meanwhile: either way
                    // not the run's to replace.
                    let why = match self.check(&wp, Operation::Write) {
                        Err(e) => e.to_string(),
                        Ok(()) => {
                            applied.conflicts.push(show(rel));
                            continue;
                        }
                    };
                    applied.refused.push((show(rel), why));
                    continue;
                }
                None => self
                    .create_bytes_exclusive(&wp, bytes)
                    .map(|()| &mut applied.created),
            };
            match result {
                Ok(list) => list.push(show(rel)),
                Err(e) => applied.refused.push((show(rel), e.to_string())),
            }
        }
        for (rel, s) in &sent.files {
            if returned.files.contains_key(rel) || returned.other.contains(rel) {
                continue;
            }
            let Some(wp) = self.returned_path(root, rel, &mut applied) else {
                continue;
            };
            let on_disk = crate::rewind::disk_hash(&wp).ok().flatten();
            match on_disk {
                None => {}
                Some(h) if h != s.hash => applied.conflicts.push(show(rel)),
                Some(_) => match self.remove_file(&wp) {
                    Ok(()) => applied.deleted.push(show(rel)),
                    Err(e) => applied.refused.push((show(rel), e.to_string())),
                },
            }
        }
        Ok(applied)
    }

    /// `rel` under `root` through the scope, or the refusal noted.
    fn returned_path(
        &self,
        root: &WorkspacePath,
        rel: &Path,
        applied: &mut Applied,
    ) -> Option<WorkspacePath> {
        let abs = root.as_path().join(rel);
        match self.resolve(&abs.to_string_lossy()) {
            Ok(wp) => Some(wp),
            Err(e) => {
                applied
                    .refused
                    .push((rel.display().to_string(), e.to_string()));
                None
            }
        }
    }
}

fn header(kind: tar::EntryType, mode: u32, len: u64) -> tar::Header {
    let mut header = tar::Header::new_gnu();
    header.set_entry_type(kind);
    header.set_mode(mode);
    header.set_size(len);
    header.set_uid(0);
    header.set_gid(0);
    header.set_mtime(0);
    header
}

/// What a run's copy held, read from the container's archive.
#[derive(Default)]
struct Returned {
    files: BTreeMap<PathBuf, Vec<u8>>,
    links: BTreeMap<PathBuf, PathBuf>,
    /// Entries that are there but not brought back (symlinks and the like): not deletions.
    other: HashSet<PathBuf>,
    refused: Vec<(PathBuf, String)>,
}

/// Reads the archive of the container's copy, checking every name and the caps before anything
/// is applied. The archive's first component is the copy's own directory (`workspace/`).
fn read_returned(tar: &[u8], limits: ReturnLimits) -> Result<Returned, ArchiveError> {
    let mut out = Returned::default();
    let mut archive = tar::Archive::new(tar);
    let entries = archive
        .entries()
        .map_err(|e| ArchiveError::Damaged(e.to_string()))?;
    let mut files = 0usize;
    let mut bytes = 0u64;
    for entry in entries {
        let mut entry = entry.map_err(|e| ArchiveError::Damaged(e.to_string()))?;
        let raw = entry.path_bytes().into_owned();
        let Some(rel) = relative_name(&raw) else {
            if !raw.is_empty() && raw.as_slice() != b"workspace" && raw.as_slice() != b"workspace/"
            {
                out.refused.push((
                    PathBuf::from(String::from_utf8_lossy(&raw).into_owned()),
                    "not a plain path inside the workspace".to_owned(),
                ));
            }
            continue;
        };
        let kind = entry.header().entry_type();
        if kind.is_dir() {
            continue;
        }
        files += 1;
        if files > limits.max_files {
            return Err(ArchiveError::TooMuchBack {
                what: format!("the run left more than {} files", limits.max_files),
                limit: format!("{} files", limits.max_files),
                key: "return_max_files",
            });
        }
        if kind.is_symlink() {
            let target = entry
                .link_name()
                .ok()
                .flatten()
                .map(|t| t.into_owned())
                .unwrap_or_default();
            out.other.insert(rel.clone());
            out.links.insert(rel, target);
        } else if kind.is_file() || kind == tar::EntryType::Continuous {
            let len = entry.header().size().unwrap_or(0);
            bytes = bytes.saturating_add(len);
            if bytes > limits.max_bytes {
                return Err(ArchiveError::TooMuchBack {
                    what: format!(
                        "the run's files come to more than {}",
                        size(limits.max_bytes)
                    ),
                    limit: size(limits.max_bytes),
                    key: "workspace_max_mib",
                });
            }
            let mut content = Vec::with_capacity(usize::try_from(len).unwrap_or(0));
            entry
                .read_to_end(&mut content)
                .map_err(|e| ArchiveError::Damaged(e.to_string()))?;
            out.files.insert(rel, content);
        } else {
            let what = if kind.is_hard_link() {
                "the run made a hard link; links are not brought back from a sandbox"
            } else {
                "the run made a special file; only regular files are brought back"
            };
            out.other.insert(rel.clone());
            out.refused.push((rel, what.to_owned()));
        }
    }
    Ok(out)
}

/// An archive name as a path relative to the copy's directory: its first component dropped,
/// and only plain components after it (no `..`, no root, no NUL).
fn relative_name(raw: &[u8]) -> Option<PathBuf> {
    use std::os::unix::ffi::OsStrExt;
    if raw.contains(&0) {
        return None;
    }
    let path = Path::new(std::ffi::OsStr::from_bytes(raw));
    let mut components = path.components();
    match components.next()? {
        Component::Normal(_) => {}
        _ => return None,
    }
    let rest: PathBuf = components.clone().collect();
    if rest.as_os_str().is_empty() || components.any(|c| !matches!(c, Component::Normal(_))) {
        return None;
    }
    Some(rest)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::MaskLimits;
    use cairn_config::access::{AccessPolicy, AccessRules};

    fn workspace(dir: &Path) -> Workspace {
        Workspace::new(vec![dir.to_path_buf()])
            .unwrap()
            .with_access(
                |_| AccessRules::new("ada@example.com", None::<&AccessPolicy>, None),
                crate::ExactApprovals::new(),
            )
    }

    fn tree(files: &[(&str, &str)]) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        for (f, text) in files {
            let path = dir.path().join(f);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        }
        dir
    }

    const ROOMY: MaskLimits = MaskLimits {
        max_entries: 10_000,
        max_mounts: 10_000,
    };

    fn names(packed: &Packed) -> Vec<String> {
        let mut archive = tar::Archive::new(packed.tar.as_slice());
        archive
            .entries()
            .unwrap()
            .map(|e| e.unwrap().path().unwrap().display().to_string())
            .collect()
    }

    /// The archive as a container returns it: under `workspace/`, with `edit` applied.
    fn returned(
        packed: &Packed,
        edit: impl FnOnce(&mut BTreeMap<String, Option<Vec<u8>>>),
    ) -> Vec<u8> {
        let mut files: BTreeMap<String, Option<Vec<u8>>> = BTreeMap::new();
        let mut archive = tar::Archive::new(packed.tar.as_slice());
        for e in archive.entries().unwrap() {
            let mut e = e.unwrap();
            if e.header().entry_type().is_file() {
                let mut b = Vec::new();
                e.read_to_end(&mut b).unwrap();
                files.insert(e.path().unwrap().display().to_string(), Some(b));
            }
        }
        edit(&mut files);
        let mut tar = tar::Builder::new(Vec::new());
        let mut dir = header(tar::EntryType::Directory, 0o777, 0);
        tar.append_data(&mut dir, "workspace/", std::io::empty())
            .unwrap();
        for (name, bytes) in files {
            if let Some(bytes) = bytes {
                let mut h = header(tar::EntryType::Regular, 0o666, bytes.len() as u64);
                tar.append_data(&mut h, format!("workspace/{name}"), bytes.as_slice())
                    .unwrap();
            }
        }
        tar.into_inner().unwrap()
    }

    const LIMITS: ReturnLimits = ReturnLimits {
        max_files: 100,
        max_bytes: 1 << 20,
    };

    #[test]
    fn a_packed_root_holds_what_a_mount_would_show_and_no_protected_file() {
        let dir = tree(&[
            ("src/main.rs", "fn main() {}\n"),
            (".env", "KEY=1\n"),
            ("node_modules/p/.env", "KEY=2\n"),
            ("node_modules/p/index.js", "1\n"),
            (".git/config", "[core]\n"),
            ("notes.txt", "hi\n"),
        ]);
        let ws = workspace(dir.path());
        let root = ws.resolve(".").unwrap();
        let masks = ws.masks(&root, ROOMY, false).unwrap();
        let packed = ws.pack(&root, &masks, PackMode::ReadOnly, 1 << 20).unwrap();
        let mut got = names(&packed);
        got.sort();
        assert_eq!(
            got,
            [
                "node_modules",
                "node_modules/p",
                "node_modules/p/index.js",
                "notes.txt",
                "src",
                "src/main.rs"
            ]
        );
        assert_eq!(packed.bytes, 18);
    }

    #[test]
    fn a_root_over_the_cap_is_refused_before_anything_is_read() {
        let dir = tree(&[("a.bin", &"x".repeat(3000)), ("b.txt", "y")]);
        let ws = workspace(dir.path());
        let root = ws.resolve(".").unwrap();
        let e = ws
            .pack(&root, &Masks::default(), PackMode::ReadOnly, 2048)
            .unwrap_err();
        assert!(
            e.to_string().contains(
                "come to 3001 bytes in 2 files, over the 2048 bytes of `sandbox.workspace_max_mib`"
            ),
            "{e}"
        );
    }

    #[test]
    fn changes_come_back_through_the_scope_and_protected_paths_are_refused() {
        let dir = tree(&[
            ("a.txt", "a\n"),
            ("gone.txt", "bye\n"),
            ("moved-on.txt", "1\n"),
            (".env", "SECRET=1\n"),
            (".github/workflows/ci.yml", "on: push\n"),
        ]);
        let ws = workspace(dir.path());
        let root = ws.resolve(".").unwrap();
        let masks = ws.masks(&root, ROOMY, true).unwrap();
        let packed = ws.pack(&root, &masks, PackMode::Writable, 1 << 20).unwrap();
        assert!(!packed.files.contains_key(Path::new(".env")));
        // The user edits a file while the run runs.
        std::fs::write(dir.path().join("moved-on.txt"), "2\n").unwrap();
        let back = returned(&packed, |files| {
            files.insert("a.txt".into(), Some(b"A\n".to_vec()));
            files.insert("gone.txt".into(), None);
            files.insert("new/b.txt".into(), Some(b"b\n".to_vec()));
            files.insert("moved-on.txt".into(), Some(b"3\n".to_vec()));
            files.insert(".env".into(), Some(b"SECRET=stolen\n".to_vec()));
            files.insert(
                ".github/workflows/ci.yml".into(),
                Some(b"on: push\nrun: curl evil\n".to_vec()),
            );
        });
        let applied = ws.apply_returned(&root, &back, &packed, LIMITS).unwrap();
        assert_eq!(applied.changed, ["a.txt"]);
        assert_eq!(applied.created, ["new/b.txt"]);
        assert_eq!(applied.deleted, ["gone.txt"]);
        assert_eq!(applied.conflicts, ["moved-on.txt"]);
        let refused: Vec<&str> = applied.refused.iter().map(|(p, _)| p.as_str()).collect();
        assert_eq!(refused, [".env", ".github/workflows/ci.yml"], "{applied:?}");
        let read = |p: &str| std::fs::read_to_string(dir.path().join(p)).ok();
        assert_eq!(read("a.txt").as_deref(), Some("A\n"));
        assert_eq!(read("new/b.txt").as_deref(), Some("b\n"));
        assert_eq!(read("gone.txt"), None);
        assert_eq!(read("moved-on.txt").as_deref(), Some("2\n"));
        assert_eq!(read(".env").as_deref(), Some("SECRET=1\n"));
        assert_eq!(
            read(".github/workflows/ci.yml").as_deref(),
            Some("on: push\n")
        );
    }

    #[test]
    fn too_many_files_back_applies_nothing() {
        let dir = tree(&[("a.txt", "a\n")]);
        let ws = workspace(dir.path());
        let root = ws.resolve(".").unwrap();
        let packed = ws
            .pack(&root, &Masks::default(), PackMode::Writable, 1 << 20)
            .unwrap();
        let back = returned(&packed, |files| {
            files.insert("a.txt".into(), Some(b"changed\n".to_vec()));
            for i in 0..150 {
                files.insert(format!("out/{i}.txt"), Some(b"x".to_vec()));
            }
        });
        let e = ws
            .apply_returned(&root, &back, &packed, LIMITS)
            .unwrap_err();
        assert!(e.to_string().contains("more than 100 files"), "{e}");
        assert_eq!(
            std::fs::read_to_string(dir.path().join("a.txt")).unwrap(),
            "a\n"
        );
        assert!(!dir.path().join("out").exists());
    }

    #[test]
    fn names_that_leave_the_copy_are_refused() {
        for (raw, ok) in [
            (&b"workspace/a.txt"[..], Some("a.txt")),
            (b"workspace/d/e.txt", Some("d/e.txt")),
            (b"workspace/../etc/passwd", None),
            (b"/etc/passwd", None),
            (b"workspace", None),
            (b"workspace/a\0b", None),
            (b"workspace/./a", Some("a")),
        ] {
            assert_eq!(
                relative_name(raw)
                    .map(|p| p.display().to_string())
                    .as_deref(),
                ok,
                "{}",
                String::from_utf8_lossy(raw)
            );
        }
    }
}
