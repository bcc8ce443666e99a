//! The workspace's side of the editor: its open buffers, edits made through it, and the
//! diagnostics it shares ([`PathDiagnostics`]), over the [`DocumentOverlay`] the front plugs in.
//! Apart from the overlay types so that `workspace.rs` can hold the overlay without importing
//! what uses the workspace.

use std::path::{Path, PathBuf};
use std::time::Duration;

use cairn_config::access::Operation;

use crate::overlay::{ByteEdit, Diagnostic, OpenDocument, OverlayError};
use crate::path::WorkspacePath;
use crate::rewind::After;
use crate::workspace::{Workspace, off_thread};

impl Workspace {
    /// The editor's open document at `path`, if an overlay is plugged in and it is open.
    pub fn open_document(&self, path: &WorkspacePath) -> Option<OpenDocument> {
        self.overlay
            .as_ref()
            .and_then(|o| o.open_document(path.as_path()))
    }

    /// A buffer the front knows is open in the editor (never asking the editor over the wire):
    /// for searches over many files, and for telling the model a file is open.
    pub fn open_buffer(&self, path: &WorkspacePath) -> Option<OpenDocument> {
        self.overlay
            .as_ref()
            .filter(|o| !o.asks_the_editor())
            .and_then(|o| o.open_document(path.as_path()))
    }

    /// How an edit applied through the editor ends, for the model's result: saved to disk, or
    /// only in the editor's buffer (then a program run on the files does not see it yet).
    pub fn editor_note(&self) -> &'static str {
        match &self.overlay {
            Some(o) if o.saves_edits() => "through the editor (saved)",
            _ => "in the editor (not saved yet)",
        }
    }

    /// Apply edits to a document open in the editor, at the version that was read.
    pub async fn apply_edits_in_editor(
        &self,
        path: &WorkspacePath,
        version: i32,
        edits: Vec<ByteEdit>,
    ) -> Result<(), OverlayError> {
        self.check(path, Operation::Write)
            .map_err(|e| OverlayError::Rejected {
                reason: e.to_string(),
            })?;
        let Some(overlay) = &self.overlay else {
            return Err(OverlayError::Closed);
        };
        let pending = self.before_change(path);
        // What the buffer will hold, for the checkpoint (an editor that saves is read back).
        let after = match pending.as_ref().and_then(|_| self.buffer_text(path)) {
            Some(text) if !overlay.saves_edits() => ByteEdit::apply_all(&text, &edits),
            _ => None,
        };
        overlay.apply_edits(path.as_path(), version, edits).await?;
        match &after {
            Some(text) => self.after_change(pending, After::Bytes(text.as_bytes())),
            None => self.after_change(pending, After::Disk(path)),
        }
        Ok(())
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
        let resolved = off_thread(self, move |ws| {
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
    use futures::future::BoxFuture;

    use super::*;
    use crate::overlay::{DocumentOverlay, FileDiagnostics, Severity, path_of_file_uri};
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
