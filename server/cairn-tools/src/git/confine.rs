//! Where a repository's data lives: every location git2 reads or writes for a repository must lie
//! inside a workspace root, or the tool refuses.
//!
//! A working directory inside the workspace says little about where git looks: a `.git` file
//! (`gitdir: ...`) names the git directory, its `commondir` file names the directory holding
//! objects, refs and config, `objects/info/alternates` adds object directories, the `gitdir` file
//! of a linked worktree names the working directory, config includes and `core.excludesFile` /
//! `core.attributesFile` name more files, and any file or directory in there can be a symlink.
//! [`confine`] checks each of them, after canonicalising (symlinks resolved), against the roots.
//!
//! The environment plays no part: the repository is opened without `GIT_REPOSITORY_OPEN_FROM_ENV`,
//! so libgit2 reads none of `GIT_DIR`, `GIT_COMMON_DIR`, `GIT_OBJECT_DIRECTORY`,
//! `GIT_ALTERNATE_OBJECT_DIRECTORIES`, `GIT_WORK_TREE`, `GIT_INDEX_FILE` or `GIT_CONFIG_*`.
//! The user's own configuration (global, XDG, system) is read for their identity and is not
//! checked: nothing in the workspace can write it. Opening a repository makes libgit2 read its
//! pointer files and configuration before this check runs; nothing read there reaches a tool's
//! output, because the tool refuses before it uses the repository.
//!
//! The check reads git's own small pointer files (`alternates`) and lists the git directories
//! with `std::fs`: these are not workspace content shown to anyone but the data git2 is about to
//! use, and the deny list (which protects `.git/`) must not hide them from the check.
#![allow(clippy::disallowed_methods)]

use std::path::{Component, Path, PathBuf};

use cairn_workspace::Workspace;
use git2::{ConfigLevel, Repository};

/// Most entries of the git directories the symlink check looks at; beyond it the check fails
/// closed.
const MAX_ENTRIES: usize = 250_000;
/// libgit2 follows alternates of alternates up to five levels deep; check one more.
const MAX_ALTERNATE_DEPTH: usize = 6;
/// Largest `alternates` file read.
const MAX_ALTERNATES_BYTES: u64 = 64 * 1024;

/// Why a repository is not used: some location git2 would read or write lies outside the
/// workspace, or could not be checked.
#[derive(Debug, thiserror::Error)]
pub(crate) enum RepoEscape {
    /// A location (named in a pointer file, a config key or a symlink) lies outside every root.
    #[error(
        "refused: the repository's {what}{} is {}, outside the workspace; the git tools only use a repository whose git data lies entirely inside the workspace (add the folder that holds it to the workspace, or use git in a terminal)",
        named_in(via),
        target.display()
    )]
    Outside {
        what: String,
        via: Option<PathBuf>,
        target: PathBuf,
    },
    /// Too many entries to check: refused rather than checked in part.
    #[error(
        "refused: the repository's git data under {} has more than {limit} entries, too many to check that none leads outside the workspace (`git gc` packs loose objects)",
        dir.display()
    )]
    TooLarge { dir: PathBuf, limit: usize },
    /// A location could not be read or listed, so it could not be checked.
    #[error("refused: cannot check the repository's {what} at {}: {reason}", path.display())]
    Unchecked {
        what: String,
        path: PathBuf,
        reason: String,
    },
}

fn named_in(via: &Option<PathBuf>) -> String {
    match via {
        Some(p) => format!(" (named in {})", p.display()),
        None => String::new(),
    }
}

/// Refuses `repo` unless its git directory, common directory, working directory, object
/// directories (with every alternate), config includes and path keys, and every symlink inside
/// its git directories lie inside a root of `ws`.
pub(crate) fn confine(ws: &Workspace, repo: &Repository) -> Result<(), RepoEscape> {
    let gitdir = repo.path().to_path_buf();
    let common = repo.commondir().to_path_buf();
    let dotgit = repo
        .workdir()
        .map(|w| w.join(".git"))
        .filter(|p| p.symlink_metadata().is_ok_and(|m| m.is_file()));
    inside(ws, "git directory", dotgit, &gitdir)?;
    let commondir_file = gitdir.join("commondir");
    let via = commondir_file.exists().then_some(commondir_file);
    inside(ws, "common directory (objects, refs, config)", via, &common)?;
    if let Some(workdir) = repo.workdir() {
        let via = repo
            .is_worktree()
            .then(|| gitdir.join("gitdir"))
            .filter(|p| p.exists());
        inside(ws, "working directory", via, workdir)?;
    }
    let mut walked = 0;
    walk(ws, &gitdir, &mut walked)?;
    if !located(&common).starts_with(located(&gitdir)) {
        walk(ws, &common, &mut walked)?;
    }
    let objects = common.join("objects");
    inside(ws, "object directory", None, &objects)?;
    alternates(ws, &objects, 0, &mut walked)?;
    config_paths(ws, repo, &gitdir, &common)
}

/// `path` canonicalised as far as it exists, the rest appended with `.` and `..` resolved (and
/// canonicalised again wherever that leads back to something existing), so a location that does
/// not exist yet is judged by where it would be created.
pub(crate) fn located(path: &Path) -> PathBuf {
    let mut existing = path.to_path_buf();
    let mut rest: Vec<std::ffi::OsString> = Vec::new();
    loop {
        if let Ok(canonical) = existing.canonicalize() {
            let mut out = canonical;
            for part in rest.iter().rev() {
                match Path::new(part).components().next() {
                    Some(Component::ParentDir) => {
                        out.pop();
                    }
                    Some(Component::CurDir) | None => {}
                    Some(_) => out.push(part),
                }
                // After a `..` the path can be back among existing entries, symlinks included.
                if let Ok(c) = out.canonicalize() {
                    out = c;
                }
            }
            return out;
        }
        match existing.components().next_back() {
            Some(Component::Normal(name)) => {
                rest.push(name.to_owned());
            }
            Some(Component::ParentDir) => rest.push("..".into()),
            Some(Component::CurDir) => {}
            // Nothing of it exists, not even the root: judged as written.
            _ => return path.to_path_buf(),
        }
        if !existing.pop() {
            return path.to_path_buf();
        }
    }
}

/// Ok when `path` (wherever it leads) is inside a root.
fn inside(ws: &Workspace, what: &str, via: Option<PathBuf>, path: &Path) -> Result<(), RepoEscape> {
    let target = located(path);
    if ws.roots().iter().any(|root| target.starts_with(root)) {
        Ok(())
    } else {
        Err(RepoEscape::Outside {
            what: what.to_owned(),
            via,
            target,
        })
    }
}

/// Every symlink under `dir` (not following them) leads inside a root.
fn walk(ws: &Workspace, dir: &Path, walked: &mut usize) -> Result<(), RepoEscape> {
    let mut stack = vec![dir.to_path_buf()];
    while let Some(current) = stack.pop() {
        let entries = std::fs::read_dir(&current).map_err(|e| RepoEscape::Unchecked {
            what: "git data".to_owned(),
            path: current.clone(),
            reason: e.to_string(),
        })?;
        for entry in entries {
            let entry = entry.map_err(|e| RepoEscape::Unchecked {
                what: "git data".to_owned(),
                path: current.clone(),
                reason: e.to_string(),
            })?;
            *walked += 1;
            if *walked > MAX_ENTRIES {
                return Err(RepoEscape::TooLarge {
                    dir: dir.to_path_buf(),
                    limit: MAX_ENTRIES,
                });
            }
            let Ok(kind) = entry.file_type() else {
                continue;
            };
            let path = entry.path();
            if kind.is_symlink() {
                let target = std::fs::read_link(&path)
                    .map(|t| current.join(t))
                    .unwrap_or_else(|_| path.clone());
                // Resolve the link itself where it resolves; a dangling one by its text.
                let lands = path.canonicalize().unwrap_or(target);
                inside(ws, "symlink", Some(path), &lands)?;
            } else if kind.is_dir() {
                stack.push(path);
            }
        }
    }
    Ok(())
}

/// The object directories `objects/info/alternates` adds, as libgit2 reads them: one per line,
/// `#` comments and blank lines skipped, a line starting with `.` relative to the object
/// directory, anything else as written (relative to the process's directory if not absolute).
fn alternates(
    ws: &Workspace,
    objects: &Path,
    depth: usize,
    walked: &mut usize,
) -> Result<(), RepoEscape> {
    if depth > MAX_ALTERNATE_DEPTH {
        return Ok(());
    }
    let file = objects.join("info").join("alternates");
    let Ok(meta) = file.metadata() else {
        return Ok(());
    };
    let unchecked = |reason: String| RepoEscape::Unchecked {
        what: "alternates file".to_owned(),
        path: file.clone(),
        reason,
    };
    // A FIFO would block the read; anything but a small regular file is refused.
    if !meta.is_file() {
        return Err(unchecked("it is not a regular file".to_owned()));
    }
    if meta.len() > MAX_ALTERNATES_BYTES {
        return Err(unchecked(format!(
            "it is larger than {MAX_ALTERNATES_BYTES} bytes"
        )));
    }
    let bytes = std::fs::read(&file).map_err(|e| unchecked(e.to_string()))?;
    let text = String::from_utf8_lossy(&bytes);
    for line in text.split(['\r', '\n']) {
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let dir = if line.starts_with('.') {
            objects.join(line)
        } else {
            PathBuf::from(line)
        };
        inside(ws, "alternate object directory", Some(file.clone()), &dir)?;
        walk(ws, &dir, walked).or_else(|e| match e {
            // A missing alternate is skipped by libgit2 too.
            RepoEscape::Unchecked { .. } if !dir.exists() => Ok(()),
            other => Err(other),
        })?;
        alternates(ws, &dir, depth + 1, walked)?;
    }
    Ok(())
}

/// The paths the repository's own configuration names: `include.path`, `includeIf.*.path`,
/// `core.excludesFile` and `core.attributesFile`, at the repository and worktree levels.
fn config_paths(
    ws: &Workspace,
    repo: &Repository,
    gitdir: &Path,
    common: &Path,
) -> Result<(), RepoEscape> {
    let config = repo.config().map_err(|e| RepoEscape::Unchecked {
        what: "configuration".to_owned(),
        path: common.join("config"),
        reason: e.message().to_owned(),
    })?;
    for (level, file) in [
        (ConfigLevel::Local, common.join("config")),
        (ConfigLevel::Worktree, gitdir.join("config.worktree")),
    ] {
        let Ok(level_config) = config.open_level(level) else {
            continue;
        };
        let Ok(entries) = level_config.entries(None) else {
            continue;
        };
        let base = file.parent().map(Path::to_path_buf).unwrap_or_default();
        let mut found = Vec::new();
        entries
            .for_each(|entry| {
                let name = entry.name().unwrap_or("").to_ascii_lowercase();
                let include = name == "include.path"
                    || (name.starts_with("includeif.") && name.ends_with(".path"));
                let path_key = name == "core.excludesfile" || name == "core.attributesfile";
                if include || path_key {
                    found.push((
                        name,
                        String::from_utf8_lossy(entry.value_bytes()).into_owned(),
                        include,
                        entry.include_depth(),
                    ));
                }
            })
            .map_err(|e| RepoEscape::Unchecked {
                what: "configuration".to_owned(),
                path: file.clone(),
                reason: e.message().to_owned(),
            })?;
        for (name, value, include, depth) in found {
            let what = format!("configuration `{name} = {value}`");
            let path = if let Some(home_relative) = value.strip_prefix("~/") {
                match std::env::var_os("HOME") {
                    Some(home) => PathBuf::from(home).join(home_relative),
                    None => PathBuf::from(&value),
                }
            } else if Path::new(&value).is_absolute() {
                PathBuf::from(&value)
            } else if include && depth == 0 {
                base.join(&value)
            } else if include {
                // Relative to an included file, whose location libgit2 does not report.
                return Err(RepoEscape::Unchecked {
                    what,
                    path: file.clone(),
                    reason: "a relative include inside an included file cannot be located"
                        .to_owned(),
                });
            } else {
                // libgit2 opens these relative to the process's directory.
                PathBuf::from(&value)
            };
            inside(ws, &what, Some(file.clone()), &path)?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn located_resolves_what_exists_and_appends_the_rest() {
        let dir = tempfile::tempdir().unwrap();
        let real = dir.path().canonicalize().unwrap();
        std::fs::create_dir(real.join("a")).unwrap();
        std::os::unix::fs::symlink(&real, real.join("a/up")).unwrap();
        assert_eq!(located(&real.join("a/up/a")), real.join("a"));
        assert_eq!(located(&real.join("a/missing/../b")), real.join("a/b"));
        assert_eq!(located(&real.join("a/up/missing")), real.join("missing"));
    }

    /// Whatever the spelling (`.`, `..`, symlinks in and out of the tree, parts that do not
    /// exist yet), `located` names the place the path leads to once it exists: creating it and
    /// canonicalising gives the same path, so "inside a root" is judged on where git2 would land.
    #[test]
    fn fuzz_located_is_where_the_path_lands() {
        use proptest::prelude::*;
        let part = prop_oneof![
            Just("."),
            Just(".."),
            Just("a"),
            Just("b"),
            Just("up"),
            Just("out"),
            Just("new1"),
            Just("new2"),
        ];
        let strategy = proptest::collection::vec(part, 1..8);
        cairn_test_support::fuzz::check("located is where the path lands", strategy, |parts| {
            let dir = tempfile::tempdir().unwrap();
            let top = dir.path().canonicalize().unwrap();
            let root = top.join("root");
            std::fs::create_dir_all(root.join("a/b")).unwrap();
            std::fs::create_dir_all(top.join("outside")).unwrap();
            std::os::unix::fs::symlink(&root, root.join("a/up")).unwrap();
            std::os::unix::fs::symlink(top.join("outside"), root.join("a/out")).unwrap();
            std::os::unix::fs::symlink("../outside", root.join("out")).unwrap();
            let mut spelled = root.join("a");
            for p in &parts {
                spelled.push(p);
            }
            let expected = located(&spelled);
            // Create what is missing, as git would (`create_dir_all` resolves `..` the way
            // the kernel does, after the symlinks before it).
            if std::fs::create_dir_all(&spelled).is_ok() {
                let landed = spelled.canonicalize().unwrap();
                prop_assert_eq!(&expected, &landed, "{:?}", parts);
            }
            Ok(())
        });
    }
}
