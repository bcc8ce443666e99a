//! The editor's open buffers, as the workspace sees them.
//!
//! Reads must see unsaved text, and writes to an open document must go through the editor so
//! the user sees them and can undo them. The LSP front implements [`DocumentOverlay`] with the
//! buffers it is told are open, the ACP front with the client's `fs/*` methods; this crate knows
//! neither protocol, so edits are byte ranges into the text that was read.
//!
//! An editor that holds diagnostics (its language servers' errors and warnings) may share them
//! too ([`DocumentOverlay::diagnostics`]); the workspace hands the tools only those of files the
//! user may read ([`Workspace::diagnostics`]).

use std::path::{Path, PathBuf};
use std::time::Duration;

use futures::future::BoxFuture;

use crate::{Workspace, WorkspacePath};

/// An open document's text and the editor's version of it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OpenDocument {
    pub text: String,
    pub version: i32,
}

/// Replace `start..end` (byte offsets into the text of the given version) by `new_text`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ByteEdit {
    pub start: usize,
    pub end: usize,
    pub new_text: String,
}

impl ByteEdit {
    /// `text` with `edits` applied; `None` unless they are ascending, disjoint, within the text
    /// and on character boundaries (an edit from elsewhere is checked, never trusted).
    pub fn apply_all(text: &str, edits: &[ByteEdit]) -> Option<String> {
        let mut out = String::with_capacity(text.len());
        let mut at = 0;
        for edit in edits {
            if edit.start < at || edit.end < edit.start {
                return None;
            }
            out.push_str(text.get(at..edit.start)?);
            text.get(edit.start..edit.end)?;
            out.push_str(&edit.new_text);
            at = edit.end;
        }
        out.push_str(text.get(at..)?);
        Some(out)
    }
}

/// Why the editor did not apply an edit.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum OverlayError {
    /// The document changed since it was read; the edit was not applied.
    #[error(
        "the document changed in the editor (version {expected} is now {actual}); read it again"
    )]
    Stale { expected: i32, actual: i32 },
    /// The editor refused the edit (the user rejected it, or it failed).
    #[error("the editor did not apply the edit: {reason}")]
    Rejected { reason: String },
    /// The document is no longer open.
    #[error("the document is no longer open in the editor")]
    Closed,
}

/// Open documents of the editor. Paths are absolute, canonical paths inside a workspace root.
pub trait DocumentOverlay: Send + Sync {
    /// The editor's current text of `path`, if it is open.
    fn open_document(&self, path: &Path) -> Option<OpenDocument>;
    /// Apply edits to the open document at `version` through the editor.
    fn apply_edits(
        &self,
        path: &Path,
        version: i32,
        edits: Vec<ByteEdit>,
    ) -> BoxFuture<'_, Result<(), OverlayError>>;
    /// `true` when [`open_document`](Self::open_document) asks the editor over the wire about
    /// any file (ACP's `fs/read_text_file`) rather than answering from the buffers the front
    /// knows are open (LSP). Such an overlay serves single-file reads and edits only: search
    /// reads the disk instead of asking once per file, and no file is called "open in the
    /// editor" because of it.
    fn asks_the_editor(&self) -> bool {
        false
    }
    /// `true` when edits applied through the editor are also saved to disk (ACP's
    /// `fs/write_text_file` writes the file); an LSP editor only changes the buffer.
    fn saves_edits(&self) -> bool {
        false
    }
    /// The diagnostics the editor holds, one entry per file it published for (an empty list
    /// once it cleared them); `None` when this editor does not send diagnostics (Helix, ACP
    /// clients).
    fn diagnostics(&self) -> Option<Vec<FileDiagnostics>> {
        None
    }
    /// The stamp of the editor's latest publication: a later one for a file has a larger
    /// [`FileDiagnostics::stamp`]. `None` when this editor does not send diagnostics.
    fn diagnostics_mark(&self) -> Option<u64> {
        None
    }
    /// Resolves once the editor has published diagnostics for `path` with a stamp above
    /// `after`. Callers bound the wait; an editor that does not send diagnostics never
    /// resolves it.
    fn diagnostics_published(&self, path: &Path, after: u64) -> BoxFuture<'_, ()> {
        let _ = (path, after);
        Box::pin(futures::future::pending())
    }
}

/// How serious a diagnostic is, as LSP ranks them (most serious first).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Severity {
    Error,
    Warning,
    Information,
    Hint,
}

impl Severity {
    /// The word the model reads.
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Error => "error",
            Severity::Warning => "warning",
            Severity::Information => "info",
            Severity::Hint => "hint",
        }
    }
}

/// One diagnostic of a file, as the editor holds it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Diagnostic {
    /// 1-based line of its start.
    pub line: u32,
    /// 1-based column of its start, in the editor's units (UTF-16 code units unless the editor
    /// chose UTF-8 or UTF-32).
    pub column: u32,
    pub severity: Severity,
    /// What produced it (`rustc`, `eslint`), when the editor says.
    pub source: Option<String>,
    /// Its code (`E0425`), when it has one.
    pub code: Option<String>,
    pub message: String,
}

/// The editor's diagnostics of one file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileDiagnostics {
    /// Absolute path (canonical when the file exists).
    pub path: PathBuf,
    /// When the editor published them (see [`DocumentOverlay::diagnostics_mark`]).
    pub stamp: u64,
    pub diagnostics: Vec<Diagnostic>,
}

/// The path of a `file://` URI (percent-decoded), `None` for any other URI. The inverse of
/// [`WorkspacePath::uri`], for the edit reports that carry URIs.
pub fn path_of_file_uri(uri: &str) -> Option<PathBuf> {
    let rest = uri.strip_prefix("file://")?;
    // `file://host/path` names another machine; only the empty host (or `localhost`) is ours.
    let rest = rest.strip_prefix("localhost").unwrap_or(rest);
    if !rest.starts_with('/') {
        return None;
    }
    let bytes = rest.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while let Some(&b) = bytes.get(i) {
        if b == b'%' {
            let hex = rest.get(i + 1..i + 3)?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(b);
            i += 1;
        }
    }
    #[cfg(unix)]
    {
        use std::os::unix::ffi::OsStringExt;
        Some(PathBuf::from(std::ffi::OsString::from_vec(out)))
    }
    #[cfg(not(unix))]
    {
        String::from_utf8(out).ok().map(PathBuf::from)
    }
}

/// The diagnostics of one workspace file the user may read.
#[derive(Debug, Clone)]
pub struct PathDiagnostics {
    pub path: WorkspacePath,
    /// Published after the mark the caller waited from ([`Workspace::diagnostics_after`]); for
    /// [`Workspace::diagnostics`], always true.
    pub updated: bool,
    pub diagnostics: Vec<Diagnostic>,
}

impl Workspace {
    /// The editor's diagnostics of workspace files whose contents the user may read (outside
    /// the roots, refused, or protected without an approval held: left out), files with none
    /// left out; `None` when the editor does not send diagnostics. Resolves paths: call it off
    /// the executor.
    pub fn diagnostics(&self) -> Option<Vec<PathDiagnostics>> {
        let files = self.overlay.as_ref()?.diagnostics()?;
        Some(
            files
                .into_iter()
                .filter(|f| !f.diagnostics.is_empty())
                .filter_map(|f| {
                    let path = self.readable(&f.path)?;
                    Some(PathDiagnostics {
                        path,
                        updated: true,
                        diagnostics: f.diagnostics,
                    })
                })
                .collect(),
        )
    }

    /// Where the editor's diagnostics stand now, to wait from with
    /// [`Workspace::diagnostics_after`]; `None` when the editor does not send diagnostics.
    pub fn diagnostics_mark(&self) -> Option<u64> {
        self.overlay.as_ref()?.diagnostics_mark()
    }

    /// The diagnostics of `paths` (absolute; files that do not exist, such as deleted ones, and
    /// those the user may not read are left out) once the
    /// editor has published for each of them after `mark`, or once `limit` has passed; each
    /// says whether it was published after the mark. `None` when the editor does not send
    /// diagnostics.
    pub async fn diagnostics_after(
        self: &std::sync::Arc<Self>,
        paths: Vec<PathBuf>,
        mark: u64,
        limit: Duration,
    ) -> Option<Vec<PathDiagnostics>> {
        let overlay = self.overlay.as_ref()?;
        overlay.diagnostics_mark()?;
        let resolved = crate::off_thread(self, move |ws| {
            paths
                .iter()
                .filter_map(|p| ws.readable(p))
                .filter(|p| ws.stat(p).is_ok())
                .collect::<Vec<_>>()
        })
        .await
        .ok()?;
        let waits = resolved
            .iter()
            .map(|p| overlay.diagnostics_published(p.as_path(), mark));
        let _ = tokio::time::timeout(limit, futures::future::join_all(waits)).await;
        let files = overlay.diagnostics()?;
        Some(
            resolved
                .into_iter()
                .map(|path| {
                    let file = files.iter().find(|f| f.path == path.as_path());
                    PathDiagnostics {
                        updated: file.is_some_and(|f| f.stamp > mark),
                        diagnostics: file.map(|f| f.diagnostics.clone()).unwrap_or_default(),
                        path,
                    }
                })
                .collect(),
        )
    }

    /// `abs` as a workspace path whose contents the user may read now, else `None`.
    fn readable(&self, abs: &Path) -> Option<WorkspacePath> {
        let path = self.resolve(abs.to_str()?).ok()?;
        self.may_read(&path).then_some(path)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, clippy::disallowed_methods)]

    use std::sync::{Arc, Mutex};

    use cairn_config::access::AccessRules;

    use super::*;
    use crate::{ExactApprovals, Operation};

    /// An editor that sends diagnostics: `publish` replaces a file's, stamped.
    struct Editor {
        files: Mutex<Vec<FileDiagnostics>>,
        changed: tokio::sync::watch::Sender<u64>,
    }

    impl Editor {
        fn new() -> Arc<Editor> {
            Arc::new(Editor {
                files: Mutex::default(),
                changed: tokio::sync::watch::channel(0).0,
            })
        }

        fn publish(&self, path: &Path, messages: &[&str]) {
            let mut files = self.files.lock().unwrap();
            let stamp = *self.changed.borrow() + 1;
            files.retain(|f| f.path != path);
            files.push(FileDiagnostics {
                path: path.to_path_buf(),
                stamp,
                diagnostics: messages
                    .iter()
                    .map(|m| Diagnostic {
                        line: 1,
                        column: 1,
                        severity: Severity::Error,
                        source: None,
                        code: None,
                        message: (*m).to_owned(),
                    })
                    .collect(),
            });
            self.changed.send_replace(stamp);
        }
    }

    impl DocumentOverlay for Editor {
        fn open_document(&self, _: &Path) -> Option<OpenDocument> {
            None
        }
        fn apply_edits(
            &self,
            _: &Path,
            _: i32,
            _: Vec<ByteEdit>,
        ) -> BoxFuture<'_, Result<(), OverlayError>> {
            Box::pin(async { Err(OverlayError::Closed) })
        }
        fn diagnostics(&self) -> Option<Vec<FileDiagnostics>> {
            Some(self.files.lock().unwrap().clone())
        }
        fn diagnostics_mark(&self) -> Option<u64> {
            Some(*self.changed.borrow())
        }
        fn diagnostics_published(&self, path: &Path, after: u64) -> BoxFuture<'_, ()> {
            let mut changed = self.changed.subscribe();
            let path = path.to_path_buf();
            Box::pin(async move {
                loop {
                    let stamp = self
                        .files
                        .lock()
                        .unwrap()
                        .iter()
                        .find(|f| f.path == path)
                        .map_or(0, |f| f.stamp);
                    if stamp > after || changed.changed().await.is_err() {
                        return;
                    }
                }
            })
        }
    }

    /// A root `ws` with `a.rs` and `.env`, `outside.rs` beside it, under the default rules.
    fn workspace(
        editor: Arc<Editor>,
    ) -> (
        tempfile::TempDir,
        PathBuf,
        Arc<ExactApprovals>,
        Arc<Workspace>,
    ) {
        let tmp = tempfile::tempdir().unwrap();
        let base = std::fs::canonicalize(tmp.path()).unwrap();
        std::fs::create_dir(base.join("ws")).unwrap();
        for f in ["ws/a.rs", "ws/.env", "outside.rs"] {
            std::fs::write(base.join(f), "x\n").unwrap();
        }
        let approvals = ExactApprovals::new();
        let ws = Workspace::new(vec![base.join("ws")])
            .unwrap()
            .with_overlay(editor)
            .with_access(|_| AccessRules::new("ada", None, None), approvals.clone());
        (tmp, base, approvals, Arc::new(ws))
    }

    fn shown(files: &[PathDiagnostics]) -> Vec<(String, bool, usize)> {
        files
            .iter()
            .map(|f| (f.path.display_path(), f.updated, f.diagnostics.len()))
            .collect()
    }

    #[test]
    fn only_files_the_user_may_read_are_shown() {
        let editor = Editor::new();
        let (_tmp, base, approvals, ws) = workspace(editor.clone());
        editor.publish(&base.join("ws/a.rs"), &["in the workspace"]);
        editor.publish(&base.join("ws/.env"), &["a secret's file"]);
        editor.publish(&base.join("outside.rs"), &["outside"]);
        editor.publish(&base.join("ws/cleared.rs"), &[]);
        assert_eq!(
            shown(&ws.diagnostics().unwrap()),
            [("a.rs".to_owned(), true, 1)]
        );
        // An approval of `.env` held for the call shows it, as a read would.
        approvals.hold(&base.join("ws/.env"), Operation::Read);
        let mut got = shown(&ws.diagnostics().unwrap());
        got.sort();
        assert_eq!(
            got,
            [(".env".to_owned(), true, 1), ("a.rs".to_owned(), true, 1)]
        );
    }

    #[test]
    fn a_workspace_without_an_editor_that_sends_them_has_none() {
        let ws = Workspace::new(vec![std::env::temp_dir()]).unwrap();
        assert!(ws.diagnostics().is_none());
        assert!(ws.diagnostics_mark().is_none());
    }

    #[tokio::test]
    async fn diagnostics_after_an_edit_wait_for_the_files_next_publication() {
        let editor = Editor::new();
        let (_tmp, base, _, ws) = workspace(editor.clone());
        let a = base.join("ws/a.rs");
        editor.publish(&a, &["before the edit"]);
        let mark = ws.diagnostics_mark().unwrap();
        let later = editor.clone();
        let a2 = a.clone();
        tokio::spawn(async move {
            tokio::task::yield_now().await;
            later.publish(&a2, &["after the edit", "and another"]);
        });
        // Ends at the publication, long before the limit.
        let got = ws
            .diagnostics_after(
                vec![a.clone(), base.join("ws/gone.rs")],
                mark,
                Duration::from_secs(600),
            )
            .await
            .unwrap();
        assert_eq!(shown(&got), [("a.rs".to_owned(), true, 2)]);

        // Nothing published since: the limit ends the wait, and the diagnostics are not updated.
        let mark = ws.diagnostics_mark().unwrap();
        let got = ws
            .diagnostics_after(vec![a], mark, Duration::from_millis(10))
            .await
            .unwrap();
        assert_eq!(shown(&got), [("a.rs".to_owned(), false, 2)]);
    }

    #[test]
    fn file_uris_turn_back_into_paths() {
        let tmp = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(tmp.path()).unwrap();
        let ws = Workspace::new(vec![root.clone()]).unwrap();
        for name in ["a.rs", "with space.rs", "100%.rs", "ünï.rs", "a#b?.rs"] {
            let path = ws.resolve(name).unwrap();
            assert_eq!(
                path_of_file_uri(&path.uri()).as_deref(),
                Some(root.join(name).as_path()),
                "{}",
                path.uri()
            );
        }
        for uri in [
            "untitled:Untitled-1",
            "file://host/etc/passwd",
            "file:///a%zz",
            "https://x/y",
        ] {
            assert_eq!(path_of_file_uri(uri), None, "{uri}");
        }
        assert_eq!(
            path_of_file_uri("file://localhost/etc/hosts"),
            Some(PathBuf::from("/etc/hosts"))
        );
    }
}
