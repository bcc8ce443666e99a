//! Resolution of requested path strings to [`WorkspacePath`]s inside a root.
//!
//! The rules, in order:
//! 1. Refuse an empty path, a NUL byte, and a leading `~` (never expanded: the model must not
//!    reach the home directory by accident).
//! 2. A relative path is joined to the first root; `..` is applied lexically, and climbing above
//!    the root is refused. An absolute path is normalised lexically the same way.
//! 3. The longest existing prefix is canonicalised (resolving every symlink on it) and the
//!    not-yet-existing rest is appended, so a new file is judged by its canonical parent.
//!    A dangling symlink on the way is refused: it cannot be judged, and writing through it
//!    would follow it.
//! 4. The canonical result must lie in a root, compared component-wise (`/ws` never contains
//!    `/ws_evil`).
//!
//! Because `..` is applied before symlinks are resolved, `link/../x` means `x` beside `link`;
//! operations use the canonical path computed here, never the requested string, so the check
//! and the use agree.

use std::ffi::OsStr;
use std::path::{Component, Path, PathBuf};

use crate::error::ScopeError;
use crate::workspace::Workspace;

/// A path proven to lie inside a workspace root. Only [`Workspace::resolve`] and the walker
/// build one.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct WorkspacePath {
    root: PathBuf,
    abs: PathBuf,
    rel: PathBuf,
    /// In the first root, where relative paths resolve; shown relative to it.
    primary: bool,
    /// The path as named, relative to its root, when a symlink inside the workspace makes it
    /// differ from `rel`: protections apply to both names (`.git -> gitdir` is still `.git`).
    named: Option<PathBuf>,
}

impl WorkspacePath {
    /// `abs` must be canonical (or a canonical directory plus new components) and inside `root`.
    pub(crate) fn new(root: &Path, abs: PathBuf, primary: bool) -> WorkspacePath {
        let rel = abs
            .strip_prefix(root)
            .map(Path::to_path_buf)
            .unwrap_or_default();
        WorkspacePath {
            root: root.to_path_buf(),
            abs,
            rel,
            primary,
            named: None,
        }
    }

    /// The path as it was named, relative to its root, when that differs from [`Self::relative`].
    pub fn named(&self) -> Option<&Path> {
        self.named.as_deref()
    }

    /// The canonical root this path lies in.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The absolute path (canonical up to the parts that do not exist yet).
    pub fn as_path(&self) -> &Path {
        &self.abs
    }

    /// The path relative to its root; empty for the root itself.
    pub fn relative(&self) -> &Path {
        &self.rel
    }

    /// True when this is a root itself.
    pub fn is_root(&self) -> bool {
        self.rel.as_os_str().is_empty()
    }

    /// How to show the path to the model so that it can pass it back to [`Workspace::resolve`]:
    /// relative for the first root (`.` for the root), absolute for the others.
    pub fn display_path(&self) -> String {
        if !self.primary {
            self.abs.display().to_string()
        } else if self.is_root() {
            ".".to_owned()
        } else {
            self.rel.display().to_string()
        }
    }

    /// The `file://` URI, percent-encoded.
    pub fn uri(&self) -> String {
        file_uri(&self.abs)
    }
}

impl Workspace {
    /// Resolve a path the model or the user asked for. See the module docs for the rules.
    pub fn resolve(&self, requested: &str) -> Result<WorkspacePath, ScopeError> {
        let invalid = |reason: &str| ScopeError::InvalidPath {
            requested: requested.to_owned(),
            reason: reason.to_owned(),
        };
        if requested.is_empty() {
            return Err(invalid("the path is empty; use `.` for the workspace root"));
        }
        if requested.contains('\0') {
            return Err(invalid("it contains a NUL byte"));
        }
        if requested.starts_with('~') {
            return Err(invalid(
                "`~` is not expanded; give a path relative to the workspace root",
            ));
        }
        let first = self.roots.first().ok_or(ScopeError::NoRoots)?;
        let req = Path::new(requested);
        let lexical = if req.is_absolute() {
            normalize_absolute(req)
        } else {
            match normalize_relative(req) {
                Some(rel) => first.join(rel),
                None => {
                    return Err(ScopeError::OutsideWorkspace {
                        requested: requested.to_owned(),
                        resolved: normalize_absolute(&first.join(req)),
                    });
                }
            }
        };
        if let Some(reason) = too_long(&lexical) {
            return Err(invalid(&reason));
        }
        let canonical = self.canonicalize_existing_prefix(requested, &lexical)?;
        match self.root_of(&canonical) {
            Some(root) => {
                let primary = root == first.as_path();
                let mut path = WorkspacePath::new(root, canonical, primary);
                let named = self
                    .root_of(&lexical)
                    .and_then(|r| lexical.strip_prefix(r).ok())
                    .filter(|named| *named != path.rel);
                path.named = named.map(Path::to_path_buf);
                Ok(path)
            }
            // Lexically inside but canonically outside: a symlink on the way leaves the root.
            None if self.root_of(&lexical).is_some() => Err(ScopeError::SymlinkEscape {
                requested: requested.to_owned(),
                target: canonical,
            }),
            None => Err(ScopeError::OutsideWorkspace {
                requested: requested.to_owned(),
                resolved: canonical,
            }),
        }
    }

    /// Canonicalise the longest existing prefix of `lexical` and append the rest.
    fn canonicalize_existing_prefix(
        &self,
        requested: &str,
        lexical: &Path,
    ) -> Result<PathBuf, ScopeError> {
        let mut rest: Vec<&OsStr> = Vec::new();
        let mut cur = lexical;
        loop {
            match std::fs::canonicalize(cur) {
                Ok(mut out) => {
                    out.extend(rest.iter().rev());
                    return Ok(out);
                }
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                    if let Ok(meta) = std::fs::symlink_metadata(cur)
                        && meta.file_type().is_symlink()
                    {
                        return Err(self.dangling(requested, cur));
                    }
                    match (cur.parent(), cur.file_name()) {
                        (Some(parent), Some(name)) => {
                            rest.push(name);
                            cur = parent;
                        }
                        _ => return Err(ScopeError::io(cur, e)),
                    }
                }
                Err(e) => return Err(ScopeError::io(cur, e)),
            }
        }
    }

    fn dangling(&self, requested: &str, link: &Path) -> ScopeError {
        let target = std::fs::read_link(link).ok().map(|t| {
            let joined = match link.parent() {
                Some(parent) if t.is_relative() => parent.join(&t),
                _ => t,
            };
            normalize_absolute(&joined)
        });
        match target {
            Some(target) if self.root_of(&target).is_none() => ScopeError::SymlinkEscape {
                requested: requested.to_owned(),
                target,
            },
            _ => ScopeError::InvalidPath {
                requested: requested.to_owned(),
                reason: format!(
                    "{} is a dangling symlink, which is never followed",
                    link.display()
                ),
            },
        }
    }
}

/// Longest absolute path, in bytes, and longest name: Linux's `PATH_MAX` (less the NUL) and
/// `NAME_MAX`.
const MAX_PATH_BYTES: usize = 4095;
const MAX_NAME_BYTES: usize = 255;

/// Why `path` is too long to open, if it is. Checked here so that every way of opening agrees:
/// `openat2` refuses a path over `PATH_MAX`, but a component-by-component walk has no such
/// limit and would create one.
fn too_long(path: &Path) -> Option<String> {
    let len = path.as_os_str().len();
    if len > MAX_PATH_BYTES {
        return Some(format!(
            "it is {len} bytes long once joined to the root, over the {MAX_PATH_BYTES}-byte limit"
        ));
    }
    path.components()
        .map(|c| c.as_os_str().len())
        .find(|&n| n > MAX_NAME_BYTES)
        .map(|n| format!("a name in it is {n} bytes long, over the {MAX_NAME_BYTES}-byte limit"))
}

/// Apply `.` and `..` lexically to a relative path; `None` when `..` climbs above its start.
fn normalize_relative(path: &Path) -> Option<PathBuf> {
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                if !out.pop() {
                    return None;
                }
            }
            Component::Normal(n) => out.push(n),
            // Only reachable on Windows (`C:x`); such a path is not relative to a root.
            Component::RootDir | Component::Prefix(_) => return None,
        }
    }
    Some(out)
}

/// Apply `.` and `..` lexically to an absolute path; `..` at the top stays at the top.
fn normalize_absolute(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                // Never pop the root (or a Windows prefix) itself.
                if out.parent().is_some() {
                    out.pop();
                }
            }
            other => out.push(other.as_os_str()),
        }
    }
    out
}

/// `file://` URI of an absolute path, percent-encoding everything but unreserved bytes and `/`.
pub(crate) fn file_uri(path: &Path) -> String {
    #[cfg(unix)]
    let bytes = {
        use std::os::unix::ffi::OsStrExt;
        path.as_os_str().as_bytes().to_vec()
    };
    #[cfg(not(unix))]
    let bytes = path.to_string_lossy().replace('\\', "/").into_bytes();
    let mut uri = String::from("file://");
    if !bytes.starts_with(b"/") {
        uri.push('/');
    }
    for b in bytes {
        if b.is_ascii_alphanumeric() || matches!(b, b'/' | b'-' | b'.' | b'_' | b'~') {
            uri.push(char::from(b));
        } else {
            uri.push_str(&format!("%{b:02X}"));
        }
    }
    uri
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use super::*;

    #[test]
    fn uri_encoding() {
        #[track_caller]
        fn check(path: &str, expected: &str) {
            assert_eq!(file_uri(Path::new(path)), expected);
        }
        check("/ws/src/main.rs", "file:///ws/src/main.rs");
        check("/ws/a b/c#d.rs", "file:///ws/a%20b/c%23d.rs");
        check("/ws/é", "file:///ws/%C3%A9");
    }

    #[test]
    fn lexical_normalisation() {
        #[track_caller]
        fn check(path: &str, expected: Option<&str>) {
            assert_eq!(
                normalize_relative(Path::new(path)),
                expected.map(PathBuf::from)
            );
        }
        check("a/../b", Some("b"));
        check("./a/./b", Some("a/b"));
        check("a/..", Some(""));
        check("..", None);
        check("a/../../b", None);
        assert_eq!(
            normalize_absolute(Path::new("/a/../../b/./c")),
            PathBuf::from("/b/c")
        );
    }
}
