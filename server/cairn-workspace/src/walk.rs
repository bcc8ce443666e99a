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
//! - Hidden files are skipped by default, `.git` always; symlinks are never followed; files over
//!   the workspace size cap and non-regular files are not yielded.

use std::path::PathBuf;

use ignore::WalkBuilder;
use ignore::gitignore::{Gitignore, GitignoreBuilder};

use crate::{EntryKind, ScopeError, Workspace, WorkspacePath};

/// What a walk yields.
#[derive(Debug, Clone, Default)]
pub struct WalkOptions {
    /// Only files matching this glob (gitignore syntax, relative to the walked directory:
    /// `*.rs` matches at any depth, `src/*.rs` is anchored, `docs/` takes all below). It narrows
    /// the walk and never brings back an ignored file.
    pub glob: Option<String>,
    /// Include hidden files and directories (`.git` stays excluded).
    pub include_hidden: bool,
}

/// Regular files under a directory, as [`WorkspacePath`]s. Errors (unreadable directories)
/// are yielded and the walk goes on.
pub struct Walker {
    inner: WalkerInner,
    root: PathBuf,
    primary: bool,
    /// The glob, as a one-line gitignore: a file is yielded when it "ignores" it.
    glob: Option<Gitignore>,
}

enum WalkerInner {
    /// An explicitly named file: yielded once, ignore rules or not.
    Single(Option<WorkspacePath>),
    Walk(Box<ignore::Walk>),
}

impl Workspace {
    /// Walk the regular files at or below `start`.
    pub fn walk(&self, start: &WorkspacePath, options: &WalkOptions) -> Result<Walker, ScopeError> {
        let root = start.root().to_path_buf();
        let primary = self.roots.first().is_some_and(|r| *r == root);
        match self.kind_of(start)? {
            EntryKind::File => {
                return Ok(Walker {
                    inner: WalkerInner::Single(Some(start.clone())),
                    root,
                    primary,
                    glob: None,
                });
            }
            EntryKind::Dir => {}
            EntryKind::Symlink | EntryKind::Other => {
                return Err(ScopeError::NotADirectory {
                    path: start.as_path().to_owned(),
                });
            }
        }
        let mut builder = WalkBuilder::new(start.as_path());
        for dir in start
            .as_path()
            .ancestors()
            .skip(1)
            .take_while(|d| d.starts_with(&root))
        {
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
        builder
            .standard_filters(true)
            .hidden(!options.include_hidden)
            .parents(false)
            .git_global(false)
            .require_git(false)
            .follow_links(false)
            .max_filesize(Some(self.max_file_size))
            // Same order every time, so search results and their caps are reproducible.
            .sort_by_file_name(|a, b| a.cmp(b))
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
        Ok(Walker {
            inner: WalkerInner::Walk(Box::new(builder.build())),
            root,
            primary,
            glob,
        })
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
                    // `file_type` does not follow symlinks: links, FIFOs and devices are skipped.
                    if entry.file_type().is_some_and(|t| t.is_file()) {
                        let path = entry.into_path();
                        let wanted = self.glob.as_ref().is_none_or(|g| {
                            g.matched_path_or_any_parents(&path, false).is_ignore()
                        });
                        // Defensive: with links not followed, every entry is below the root.
                        if wanted && path.starts_with(&self.root) {
                            return Some(Ok(WorkspacePath::new(&self.root, path, self.primary)));
                        }
                    }
                }
                Err(e) => {
                    return Some(Err(ScopeError::Io {
                        path: self.root.clone(),
                        source: std::io::Error::other(e.to_string()),
                    }));
                }
            }
        }
    }
}
