//! The client's files: when the client offers both `fs/read_text_file` and
//! `fs/write_text_file`, single-file reads and edits of existing files go through it, so the
//! agent reads the editor's unsaved text and its edits land in the editor (and in the editor's
//! review of the agent's changes). Without both methods, everything goes to the disk.
//!
//! This is a [`DocumentOverlay`]: the workspace checks the scope and the user's permissions
//! before it asks, exactly as before a disk read or write, so the client is never asked about a
//! path the user may not touch. Searches read the disk (one request per file would be slow,
//! and ACP does not say which buffers are open); new files are created on disk.

use std::collections::HashMap;
use std::hash::{DefaultHasher, Hash, Hasher};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::Duration;

use agent_client_protocol::Client;
use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::v1::schema::{ReadTextFileRequest, WriteTextFileRequest};
use cairn_workspace::{ByteEdit, DocumentOverlay, OpenDocument, OverlayError};
use futures::future::BoxFuture;

/// How long a client may take to answer one `fs/*` request before cairn stops waiting: a read
/// then falls back to the disk, an edit fails with this reason.
const CLIENT_TIMEOUT: Duration = Duration::from_secs(30);

/// The client's files for one workspace root of one connection.
pub(crate) struct ClientFiles {
    cx: ConnectionTo<Client>,
    runtime: tokio::runtime::Handle,
    /// The session the requests name: the last one of this root to start a turn. The agent of a
    /// root serves all its sessions, and the client only needs a session of this connection.
    session: Mutex<Option<String>>,
    /// For each file read: the version handed out and a hash of the text, so an edit planned
    /// on text the user has changed since is refused as stale instead of clobbering it.
    seen: Mutex<HashMap<PathBuf, (i32, u64)>>,
}

impl ClientFiles {
    pub(crate) fn new(cx: ConnectionTo<Client>, runtime: tokio::runtime::Handle) -> Self {
        Self {
            cx,
            runtime,
            session: Mutex::default(),
            seen: Mutex::default(),
        }
    }

    /// The session later requests name.
    pub(crate) fn use_session(&self, id: &str) {
        if let Ok(mut s) = self.session.lock() {
            *s = Some(id.to_owned());
        }
    }

    fn session(&self) -> Option<String> {
        self.session.lock().ok().and_then(|s| s.clone())
    }

    /// The version of `text` as read from `path`: the same as last time when it is unchanged.
    fn record(&self, path: &Path, text: &str) -> i32 {
        let hash = hash_of(text);
        let Ok(mut seen) = self.seen.lock() else {
            return 0;
        };
        let entry = seen.entry(path.to_owned()).or_insert((0, hash));
        if entry.1 != hash || entry.0 == 0 {
            *entry = (entry.0.saturating_add(1), hash);
        }
        entry.0
    }

    fn recorded(&self, path: &Path) -> Option<(i32, u64)> {
        self.seen.lock().ok()?.get(path).copied()
    }

    async fn edit(
        &self,
        path: &Path,
        version: i32,
        edits: Vec<ByteEdit>,
    ) -> Result<(), OverlayError> {
        let session = self.session().ok_or(OverlayError::Closed)?;
        let rejected = |reason: String| OverlayError::Rejected { reason };
        let current = read(self.cx.clone(), session.clone(), path.to_owned())
            .await
            .map_err(rejected)?;
        match self.recorded(path) {
            Some((v, hash)) if v == version && hash == hash_of(&current) => {}
            Some((v, _)) if v != version => {
                return Err(OverlayError::Stale {
                    expected: version,
                    actual: v,
                });
            }
            // Read at this version, but the user changed the text since.
            Some(_) => {
                return Err(OverlayError::Stale {
                    expected: version,
                    actual: self.record(path, &current),
                });
            }
            None => return Err(OverlayError::Closed),
        }
        let new = ByteEdit::apply_all(&current, &edits)
            .ok_or_else(|| rejected("the edits do not fit the document's text".to_owned()))?;
        write(self.cx.clone(), session, path.to_owned(), new.clone())
            .await
            .map_err(rejected)?;
        self.record(path, &new);
        Ok(())
    }
}

/// The client's text of `path`, or why not.
async fn read(cx: ConnectionTo<Client>, session: String, path: PathBuf) -> Result<String, String> {
    let request = cx
        .send_request(ReadTextFileRequest::new(session, path))
        .block_task();
    match tokio::time::timeout(CLIENT_TIMEOUT, request).await {
        Ok(Ok(response)) => Ok(response.content),
        Ok(Err(e)) => Err(e.to_string()),
        Err(_) => Err(format!(
            "the editor did not answer fs/read_text_file in {}s",
            CLIENT_TIMEOUT.as_secs()
        )),
    }
}

async fn write(
    cx: ConnectionTo<Client>,
    session: String,
    path: PathBuf,
    content: String,
) -> Result<(), String> {
    let request = cx
        .send_request(WriteTextFileRequest::new(session, path, content))
        .block_task();
    match tokio::time::timeout(CLIENT_TIMEOUT, request).await {
        Ok(Ok(_)) => Ok(()),
        Ok(Err(e)) => Err(format!("the editor's fs/write_text_file failed: {e}")),
        Err(_) => Err(format!(
            "the editor did not answer fs/write_text_file in {}s",
            CLIENT_TIMEOUT.as_secs()
        )),
    }
}

fn hash_of(text: &str) -> u64 {
    let mut h = DefaultHasher::new();
    text.hash(&mut h);
    h.finish()
}

impl DocumentOverlay for ClientFiles {
    /// Called on a blocking thread (the workspace's file work runs off the executor): the
    /// request runs on the runtime, and this thread waits for its answer.
    fn open_document(&self, path: &Path) -> Option<OpenDocument> {
        let session = self.session()?;
        let (tx, rx) = std::sync::mpsc::sync_channel(1);
        let (cx, owned) = (self.cx.clone(), path.to_owned());
        self.runtime.spawn(async move {
            let _ = tx.send(read(cx, session, owned).await);
        });
        // `read` gives up after the timeout; this wait only guards against a lost task.
        match rx.recv_timeout(CLIENT_TIMEOUT + Duration::from_secs(1)) {
            Ok(Ok(text)) => {
                let version = self.record(path, &text);
                Some(OpenDocument { text, version })
            }
            // No such file for the client, or no answer: the disk answers.
            Ok(Err(e)) => {
                tracing::debug!("fs/read_text_file {}: {e}", path.display());
                None
            }
            Err(_) => None,
        }
    }

    fn apply_edits(
        &self,
        path: &Path,
        version: i32,
        edits: Vec<ByteEdit>,
    ) -> BoxFuture<'_, Result<(), OverlayError>> {
        let path = path.to_owned();
        Box::pin(async move { self.edit(&path, version, edits).await })
    }

    fn asks_the_editor(&self) -> bool {
        true
    }

    fn saves_edits(&self) -> bool {
        true
    }
}
