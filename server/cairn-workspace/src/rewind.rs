//! The workspace side of checkpoints: every write primitive asks [`Workspace::before_change`]
//! for the file's prior state and tells [`Workspace::after_change`] what it left, and
//! [`rewind`] puts files back.
//!
//! A file's state is what a read sees without asking the editor over the wire: the open
//! buffer's text (LSP) or the disk. A rewind restores a file only when its state is still the
//! one cairn left; anything else is a conflict, reported and left alone, never overwritten.

use std::collections::HashMap;
use std::io::Read;
use std::path::PathBuf;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use crate::checkpoint::{
    Change, CheckpointError, Checkpoints, Line, Prior, Turn, current_turn, hash_bytes, hash_reader,
    not_kept_reason,
};
use crate::entry::EntryKind;
use crate::error::ScopeError;
use crate::open;
use crate::overlay::ByteEdit;
use crate::path::WorkspacePath;
use crate::workspace::Workspace;

/// A change under way: the turn, the file, and its prior state when this is the turn's first
/// change of it.
pub(crate) struct Pending {
    turn: Arc<Turn>,
    path: PathBuf,
    before: Option<Prior>,
}

/// What a change left.
pub(crate) enum After<'a> {
    Absent,
    Bytes(&'a [u8]),
    /// Read it back from the disk (a streamed write, a move).
    Disk(&'a WorkspacePath),
}

/// A file's state, read for a checkpoint.
enum State {
    Absent,
    Bytes(Vec<u8>),
    TooBig(u64),
}

/// What a rewind did.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct RewindReport {
    /// Files put back (paths as the workspace displays them).
    pub restored: Vec<String>,
    /// Files changed since cairn wrote them: left as they are.
    pub conflicts: Vec<NotRestored>,
    /// Files that could not be put back, with why.
    pub failed: Vec<NotRestored>,
}

impl RewindReport {
    /// Whether every file was put back.
    pub fn complete(&self) -> bool {
        self.conflicts.is_empty() && self.failed.is_empty()
    }

    /// The report as lines of text, for the terminal and ACP.
    pub fn to_text(&self) -> String {
        let mut out = Vec::new();
        if self.restored.is_empty() && self.complete() {
            out.push("Nothing to restore: those turns changed no file (or were rewound).".into());
        }
        for path in &self.restored {
            out.push(format!("restored {path}"));
        }
        for c in &self.conflicts {
            out.push(format!("not restored {}: {}", c.path, c.reason));
        }
        for f in &self.failed {
            out.push(format!("failed {}: {}", f.path, f.reason));
        }
        out.join("\n")
    }
}

/// A file a rewind left alone, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NotRestored {
    pub path: String,
    pub reason: String,
}

impl Workspace {
    /// Changes made during a turn ([`crate::checkpoint::in_turn`]) are recorded in `checkpoints`.
    pub fn with_checkpoints(mut self, checkpoints: Arc<Checkpoints>) -> Workspace {
        self.checkpoints = Some(checkpoints);
        self
    }

    pub fn checkpoints(&self) -> Option<&Arc<Checkpoints>> {
        self.checkpoints.as_ref()
    }

    /// Before a change of `path`: its prior state, at the turn's first change of it. `None` when
    /// nothing is recorded (no store, no turn, or not a file: a directory is not checkpointed).
    pub(crate) fn before_change(&self, path: &WorkspacePath) -> Option<Pending> {
        let store = self.checkpoints.as_ref()?;
        // A call outside any session (`cairn tools call`) has no turn to rewind.
        let turn = current_turn().filter(|t| t.has_session())?;
        let abs = path.as_path().to_owned();
        if store.has_prior(&turn, &abs) {
            return Some(Pending {
                turn,
                path: abs,
                before: None,
            });
        }
        let shown = path.display_path();
        let before = match self.state(path, store.max_file_bytes()) {
            Ok(State::Absent) => Prior::Absent,
            Ok(State::TooBig(bytes)) => store.too_big(&turn, &shown, bytes),
            Ok(State::Bytes(bytes)) => match store.keep(&turn, &shown, &bytes) {
                Ok(prior) => prior,
                Err(e) => {
                    tracing::warn!("{shown} was not checkpointed: {e}");
                    turn.note(format!(
                        "{shown} was not checkpointed ({e}); a rewind cannot restore it"
                    ));
                    return None;
                }
            },
            Err(e) => {
                tracing::debug!("{shown} is not checkpointed: {e}");
                return None;
            }
        };
        Some(Pending {
            turn,
            path: abs,
            before: Some(before),
        })
    }

    /// After a change succeeded: records it with the hash of what it left.
    pub(crate) fn after_change(&self, pending: Option<Pending>, after: After<'_>) {
        let (Some(store), Some(p)) = (self.checkpoints.as_ref(), pending) else {
            return;
        };
        let after = match after {
            After::Absent => None,
            After::Bytes(bytes) => Some(hash_bytes(bytes)),
            After::Disk(path) => match disk_hash(path) {
                Ok(hash) => hash,
                Err(e) => {
                    tracing::warn!("{}: cannot hash what was written: {e}", path.display_path());
                    Some(String::new())
                }
            },
        };
        if let Err(e) = store.record(&p.turn, &p.path, p.before, after) {
            tracing::warn!("checkpoint of {} not recorded: {e}", p.path.display());
            p.turn.note(format!(
                "{} was not checkpointed ({e}); a rewind cannot restore it",
                p.path.display()
            ));
        }
    }

    /// Notes on the current turn that `path` (a directory being moved) is not checkpointed.
    pub(crate) fn note_not_checkpointed(&self, path: &WorkspacePath, why: &str) {
        if self.checkpoints.is_some()
            && let Some(turn) = current_turn()
        {
            turn.note(format!(
                "{} was not checkpointed: {why}; a rewind cannot restore it",
                path.display_path()
            ));
        }
    }

    /// The text of `path` in the editor's buffer, when the front knows it is open.
    pub(crate) fn buffer_text(&self, path: &WorkspacePath) -> Option<String> {
        self.open_buffer(path).map(|d| d.text)
    }

    /// What the file at `path` is now, for a checkpoint, capped at `limit` bytes.
    fn state(&self, path: &WorkspacePath, limit: u64) -> Result<State, ScopeError> {
        if let Some(text) = self.buffer_text(path) {
            let len = u64::try_from(text.len()).unwrap_or(u64::MAX);
            return Ok(if len > limit {
                State::TooBig(len)
            } else {
                State::Bytes(text.into_bytes())
            });
        }
        let st = match open::lstat(path) {
            Ok(st) => st,
            Err(ScopeError::NotFound { .. }) => return Ok(State::Absent),
            Err(e) => return Err(e),
        };
        open::check_regular(path.as_path(), open::file_type(&st))?;
        let size = open::size(&st);
        if size > limit {
            return Ok(State::TooBig(size));
        }
        let (file, _) = open::open_regular(path, limit)?;
        let mut bytes = Vec::new();
        file.take(limit.saturating_add(1))
            .read_to_end(&mut bytes)
            .map_err(|e| ScopeError::io(path.as_path(), e))?;
        let len = u64::try_from(bytes.len()).unwrap_or(u64::MAX);
        Ok(if len > limit {
            State::TooBig(len)
        } else {
            State::Bytes(bytes)
        })
    }

    /// The hash of what `path` is now (`None`: no file), as a rewind compares it.
    fn current_hash(&self, path: &WorkspacePath) -> Result<Option<String>, ScopeError> {
        match self.buffer_text(path) {
            Some(text) => Ok(Some(hash_bytes(text.as_bytes()))),
            None => disk_hash(path),
        }
    }

    /// The files each run of `session_id` changed that a rewind has not undone, as displayed
    /// paths, in the order first changed.
    pub fn checkpoint_files(
        &self,
        session_id: &str,
    ) -> Result<HashMap<String, Vec<String>>, CheckpointError> {
        let mut out: HashMap<String, Vec<String>> = HashMap::new();
        let Some(store) = &self.checkpoints else {
            return Ok(out);
        };
        for change in store.changes(session_id)? {
            let shown = self.display(&change.path);
            let files = out.entry(change.run_id).or_default();
            if !files.contains(&shown) {
                files.push(shown);
            }
        }
        Ok(out)
    }

    /// `abs` as the workspace displays it (relative to its root when inside one).
    fn display(&self, abs: &std::path::Path) -> String {
        self.resolve(&abs.to_string_lossy())
            .map(|p| p.display_path())
            .unwrap_or_else(|_| abs.display().to_string())
    }

    /// Restores on disk what can be, and plans the rest (open buffers) for the editor.
    fn rewind_on_disk(
        &self,
        session_id: &str,
        run_ids: &[String],
    ) -> Result<(RewindReport, Vec<EditorStep>, Vec<Line>), CheckpointError> {
        let mut report = RewindReport::default();
        let mut steps = Vec::new();
        let mut marks = Vec::new();
        let Some(store) = &self.checkpoints else {
            return Ok((report, steps, marks));
        };
        let changes = store.changes(session_id)?;
        let chosen = |c: &Change| run_ids.contains(&c.run_id);
        // The files the chosen turns changed, in the order first changed.
        let mut paths: Vec<&PathBuf> = Vec::new();
        for c in changes.iter().filter(|c| chosen(c)) {
            if !paths.contains(&&c.path) {
                paths.push(&c.path);
            }
        }
        for abs in paths {
            let shown = self.display(abs);
            let of_path: Vec<&Change> = changes.iter().filter(|c| &c.path == abs).collect();
            let target = of_path
                .iter()
                .find(|c| chosen(c) && c.before.is_some())
                .and_then(|c| c.before.clone());
            let last_after = of_path.last().and_then(|c| c.after.clone());
            let mut runs: Vec<&str> = Vec::new();
            for c in of_path.iter().filter(|c| chosen(c)) {
                if !runs.contains(&c.run_id.as_str()) {
                    runs.push(&c.run_id);
                }
            }
            let mark: Vec<Line> = runs
                .iter()
                .map(|r| Line::Rewound {
                    run_id: (*r).to_owned(),
                    path: abs.clone(),
                })
                .collect();
            let fail = |report: &mut RewindReport, reason: String| {
                report.failed.push(NotRestored {
                    path: shown.clone(),
                    reason,
                });
            };
            let Some(target) = target else {
                fail(
                    &mut report,
                    "its state before that turn was not recorded".into(),
                );
                continue;
            };
            let path = match self.resolve(&abs.to_string_lossy()) {
                Ok(p) => p,
                Err(e) => {
                    fail(&mut report, e.to_string());
                    continue;
                }
            };
            match self.current_hash(&path) {
                Ok(now) if now == last_after => {}
                Ok(_) => {
                    report.conflicts.push(NotRestored {
                        path: shown.clone(),
                        reason: "changed since cairn wrote it".into(),
                    });
                    continue;
                }
                Err(e) => {
                    fail(&mut report, e.to_string());
                    continue;
                }
            }
            let result = match target {
                Prior::NotKept { bytes, limit } => {
                    Err(format!("it {}", not_kept_reason(bytes, limit)))
                }
                Prior::Absent => match self.kind_of(&path) {
                    Ok(EntryKind::File) => self.remove_file(&path).map_err(|e| e.to_string()),
                    Ok(_) => Err("something other than a file is there now".into()),
                    Err(ScopeError::NotFound { .. }) => Ok(()),
                    Err(e) => Err(e.to_string()),
                },
                Prior::Kept { hash } => match store.object(session_id, &hash) {
                    Err(e) => Err(e.to_string()),
                    Ok(bytes) => match (self.open_document(&path), std::str::from_utf8(&bytes)) {
                        (Some(doc), Ok(text)) => {
                            steps.push(EditorStep {
                                path,
                                shown: shown.clone(),
                                version: doc.version,
                                old_len: doc.text.len(),
                                text: text.to_owned(),
                                mark,
                            });
                            continue;
                        }
                        _ => self
                            .write_bytes_atomic(&path, &bytes)
                            .map_err(|e| e.to_string()),
                    },
                },
            };
            match result {
                Ok(()) => {
                    report.restored.push(shown);
                    marks.extend(mark);
                }
                Err(reason) => fail(&mut report, reason),
            }
        }
        Ok((report, steps, marks))
    }
}

/// A file open in the editor, restored through it.
struct EditorStep {
    path: WorkspacePath,
    shown: String,
    version: i32,
    old_len: usize,
    text: String,
    mark: Vec<Line>,
}

/// The sha-256 of the file on disk (`None`: no file), read a piece at a time.
pub(crate) fn disk_hash(path: &WorkspacePath) -> Result<Option<String>, ScopeError> {
    match open::open_regular(path, u64::MAX) {
        Ok((mut file, _)) => hash_reader(&mut file)
            .map(Some)
            .map_err(|e| ScopeError::io(path.as_path(), e)),
        Err(ScopeError::NotFound { .. }) => Ok(None),
        Err(e) => Err(e),
    }
}

/// Restores every file the runs `run_ids` (a session's turns from the one chosen on) changed to
/// its state before the earliest of them: through the editor for open buffers, on disk
/// otherwise. A file changed since cairn wrote it is a conflict, left alone. The files restored
/// are marked, so a second rewind does not restore them again.
pub async fn rewind(
    ws: &Arc<Workspace>,
    session_id: &str,
    run_ids: Vec<String>,
) -> Result<RewindReport, String> {
    let session = session_id.to_owned();
    let (mut report, steps, mut marks) =
        crate::workspace::off_thread(ws, move |ws| ws.rewind_on_disk(&session, &run_ids))
            .await?
            .map_err(|e| e.to_string())?;
    for step in steps {
        let edit = ByteEdit {
            start: 0,
            end: step.old_len,
            new_text: step.text,
        };
        match ws
            .apply_edits_in_editor(&step.path, step.version, vec![edit])
            .await
        {
            Ok(()) => {
                report.restored.push(step.shown);
                marks.extend(step.mark);
            }
            Err(e) => report.failed.push(NotRestored {
                path: step.shown,
                reason: e.to_string(),
            }),
        }
    }
    if let Some(store) = ws.checkpoints()
        && !marks.is_empty()
    {
        let session = session_id.to_owned();
        let store = store.clone();
        tokio::task::spawn_blocking(move || store.append(&session, &marks))
            .await
            .map_err(|e| format!("internal error: {e}"))?
            .map_err(|e| e.to_string())?;
    }
    Ok(report)
}

/// Cap on the bytes a snapshot before a program holds in memory: 64 MiB.
const SNAPSHOT_MAX_BYTES: u64 = 64 * 1024 * 1024;

/// The workspace's files before a program that may write them runs (a sandbox with the
/// workspace mounted writable), so the files it changes can be checkpointed after it ran.
/// Hidden files are included, `.git` and what ignore files leave out (build output) are not.
pub struct ProgramSnapshot {
    turn: Arc<Turn>,
    /// Each file's hash before, and its bytes while under the caps.
    files: HashMap<PathBuf, (String, SnapshotBytes)>,
}

enum SnapshotBytes {
    Kept(Vec<u8>),
    /// Over the per-file cap or the snapshot's.
    NotKept {
        bytes: u64,
        limit: u64,
    },
}

impl Workspace {
    /// The files a program may change, read before it runs; `None` when nothing is recorded
    /// (no store, no turn).
    pub fn snapshot_before_program(&self) -> Option<ProgramSnapshot> {
        let store = self.checkpoints.as_ref()?;
        let turn = current_turn().filter(|t| t.has_session())?;
        let mut files = HashMap::new();
        let mut held = 0u64;
        for path in self.program_files() {
            let Ok(Some(hash)) = disk_hash(&path) else {
                continue;
            };
            let max = store.max_file_bytes();
            let bytes = match self.disk_state(&path, max) {
                Ok(State::Bytes(b)) => {
                    let len = u64::try_from(b.len()).unwrap_or(u64::MAX);
                    if held.saturating_add(len) <= SNAPSHOT_MAX_BYTES {
                        held = held.saturating_add(len);
                        SnapshotBytes::Kept(b)
                    } else {
                        SnapshotBytes::NotKept {
                            bytes: len,
                            limit: SNAPSHOT_MAX_BYTES,
                        }
                    }
                }
                Ok(State::TooBig(bytes)) => SnapshotBytes::NotKept { bytes, limit: max },
                Ok(State::Absent) | Err(_) => continue,
            };
            files.insert(path.as_path().to_owned(), (hash, bytes));
        }
        Some(ProgramSnapshot { turn, files })
    }

    /// After the program ran: records every file it created, changed or deleted.
    pub fn record_after_program(&self, snapshot: ProgramSnapshot) {
        let Some(store) = self.checkpoints.as_ref() else {
            return;
        };
        let ProgramSnapshot { turn, mut files } = snapshot;
        let mut now: Vec<(PathBuf, Option<String>)> = Vec::new();
        for path in self.program_files() {
            if let Ok(hash) = disk_hash(&path) {
                now.push((path.as_path().to_owned(), hash));
            }
        }
        let gone: Vec<PathBuf> = files
            .keys()
            .filter(|p| !now.iter().any(|(n, _)| n == *p))
            .cloned()
            .collect();
        now.extend(gone.into_iter().map(|p| (p, None)));
        for (abs, after) in now {
            let before = files.remove(&abs);
            if before.as_ref().map(|(h, _)| h) == after.as_ref() {
                continue;
            }
            let shown = self.display(&abs);
            let prior = if store.has_prior(&turn, &abs) {
                None
            } else {
                Some(match before {
                    None => Prior::Absent,
                    Some((_, SnapshotBytes::Kept(bytes))) => {
                        match store.keep(&turn, &shown, &bytes) {
                            Ok(prior) => prior,
                            Err(e) => {
                                turn.note(format!(
                                    "{shown} was not checkpointed ({e}); a rewind cannot restore it"
                                ));
                                continue;
                            }
                        }
                    }
                    Some((_, SnapshotBytes::NotKept { bytes, limit })) => {
                        turn.note(format!("{shown} {}", not_kept_reason(bytes, limit)));
                        Prior::NotKept { bytes, limit }
                    }
                })
            };
            if let Err(e) = store.record(&turn, &abs, prior, after) {
                tracing::warn!("checkpoint of {shown} not recorded: {e}");
            }
        }
    }

    /// The files a program run over the roots may change, as a snapshot sees them.
    fn program_files(&self) -> Vec<WorkspacePath> {
        let options = crate::WalkOptions {
            include_hidden: true,
            ..crate::WalkOptions::default()
        };
        let mut out = Vec::new();
        for root in self.roots.clone() {
            let Ok(start) = self.resolve(&root.to_string_lossy()) else {
                continue;
            };
            if let Ok(walked) = self.walk_sorted(&start, &options, &|| false) {
                // What the user may not read is masked from the program too.
                out.extend(
                    walked
                        .files
                        .into_iter()
                        .filter(|p| self.check(p, crate::Operation::Read).is_ok()),
                );
            }
        }
        out
    }

    /// [`Workspace::state`] of the disk alone (a program sees the disk, not the buffers).
    fn disk_state(&self, path: &WorkspacePath, limit: u64) -> Result<State, ScopeError> {
        let (file, st) = match open::open_regular(path, u64::MAX) {
            Ok(opened) => opened,
            Err(ScopeError::NotFound { .. }) => return Ok(State::Absent),
            Err(e) => return Err(e),
        };
        let size = open::size(&st);
        if size > limit {
            return Ok(State::TooBig(size));
        }
        let mut bytes = Vec::new();
        file.take(limit.saturating_add(1))
            .read_to_end(&mut bytes)
            .map_err(|e| ScopeError::io(path.as_path(), e))?;
        Ok(State::Bytes(bytes))
    }
}
