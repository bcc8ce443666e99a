//! What a container that mounts a workspace root must not see or, when the root is mounted
//! writable, must not change, found by a complete walk.
//!
//! Every entry under the root is looked at: bulky dependency directories (`node_modules`,
//! `target`, `.venv`...) are walked like any other, since a `.env` or a key inside one is as
//! secret as one at the top. A walk that would pass [`MaskLimits::max_entries`], or masks that
//! would pass [`MaskLimits::max_mounts`] (each is a mount in the container), is a [`MaskError`]:
//! the run is refused rather than started with some protected file left visible.
//!
//! Hidden are: files the user may not read (protected, or outside their read grants), `.git`
//! whatever its kind (a directory, or a `gitdir:` file), directories whose own name is protected,
//! directories this process cannot list (what is inside is unknown), special files (a socket in
//! the workspace would reach the host process listening on it), and every other name of a hidden
//! file's inode (a hard link is the same content under an allowed name; directories hidden
//! by name are walked too, so that a link to a file inside one is found). A directory whose
//! every entry is hidden is hidden whole, one mount instead of one per file. Symlinks are not followed
//! and not hidden: they resolve inside the container, where their targets are masked by name.
//!
//! Files that run code (write-protected only, `cairn_config::access::Kind::RunsCode`) are
//! readable, so they are shown; for a writable mount they, every other name of their inode, and
//! directories everything under which is write-protected (`.github/workflows`, `.idea`) are bound
//! read-only over themselves. That covers what exists: a writable run can still create a missing
//! one (`.cargo/config.toml`, `.envrc`) or move a parent of a read-only mount aside and make a new
//! one, which is why the agent asks for a writable workspace at every call (no session grant).
//!
//! The walk happens before the container starts: a protected file created after it is visible
//! to a run that started after it, which for a read-only mount is the user's own doing.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use cairn_config::access::{Access, Operation};

use crate::path::WorkspacePath;
use crate::workspace::Workspace;

/// Paths under a root to hide from a container that mounts it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Masks {
    /// Covered by an empty file.
    pub files: Vec<PathBuf>,
    /// Covered by an empty read-only directory.
    pub dirs: Vec<PathBuf>,
    /// Bound read-only over themselves (files or directories; only for a writable mount).
    pub read_only: Vec<PathBuf>,
}

impl Masks {
    /// How many mounts hiding these and making them read-only takes.
    pub fn len(&self) -> usize {
        self.files.len() + self.dirs.len() + self.read_only.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// How far [`Workspace::masks`] goes before refusing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MaskLimits {
    /// Most entries (files, directories, links) walked.
    pub max_entries: usize,
    /// Most masks (mounts) in one container.
    pub max_mounts: usize,
}

/// Why a root cannot be mounted with every protected file hidden.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum MaskError {
    #[error(
        "refused to mount the workspace `{root}` in the sandbox: it holds more than {limit} \
         files and directories, too many to check each for protected files, and a sandbox \
         never starts with one unchecked. Open a smaller folder as the workspace, or raise \
         `sandbox.mask_max_entries` in your config"
    )]
    TooManyEntries { root: String, limit: usize },
    #[error(
        "refused to mount the workspace `{root}` in the sandbox: {count} protected or \
         unreadable paths would have to be hidden or made read-only, over the limit of {limit} mounts in one \
         container. Open a smaller folder as the workspace, widen your read grants, or raise \
         `sandbox.mask_max_mounts` in your config (the kernel allows at most \
         /proc/sys/fs/mount-max mounts)"
    )]
    TooManyMounts {
        root: String,
        count: usize,
        limit: usize,
    },
    #[error(
        "refused to mount the workspace `{root}` in the sandbox: it cannot be listed ({reason})"
    )]
    Unreadable { root: String, reason: String },
}

/// A directory met in the walk.
struct Dir {
    path: PathBuf,
    parent: Option<usize>,
    /// Entries directly inside it, and how many of them are hidden.
    entries: usize,
    hidden: usize,
    /// Hidden whole by its own name or because it cannot be listed.
    masked: bool,
    /// Everything under it is write-protected (only looked at for a writable mount).
    read_only: bool,
    /// It or a directory above it is hidden by name: everything in it is hidden. It is walked
    /// all the same, so that a hard link elsewhere to a file in it is found.
    within_hidden: bool,
}

/// A file or other non-directory entry met in the walk (symlinks are not kept).
struct File {
    path: PathBuf,
    parent: usize,
    masked: bool,
    /// Write-protected (only looked at for a writable mount).
    read_only: bool,
}

impl Workspace {
    /// The paths under `root` to hide from a container that mounts it, and when it is mounted
    /// `writable` those to bind read-only: complete, or an error. Ignore files do not apply
    /// (secrets are usually ignored).
    pub fn masks(
        &self,
        root: &WorkspacePath,
        limits: MaskLimits,
        writable: bool,
    ) -> Result<Masks, MaskError> {
        let root_path = root.as_path();
        let display = || root_path.display().to_string();
        let mut dirs = vec![Dir {
            path: root_path.to_path_buf(),
            parent: None,
            entries: 0,
            hidden: 0,
            masked: false,
            read_only: false,
            within_hidden: false,
        }];
        let mut files: Vec<File> = Vec::new();
        // Inodes of regular files with more than one name: (dev, ino) -> their files.
        let mut linked: HashMap<(u64, u64), Vec<usize>> = HashMap::new();
        let mut seen = 0usize;
        let mut pending = vec![0usize];
        while let Some(d) = pending.pop() {
            let listing = match std::fs::read_dir(&dirs[d].path) {
                Ok(listing) => listing,
                Err(e) if d == 0 => {
                    return Err(MaskError::Unreadable {
                        root: display(),
                        reason: e.to_string(),
                    });
                }
                // What is inside is unknown: hide all of it.
                Err(_) => {
                    dirs[d].masked = true;
                    continue;
                }
            };
            for entry in listing {
                seen += 1;
                if seen > limits.max_entries {
                    return Err(MaskError::TooManyEntries {
                        root: display(),
                        limit: limits.max_entries,
                    });
                }
                dirs[d].entries += 1;
                let Ok(entry) = entry else {
                    // An entry that cannot be read: the whole directory is hidden.
                    dirs[d].masked = true;
                    continue;
                };
                let path = entry.path();
                let kind = entry.file_type().ok();
                let is_git = entry.file_name() == ".git";
                if kind.is_some_and(|k| k.is_symlink()) {
                    continue;
                }
                if kind.is_some_and(|k| k.is_dir()) {
                    let protected = is_git
                        || matches!(
                            self.access_of(&relative(root, &path), Operation::Read),
                            Access::AskExactPath { .. }
                        );
                    let within_hidden = protected || dirs[d].within_hidden;
                    let read_only = writable
                        && !within_hidden
                        && self.protects_everything_under(&relative(root, &path));
                    dirs.push(Dir {
                        path,
                        parent: Some(d),
                        entries: 0,
                        hidden: 0,
                        masked: protected,
                        read_only,
                        within_hidden,
                    });
                    pending.push(dirs.len() - 1);
                    continue;
                }
                let regular = kind.is_some_and(|k| k.is_file());
                let masked = is_git
                    || dirs[d].within_hidden
                    || !regular
                    || !matches!(
                        self.access_of(&relative(root, &path), Operation::Read),
                        Access::Allow
                    );
                let read_only = writable
                    && !masked
                    && matches!(
                        self.access_of(&relative(root, &path), Operation::Write),
                        Access::AskExactPath { .. }
                    );
                if regular {
                    use std::os::unix::fs::MetadataExt;
                    if let Ok(meta) = entry.metadata()
                        && meta.nlink() > 1
                    {
                        linked
                            .entry((meta.dev(), meta.ino()))
                            .or_default()
                            .push(files.len());
                    }
                }
                files.push(File {
                    path,
                    parent: d,
                    masked,
                    read_only,
                });
            }
        }
        // Every name of a hidden inode is hidden; every name of a write-protected one, or one
        // inside a read-only directory, is read-only (writing any name changes them all).
        for names in linked.values() {
            if names.iter().any(|&f| files[f].masked) {
                for &f in names {
                    files[f].masked = true;
                }
            } else if names
                .iter()
                .any(|&f| files[f].read_only || within_read_only(&dirs, files[f].parent))
            {
                for &f in names {
                    files[f].read_only = true;
                }
            }
        }
        for f in &files {
            if f.masked {
                dirs[f.parent].hidden += 1;
            }
        }
        // Children come after their parents: backwards, a directory is complete when reached.
        let mut whole = vec![false; dirs.len()];
        for d in (1..dirs.len()).rev() {
            let dir = &dirs[d];
            whole[d] = dir.masked || (dir.entries > 0 && dir.hidden == dir.entries);
            if whole[d]
                && let Some(p) = dir.parent
            {
                dirs[p].hidden += 1;
            }
        }
        // Forwards: a path under a directory hidden whole needs no mask of its own, nor one
        // under a directory bound read-only a read-only bind of its own.
        let mut covered = vec![false; dirs.len()];
        let mut frozen = vec![false; dirs.len()];
        let mut masks = Masks::default();
        for d in 1..dirs.len() {
            let parent = dirs[d].parent.unwrap_or(0);
            covered[d] = covered[parent] || whole[d];
            if whole[d] && !covered[parent] {
                masks.dirs.push(dirs[d].path.clone());
            }
            let read_only = dirs[d].read_only && !covered[d];
            frozen[d] = frozen[parent] || read_only;
            if read_only && !frozen[parent] {
                masks.read_only.push(dirs[d].path.clone());
            }
        }
        for f in files {
            if covered[f.parent] {
                continue;
            }
            if f.masked {
                masks.files.push(f.path);
            } else if f.read_only && !frozen[f.parent] {
                masks.read_only.push(f.path);
            }
        }
        if masks.len() > limits.max_mounts {
            return Err(MaskError::TooManyMounts {
                root: display(),
                count: masks.len(),
                limit: limits.max_mounts,
            });
        }
        Ok(masks)
    }
}

/// Whether directory `d` or one above it is write-protected whole.
fn within_read_only(dirs: &[Dir], mut d: usize) -> bool {
    loop {
        if dirs[d].read_only {
            return true;
        }
        match dirs[d].parent {
            Some(p) => d = p,
            None => return false,
        }
    }
}

/// `path` (found by walking `root`) as a workspace path.
fn relative(root: &WorkspacePath, path: &Path) -> WorkspacePath {
    WorkspacePath::new(root.root(), path.to_path_buf(), true)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use std::path::Path;

    use cairn_config::access::{AccessPolicy, AccessRules};

    use super::*;
    use crate::ExactApprovals;

    const ROOMY: MaskLimits = MaskLimits {
        max_entries: 100_000,
        max_mounts: 1_000,
    };

    fn tree(files: &[&str]) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        for f in files {
            let path = dir.path().join(f);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, "x\n").unwrap();
        }
        dir
    }

    fn workspace(dir: &Path, policy: Option<&str>) -> Workspace {
        let team = policy.map(|p| AccessPolicy::from_toml_str(p, "policy.toml").unwrap());
        Workspace::new(vec![dir.to_path_buf()])
            .unwrap()
            .with_access(
                move |_| AccessRules::new("ada@example.com", team.as_ref(), None),
                ExactApprovals::new(),
            )
    }

    /// The masks of a read-only mount, relative to the root and sorted: files, then directories.
    fn masks_of(
        ws: &Workspace,
        limits: MaskLimits,
    ) -> Result<(Vec<String>, Vec<String>), MaskError> {
        masks_for(ws, limits, false).map(|(files, dirs, read_only)| {
            assert!(
                read_only.is_empty(),
                "a read-only mount binds nothing read-only"
            );
            (files, dirs)
        })
    }

    /// The masks, relative to the root and sorted: files, directories, read-only binds.
    #[allow(clippy::type_complexity)]
    fn masks_for(
        ws: &Workspace,
        limits: MaskLimits,
        writable: bool,
    ) -> Result<(Vec<String>, Vec<String>, Vec<String>), MaskError> {
        let root = ws.resolve(".").unwrap();
        let rel = |paths: Vec<PathBuf>| {
            let mut v: Vec<String> = paths
                .iter()
                .map(|p| {
                    p.strip_prefix(root.as_path())
                        .unwrap()
                        .display()
                        .to_string()
                })
                .collect();
            v.sort();
            v
        };
        ws.masks(&root, limits, writable)
            .map(|m| (rel(m.files), rel(m.dirs), rel(m.read_only)))
    }

    #[test]
    fn protected_files_are_masked_inside_bulky_directories_too() {
        let dir = tree(&[
            "src/main.rs",
            ".env",
            "node_modules/pkg/.env",
            "node_modules/pkg/index.js",
            "target/debug/build/key.pem",
            "target/debug/build/out.txt",
            ".venv/lib/id_rsa",
            ".venv/lib/site.py",
            "__pycache__/x/.env.local",
            "__pycache__/x/m.pyc",
            "vendor/.git",
            "vendor/lib.rs",
            ".git/config",
            "certs.pem/inside.txt",
        ]);
        let ws = workspace(dir.path(), None);
        let (files, dirs) = masks_of(&ws, ROOMY).unwrap();
        assert_eq!(
            files,
            [
                ".env",
                ".venv/lib/id_rsa",
                "__pycache__/x/.env.local",
                "node_modules/pkg/.env",
                "target/debug/build/key.pem",
                "vendor/.git",
            ]
        );
        assert_eq!(dirs, [".git", "certs.pem"]);
    }

    #[test]
    fn a_directory_of_hidden_files_is_one_mask() {
        let dir = tree(&[
            "keys/a.pem",
            "keys/deep/b.key",
            "keys/deep/.env",
            "src/a.rs",
        ]);
        let ws = workspace(dir.path(), None);
        assert_eq!(
            masks_of(&ws, ROOMY).unwrap(),
            (vec![], vec!["keys".to_owned()])
        );
        // Outside the read grants: hidden, and whole directories as one mask each.
        let dir = tree(&[
            "src/a.rs",
            "README.md",
            "private/a.txt",
            "node_modules/p/x.js",
        ]);
        let ws = workspace(dir.path(), Some("[default]\nread = [\"src/**\"]\n"));
        assert_eq!(
            masks_of(&ws, ROOMY).unwrap(),
            (
                vec!["README.md".to_owned()],
                vec!["node_modules".to_owned(), "private".to_owned()]
            )
        );
    }

    #[test]
    fn other_names_of_a_protected_file_and_special_files_are_masked_and_links_are_not() {
        let dir = tree(&[".env", "src/a.rs", ".git/config"]);
        std::fs::hard_link(dir.path().join(".env"), dir.path().join("notes.txt")).unwrap();
        // A link to a file inside a directory hidden whole.
        std::fs::hard_link(
            dir.path().join(".git/config"),
            dir.path().join("src/cfg.txt"),
        )
        .unwrap();
        std::os::unix::fs::symlink(".env", dir.path().join("link")).unwrap();
        let _socket =
            std::os::unix::net::UnixListener::bind(dir.path().join("agent.sock")).unwrap();
        let ws = workspace(dir.path(), None);
        let (files, dirs) = masks_of(&ws, ROOMY).unwrap();
        // The symlink resolves inside the container, to the masked `.env`.
        assert_eq!(files, [".env", "agent.sock", "notes.txt", "src/cfg.txt"]);
        assert_eq!(dirs, [".git"]);
    }

    /// Files that run code are readable, so the container sees them; a writable mount binds
    /// them read-only (with the other names of their inode, and a directory everything under
    /// which runs code as one bind), while secrets stay hidden either way, and the read-only
    /// binds count towards the mount limit.
    #[test]
    fn files_that_run_code_are_shown_and_read_only_when_the_mount_is_writable() {
        let dir = tree(&[
            ".cargo/config.toml",
            ".cargo/registry/x.rs",
            "rust-toolchain.toml",
            ".github/workflows/ci.yml",
            ".github/workflows/deploy/.env",
            ".github/workflows/deploy/prod.yml",
            ".github/dependabot.yml",
            ".env",
            "gradle/wrapper/gradle-wrapper.properties",
            ".venv/lib/python3.12/site-packages/a.pth",
            "src/a.rs",
        ]);
        std::fs::hard_link(
            dir.path().join("rust-toolchain.toml"),
            dir.path().join("src/toolchain.txt"),
        )
        .unwrap();
        let ws = workspace(dir.path(), None);
        let hidden = vec![
            ".env".to_owned(),
            ".github/workflows/deploy/.env".to_owned(),
        ];
        assert_eq!(masks_of(&ws, ROOMY).unwrap(), (hidden.clone(), vec![]));
        let (files, dirs, read_only) = masks_for(&ws, ROOMY, true).unwrap();
        assert_eq!((files, dirs), (hidden, vec![]));
        assert_eq!(
            read_only,
            [
                ".cargo/config.toml",
                ".github/workflows",
                ".venv/lib/python3.12/site-packages/a.pth",
                "gradle/wrapper/gradle-wrapper.properties",
                "rust-toolchain.toml",
                "src/toolchain.txt",
            ]
        );
        // 2 hidden files and 6 read-only binds: enough for a read-only mount, not a writable one.
        let two = MaskLimits {
            max_mounts: 2,
            ..ROOMY
        };
        assert!(masks_for(&ws, two, false).is_ok());
        assert!(matches!(
            masks_for(&ws, two, true),
            Err(MaskError::TooManyMounts {
                count: 8,
                limit: 2,
                ..
            })
        ));
    }

    #[test]
    fn past_a_limit_the_mount_is_refused_never_partial() {
        let dir = tree(&["a/1.rs", "a/2.rs", "b/.env", "c/.env", "c/ok.rs"]);
        let ws = workspace(dir.path(), None);
        // 3 directories and 5 files: 8 entries.
        let exact = MaskLimits {
            max_entries: 8,
            max_mounts: 2,
        };
        assert_eq!(
            masks_of(&ws, exact).unwrap(),
            (vec!["c/.env".to_owned()], vec!["b".to_owned()])
        );
        let root = dir.path().canonicalize().unwrap().display().to_string();
        let e = masks_of(
            &ws,
            MaskLimits {
                max_entries: 7,
                ..exact
            },
        )
        .unwrap_err();
        assert_eq!(
            e,
            MaskError::TooManyEntries {
                root: root.clone(),
                limit: 7
            }
        );
        assert!(
            e.to_string().contains(
                "holds more than 7 files and directories, too many to check each for protected files"
            ) && e.to_string().contains("raise `sandbox.mask_max_entries`"),
            "{e}"
        );
        let e = masks_of(
            &ws,
            MaskLimits {
                max_mounts: 1,
                ..exact
            },
        )
        .unwrap_err();
        assert_eq!(
            e,
            MaskError::TooManyMounts {
                root,
                count: 2,
                limit: 1
            }
        );
        assert!(
            e.to_string().contains(
                "2 protected or unreadable paths would have to be hidden or made read-only, over the limit of 1"
            ) && e.to_string().contains("raise `sandbox.mask_max_mounts`"),
            "{e}"
        );
    }

    /// Names a generated tree is made of: protected ones, `.git`, bulky directories, plain ones.
    const NAMES: [&str; 9] = [
        ".env",
        "key.pem",
        ".git",
        "node_modules",
        "target",
        "a",
        "b",
        "notes.txt",
        "id_rsa",
    ];

    /// Whether the container sees `rel` (a regular file) given the masks.
    fn covered(rel: &str, files: &[String], dirs: &[String]) -> bool {
        files.iter().any(|f| f == rel)
            || dirs.iter().any(|d| {
                rel.strip_prefix(d.as_str())
                    .is_some_and(|r| r.starts_with('/'))
            })
    }

    /// On any tree, a file is hidden exactly when the rules refuse to show it (read straight
    /// from `AccessRules`, not through the walk): itself denied, under `.git`, under a directory
    /// with a protected name, or another name of a hidden file.
    #[test]
    fn fuzz_masks_hide_exactly_what_may_not_be_read() {
        use proptest::prelude::*;
        let entry = (prop::collection::vec(0..NAMES.len(), 1..4), any::<bool>());
        let strategy = (
            prop::collection::vec(entry, 0..12),
            prop::collection::vec((0..12usize, 0..12usize), 0..3),
        );
        cairn_test_support::fuzz::check("masks", strategy, |(entries, links)| {
            let dir = tempfile::tempdir().unwrap();
            let mut files: Vec<String> = Vec::new();
            for (names, is_dir) in entries {
                let rel: Vec<&str> = names.iter().map(|&i| NAMES[i]).collect();
                let rel = rel.join("/");
                let path = dir.path().join(&rel);
                // A name already taken by the other kind is skipped.
                let made = if is_dir {
                    std::fs::create_dir_all(&path).is_ok()
                } else {
                    path.parent()
                        .is_some_and(|p| std::fs::create_dir_all(p).is_ok())
                        && !path.exists()
                        && std::fs::write(&path, "x").is_ok()
                };
                if made && !is_dir {
                    files.push(rel);
                }
            }
            let mut linked: Vec<(String, String)> = Vec::new();
            for (from, to) in links {
                if let (Some(a), Some(b)) = (files.get(from), files.get(to)) {
                    let name = format!("{b}.link{from}");
                    if std::fs::hard_link(dir.path().join(a), dir.path().join(&name)).is_ok() {
                        linked.push((a.clone(), name));
                    }
                }
            }
            let ws = workspace(dir.path(), None);
            let (mfiles, mdirs) = masks_of(&ws, ROOMY).unwrap();
            let rules = AccessRules::new("ada@example.com", None, None);
            let hidden = |rel: &str| {
                let parts: Vec<&str> = rel.split('/').collect();
                let protected_dir = (1..parts.len()).any(|n| {
                    let prefix = parts[..n].join("/");
                    parts[n - 1] == ".git"
                        || matches!(
                            rules.decide(&prefix, Operation::Read),
                            Access::AskExactPath { .. }
                        )
                });
                protected_dir
                    || parts.last() == Some(&".git")
                    || !matches!(rules.decide(rel, Operation::Read), Access::Allow)
            };
            let mut all: Vec<(String, bool)> =
                files.iter().map(|f| (f.clone(), hidden(f))).collect();
            for (a, name) in &linked {
                let both = hidden(a) || hidden(name);
                for entry in all.iter_mut() {
                    if entry.0 == *a && both {
                        entry.1 = true;
                    }
                }
                all.push((name.clone(), both));
            }
            // A file linked twice is hidden if any of its names is.
            for (rel, should_hide) in &all {
                let seen_hidden = covered(rel, &mfiles, &mdirs);
                if *should_hide {
                    prop_assert!(seen_hidden, "{rel} is visible: {mfiles:?} {mdirs:?}");
                } else if !linked.iter().any(|(a, b)| a == rel || b == rel) {
                    prop_assert!(!seen_hidden, "{rel} is hidden: {mfiles:?} {mdirs:?}");
                }
            }
            Ok(())
        });
    }
}
