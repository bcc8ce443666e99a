//! The file walk behind search: gitignore-aware, never following symlinks.
//!
//! Ignore rules are a noise filter for walks, not access control: an explicitly named file is
//! searched even when ignored. Decisions:
//! - `.gitignore` and `.ignore` apply whether or not the root is a git repository
//!   (`require_git(false)`): a workspace that is a plain folder still has its build output
//!   skipped. `.git/info/exclude` applies only to walks that start at the repository root.
//! - Only ignore files inside the root are read: `parents(false)`, no global gitignore; the
//!   ignore files of the directories from the root down to the walked directory are added
//!   explicitly, so searching `src` still skips what the root `.gitignore` names.
//! - The walked directory itself is never filtered: asking for `node_modules/pkg` searches it,
//!   as an explicitly named path does in ripgrep.
//! - `include_ignored` turns every ignore file off at once; hidden files keep their own switch.
//! - Hidden files are skipped by default, `.git` always; symlinks are never followed;
//!   non-regular files are not yielded.
//!
//! Two ways to walk with the same rules: [`Workspace::walk`] yields lazily on the calling thread,
//! for callers that stop early; [`Workspace::walk_sorted`] walks with one thread per core and
//! sorts what it found into the same order, for callers that need every file (listings, search).
//! They differ in one thing: `walk` also leaves out files over the workspace size cap, which
//! costs a `stat` per file; `walk_sorted` does not, as that `stat` would cost more than the rest
//! of its walk, and readers judge the size anyway when they open a file
//! ([`Workspace::read_for_search`] refuses it as too large).

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

use ignore::gitignore::{Gitignore, GitignoreBuilder};
use ignore::{DirEntry, ParallelVisitor, ParallelVisitorBuilder, WalkBuilder, WalkState};

use crate::entry::EntryKind;
use crate::error::ScopeError;
use crate::path::WorkspacePath;
use crate::workspace::Workspace;

/// What a walk yields.
#[derive(Debug, Clone, Default)]
pub struct WalkOptions {
    /// Only files matching this glob (gitignore syntax, relative to the walked directory:
    /// `*.rs` matches at any depth, `src/*.rs` is anchored, `docs/` takes all below). It narrows
    /// the walk and never brings back an ignored file.
    pub glob: Option<String>,
    /// Include hidden files and directories (`.git` stays excluded).
    pub include_hidden: bool,
    /// Include what ignore files (`.gitignore`, `.ignore`, `.git/info/exclude`) leave out;
    /// hidden files still follow `include_hidden`.
    pub include_ignored: bool,
}

/// Regular files under a directory, as [`WorkspacePath`]s. Errors (unreadable directories)
/// are yielded and the walk goes on.
pub struct Walker {
    inner: WalkerInner,
    scope: Scope,
}

enum WalkerInner {
    /// An explicitly named file: yielded once, ignore rules or not.
    Single(Option<WorkspacePath>),
    Walk(Box<ignore::Walk>),
}

/// Every file of a walk, from [`Workspace::walk_sorted`].
#[derive(Debug, Default)]
pub struct WalkedFiles {
    /// In the order [`Workspace::walk`] yields them: by path, compared component by component.
    pub files: Vec<WorkspacePath>,
    /// Entries that could not be read (mostly directories); the walk went on past them.
    pub errors: usize,
}

/// Where walked paths belong, and the filter every yielded file passes.
struct Scope {
    root: PathBuf,
    primary: bool,
    /// The glob, as a one-line gitignore: a file is yielded when it "ignores" it.
    glob: Option<Gitignore>,
}

impl Scope {
    /// The path of `entry` when the walk yields it.
    fn accept(&self, entry: DirEntry) -> Option<PathBuf> {
        // `file_type` does not follow symlinks: links, FIFOs and devices are skipped.
        if !entry.file_type().is_some_and(|t| t.is_file()) {
            return None;
        }
        let path = entry.into_path();
        let wanted = self
            .glob
            .as_ref()
            .is_none_or(|g| g.matched_path_or_any_parents(&path, false).is_ignore());
        // Defensive: with links not followed, every entry is below the root. Compared on the
        // bytes, as the walk's paths extend the root's own bytes.
        let root = self.root.as_os_str().as_bytes();
        let inside = path
            .as_os_str()
            .as_bytes()
            .strip_prefix(root)
            .is_some_and(|rest| rest.first() == Some(&b'/') || root.ends_with(b"/"));
        (wanted && inside).then_some(path)
    }

    fn path(&self, abs: PathBuf) -> WorkspacePath {
        WorkspacePath::new(&self.root, abs, self.primary)
    }

    fn error(&self, e: &ignore::Error) -> ScopeError {
        ScopeError::Io {
            path: self.root.clone(),
            source: std::io::Error::other(e.to_string()),
        }
    }
}

/// A walk ready to run: a directory with its rules, or one explicitly named file.
enum Plan {
    Single(WorkspacePath),
    Walk(Box<WalkBuilder>),
}

/// Threads for walking and searching: one per core, as ripgrep does.
pub(crate) fn threads() -> usize {
    std::thread::available_parallelism().map_or(1, std::num::NonZero::get)
}

impl Workspace {
    /// Walk the regular files at or below `start`, lazily, on the calling thread.
    pub fn walk(&self, start: &WorkspacePath, options: &WalkOptions) -> Result<Walker, ScopeError> {
        let (plan, scope) = self.plan(start, options)?;
        let inner = match plan {
            Plan::Single(file) => WalkerInner::Single(Some(file)),
            Plan::Walk(mut builder) => {
                // Same order every time, so search results and their caps are reproducible.
                let walk = builder
                    .sort_by_file_name(|a, b| a.cmp(b))
                    .max_filesize(Some(self.max_file_size))
                    .build();
                WalkerInner::Walk(Box::new(walk))
            }
        };
        Ok(Walker { inner, scope })
    }

    /// Every regular file at or below `start`, in the order [`Workspace::walk`] yields them,
    /// found by one thread per core; unlike `walk`, files over the size cap are included. `stop`
    /// is asked as the walk goes; once it says true the walk ends and what was found so far is
    /// returned, still sorted.
    pub fn walk_sorted(
        &self,
        start: &WorkspacePath,
        options: &WalkOptions,
        stop: &(dyn Fn() -> bool + Sync),
    ) -> Result<WalkedFiles, ScopeError> {
        self.walk_sorted_where(start, options, stop, &|_| true)
    }

    /// [`Workspace::walk_sorted`], keeping only the files `keep` says true of, given their path
    /// relative to `start` (empty when `start` is the file). It runs on the walk's threads, so
    /// a caller that wants few of many files does not pay for the rest.
    pub fn walk_sorted_where(
        &self,
        start: &WorkspacePath,
        options: &WalkOptions,
        stop: &(dyn Fn() -> bool + Sync),
        keep: &(dyn Fn(&Path) -> bool + Sync),
    ) -> Result<WalkedFiles, ScopeError> {
        let (plan, scope) = self.plan(start, options)?;
        let mut builder = match plan {
            Plan::Single(file) => {
                let files = if keep(Path::new("")) {
                    vec![file]
                } else {
                    Vec::new()
                };
                return Ok(WalkedFiles { files, errors: 0 });
            }
            Plan::Walk(builder) => builder,
        };
        let found = Mutex::new(Vec::new());
        let errors = AtomicUsize::new(0);
        let mut collect = Collect {
            scope: &scope,
            start: start.as_path().as_os_str().as_bytes(),
            stop,
            keep,
            found: &found,
            errors: &errors,
        };
        builder
            .threads(threads())
            .build_parallel()
            .visit(&mut collect);
        let mut files: Vec<WorkspacePath> = found
            .into_inner()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .into_iter()
            .flatten()
            .collect();
        // Each thread sorted its share as it finished: a stable sort finds those runs and
        // only merges them.
        files.sort_by(|a, b| walk_order(a.as_path(), b.as_path()));
        Ok(WalkedFiles {
            files,
            errors: errors.into_inner(),
        })
    }

    /// The builder both walks share, so they apply the same rules.
    fn plan(
        &self,
        start: &WorkspacePath,
        options: &WalkOptions,
    ) -> Result<(Plan, Scope), ScopeError> {
        let root = start.root().to_path_buf();
        let primary = self.roots.first().is_some_and(|r| *r == root);
        match self.kind_of(start)? {
            EntryKind::File => {
                let scope = Scope {
                    root,
                    primary,
                    glob: None,
                };
                return Ok((Plan::Single(start.clone()), scope));
            }
            EntryKind::Dir => {}
            EntryKind::Symlink | EntryKind::Other => {
                return Err(ScopeError::NotADirectory {
                    path: start.as_path().to_owned(),
                });
            }
        }
        let mut builder = WalkBuilder::new(start.as_path());
        let ignore_files = !options.include_ignored;
        for dir in start
            .as_path()
            .ancestors()
            .skip(1)
            .take_while(|d| ignore_files && d.starts_with(&root))
        {
            add_ignore_files(&mut builder, dir);
        }
        builder
            .standard_filters(true)
            .ignore(ignore_files)
            .git_ignore(ignore_files)
            .git_exclude(ignore_files)
            .hidden(!options.include_hidden)
            .parents(false)
            .git_global(false)
            .require_git(false)
            .follow_links(false)
            .filter_entry(|e| e.file_name() != ".git");
        // Not `ignore`'s overrides: a whitelist override beats `.gitignore`.
        let glob = match &options.glob {
            Some(glob) => {
                let invalid = |e: ignore::Error| ScopeError::InvalidGlob {
                    glob: glob.clone(),
                    reason: e.to_string(),
                };
                let mut matcher = GitignoreBuilder::new(start.as_path());
                matcher.add_line(None, glob).map_err(invalid)?;
                Some(matcher.build().map_err(invalid)?)
            }
            None => None,
        };
        let scope = Scope {
            root,
            primary,
            glob,
        };
        Ok((Plan::Walk(Box::new(builder)), scope))
    }
}

/// The order of a walk that sorts each directory's entries by name: `Path`'s order, which
/// compares component by component (`a/b` before `a.txt`). Computed on the bytes, where a
/// separator sorts before any other byte, as that is several times faster than splitting both
/// paths into components; the walk's paths have no empty or `.` components, where the two
/// would differ.
fn walk_order(a: &Path, b: &Path) -> std::cmp::Ordering {
    let (a, b) = (a.as_os_str().as_bytes(), b.as_os_str().as_bytes());
    // Eight bytes at a time over the shared prefix (the root, often more), then byte by byte.
    let mut same = 0;
    while let (Some(x), Some(y)) = (a.get(same..same + 8), b.get(same..same + 8)) {
        if x != y {
            break;
        }
        same += 8;
    }
    same += a
        .iter()
        .zip(b)
        .skip(same)
        .take_while(|(x, y)| x == y)
        .count();
    let key = |byte: Option<&u8>| byte.map(|&c| if c == b'/' { 0 } else { u16::from(c) + 1 });
    key(a.get(same)).cmp(&key(b.get(same)))
}

/// The ignore files of `dir`, which lies between the root and the walked directory.
fn add_ignore_files(builder: &mut WalkBuilder, dir: &Path) {
    for name in [".gitignore", ".ignore"] {
        let file = dir.join(name);
        if file.is_file() {
            // A bad line spoils only itself; the rest of the file still applies.
            if let Some(e) = builder.add_ignore(&file) {
                tracing::debug!(file = %file.display(), error = %e, "ignore file partly unreadable");
            }
        }
    }
}

impl Iterator for Walker {
    type Item = Result<WorkspacePath, ScopeError>;

    fn next(&mut self) -> Option<Self::Item> {
        let walk = match &mut self.inner {
            WalkerInner::Single(single) => return single.take().map(Ok),
            WalkerInner::Walk(walk) => walk,
        };
        loop {
            match walk.next()? {
                Ok(entry) => {
                    if let Some(path) = self.scope.accept(entry) {
                        return Some(Ok(self.scope.path(path)));
                    }
                }
                Err(e) => return Some(Err(self.scope.error(&e))),
            }
        }
    }
}

/// The parallel walk's visitors: each thread gathers paths on its own and hands them over once,
/// when it is done.
struct Collect<'a> {
    scope: &'a Scope,
    /// The walked directory, whose bytes begin every path found.
    start: &'a [u8],
    stop: &'a (dyn Fn() -> bool + Sync),
    keep: &'a (dyn Fn(&Path) -> bool + Sync),
    found: &'a Mutex<Vec<Vec<WorkspacePath>>>,
    errors: &'a AtomicUsize,
}

impl<'s> ParallelVisitorBuilder<'s> for Collect<'s> {
    fn build(&mut self) -> Box<dyn ParallelVisitor + 's> {
        Box::new(Gather {
            scope: self.scope,
            start: self.start,
            stop: self.stop,
            keep: self.keep,
            found: self.found,
            errors: self.errors,
            paths: Vec::new(),
        })
    }
}

struct Gather<'a> {
    scope: &'a Scope,
    start: &'a [u8],
    stop: &'a (dyn Fn() -> bool + Sync),
    keep: &'a (dyn Fn(&Path) -> bool + Sync),
    found: &'a Mutex<Vec<Vec<WorkspacePath>>>,
    errors: &'a AtomicUsize,
    /// Built here rather than after the walk, so that the threads share that work too.
    paths: Vec<WorkspacePath>,
}

impl ParallelVisitor for Gather<'_> {
    fn visit(&mut self, entry: Result<DirEntry, ignore::Error>) -> WalkState {
        if (self.stop)() {
            return WalkState::Quit;
        }
        match entry {
            Ok(entry) => {
                if let Some(path) = self.scope.accept(entry) {
                    // The walk's paths extend the walked directory's bytes with `/` and a name.
                    let below = path
                        .as_os_str()
                        .as_bytes()
                        .get(self.start.len()..)
                        .map(|rest| rest.strip_prefix(b"/").unwrap_or(rest))
                        .unwrap_or_default();
                    if (self.keep)(Path::new(OsStr::from_bytes(below))) {
                        self.paths.push(self.scope.path(path));
                    }
                }
            }
            Err(e) => {
                tracing::debug!(error = %e, "walk entry unreadable");
                self.errors.fetch_add(1, Ordering::Relaxed);
            }
        }
        WalkState::Continue
    }
}

impl Drop for Gather<'_> {
    fn drop(&mut self) {
        let mut paths = std::mem::take(&mut self.paths);
        // Sorted here, on the walk's threads, so the caller is left with a merge.
        paths.sort_unstable_by(|a, b| walk_order(a.as_path(), b.as_path()));
        // A poisoned lock only means another visitor panicked; its paths are lost, not these.
        self.found
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .push(paths);
    }
}

#[cfg(test)]
mod tests;
