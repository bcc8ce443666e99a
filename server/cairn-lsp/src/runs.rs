//! Starting runs and reporting them: to the client as `cairn/runEvent`, and for runs from a chat
//! document, into that document through `workspace/applyEdit` as the answer streams.

use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use std::time::Duration;

use cairn_agent::events::RunEvent;
use cairn_agent::model::Message;
use cairn_agent::sessions::{SessionStore, now_secs};
use cairn_agent::{Mode, RunInput};
use futures::FutureExt;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;
use tower_lsp_server::jsonrpc::{Error, ErrorCode, Result};
use tower_lsp_server::ls_types::*;

use crate::chatdoc;
use crate::editor::{Barrier, EditorApprover, canonical_path};
use crate::protocol::{ChatParams, ChatResult, RunEventNotification, RunEventParams, commands};
use crate::state::{RunHandle, State};

/// Who started a run, and so where its answer goes besides `cairn/runEvent`.
pub(crate) enum Origin {
    Client,
    /// A chat document: the answer is appended to it.
    ChatDocument(Uri),
}

fn invalid_params(message: impl Into<String>) -> Error {
    Error {
        code: ErrorCode::InvalidParams,
        message: message.into().into(),
        data: None,
    }
}

fn valid_session_id(id: &str) -> bool {
    !id.is_empty()
        && id.len() <= 128
        && id
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
}

/// Validates, answers with ids, and leaves the run to a task.
pub(crate) async fn start(
    state: &Arc<State>,
    params: ChatParams,
    origin: Origin,
) -> Result<ChatResult> {
    start_with_history(state, params, origin, None, Prelude::None).await
}

async fn start_with_history(
    state: &Arc<State>,
    params: ChatParams,
    origin: Origin,
    history_override: Option<Vec<Message>>,
    prelude: Prelude,
) -> Result<ChatResult> {
    if params.message.trim().is_empty() {
        return Err(invalid_params("message: must not be empty"));
    }
    if let Some(id) = &params.session_id
        && !valid_session_id(id)
    {
        return Err(invalid_params(
            "sessionId: letters, digits, `-` and `_` only, at most 128",
        ));
    }
    let config = state.config();
    let mcp = state.factory.mcp();
    let mut message = match &mcp {
        Some(handle) => handle
            .hub
            .expand_slash(&params.message)
            .await
            .map_err(|e| invalid_params(e.to_string()))?,
        None => params.message.clone(),
    };
    if let (Some(handle), Some(refs)) = (&mcp, &params.attachments) {
        let refs: Vec<(&str, &str)> = refs
            .iter()
            .map(|r| (r.server.as_str(), r.uri.as_str()))
            .collect();
        message.push_str(
            &handle
                .hub
                .attachments_text(&refs)
                .await
                .map_err(|e| invalid_params(format!("attachments: {e}")))?,
        );
    }
    if let Some(ctx) = &params.context {
        message.push_str(&context_text(
            state,
            &ctx.uri,
            ctx.range,
            config.agent.context_max_bytes,
        )?);
    }
    let session_id = params
        .session_id
        .clone()
        .unwrap_or_else(|| uuid::Uuid::new_v4().to_string());
    let run_id = uuid::Uuid::new_v4().to_string();
    let cancel = CancellationToken::new();
    if let Ok(mut runs) = state.runs.lock() {
        runs.insert(
            run_id.clone(),
            RunHandle {
                cancel: cancel.clone(),
            },
        );
    }
    // If the client cancels this request before it answers, the run goes with it.
    let guard = cancel.clone().drop_guard();
    let task = RunTask {
        state: state.clone(),
        run_id: run_id.clone(),
        session_id: session_id.clone(),
        mode: params.mode.unwrap_or_default(),
        message,
        history_override,
        origin,
        prelude,
        cancel,
    };
    tokio::spawn(task.run());
    guard.disarm();
    Ok(ChatResult { run_id, session_id })
}

/// The text of the editor context, capped, for the prompt.
fn context_text(
    state: &State,
    uri: &Uri,
    range: Option<Range>,
    max_bytes: usize,
) -> Result<String> {
    let enc = state.encoding();
    let (text, label) = {
        let docs = state
            .documents
            .lock()
            .map_err(|_| invalid_params("context: unavailable"))?;
        match docs.by_uri.get(uri) {
            Some(doc) => match range {
                Some(r) => (
                    doc.slice(r, enc),
                    format!("lines {}-{}", r.start.line + 1, r.end.line + 1),
                ),
                None => (doc.text(), "whole file".to_string()),
            },
            None => {
                return Err(invalid_params(format!(
                    "context.uri: {} is not open in the editor",
                    uri.as_str()
                )));
            }
        }
    };
    let path = canonical_path(uri).map(|p| {
        let roots = state.roots();
        roots
            .iter()
            .find_map(|r| p.strip_prefix(r).ok().map(|s| s.display().to_string()))
            .unwrap_or_else(|| p.display().to_string())
    });
    let mut shown = text;
    let mut note = String::new();
    if shown.len() > max_bytes {
        let mut end = max_bytes;
        while !shown.is_char_boundary(end) {
            end -= 1;
        }
        note = format!(
            "\n[context cut from {} to {end} bytes (agent.context_max_bytes)]",
            shown.len()
        );
        shown.truncate(end);
    }
    let fence = if shown.contains("```") { "````" } else { "```" };
    Ok(format!(
        "\n\nContext: `{}` ({label}):\n{fence}\n{shown}\n{fence}{note}",
        path.unwrap_or_else(|| uri.as_str().to_string())
    ))
}

/// Editor round-trips a run needs before it starts, done in its task so no handler waits on
/// the editor.
pub(crate) enum Prelude {
    None,
    /// Append text (the `## cairn` heading) to a chat document.
    Append {
        uri: Uri,
        text: String,
    },
    /// Create a chat document with this text, show it, and wait until the editor has it open.
    Create {
        uri: Uri,
        text: String,
    },
}

impl Prelude {
    async fn perform(self, state: &State) -> std::result::Result<(), String> {
        match self {
            Prelude::None => Ok(()),
            Prelude::Append { uri, text } => {
                if append_to_document(state, &uri, &text).await {
                    Ok(())
                } else {
                    Err(format!(
                        "the editor did not accept the edit of {}",
                        uri.as_str()
                    ))
                }
            }
            Prelude::Create { uri, text } => create_chat_document(state, &uri, &text).await,
        }
    }
}

struct RunTask {
    state: Arc<State>,
    run_id: String,
    session_id: String,
    mode: Mode,
    message: String,
    history_override: Option<Vec<Message>>,
    origin: Origin,
    prelude: Prelude,
    cancel: CancellationToken,
}

impl RunTask {
    async fn run(mut self) {
        let (tx, rx) = mpsc::unbounded_channel();
        let (barrier_tx, barrier_rx) = mpsc::unbounded_channel();
        let doc_uri = match &self.origin {
            Origin::ChatDocument(uri) => Some(uri.clone()),
            Origin::Client => None,
        };
        let prelude = std::mem::replace(&mut self.prelude, Prelude::None);
        let prepared = prelude.perform(&self.state).await;
        // The run's last event waits until its transcript is saved (or the run is gone), so an
        // editor that sends the session's next message on seeing it finds this turn stored.
        let (saved_tx, saved_rx) = tokio::sync::oneshot::channel();
        let forwarder = tokio::spawn(forward(
            self.state.clone(),
            self.run_id.clone(),
            rx,
            barrier_rx,
            saved_rx,
            doc_uri,
        ));
        let tx_for_panic = tx.clone();
        match prepared {
            Err(message) => {
                let _ = tx.send(RunEvent::Error { message });
                drop(tx);
                drop(saved_tx);
            }
            Ok(()) => {
                let outcome = AssertUnwindSafe(self.run_inner(tx, barrier_tx, saved_tx))
                    .catch_unwind()
                    .await;
                if outcome.is_err() {
                    let _ = tx_for_panic.send(RunEvent::Error {
                        message: "internal error: the run failed unexpectedly".into(),
                    });
                }
            }
        }
        drop(tx_for_panic);
        let _ = forwarder.await;
        if let Ok(mut runs) = self.state.runs.lock() {
            runs.remove(&self.run_id);
        }
    }

    async fn run_inner(
        &self,
        tx: mpsc::UnboundedSender<RunEvent>,
        barrier: mpsc::UnboundedSender<Barrier>,
        saved: tokio::sync::oneshot::Sender<()>,
    ) {
        let agent = match self.state.agent() {
            Ok(agent) => agent,
            Err(message) => {
                let _ = tx.send(RunEvent::Error { message });
                return;
            }
        };
        let config = self.state.config();
        // Servers still in their first start get a moment, so the first message after opening
        // the editor sees their tools.
        if let Some(mcp) = self.state.factory.mcp() {
            mcp.hub
                .settled(Duration::from_secs(config.mcp.handshake_timeout_secs))
                .await;
        }
        let store = SessionStore::new(self.state.factory.sessions_dir(&config));
        let history = match &self.history_override {
            Some(h) => h.clone(),
            None => store.messages(&self.session_id).unwrap_or_else(|e| {
                tracing::warn!("session {}: {e}", self.session_id);
                Vec::new()
            }),
        };
        let custom = self
            .state
            .extensions
            .lock()
            .map(|e| e.approvals)
            .unwrap_or(false);
        let approver = EditorApprover {
            client: self.state.client.clone(),
            custom,
            pending: self.state.approvals.clone(),
            barrier: Some(barrier),
        };
        let session = self.state.session(&self.session_id);
        let outcome = agent
            .run(RunInput {
                session_id: self.session_id.clone(),
                run_id: self.run_id.clone(),
                mode: self.mode,
                history,
                message: self.message.clone(),
                approver: &approver,
                grants: session.grants.clone(),
                events: tx,
                cancel: self.cancel.clone(),
            })
            .await;
        if let Ok(mut sessions) = self.state.sessions.lock() {
            sessions
                .entry(self.session_id.clone())
                .or_default()
                .last_offered = outcome.offered.clone();
        }
        let mut outcome = outcome;
        if self.history_override.is_some() {
            // A chat document is its own conversation: a compaction measured against it would
            // not fit the stored one, so it is not kept (the next request compacts again).
            outcome.compaction = None;
        }
        if let Err(e) = store.save_run(&self.session_id, &self.run_id, self.mode, &outcome) {
            tracing::error!("could not save the transcript: {e}");
        }
        let _ = saved.send(());
    }
}

/// Sends each event as `cairn/runEvent`, in order; for chat documents also appends the rendered
/// events to the document in batches. A barrier (sent before an approval is asked) is answered
/// after the events before it went out, so the editor sees the call before the question.
async fn forward(
    state: Arc<State>,
    run_id: String,
    mut rx: mpsc::UnboundedReceiver<RunEvent>,
    mut barriers: mpsc::UnboundedReceiver<Barrier>,
    saved: tokio::sync::oneshot::Receiver<()>,
    doc: Option<Uri>,
) {
    let mut saved = Some(saved);
    let mut pending = String::new();
    let mut barriers_open = true;
    loop {
        let mut barrier = None;
        tokio::select! {
            biased;
            event = rx.recv() => match event {
                Some(event) => {
                    wait_for_transcript(&mut saved, &event).await;
                    send_event(&state, &run_id, event, doc.is_some(), &mut pending).await;
                    if !rx.is_empty() {
                        continue;
                    }
                }
                None => break,
            },
            b = barriers.recv(), if barriers_open => match b {
                Some(b) => {
                    while let Ok(event) = rx.try_recv() {
                        wait_for_transcript(&mut saved, &event).await;
                        send_event(&state, &run_id, event, doc.is_some(), &mut pending).await;
                    }
                    barrier = Some(b);
                }
                None => barriers_open = false,
            },
            _ = tokio::time::sleep(Duration::from_millis(150)) => {}
        }
        if let Some(uri) = &doc
            && !pending.is_empty()
            && append_to_document(&state, uri, &pending).await
        {
            pending.clear();
        }
        if let Some(b) = barrier {
            let _ = b.send(());
        }
    }
    if let Some(uri) = &doc
        && !pending.is_empty()
        && !append_to_document(&state, uri, &pending).await
    {
        state
            .client
            .show_message(
                MessageType::ERROR,
                format!("cairn: could not write the answer into {}", uri.as_str()),
            )
            .await;
    }
}

/// Before a run's last event (`done` or `error`) goes out, waits until the run saved its
/// transcript or ended without one (the sender dropped).
async fn wait_for_transcript(
    saved: &mut Option<tokio::sync::oneshot::Receiver<()>>,
    event: &RunEvent,
) {
    if matches!(event, RunEvent::Done { .. } | RunEvent::Error { .. })
        && let Some(saved) = saved.take()
    {
        let _ = saved.await;
    }
}

async fn send_event(
    state: &State,
    run_id: &str,
    event: RunEvent,
    to_document: bool,
    pending: &mut String,
) {
    // The agent redacts what it reports; errors raised here (a configuration that does not
    // build) pass the redactor on their way out.
    let event = match event {
        RunEvent::Error { message } => RunEvent::Error {
            message: state.redact(message),
        },
        other => other,
    };
    // Once the editor hears the run ended, the run is gone: a `cairn/cancel` sent on seeing
    // `done` must not find it.
    if matches!(event, RunEvent::Done { .. } | RunEvent::Error { .. })
        && let Ok(mut runs) = state.runs.lock()
    {
        runs.remove(run_id);
    }
    if to_document && let Some(text) = chatdoc::render_event(&event) {
        let text = chatdoc::after(pending, &text).to_string();
        pending.push_str(&text);
    }
    state
        .client
        .send_notification::<RunEventNotification>(RunEventParams {
            run_id: run_id.to_string(),
            event,
        })
        .await;
}

/// Appends text at the end of an open document through the editor; waits until the editor
/// reports the new version so the next append is based on it.
async fn append_to_document(state: &State, uri: &Uri, text: &str) -> bool {
    let enc = state.encoding();
    let Some((end, version, tail)) = state.documents.lock().ok().and_then(|docs| {
        docs.by_uri.get(uri).map(|d| {
            let chars = d.rope.len_chars();
            let tail = d.rope.slice(chars.saturating_sub(2)..).to_string();
            (d.end(enc), d.version, tail)
        })
    }) else {
        return false;
    };
    // The seam with what the document ends with (`pending` handled the seams inside it).
    let text = chatdoc::after(&tail, text);
    let edit = WorkspaceEdit {
        document_changes: Some(DocumentChanges::Edits(vec![TextDocumentEdit {
            text_document: OptionalVersionedTextDocumentIdentifier {
                uri: uri.clone(),
                version: Some(version),
            },
            edits: vec![OneOf::Left(TextEdit {
                range: Range::new(end, end),
                new_text: text.to_string(),
            })],
        }])),
        ..Default::default()
    };
    match state.client.apply_edit(edit).await {
        Ok(r) if r.applied => {
            for _ in 0..200 {
                let current = state.document_text(uri).map(|(_, v)| v);
                if current != Some(version) {
                    break;
                }
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
            true
        }
        _ => false,
    }
}

/// `Send` in a chat document: the last `## You` section is the message.
pub(crate) async fn send_chat_document(state: &Arc<State>, uri: Uri) -> Result<ChatResult> {
    if !canonical_path(&uri).is_some_and(|p| chatdoc::is_chat_document(&p)) {
        return Err(invalid_params(
            "uri: not a chat document (Markdown under .cairn/chats/)",
        ));
    }
    let Some((text, _)) = state.document_text(&uri) else {
        return Err(invalid_params("uri: the chat document is not open"));
    };
    let parsed = chatdoc::parse(&text);
    if parsed.message.is_empty() {
        return Err(invalid_params(format!(
            "nothing to send: write your message under the last `{}` heading",
            chatdoc::USER_HEADING
        )));
    }
    let prefix = if text.ends_with("\n\n") {
        ""
    } else if text.ends_with('\n') {
        "\n"
    } else {
        "\n\n"
    };
    let session_id = format!("doc-{}", short_hash(uri.as_str()));
    let params = ChatParams {
        message: parsed.message,
        session_id: Some(session_id),
        mode: Some(Mode::Chat),
        context: None,
        attachments: None,
    };
    let prelude = Prelude::Append {
        uri: uri.clone(),
        text: format!("{prefix}{}\n\n", chatdoc::ASSISTANT_HEADING),
    };
    start_with_history(
        state,
        params,
        Origin::ChatDocument(uri),
        Some(parsed.history),
        prelude,
    )
    .await
}

fn short_hash(s: &str) -> String {
    // FNV-1a: a stable name, not a security boundary.
    let mut h: u64 = 0xcbf29ce484222325;
    for b in s.bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x100000001b3);
    }
    format!("{h:016x}")
}

/// `Ask cairn`, `Explain`, `Fix`: a new chat document quoting the selection; Explain and Fix
/// run at once, Ask waits for the user's question and `Send`.
pub(crate) async fn selection_command(
    state: &Arc<State>,
    command: &str,
    uri: Uri,
    range: Option<Range>,
) -> Result<Option<ChatResult>> {
    let config = state.config();
    let context = context_text(state, &uri, range, config.agent.context_max_bytes)?;
    let Some(root) = state.roots().into_iter().next() else {
        return Err(invalid_params(
            "no workspace folder to keep the chat document in",
        ));
    };
    let (question, mode) = match command {
        commands::EXPLAIN => ("Explain this code.", Mode::Chat),
        commands::FIX => (
            "Fix this code. Make the change with edit_file, then say what you changed.",
            Mode::Agent,
        ),
        _ => ("", Mode::Chat),
    };
    let name = format!(
        "chat-{}-{}.md",
        now_secs(),
        &uuid::Uuid::new_v4().simple().to_string()[..6]
    );
    let path = root.join(".cairn").join("chats").join(name);
    let Some(doc_uri) = Uri::from_file_path(&path) else {
        return Err(invalid_params("cannot name the chat document"));
    };
    let body = format!("{}\n\n{question}{context}\n", chatdoc::USER_HEADING);
    let initial = if question.is_empty() {
        body
    } else {
        format!("{body}\n{}\n\n", chatdoc::ASSISTANT_HEADING)
    };
    if question.is_empty() {
        // Nothing to run: create and show the document in the background.
        let state = state.clone();
        tokio::spawn(async move {
            if let Err(e) = create_chat_document(&state, &doc_uri, &initial).await {
                state
                    .client
                    .show_message(MessageType::ERROR, state.redact(format!("cairn: {e}")))
                    .await;
            }
        });
        return Ok(None);
    }
    let session_id = format!("doc-{}", short_hash(doc_uri.as_str()));
    let params = ChatParams {
        message: format!("{question}{context}"),
        session_id: Some(session_id),
        mode: Some(mode),
        context: None,
        attachments: None,
    };
    let prelude = Prelude::Create {
        uri: doc_uri.clone(),
        text: initial,
    };
    start_with_history(
        state,
        params,
        Origin::ChatDocument(doc_uri),
        Some(Vec::new()),
        prelude,
    )
    .await
    .map(Some)
}

/// Creates a chat document through the editor, shows it, and waits until the editor has it
/// open so the answer can stream into it.
async fn create_chat_document(
    state: &State,
    uri: &Uri,
    text: &str,
) -> std::result::Result<(), String> {
    let edit = WorkspaceEdit {
        document_changes: Some(DocumentChanges::Operations(vec![
            DocumentChangeOperation::Op(ResourceOp::Create(CreateFile {
                uri: uri.clone(),
                options: Some(CreateFileOptions {
                    overwrite: Some(false),
                    ignore_if_exists: Some(true),
                }),
                annotation_id: None,
            })),
            DocumentChangeOperation::Edit(TextDocumentEdit {
                text_document: OptionalVersionedTextDocumentIdentifier {
                    uri: uri.clone(),
                    version: None,
                },
                edits: vec![OneOf::Left(TextEdit {
                    range: Range::default(),
                    new_text: text.to_string(),
                })],
            }),
        ])),
        ..Default::default()
    };
    match state.client.apply_edit(edit).await {
        Ok(r) if r.applied => {}
        _ => {
            return Err(format!(
                "the editor did not create the chat document {}",
                uri.as_str()
            ));
        }
    }
    let shown = state
        .client
        .show_document(ShowDocumentParams {
            uri: uri.clone(),
            external: Some(false),
            take_focus: Some(true),
            selection: None,
        })
        .await;
    let wait = if matches!(shown, Ok(true)) {
        Duration::from_secs(5)
    } else {
        // The editor cannot open documents for us; the user can.
        let path = uri
            .to_file_path()
            .map(|p| p.display().to_string())
            .unwrap_or_default();
        state
            .client
            .show_message(
                MessageType::INFO,
                format!("cairn: open {path} to see the answer"),
            )
            .await;
        Duration::from_secs(60)
    };
    let deadline = tokio::time::Instant::now() + wait;
    while tokio::time::Instant::now() < deadline {
        if state.document_text(uri).is_some() {
            return Ok(());
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    // Run anyway: the answer stays in the session transcript.
    tracing::warn!(
        "{} was not opened; the answer goes to the transcript only",
        uri.as_str()
    );
    Ok(())
}
