//! Checkpoints: the state of each file before a turn first changed it, kept so a rewind can put
//! it back, independent of git.
//!
//! The store lives under the sessions directory: `<dir>/<session>/objects/<sha256>` holds file
//! contents (content-addressed, so a file kept twice takes its bytes once) and
//! `<dir>/<session>/index.jsonl` one [`Line`] per change, in the order they happened. A change
//! records the file's prior state at the turn's first change of it (its bytes, "absent" for a
//! new file, or "not kept" when it was over the per-file or per-session cap) and the hash of the
//! state cairn left, so a rewind can tell a file someone changed since (see `rewind.rs`).
//! Lines that do not parse (a crash mid-write) are skipped.
//!
//! Which turn a change belongs to comes from a task-local [`Turn`], set by the tool kit around
//! each tool call ([`in_turn`]) and carried onto blocking threads by [`crate::off_thread`]; a
//! change made outside a turn (a rewind itself) is not recorded.

use std::collections::{HashMap, HashSet};
use std::fs::{self, OpenOptions};
use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

/// Default cap on one file's prior state: 8 MiB.
pub const DEFAULT_MAX_FILE_BYTES: u64 = 8 * 1024 * 1024;
/// Default cap on what one session keeps: 256 MiB.
pub const DEFAULT_MAX_SESSION_BYTES: u64 = 256 * 1024 * 1024;

tokio::task_local! {
    static TURN: Arc<Turn>;
}

/// The turn a tool call runs in, and the notes its changes left for the call's result.
#[derive(Debug)]
pub struct Turn {
    session_id: String,
    run_id: String,
    notes: Mutex<Vec<String>>,
}

impl Turn {
    pub fn new(session_id: impl Into<String>, run_id: impl Into<String>) -> Arc<Turn> {
        Arc::new(Turn {
            session_id: session_id.into(),
            run_id: run_id.into(),
            notes: Mutex::default(),
        })
    }

    /// What the checkpoints could not keep during the call (a file too big), for its result.
    pub fn take_notes(&self) -> Vec<String> {
        self.notes
            .lock()
            .map(|mut n| std::mem::take(&mut *n))
            .unwrap_or_default()
    }

    /// Whether the turn belongs to a session whose changes can be kept.
    pub(crate) fn has_session(&self) -> bool {
        valid_id(&self.session_id)
    }

    pub(crate) fn note(&self, note: String) {
        if let Ok(mut notes) = self.notes.lock()
            && !notes.contains(&note)
        {
            notes.push(note);
        }
    }
}

/// Runs `f` with `turn` as the turn its file changes belong to.
pub async fn in_turn<F: std::future::Future>(turn: Arc<Turn>, f: F) -> F::Output {
    TURN.scope(turn, f).await
}

/// The turn the current task runs in, if any.
pub fn current_turn() -> Option<Arc<Turn>> {
    TURN.try_with(Arc::clone).ok()
}

/// `f`, made to run in the current task's turn wherever it runs: wrap a closure given to
/// `spawn_blocking` (a blocking thread does not inherit the task-local) with it.
pub fn carry<R>(f: impl FnOnce() -> R + Send) -> impl FnOnce() -> R + Send {
    let turn = current_turn();
    move || sync_in_turn(turn, f)
}

/// Runs `f` in `turn` (on a blocking thread, where the task-local is not inherited).
pub(crate) fn sync_in_turn<R>(turn: Option<Arc<Turn>>, f: impl FnOnce() -> R) -> R {
    match turn {
        Some(turn) => TURN.sync_scope(turn, f),
        None => f(),
    }
}

/// A file's state as a checkpoint knows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(
    tag = "state",
    rename_all = "camelCase",
    rename_all_fields = "camelCase"
)]
pub enum Prior {
    /// No file was there.
    Absent,
    /// Its bytes are kept under this hash.
    Kept { hash: String },
    /// It was over a cap; its bytes were not kept.
    NotKept { bytes: u64, limit: u64 },
}

/// One line of a session's index.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(
    tag = "kind",
    rename_all = "camelCase",
    rename_all_fields = "camelCase"
)]
pub enum Line {
    /// A change cairn made to `path` (absolute, canonical) in run `run_id`: its prior state at
    /// the run's first change of it (`None` on later changes), and the hash of what cairn left
    /// (`None`: no file).
    Change {
        run_id: String,
        path: PathBuf,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        before: Option<Prior>,
        after: Option<String>,
    },
    /// A rewind restored `path` to its state before `run_id`'s changes: they no longer count.
    Rewound { run_id: String, path: PathBuf },
}

/// Why the store failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CheckpointError {
    #[error("invalid session id `{0}` (letters, digits, `-` and `_` only)")]
    InvalidId(String),
    #[error("checkpoint store {path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("the checkpoint of {path} is damaged (its content does not match its hash)")]
    Damaged { path: PathBuf },
}

/// The checkpoint store of every session.
#[derive(Debug)]
pub struct Checkpoints {
    dir: PathBuf,
    max_file_bytes: u64,
    max_session_bytes: u64,
    state: Mutex<HashMap<String, SessionState>>,
}

/// What is known of a session in this process.
#[derive(Debug, Default)]
struct SessionState {
    /// (run, path) pairs whose prior state is recorded.
    seen: HashSet<(String, PathBuf)>,
    /// Bytes under `objects/` (counted from the disk on first use).
    stored: Option<u64>,
}

/// The sha-256 of `bytes`, in hex.
pub fn hash_bytes(bytes: &[u8]) -> String {
    hex::encode(Sha256::digest(bytes))
}

/// The sha-256 of what `reader` yields, in hex, read a piece at a time.
pub(crate) fn hash_reader(reader: &mut dyn Read) -> std::io::Result<String> {
    let mut hasher = Sha256::new();
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        let n = reader.read(&mut buf)?;
        if n == 0 {
            return Ok(hex::encode(hasher.finalize()));
        }
        hasher.update(buf.get(..n).unwrap_or_default());
    }
}

fn valid_id(id: &str) -> bool {
    !id.is_empty()
        && id.len() <= 128
        && id
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
}

fn mib(bytes: u64) -> String {
    let mib = bytes as f64 / (1024.0 * 1024.0);
    if mib >= 10.0 {
        format!("{mib:.0} MiB")
    } else {
        format!("{mib:.1} MiB")
    }
}

/// Why a file's prior state was not kept, after its name.
pub(crate) fn not_kept_reason(bytes: u64, limit: u64) -> String {
    format!(
        "was not checkpointed: {} is over the {} limit; a rewind cannot restore it",
        mib(bytes),
        mib(limit)
    )
}

impl Checkpoints {
    /// A store under `dir` (normally `<sessions>/checkpoints`) with the default caps.
    pub fn new(dir: impl Into<PathBuf>) -> Checkpoints {
        Checkpoints {
            dir: dir.into(),
            max_file_bytes: DEFAULT_MAX_FILE_BYTES,
            max_session_bytes: DEFAULT_MAX_SESSION_BYTES,
            state: Mutex::default(),
        }
    }

    /// Caps on one file's prior state and on what one session keeps.
    pub fn with_limits(mut self, max_file_bytes: u64, max_session_bytes: u64) -> Checkpoints {
        self.max_file_bytes = max_file_bytes;
        self.max_session_bytes = max_session_bytes;
        self
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    pub fn max_file_bytes(&self) -> u64 {
        self.max_file_bytes
    }

    fn session_dir(&self, session_id: &str) -> Result<PathBuf, CheckpointError> {
        // The id comes from the editor; it must not name a path.
        if !valid_id(session_id) {
            return Err(CheckpointError::InvalidId(session_id.to_owned()));
        }
        Ok(self.dir.join(session_id))
    }

    /// Whether `turn` already recorded the prior state of `path` (then later changes only
    /// record what they leave).
    pub(crate) fn has_prior(&self, turn: &Turn, path: &Path) -> bool {
        self.state.lock().is_ok_and(|s| {
            s.get(&turn.session_id)
                .is_some_and(|s| s.seen.contains(&(turn.run_id.clone(), path.to_owned())))
        })
    }

    /// Keeps `bytes` as a prior state, or says why not (over a cap, noted on the turn).
    pub(crate) fn keep(
        &self,
        turn: &Turn,
        display: &str,
        bytes: &[u8],
    ) -> Result<Prior, CheckpointError> {
        let len = u64::try_from(bytes.len()).unwrap_or(u64::MAX);
        if len > self.max_file_bytes {
            return Ok(self.not_kept(turn, display, len, self.max_file_bytes));
        }
        let dir = self.session_dir(&turn.session_id)?.join("objects");
        let hash = hash_bytes(bytes);
        let path = dir.join(&hash);
        if path.exists() {
            return Ok(Prior::Kept { hash });
        }
        let stored = self.stored(&turn.session_id, &dir);
        if stored.saturating_add(len) > self.max_session_bytes {
            return Ok(self.not_kept(turn, display, len, self.max_session_bytes));
        }
        let io = |source| CheckpointError::Io {
            path: path.clone(),
            source,
        };
        fs::create_dir_all(&dir).map_err(io)?;
        // Written aside and renamed, so an object is whole or absent.
        let tmp = dir.join(format!(".{hash}.{}", std::process::id()));
        fs::write(&tmp, bytes).map_err(io)?;
        fs::rename(&tmp, &path).map_err(io)?;
        if let Ok(mut state) = self.state.lock() {
            let s = state.entry(turn.session_id.clone()).or_default();
            s.stored = Some(s.stored.unwrap_or(0).saturating_add(len));
        }
        Ok(Prior::Kept { hash })
    }

    fn not_kept(&self, turn: &Turn, display: &str, bytes: u64, limit: u64) -> Prior {
        turn.note(format!("{display} {}", not_kept_reason(bytes, limit)));
        Prior::NotKept { bytes, limit }
    }

    /// The prior state of a file over the per-file cap, noted on the turn.
    pub(crate) fn too_big(&self, turn: &Turn, display: &str, bytes: u64) -> Prior {
        self.not_kept(turn, display, bytes, self.max_file_bytes)
    }

    /// Bytes a session keeps, counted from the disk the first time.
    fn stored(&self, session_id: &str, objects: &Path) -> u64 {
        if let Some(n) = self
            .state
            .lock()
            .ok()
            .and_then(|s| s.get(session_id).and_then(|s| s.stored))
        {
            return n;
        }
        let n = fs::read_dir(objects)
            .map(|entries| {
                entries
                    .filter_map(Result::ok)
                    .filter_map(|e| e.metadata().ok())
                    .map(|m| m.len())
                    .sum()
            })
            .unwrap_or(0);
        if let Ok(mut state) = self.state.lock() {
            state.entry(session_id.to_owned()).or_default().stored = Some(n);
        }
        n
    }

    /// Records a change `turn` made to `path`: `before` at its first change, `after` the hash of
    /// what it left (`None`: no file).
    pub(crate) fn record(
        &self,
        turn: &Turn,
        path: &Path,
        before: Option<Prior>,
        after: Option<String>,
    ) -> Result<(), CheckpointError> {
        if before.is_some()
            && let Ok(mut state) = self.state.lock()
        {
            state
                .entry(turn.session_id.clone())
                .or_default()
                .seen
                .insert((turn.run_id.clone(), path.to_owned()));
        }
        self.append(
            &turn.session_id,
            &[Line::Change {
                run_id: turn.run_id.clone(),
                path: path.to_owned(),
                before,
                after,
            }],
        )
    }

    /// Appends lines to a session's index, creating it.
    pub fn append(&self, session_id: &str, lines: &[Line]) -> Result<(), CheckpointError> {
        let dir = self.session_dir(session_id)?;
        let path = dir.join("index.jsonl");
        let io = |source| CheckpointError::Io {
            path: path.clone(),
            source,
        };
        fs::create_dir_all(&dir).map_err(io)?;
        let mut buf = String::new();
        for line in lines {
            if let Ok(json) = serde_json::to_string(line) {
                buf.push_str(&json);
                buf.push('\n');
            }
        }
        let mut file = OpenOptions::new()
            .create(true)
            .append(true)
            .open(&path)
            .map_err(io)?;
        // One write per batch, so a crash leaves at most one partial line, which is skipped.
        file.write_all(buf.as_bytes()).map_err(io)
    }

    /// A session's index, in order; a session with none is empty.
    pub fn lines(&self, session_id: &str) -> Result<Vec<Line>, CheckpointError> {
        let path = self.session_dir(session_id)?.join("index.jsonl");
        let file = match fs::File::open(&path) {
            Ok(f) => f,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(source) => return Err(CheckpointError::Io { path, source }),
        };
        Ok(BufReader::new(file)
            .lines()
            .map_while(Result::ok)
            .filter_map(|line| serde_json::from_str(&line).ok())
            .collect())
    }

    /// The changes of a session a rewind has not undone, in order: (run, path, before, after).
    pub fn changes(&self, session_id: &str) -> Result<Vec<Change>, CheckpointError> {
        let lines = self.lines(session_id)?;
        // A rewound (run, path) covers the changes before the rewind line: walk backwards.
        let mut out = Vec::new();
        let mut undone: HashSet<(&str, &Path)> = HashSet::new();
        for line in lines.iter().rev() {
            match line {
                Line::Rewound { run_id, path } => {
                    undone.insert((run_id.as_str(), path.as_path()));
                }
                Line::Change {
                    run_id,
                    path,
                    before,
                    after,
                } => {
                    let key = (run_id.as_str(), path.as_path());
                    if undone.contains(&key) {
                        continue;
                    }
                    out.push(Change {
                        run_id: run_id.clone(),
                        path: path.clone(),
                        before: before.clone(),
                        after: after.clone(),
                    });
                }
            }
        }
        out.reverse();
        Ok(out)
    }

    /// The kept bytes of `hash`, checked against it.
    pub fn object(&self, session_id: &str, hash: &str) -> Result<Vec<u8>, CheckpointError> {
        let path = self.session_dir(session_id)?.join("objects").join(hash);
        if !hash.chars().all(|c| c.is_ascii_hexdigit()) {
            return Err(CheckpointError::Damaged { path });
        }
        let bytes = fs::read(&path).map_err(|source| CheckpointError::Io {
            path: path.clone(),
            source,
        })?;
        if hash_bytes(&bytes) != hash {
            return Err(CheckpointError::Damaged { path });
        }
        Ok(bytes)
    }
}

/// A change a rewind may undo.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Change {
    pub run_id: String,
    pub path: PathBuf,
    pub before: Option<Prior>,
    pub after: Option<String>,
}

#[cfg(test)]
mod tests {
    //! The store (dedupe, caps, damaged lines and ids) and a turn's changes rewound once.
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use super::*;
    use crate::Workspace;

    fn store(dir: &Path) -> Checkpoints {
        Checkpoints::new(dir.join("checkpoints")).with_limits(16, 40)
    }

    fn objects(dir: &Path, session: &str) -> usize {
        fs::read_dir(dir.join("checkpoints").join(session).join("objects"))
            .map(|d| d.count())
            .unwrap_or(0)
    }

    #[test]
    fn the_same_content_is_kept_once() {
        let dir = tempfile::tempdir().unwrap();
        let cp = store(dir.path());
        let turn = Turn::new("s1", "r1");
        let a = cp.keep(&turn, "a.txt", b"same bytes").unwrap();
        let b = cp.keep(&turn, "b.txt", b"same bytes").unwrap();
        assert_eq!(a, b);
        assert_eq!(
            a,
            Prior::Kept {
                hash: hash_bytes(b"same bytes")
            }
        );
        assert_eq!(objects(dir.path(), "s1"), 1);
        assert_eq!(
            cp.object("s1", &hash_bytes(b"same bytes")).unwrap(),
            b"same bytes"
        );
        assert!(turn.take_notes().is_empty());
    }

    #[test]
    fn files_over_the_caps_are_not_kept_and_noted() {
        let dir = tempfile::tempdir().unwrap();
        let cp = store(dir.path());
        let turn = Turn::new("s1", "r1");
        // Over the per-file cap (16 bytes).
        let big = cp.keep(&turn, "big.txt", &[b'x'; 17]).unwrap();
        assert_eq!(
            big,
            Prior::NotKept {
                bytes: 17,
                limit: 16
            }
        );
        // Within it, until the session's 40 bytes are used.
        assert!(matches!(
            cp.keep(&turn, "a", &[b'a'; 16]).unwrap(),
            Prior::Kept { .. }
        ));
        assert!(matches!(
            cp.keep(&turn, "b", &[b'b'; 16]).unwrap(),
            Prior::Kept { .. }
        ));
        let over = cp.keep(&turn, "c.txt", &[b'c'; 16]).unwrap();
        assert_eq!(
            over,
            Prior::NotKept {
                bytes: 16,
                limit: 40
            }
        );
        assert_eq!(objects(dir.path(), "s1"), 2);
        let notes = turn.take_notes();
        assert_eq!(notes.len(), 2, "{notes:?}");
        assert!(
            notes[0].starts_with("big.txt was not checkpointed: "),
            "{notes:?}"
        );
        assert!(
            notes[0].ends_with("a rewind cannot restore it"),
            "{notes:?}"
        );
        assert!(
            notes[1].starts_with("c.txt was not checkpointed"),
            "{notes:?}"
        );
        // A new store counts what the session already keeps.
        let again = store(dir.path());
        let over = again.keep(&turn, "d.txt", &[b'd'; 16]).unwrap();
        assert_eq!(
            over,
            Prior::NotKept {
                bytes: 16,
                limit: 40
            }
        );
    }

    #[test]
    fn bad_index_lines_are_skipped_and_ids_are_checked() {
        let dir = tempfile::tempdir().unwrap();
        let cp = store(dir.path());
        let turn = Turn::new("s1", "r1");
        cp.record(
            &turn,
            Path::new("/w/a"),
            Some(Prior::Absent),
            Some("h1".into()),
        )
        .unwrap();
        let index = dir.path().join("checkpoints/s1/index.jsonl");
        let mut text = fs::read_to_string(&index).unwrap();
        text.push_str("{not json\n{\"kind\":\"unknown\"}\n");
        fs::write(&index, text).unwrap();
        cp.record(&turn, Path::new("/w/b"), None, None).unwrap();
        let lines = cp.lines("s1").unwrap();
        assert_eq!(lines.len(), 2, "{lines:?}");
        assert!(cp.lines("no-such-session").unwrap().is_empty());
        assert!(matches!(
            cp.lines("../escape"),
            Err(CheckpointError::InvalidId(_))
        ));
        assert!(matches!(
            cp.object("s1", "../../etc"),
            Err(CheckpointError::Damaged { .. })
        ));
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn changes_in_a_turn_are_recorded_and_rewound_once() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("ws");
        fs::create_dir_all(&root).unwrap();
        fs::write(root.join("a.txt"), "a before").unwrap();
        fs::write(root.join("gone.txt"), "deleted later").unwrap();
        let cp = Arc::new(Checkpoints::new(dir.path().join("checkpoints")));
        let ws = Arc::new(
            Workspace::new(vec![root.clone()])
                .unwrap()
                .with_checkpoints(cp.clone()),
        );
        // Outside a turn nothing is recorded.
        crate::off_thread(&ws, |ws| {
            let p = ws.resolve("a.txt").unwrap();
            ws.write_text_atomic(&p, "a before").unwrap();
        })
        .await
        .unwrap();
        assert!(cp.changes("s1").unwrap().is_empty());
        let turn = Turn::new("s1", "r1");
        in_turn(
            turn,
            crate::off_thread(&ws, |ws| {
                let a = ws.resolve("a.txt").unwrap();
                ws.write_text_atomic(&a, "a one").unwrap();
                ws.write_text_atomic(&a, "a two").unwrap();
                let moved = ws.resolve("moved.txt").unwrap();
                ws.rename(&ws.resolve("gone.txt").unwrap(), &moved).unwrap();
                ws.remove_file(&moved).unwrap();
            }),
        )
        .await
        .unwrap();
        let changes = cp.changes("s1").unwrap();
        let firsts = changes.iter().filter(|c| c.before.is_some()).count();
        assert_eq!(changes.len(), 5, "{changes:?}");
        assert_eq!(firsts, 3, "one prior state per file and turn: {changes:?}");

        let report = crate::rewind(&ws, "s1", vec!["r1".into()]).await.unwrap();
        let mut restored = report.restored.clone();
        restored.sort();
        assert_eq!(restored, ["a.txt", "gone.txt", "moved.txt"], "{report:?}");
        assert!(report.complete(), "{report:?}");
        assert_eq!(fs::read_to_string(root.join("a.txt")).unwrap(), "a before");
        assert_eq!(
            fs::read_to_string(root.join("gone.txt")).unwrap(),
            "deleted later"
        );
        assert!(!root.join("moved.txt").exists());
        // Rewinding again restores nothing: those changes are undone.
        let again = crate::rewind(&ws, "s1", vec!["r1".into()]).await.unwrap();
        assert_eq!(again, crate::RewindReport::default());
        assert!(cp.changes("s1").unwrap().is_empty());
    }

    /// A program over a writable mount (here: plain writes between the snapshot and the
    /// record) has the files it changed, created and deleted checkpointed, and only those.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_programs_changes_are_recorded_from_a_snapshot() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("ws");
        fs::create_dir_all(root.join("src")).unwrap();
        fs::write(root.join("src/kept.txt"), "untouched").unwrap();
        fs::write(root.join("src/changed.txt"), "before").unwrap();
        fs::write(root.join("gone.txt"), "deleted by the program").unwrap();
        let cp = Arc::new(Checkpoints::new(dir.path().join("checkpoints")));
        let ws = Arc::new(
            Workspace::new(vec![root.clone()])
                .unwrap()
                .with_checkpoints(cp.clone()),
        );
        let program_root = root.clone();
        in_turn(Turn::new("s1", "r1"), async {
            let snapshot = crate::off_thread(&ws, |ws| ws.snapshot_before_program())
                .await
                .unwrap()
                .unwrap();
            fs::write(program_root.join("src/changed.txt"), "after").unwrap();
            fs::write(program_root.join("new.txt"), "created").unwrap();
            fs::remove_file(program_root.join("gone.txt")).unwrap();
            crate::off_thread(&ws, move |ws| ws.record_after_program(snapshot))
                .await
                .unwrap();
        })
        .await;
        let mut changed: Vec<String> = cp
            .changes("s1")
            .unwrap()
            .iter()
            .map(|c| c.path.strip_prefix(&root).unwrap().display().to_string())
            .collect();
        changed.sort();
        assert_eq!(changed, ["gone.txt", "new.txt", "src/changed.txt"]);
        let report = crate::rewind(&ws, "s1", vec!["r1".into()]).await.unwrap();
        assert!(report.complete(), "{report:?}");
        assert_eq!(
            fs::read_to_string(root.join("src/changed.txt")).unwrap(),
            "before"
        );
        assert_eq!(
            fs::read_to_string(root.join("gone.txt")).unwrap(),
            "deleted by the program"
        );
        assert!(!root.join("new.txt").exists());
        assert_eq!(
            fs::read_to_string(root.join("src/kept.txt")).unwrap(),
            "untouched"
        );
    }
}
