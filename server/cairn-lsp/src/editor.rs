//! The editor side of tools: the open buffers and the diagnostics the editor sent as a
//! [`DocumentOverlay`], and approvals asked through `window/showMessageRequest` or
//! `cairn/approve`.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use cairn_agent::policy::{ApprovalAnswer, ApprovalRequest, Approver};
use cairn_workspace::{ByteEdit, DocumentOverlay, FileDiagnostics, OpenDocument, OverlayError};
use futures::future::BoxFuture;
use tower_lsp_server::Client;
use tower_lsp_server::ls_types::{
    DocumentChanges, MessageActionItem, MessageType, OneOf,
    OptionalVersionedTextDocumentIdentifier, Range, TextDocumentEdit, TextEdit, Uri, WorkspaceEdit,
};

use crate::documents::{Document, Encoding};
use crate::protocol::{ApproveParams, ApproveRequest};

/// Open documents, by URI, with an index by canonical path (tools see canonical paths).
#[derive(Debug, Default)]
pub struct Documents {
    pub by_uri: HashMap<Uri, Document>,
    pub by_path: HashMap<PathBuf, Uri>,
}

impl Documents {
    pub fn open(&mut self, uri: Uri, doc: Document) {
        if let Some(path) = canonical_path(&uri) {
            self.by_path.insert(path, uri.clone());
        }
        self.by_uri.insert(uri, doc);
    }

    pub fn close(&mut self, uri: &Uri) {
        self.by_uri.remove(uri);
        self.by_path.retain(|_, u| u != uri);
    }
}

/// The file path of a URI, canonical when it exists.
pub fn canonical_path(uri: &Uri) -> Option<PathBuf> {
    let path = uri.to_file_path()?.into_owned();
    Some(std::fs::canonicalize(&path).unwrap_or(path))
}

/// The diagnostics the editor sent (`cairn/diagnostics`), by canonical path, each stamped with
/// the publication that set it, so an edit can wait for the next one of its file.
pub struct EditorDiagnostics {
    /// The client announced `capabilities.diagnostics`.
    pub sends: AtomicBool,
    files: Mutex<Published>,
    /// The stamp of the latest publication; waiters watch it.
    changed: tokio::sync::watch::Sender<u64>,
}

#[derive(Default)]
struct Published {
    last: u64,
    by_path: HashMap<PathBuf, (u64, Vec<cairn_workspace::Diagnostic>)>,
}

impl Default for EditorDiagnostics {
    fn default() -> Self {
        EditorDiagnostics {
            sends: AtomicBool::new(false),
            files: Mutex::default(),
            changed: tokio::sync::watch::channel(0).0,
        }
    }
}

impl EditorDiagnostics {
    /// Replaces the diagnostics of `path` (an empty list clears them).
    pub fn publish(&self, path: PathBuf, diagnostics: Vec<cairn_workspace::Diagnostic>) {
        let Ok(mut files) = self.files.lock() else {
            return;
        };
        files.last += 1;
        let stamp = files.last;
        files.by_path.insert(path, (stamp, diagnostics));
        drop(files);
        // `send_replace` updates the value even when nobody waits.
        self.changed.send_replace(stamp);
    }

    fn sends(&self) -> bool {
        self.sends.load(Ordering::Relaxed)
    }

    fn stamp_of(&self, path: &Path) -> u64 {
        self.files
            .lock()
            .ok()
            .and_then(|f| f.by_path.get(path).map(|(stamp, _)| *stamp))
            .unwrap_or(0)
    }
}

/// Shared view of the editor for tools.
#[derive(Clone)]
pub struct EditorOverlay {
    pub documents: Arc<Mutex<Documents>>,
    pub encoding: Arc<Mutex<Encoding>>,
    pub diagnostics: Arc<EditorDiagnostics>,
    pub client: Client,
}

impl EditorOverlay {
    fn encoding(&self) -> Encoding {
        self.encoding.lock().map(|e| *e).unwrap_or_default()
    }
}

impl DocumentOverlay for EditorOverlay {
    fn open_document(&self, path: &Path) -> Option<OpenDocument> {
        let docs = self.documents.lock().ok()?;
        let uri = docs.by_path.get(path)?;
        let doc = docs.by_uri.get(uri)?;
        Some(OpenDocument {
            text: doc.text(),
            version: doc.version,
        })
    }

    fn apply_edits(
        &self,
        path: &Path,
        version: i32,
        edits: Vec<ByteEdit>,
    ) -> BoxFuture<'_, Result<(), OverlayError>> {
        let enc = self.encoding();
        let prepared = (|| {
            let docs = self.documents.lock().map_err(|_| OverlayError::Closed)?;
            let uri = docs.by_path.get(path).ok_or(OverlayError::Closed)?.clone();
            let doc = docs.by_uri.get(&uri).ok_or(OverlayError::Closed)?;
            if doc.version != version {
                return Err(OverlayError::Stale {
                    expected: version,
                    actual: doc.version,
                });
            }
            let text_edits: Vec<OneOf<TextEdit, _>> = edits
                .iter()
                .map(|e| {
                    OneOf::Left(TextEdit {
                        range: Range::new(doc.position(e.start, enc), doc.position(e.end, enc)),
                        new_text: e.new_text.clone(),
                    })
                })
                .collect();
            Ok((uri, text_edits))
        })();
        Box::pin(async move {
            let (uri, edits) = prepared?;
            let edit = WorkspaceEdit {
                document_changes: Some(DocumentChanges::Edits(vec![TextDocumentEdit {
                    text_document: OptionalVersionedTextDocumentIdentifier {
                        uri,
                        version: Some(version),
                    },
                    edits,
                }])),
                ..Default::default()
            };
            match self.client.apply_edit(edit).await {
                Ok(response) if response.applied => Ok(()),
                Ok(response) => Err(OverlayError::Rejected {
                    reason: response
                        .failure_reason
                        .unwrap_or_else(|| "the editor declined the edit".into()),
                }),
                Err(e) => Err(OverlayError::Rejected {
                    reason: e.message.to_string(),
                }),
            }
        })
    }

    fn diagnostics(&self) -> Option<Vec<FileDiagnostics>> {
        if !self.diagnostics.sends() {
            return None;
        }
        let files = self.diagnostics.files.lock().ok()?;
        Some(
            files
                .by_path
                .iter()
                .map(|(path, (stamp, diagnostics))| FileDiagnostics {
                    path: path.clone(),
                    stamp: *stamp,
                    diagnostics: diagnostics.clone(),
                })
                .collect(),
        )
    }

    fn diagnostics_mark(&self) -> Option<u64> {
        if !self.diagnostics.sends() {
            return None;
        }
        self.diagnostics.files.lock().ok().map(|f| f.last)
    }

    fn diagnostics_published(&self, path: &Path, after: u64) -> BoxFuture<'_, ()> {
        // Subscribed before the check, so a publication between the two is not missed.
        let mut changed = self.diagnostics.changed.subscribe();
        let path = path.to_path_buf();
        Box::pin(async move {
            while self.diagnostics.stamp_of(&path) <= after {
                if changed.changed().await.is_err() {
                    return futures::future::pending().await;
                }
            }
        })
    }
}

/// Approvals waiting for a `cairn.approve` command, for editors without
/// `window/showMessageRequest` (Helix). Keyed by approval id; each is answered once.
#[derive(Default)]
pub struct PendingApprovals {
    pub waiting: Vec<PendingApproval>,
}

/// One approval waiting for a command.
pub struct PendingApproval {
    pub approval_id: String,
    pub tool: String,
    pub answer: tokio::sync::oneshot::Sender<ApprovalAnswer>,
}

impl PendingApprovals {
    /// Answers one approval (the oldest when `approval_id` is `None`); false if none matched.
    pub fn answer(&mut self, approval_id: Option<&str>, answer: ApprovalAnswer) -> bool {
        let index = match approval_id {
            Some(id) => self.waiting.iter().position(|p| p.approval_id == id),
            None => (!self.waiting.is_empty()).then_some(0),
        };
        match index {
            Some(i) => self.waiting.remove(i).answer.send(answer).is_ok(),
            None => false,
        }
    }
}

/// Removes a pending approval when its run stops waiting (cancelled), so it cannot be
/// answered later.
struct Unregister {
    pending: Arc<Mutex<PendingApprovals>>,
    approval_id: String,
}

impl Drop for Unregister {
    fn drop(&mut self) {
        if let Ok(mut p) = self.pending.lock() {
            p.waiting.retain(|w| w.approval_id != self.approval_id);
        }
    }
}

/// Answered once every event sent before it has reached the editor (the run's event forwarder
/// in `runs.rs` answers it; an approval question waits for it).
pub(crate) type Barrier = tokio::sync::oneshot::Sender<()>;

/// Asks the user in the editor.
pub struct EditorApprover {
    pub client: Client,
    /// The client announced its own approval UI.
    pub custom: bool,
    pub pending: Arc<Mutex<PendingApprovals>>,
    /// Waits until the run's earlier events reached the editor.
    pub barrier: Option<tokio::sync::mpsc::UnboundedSender<Barrier>>,
}

impl EditorApprover {
    /// For editors that cannot show a message with choices: the user answers with a code action
    /// or `cairn.allowOnce` / `cairn.allowSession` / `cairn.deny`.
    async fn ask_by_command(&self, request: &ApprovalRequest) -> ApprovalAnswer {
        let (tx, rx) = tokio::sync::oneshot::channel();
        if let Ok(mut p) = self.pending.lock() {
            p.waiting.push(PendingApproval {
                approval_id: request.approval_id.clone(),
                tool: request.tool.clone(),
                answer: tx,
            });
        }
        let _unregister = Unregister {
            pending: self.pending.clone(),
            approval_id: request.approval_id.clone(),
        };
        let message = format!(
            "cairn: allow {}? Answer with the code action \"cairn: Allow once\", \"Allow for this session\" or \"Deny\", or run the command cairn.allowOnce, cairn.allowSession or cairn.deny",
            request.reason
        );
        self.client
            .show_message(MessageType::WARNING, message)
            .await;
        rx.await.unwrap_or(ApprovalAnswer::Deny)
    }
}

const ALLOW_ONCE: &str = "Allow once";
const ALLOW_SESSION: &str = "Allow for this session";
const DENY: &str = "Deny";

impl Approver for EditorApprover {
    fn ask<'a>(&'a self, request: &'a ApprovalRequest) -> BoxFuture<'a, ApprovalAnswer> {
        let protected = !request.protected_paths.is_empty();
        Box::pin(async move {
            if let Some(barrier) = &self.barrier {
                let (tx, rx) = tokio::sync::oneshot::channel();
                if barrier.send(tx).is_ok() {
                    let _ = rx.await;
                }
            }
            if self.custom {
                let params = ApproveParams {
                    approval_id: request.approval_id.clone(),
                    run_id: request.run_id.clone(),
                    call_id: request.call_id.clone(),
                    tool: request.tool.clone(),
                    arguments: request.arguments.clone(),
                    args_hash: request.args_hash.clone(),
                    reason: request.reason.clone(),
                    description: request.description.clone(),
                    options: if protected {
                        vec![ApprovalAnswer::AllowOnce, ApprovalAnswer::Deny]
                    } else {
                        vec![
                            ApprovalAnswer::AllowOnce,
                            ApprovalAnswer::AllowSession,
                            ApprovalAnswer::Deny,
                        ]
                    },
                    protected_paths: request
                        .protected_paths
                        .iter()
                        .map(|p| p.path.clone())
                        .collect(),
                };
                return match self.client.send_request::<ApproveRequest>(params).await {
                    Ok(answer)
                        if answer.approval_id == request.approval_id
                            && answer.run_id == request.run_id
                            && answer.call_id == request.call_id =>
                    {
                        answer.decision
                    }
                    Ok(answer) => {
                        tracing::warn!(
                            run = %answer.run_id, call = %answer.call_id,
                            "an approval answer named another request; treated as a denial"
                        );
                        ApprovalAnswer::Deny
                    }
                    Err(e) => {
                        tracing::warn!("cairn/approve failed: {}", e.message);
                        ApprovalAnswer::Deny
                    }
                };
            }
            let mut args = serde_json::to_string_pretty(&request.arguments).unwrap_or_default();
            if args.len() > 2000 {
                let mut end = 2000;
                while !args.is_char_boundary(end) {
                    end -= 1;
                }
                args.truncate(end);
                args.push_str("\n… (arguments cut for display)");
            }
            let message = format!(
                "cairn: allow {}?\n{args}\nThe tool says of itself: {}",
                request.reason, request.description
            );
            // A protected path is approved once or not at all.
            let titles: &[&str] = if protected {
                &[ALLOW_ONCE, DENY]
            } else {
                &[ALLOW_ONCE, ALLOW_SESSION, DENY]
            };
            let actions: Vec<MessageActionItem> = titles
                .iter()
                .map(|t| MessageActionItem {
                    title: (*t).into(),
                    properties: HashMap::new(),
                })
                .collect();
            match self
                .client
                .show_message_request(MessageType::WARNING, message, Some(actions))
                .await
            {
                Ok(Some(item)) if item.title == ALLOW_ONCE => ApprovalAnswer::AllowOnce,
                Ok(Some(item)) if item.title == ALLOW_SESSION => ApprovalAnswer::AllowSession,
                Ok(_) => ApprovalAnswer::Deny,
                // The editor cannot ask (Helix answers MethodNotFound): ask by command.
                Err(e) => {
                    tracing::info!(
                        "window/showMessageRequest failed ({}); asking by command",
                        e.message
                    );
                    self.ask_by_command(request).await
                }
            }
        })
    }
}
