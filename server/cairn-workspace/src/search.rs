//! Reading files for search, and searching many files on several threads in a stable order.
//!
//! [`Workspace::read_for_search`] is the one place where search reads a file's content: it
//! applies the user's read permission, prefers the editor's unsaved text, and refuses what search
//! skips (non-regular, oversized, binary, not UTF-8) with the typed errors of
//! [`Workspace::read_text`]. It reads into a buffer the caller keeps, so searching many files
//! allocates once per thread, not once per file.
//!
//! [`Workspace::search_in_order`] runs a caller's search over many files on one thread per core
//! and hands each outcome back on the calling thread in the order of the files, so output and
//! its caps never depend on scheduling, and all threads stop soon after the caller has enough.

use std::collections::BTreeMap;
use std::io::Read;
use std::ops::ControlFlow;
use std::os::fd::{AsFd, OwnedFd};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Condvar, Mutex, PoisonError, mpsc};

use cairn_config::access::Operation;

use crate::error::ScopeError;
use crate::open;
use crate::path::WorkspacePath;
use crate::walk::threads;
use crate::workspace::Workspace;

/// How many leading bytes are searched for a NUL to call a file binary; as in `read_text`.
const BINARY_SNIFF_LEN: usize = 8 * 1024;

/// Files a search thread takes at a time: consecutive files (most often of one directory), and
/// one hand-over to the consumer per chunk rather than one wake-up per file.
const CHUNK: usize = 64;

/// How many chunks each search thread may run ahead of the one being consumed. Outcomes that
/// wait for their turn are held in memory, so this bounds it when one file is slow.
const LOOKAHEAD_PER_THREAD: usize = 4;

/// What [`Workspace::read_for_search`] keeps from one file to the next: the memory the text is
/// read into, and a handle on the directory of the last file read from disk, since files come
/// in path order and the next one is most often in the same directory.
///
/// The handle is opened beneath the root without following symlinks, as every read is (see the
/// `open` module); reusing it only skips resolving the same directory again.
/// [`Workspace::search_in_order`] drops it at each chunk, so a directory moved meanwhile is not
/// read from for longer than a few dozen files.
#[derive(Debug, Default)]
pub struct SearchBuf {
    bytes: Vec<u8>,
    dir: Option<(PathBuf, OwnedFd)>,
}

impl SearchBuf {
    pub fn new() -> SearchBuf {
        SearchBuf::default()
    }

    /// Resolve the next file's directory afresh.
    fn forget_dir(&mut self) {
        self.dir = None;
    }
}

impl Workspace {
    /// The text of `path` for searching, read into `buf`: the editor's unsaved text when the
    /// file is open, otherwise the file on disk. This is the one place search reads content.
    ///
    /// Refuses, with the typed errors of [`Workspace::read_text`]: paths the user may not read,
    /// directories and special files, files over the size cap, binary files (a NUL in the
    /// first 8 KiB) and invalid UTF-8.
    pub fn read_for_search<'b>(
        &self,
        path: &WorkspacePath,
        buf: &'b mut SearchBuf,
    ) -> Result<&'b str, ScopeError> {
        self.check(path, Operation::Read)?;
        let abs = path.as_path();
        let invalid_utf8 = |e: std::str::Utf8Error| ScopeError::InvalidUtf8 {
            path: abs.to_owned(),
            valid_up_to: e.valid_up_to(),
        };
        if let Some(doc) = self.open_buffer(path) {
            buf.bytes = doc.text.into_bytes();
            // Cannot fail, it was a `String`; checked rather than assumed.
            return std::str::from_utf8(&buf.bytes).map_err(invalid_utf8);
        }
        let (Some(parent), false) = (abs.parent(), path.is_root()) else {
            return Err(ScopeError::IsADirectory {
                path: abs.to_owned(),
            });
        };
        let dir = match &buf.dir {
            Some((open, dir)) if open == parent => dir,
            _ => {
                buf.dir = None;
                let dir = open::open_parent(path)?;
                &buf.dir.insert((parent.to_owned(), dir)).1
            }
        };
        let limit = self.max_file_size;
        let (file, st) = open::open_regular_in(dir.as_fd(), path, limit)?;
        let bytes = &mut buf.bytes;
        bytes.clear();
        bytes.reserve(usize::try_from(open::size(&st)).unwrap_or(0));
        // The file may grow after the size check; never read past the cap.
        file.take(limit.saturating_add(1))
            .read_to_end(bytes)
            .map_err(|e| ScopeError::io(abs, e))?;
        let size = u64::try_from(bytes.len()).unwrap_or(u64::MAX);
        if size > limit {
            return Err(ScopeError::TooLarge {
                path: abs.to_owned(),
                size,
                limit,
            });
        }
        let sniff = bytes.get(..BINARY_SNIFF_LEN).unwrap_or(bytes);
        if sniff.contains(&0) {
            return Err(ScopeError::Binary {
                path: abs.to_owned(),
            });
        }
        std::str::from_utf8(bytes).map_err(invalid_utf8)
    }

    /// Read each of `files` with [`Workspace::read_for_search`] and pass it to `search`, on one
    /// thread per core; hand each outcome to `consume`, on the calling thread, in the order of
    /// `files`. When `consume` breaks, no further outcome is consumed and the threads stop
    /// after the file each is on.
    ///
    /// A panic in `search` or `consume` stops every thread and is then passed on.
    pub fn search_in_order<T, S, C>(&self, files: &[WorkspacePath], search: S, mut consume: C)
    where
        T: Send,
        S: Fn(&WorkspacePath, Result<&str, ScopeError>) -> T + Sync,
        C: FnMut(&WorkspacePath, T) -> ControlFlow<()>,
    {
        let chunks = files.len().div_ceil(CHUNK);
        let threads = threads().min(chunks);
        if threads <= 1 {
            let mut buf = SearchBuf::new();
            for file in files {
                let outcome = search(file, self.read_for_search(file, &mut buf));
                if consume(file, outcome).is_break() {
                    return;
                }
            }
            return;
        }
        let turns = Turns {
            next: AtomicUsize::new(0),
            consumed: AtomicUsize::new(0),
            stop: AtomicBool::new(false),
            lock: Mutex::new(()),
            advanced: Condvar::new(),
            window: threads * LOOKAHEAD_PER_THREAD,
        };
        let chunk_of = |c: usize| files.get(c * CHUNK..files.len().min((c + 1) * CHUNK));
        std::thread::scope(|scope| {
            let (tx, rx) = mpsc::channel::<(usize, Vec<T>)>();
            for _ in 0..threads {
                let tx = tx.clone();
                let (turns, search) = (&turns, &search);
                scope.spawn(move || {
                    let _guard = StopGuard {
                        turns,
                        always: false,
                    };
                    let mut buf = SearchBuf::new();
                    while !turns.stop.load(Ordering::Relaxed) {
                        let c = turns.next.fetch_add(1, Ordering::Relaxed);
                        let Some(chunk) = chunk_of(c) else { break };
                        if !turns.wait_for_turn(c) {
                            break;
                        }
                        buf.forget_dir();
                        let mut outcomes = Vec::with_capacity(chunk.len());
                        for file in chunk {
                            if turns.stop.load(Ordering::Relaxed) {
                                return;
                            }
                            outcomes.push(search(file, self.read_for_search(file, &mut buf)));
                        }
                        if tx.send((c, outcomes)).is_err() {
                            break;
                        }
                    }
                });
            }
            drop(tx);
            // Whatever way this ends, the threads must not wait for turns that never come.
            let _guard = StopGuard {
                turns: &turns,
                always: true,
            };
            let mut pending = BTreeMap::new();
            let mut cursor = 0;
            'receive: for (c, outcomes) in &rx {
                pending.insert(c, outcomes);
                while let Some(outcomes) = pending.remove(&cursor) {
                    let Some(chunk) = chunk_of(cursor) else {
                        break 'receive;
                    };
                    for (file, outcome) in chunk.iter().zip(outcomes) {
                        if consume(file, outcome).is_break() {
                            break 'receive;
                        }
                    }
                    cursor += 1;
                    turns.advance(cursor);
                }
            }
        });
    }
}

/// What the search threads share: which file is next, how far the consumer got, and whether
/// to stop.
struct Turns {
    next: AtomicUsize,
    consumed: AtomicUsize,
    stop: AtomicBool,
    /// Held to check `consumed` before waiting and to notify, so no wake-up is lost.
    lock: Mutex<()>,
    advanced: Condvar,
    window: usize,
}

impl Turns {
    /// Wait until chunk `i` is within the window ahead of the consumer; false when stopping.
    /// The chunk being consumed next is always within it, so this never waits on itself.
    fn wait_for_turn(&self, i: usize) -> bool {
        let within = || i < self.consumed.load(Ordering::Acquire) + self.window;
        if within() {
            return true;
        }
        let mut guard = self.lock.lock().unwrap_or_else(PoisonError::into_inner);
        loop {
            if self.stop.load(Ordering::Acquire) {
                return false;
            }
            if within() {
                return true;
            }
            guard = self
                .advanced
                .wait(guard)
                .unwrap_or_else(PoisonError::into_inner);
        }
    }

    fn advance(&self, consumed: usize) {
        self.consumed.store(consumed, Ordering::Release);
        self.notify();
    }

    fn stop(&self) {
        self.stop.store(true, Ordering::Release);
        self.notify();
    }

    fn notify(&self) {
        // Taking the lock orders this after any check made under it by a thread about to wait.
        drop(self.lock.lock().unwrap_or_else(PoisonError::into_inner));
        self.advanced.notify_all();
    }
}

/// Stops every search thread when dropped: always for the consumer, on a panic for a worker.
struct StopGuard<'a> {
    turns: &'a Turns,
    always: bool,
}

impl Drop for StopGuard<'_> {
    fn drop(&mut self) {
        if self.always || std::thread::panicking() {
            self.turns.stop();
        }
    }
}

#[cfg(test)]
mod tests;
