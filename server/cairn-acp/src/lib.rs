//! The Agent Client Protocol front of cairn: `cairn acp` serves the same agent as `cairn lsp` to
//! ACP clients (Zed, JetBrains IDEs, Emacs, ...) over stdio.
//!
//! Architecture invariant: this is the only crate that knows ACP; its types never cross into
//! the crates below. A prompt runs in a task of its own, so the connection keeps serving
//! `session/cancel` and other sessions while a turn waits on the model or on a permission.

mod approver;
mod commands;
mod files;
mod updates;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use agent_client_protocol::v1::schema::{
    AgentCapabilities, CancelNotification, ContentBlock, EmbeddedResourceResource, Implementation,
    InitializeRequest, InitializeResponse, LoadSessionRequest, LoadSessionResponse, McpServer,
    NewSessionRequest, NewSessionResponse, PromptCapabilities, PromptRequest, PromptResponse,
    SessionMode, SessionModeState, SessionNotification, SetSessionModeRequest,
    SetSessionModeResponse, StopReason,
};
use agent_client_protocol::v1::{ConnectionTo, Responder};
use agent_client_protocol::{Client, Stdio, on_receive_notification, on_receive_request};
use cairn_agent::policy::SessionGrants;
use cairn_agent::sessions::{SessionError, SessionStore};
use cairn_agent::{Agent, Mode, RunInput, RunOutcome};
use cairn_workspace::DocumentOverlay;
use futures::future::BoxFuture;
use tokio_util::sync::CancellationToken;

pub use commands::{Command, Commands};

type AcpError = agent_client_protocol::Error;

/// The agent for one workspace root, and where its transcripts are kept.
#[derive(Clone)]
pub struct Opened {
    pub agent: Agent,
    pub sessions_dir: PathBuf,
    /// The slash commands of this workspace (its MCP prompts).
    pub commands: Arc<dyn Commands>,
    /// The scope the built-in tools write through (with its checkpoints), for `/rewind`.
    pub workspace: Option<Arc<cairn_workspace::Workspace>>,
}

/// An MCP server the client asks a session to use, in cairn's terms (no ACP types cross).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ClientServer {
    pub name: String,
    /// A stdio server's command, or `None` for a server at `url`.
    pub command: Option<String>,
    pub args: Vec<String>,
    pub env: Vec<(String, String)>,
    pub url: Option<String>,
    pub headers: Vec<(String, String)>,
    /// The legacy SSE transport (else streamable HTTP) for a server at `url`.
    pub sse: bool,
}

/// Opens workspaces; the binary implements it with the same composition as `cairn lsp`, so this
/// crate does not know which model provider or tools exist.
pub trait Workspaces: Send + Sync {
    /// The agent for the workspace at `root` (its configuration layers, MCP servers and
    /// built-in tools), with the client's MCP servers `extra` next to the configured ones, and
    /// the client's files as the built-in file tools' overlay when it offers them. An error is
    /// shown to the client.
    fn open<'a>(
        &'a self,
        root: &'a Path,
        extra: &'a [ClientServer],
        overlay: Option<Arc<dyn DocumentOverlay>>,
    ) -> BoxFuture<'a, Result<Opened, String>>;
}

/// Why the server stopped.
#[derive(Debug, thiserror::Error)]
#[error("ACP connection: {0}")]
pub struct ServeError(String);

/// One session of this connection.
#[derive(Clone)]
struct Session {
    root: PathBuf,
    /// The MCP servers the client gave this session.
    servers: Vec<ClientServer>,
    mode: Mode,
    grants: SessionGrants,
    /// The token of the prompt running now, if one is.
    running: Option<CancellationToken>,
}

struct State {
    workspaces: Arc<dyn Workspaces>,
    /// Agents by workspace root and client servers, opened once for the life of the connection.
    opened: tokio::sync::Mutex<HashMap<(PathBuf, Vec<ClientServer>), Opened>>,
    sessions: Mutex<HashMap<String, Session>>,
    /// Whether the client offers `fs/read_text_file` and `fs/write_text_file` (both needed).
    client_fs: std::sync::atomic::AtomicBool,
    /// The client's files, by workspace root, when it offers them.
    files: Mutex<HashMap<PathBuf, Arc<files::ClientFiles>>>,
}

impl State {
    /// The workspace's agent with these client servers, opened once for the connection.
    async fn open(
        &self,
        root: &Path,
        servers: &[ClientServer],
        cx: &ConnectionTo<Client>,
    ) -> Result<Opened, AcpError> {
        let key = (root.to_path_buf(), servers.to_vec());
        let mut opened = self.opened.lock().await;
        if let Some(o) = opened.get(&key) {
            return Ok(o.clone());
        }
        let overlay = self
            .files_of(root, cx)
            .map(|f| f as Arc<dyn DocumentOverlay>);
        let o = self
            .workspaces
            .open(root, servers, overlay)
            .await
            .map_err(|e| AcpError::internal_error().data(e))?;
        opened.insert(key, o.clone());
        Ok(o)
    }

    /// The client's files for `root`, made on first use, when the client offers them.
    fn files_of(&self, root: &Path, cx: &ConnectionTo<Client>) -> Option<Arc<files::ClientFiles>> {
        if !self.client_fs.load(std::sync::atomic::Ordering::Relaxed) {
            return None;
        }
        let mut files = self.files.lock().ok()?;
        let f = files.entry(root.to_path_buf()).or_insert_with(|| {
            Arc::new(files::ClientFiles::new(
                cx.clone(),
                tokio::runtime::Handle::current(),
            ))
        });
        Some(f.clone())
    }

    /// The client's files of `root` name session `id` in their requests from now on.
    fn files_for_session(&self, root: &Path, id: &str) {
        if let Some(f) = self.files.lock().ok().and_then(|f| f.get(root).cloned()) {
            f.use_session(id);
        }
    }

    fn session(&self, id: &str) -> Result<Session, AcpError> {
        self.sessions
            .lock()
            .ok()
            .and_then(|s| s.get(id).cloned())
            .ok_or_else(|| {
                invalid_params(format!("sessionId: no session `{id}` on this connection"))
            })
    }

    fn update_session(&self, id: &str, f: impl FnOnce(&mut Session)) {
        if let Ok(mut sessions) = self.sessions.lock()
            && let Some(s) = sessions.get_mut(id)
        {
            f(s);
        }
    }
}

fn invalid_params(message: impl Into<String>) -> AcpError {
    AcpError::invalid_params().data(message.into())
}

/// The session modes: chat answers, agent may also edit.
fn modes(current: Mode) -> SessionModeState {
    SessionModeState::new(
        current.as_str(),
        vec![
            SessionMode::new("chat", "Chat")
                .description("Answers and reads the project; no edits".to_string()),
            SessionMode::new("agent", "Agent")
                .description("May also edit files and run the writing tools".to_string()),
        ],
    )
}

/// The workspace root a client names: an absolute path to a directory.
fn workspace_root(cwd: &Path) -> Result<PathBuf, AcpError> {
    if !cwd.is_absolute() {
        return Err(invalid_params("cwd: must be an absolute path"));
    }
    let root = std::fs::canonicalize(cwd)
        .map_err(|e| invalid_params(format!("cwd: {}: {e}", cwd.display())))?;
    if !root.is_dir() {
        return Err(invalid_params(format!(
            "cwd: {} is not a directory",
            cwd.display()
        )));
    }
    Ok(root)
}

/// The client's MCP servers in cairn's terms, sorted so the same set opens the same agent.
fn client_servers(servers: &[McpServer]) -> Result<Vec<ClientServer>, AcpError> {
    // The SDK's header and variable lists are `name`/`value` records.
    macro_rules! pairs {
        ($list:expr) => {
            $list
                .iter()
                .map(|p| (p.name.clone(), p.value.clone()))
                .collect()
        };
    }
    let remote = |name: &String, url: &String, headers: Vec<(String, String)>, sse| ClientServer {
        name: name.clone(),
        command: None,
        args: Vec::new(),
        env: Vec::new(),
        url: Some(url.clone()),
        headers,
        sse,
    };
    let mut out = Vec::new();
    for (i, server) in servers.iter().enumerate() {
        let s = match server {
            McpServer::Stdio(s) => ClientServer {
                name: s.name.clone(),
                command: Some(s.command.display().to_string()),
                args: s.args.clone(),
                env: pairs!(s.env),
                url: None,
                headers: Vec::new(),
                sse: false,
            },
            McpServer::Http(s) => remote(&s.name, &s.url, pairs!(s.headers), false),
            McpServer::Sse(s) => remote(&s.name, &s.url, pairs!(s.headers), true),
            _ => {
                return Err(invalid_params(format!(
                    "mcpServers[{i}]: a transport cairn does not support"
                )));
            }
        };
        if s.name.trim().is_empty() {
            return Err(invalid_params(format!(
                "mcpServers[{i}].name: must not be empty"
            )));
        }
        out.push(s);
    }
    out.sort();
    Ok(out)
}

/// The user's message from the prompt's content blocks.
fn prompt_text(blocks: &[ContentBlock]) -> String {
    let mut text = String::new();
    for block in blocks {
        match block {
            ContentBlock::Text(t) => text.push_str(&t.text),
            ContentBlock::ResourceLink(link) => {
                text.push_str(&format!("\n[{}]({})\n", link.name, link.uri));
            }
            ContentBlock::Resource(embedded) => {
                if let EmbeddedResourceResource::TextResourceContents(r) = &embedded.resource {
                    let fence = if r.text.contains("```") {
                        "````"
                    } else {
                        "```"
                    };
                    text.push_str(&format!(
                        "\n\nContext: `{}`:\n{fence}\n{}\n{fence}\n",
                        r.uri, r.text
                    ));
                }
            }
            _ => {}
        }
    }
    text
}

/// The prompt's first text block, where a slash command would be, and the user's message from
/// the other blocks (attached files stay out of the command's arguments).
fn split_command(blocks: &[ContentBlock]) -> (String, String) {
    match blocks.split_first() {
        Some((ContentBlock::Text(t), rest)) => (t.text.clone(), prompt_text(rest)),
        _ => (String::new(), prompt_text(blocks)),
    }
}

/// Serves ACP on stdin and stdout until the client closes the connection.
pub async fn serve(workspaces: Arc<dyn Workspaces>) -> Result<(), ServeError> {
    let state = Arc::new(State {
        workspaces,
        opened: tokio::sync::Mutex::default(),
        sessions: Mutex::default(),
        client_fs: std::sync::atomic::AtomicBool::new(false),
        files: Mutex::default(),
    });
    let (s1, s2, s3, s4, s5, s6) = (
        state.clone(),
        state.clone(),
        state.clone(),
        state.clone(),
        state.clone(),
        state.clone(),
    );
    agent_client_protocol::Agent
        .v1()
        .name("cairn")
        .on_receive_request(
            async move |request: InitializeRequest, responder, _cx| {
                let fs = &request.client_capabilities.fs;
                s1.client_fs.store(
                    fs.read_text_file && fs.write_text_file,
                    std::sync::atomic::Ordering::Relaxed,
                );
                responder.respond(
                    InitializeResponse::new(
                        request
                            .protocol_version
                            .min(agent_client_protocol::schema::ProtocolVersion::V1),
                    )
                    .agent_capabilities(
                        AgentCapabilities::new()
                            .load_session(true)
                            .prompt_capabilities(PromptCapabilities::new().embedded_context(true)),
                    )
                    .agent_info(Implementation::new("cairn", env!("CARGO_PKG_VERSION"))),
                )
            },
            on_receive_request!(),
        )
        .on_receive_request(
            // Opening a workspace starts its MCP servers: in a task, like a prompt.
            async move |request: NewSessionRequest, responder, cx| {
                let state = s2.clone();
                cx.clone().spawn(async move {
                    let made = new_session(&state, request, &cx).await;
                    let id = made.as_ref().ok().map(|r| r.session_id.0.to_string());
                    responder.respond_with_result(made)?;
                    announce_commands(&state, &cx, id).await
                })
            },
            on_receive_request!(),
        )
        .on_receive_request(
            async move |request: LoadSessionRequest, responder, cx| {
                let state = s3.clone();
                cx.clone().spawn(async move {
                    let id = request.session_id.0.to_string();
                    let loaded = load_session(&state, request, &cx).await;
                    let id = loaded.is_ok().then_some(id);
                    responder.respond_with_result(loaded)?;
                    announce_commands(&state, &cx, id).await
                })
            },
            on_receive_request!(),
        )
        .on_receive_request(
            async move |request: PromptRequest, responder, cx| {
                prompt(&s4, request, responder, cx).await
            },
            on_receive_request!(),
        )
        .on_receive_request(
            async move |request: SetSessionModeRequest, responder, _cx| {
                responder.respond_with_result(set_mode(&s5, request))
            },
            on_receive_request!(),
        )
        .on_receive_notification(
            async move |notification: CancelNotification, _cx| {
                if let Ok(session) = s6.session(&notification.session_id.0)
                    && let Some(token) = session.running
                {
                    token.cancel();
                }
                Ok(())
            },
            on_receive_notification!(),
        )
        .connect_to(Stdio::new())
        .await
        .map_err(|e| ServeError(e.to_string()))
}

/// Tells the client the commands of a session just made or loaded (after the answer, so it
/// knows the session), and again whenever they change.
async fn announce_commands(
    state: &State,
    cx: &ConnectionTo<Client>,
    id: Option<String>,
) -> Result<(), AcpError> {
    let Some(id) = id else { return Ok(()) };
    let Ok(session) = state.session(&id) else {
        return Ok(());
    };
    // Opened already: this only looks it up.
    let Ok(opened) = state.open(&session.root, &session.servers, cx).await else {
        return Ok(());
    };
    // A task of its own: it lives as long as the connection, and errors in it are not the
    // connection's (a spawned task's error would end it).
    cx.spawn(commands::announce(opened.commands, cx.clone(), id))
}

async fn new_session(
    state: &State,
    request: NewSessionRequest,
    cx: &ConnectionTo<Client>,
) -> Result<NewSessionResponse, AcpError> {
    let root = workspace_root(&request.cwd)?;
    let servers = client_servers(&request.mcp_servers)?;
    state.open(&root, &servers, cx).await?;
    let id = uuid::Uuid::new_v4().to_string();
    add_session(state, &id, root, servers);
    Ok(NewSessionResponse::new(id).modes(modes(Mode::Chat)))
}

fn add_session(state: &State, id: &str, root: PathBuf, servers: Vec<ClientServer>) {
    state.files_for_session(&root, id);
    if let Ok(mut sessions) = state.sessions.lock() {
        sessions.insert(
            id.to_string(),
            Session {
                root,
                servers,
                mode: Mode::Chat,
                grants: SessionGrants::default(),
                running: None,
            },
        );
    }
}

/// Replays a stored session as updates, then makes it a session of this connection.
async fn load_session(
    state: &State,
    request: LoadSessionRequest,
    cx: &ConnectionTo<Client>,
) -> Result<LoadSessionResponse, AcpError> {
    let root = workspace_root(&request.cwd)?;
    let servers = client_servers(&request.mcp_servers)?;
    let opened = state.open(&root, &servers, cx).await?;
    let id = request.session_id.0.to_string();
    let records = SessionStore::new(&opened.sessions_dir)
        .load(&id)
        .map_err(|e| match e {
            SessionError::InvalidId(_) | SessionError::NotFound(_) => {
                invalid_params(format!("sessionId: {e}"))
            }
            other => AcpError::internal_error().data(other.to_string()),
        })?;
    for update in updates::of_transcript(&records) {
        cx.send_notification(SessionNotification::new(request.session_id.clone(), update))?;
    }
    add_session(state, &id, root, servers);
    Ok(LoadSessionResponse::new().modes(modes(Mode::Chat)))
}

fn set_mode(
    state: &State,
    request: SetSessionModeRequest,
) -> Result<SetSessionModeResponse, AcpError> {
    let mode = match &*request.mode_id.0 {
        "chat" => Mode::Chat,
        "agent" => Mode::Agent,
        other => {
            return Err(invalid_params(format!(
                "modeId: `{other}` is not a mode (chat, agent)"
            )));
        }
    };
    state.session(&request.session_id.0)?;
    state.update_session(&request.session_id.0, |s| s.mode = mode);
    Ok(SetSessionModeResponse::new())
}

/// Starts a turn in a task and returns at once; the task answers the prompt when the turn ends.
async fn prompt(
    state: &Arc<State>,
    request: PromptRequest,
    responder: Responder<PromptResponse>,
    cx: ConnectionTo<Client>,
) -> Result<(), AcpError> {
    let started = async {
        let id = request.session_id.0.to_string();
        let session = state.session(&id)?;
        if session.running.is_some() {
            return Err(AcpError::invalid_request()
                .data("a prompt is already running in this session; cancel it first"));
        }
        if prompt_text(&request.prompt).trim().is_empty() {
            return Err(invalid_params("prompt: no text in the content blocks"));
        }
        let cancel = CancellationToken::new();
        state.update_session(&id, |s| s.running = Some(cancel.clone()));
        Ok((id, session, split_command(&request.prompt), cancel))
    }
    .await;
    let (id, session, message, cancel) = match started {
        Ok(s) => s,
        Err(e) => return responder.respond_with_error(e),
    };
    let state = state.clone();
    cx.clone().spawn(async move {
        let result = turn(&state, &cx, &id, &session, message, cancel).await;
        state.update_session(&id, |s| s.running = None);
        responder.respond_with_result(result)
    })
}

/// `/rewind TURN`: restores the files the session's turns from `turn` on changed; the report
/// is the answer's text. Not a turn of its own: nothing is stored in the transcript.
async fn rewind(opened: &Opened, session_id: &str, turn: usize) -> Result<String, AcpError> {
    let store = SessionStore::new(&opened.sessions_dir);
    let runs = store.runs_from(session_id, turn).map_err(|e| match e {
        SessionError::NoTurn { .. } => invalid_params(format!("/rewind: {e}")),
        e => AcpError::internal_error().data(format!("session {session_id}: {e}")),
    })?;
    let Some(ws) = &opened.workspace else {
        return Err(invalid_params(
            "/rewind: this session has no workspace to rewind",
        ));
    };
    let report = cairn_workspace::rewind(ws, session_id, runs)
        .await
        .map_err(|e| AcpError::internal_error().data(e))?;
    Ok(report.to_text())
}

/// Runs one turn, streaming its events as updates, and stores it in the session.
async fn turn(
    state: &State,
    cx: &ConnectionTo<Client>,
    session_id: &str,
    session: &Session,
    (first, rest): (String, String),
    cancel: CancellationToken,
) -> Result<PromptResponse, AcpError> {
    let opened = state.open(&session.root, &session.servers, cx).await?;
    state.files_for_session(&session.root, session_id);
    if let Some(turn) = commands::rewind_turn(&first) {
        let text = rewind(&opened, session_id, turn?).await?;
        let update = updates::of_event(&cairn_agent::RunEvent::Text { delta: text });
        if let Some(update) = update
            && let Err(e) =
                cx.send_notification(SessionNotification::new(session_id.to_string(), update))
        {
            tracing::warn!("session/update: {e}");
        }
        return Ok(PromptResponse::new(StopReason::EndTurn));
    }
    // A prompt that starts with `/name` is that command's text; an unknown command or a
    // missing argument ends the prompt with an error naming it.
    let mut message = opened
        .commands
        .expand(&first)
        .await
        .map_err(invalid_params)?;
    message.push_str(&rest);
    let store = SessionStore::new(&opened.sessions_dir);
    let history = store
        .messages(session_id)
        .map_err(|e| AcpError::internal_error().data(format!("session {session_id}: {e}")))?;
    let run_id = uuid::Uuid::new_v4().to_string();
    let approver = approver::ClientApprover {
        cx: cx.clone(),
        session_id: session_id.to_string(),
    };
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let run = opened.agent.run(RunInput {
        session_id: session_id.to_string(),
        run_id: run_id.clone(),
        mode: session.mode,
        history,
        message,
        approver: &approver,
        grants: session.grants.clone(),
        events: tx,
        cancel,
    });
    let forward = async {
        while let Some(event) = rx.recv().await {
            if let Some(update) = updates::of_event(&event)
                && let Err(e) =
                    cx.send_notification(SessionNotification::new(session_id.to_string(), update))
            {
                tracing::warn!("session/update: {e}");
            }
        }
    };
    let (outcome, ()): (RunOutcome, ()) = tokio::join!(run, forward);
    if let Err(e) = store.save_run(session_id, &run_id, session.mode, &outcome) {
        tracing::error!("could not save the transcript: {e}");
    }
    match outcome.result {
        Ok(None) => Ok(PromptResponse::new(StopReason::EndTurn)),
        Ok(Some(cairn_agent::StopReason::ToolBudget)) => {
            Ok(PromptResponse::new(StopReason::MaxTurnRequests))
        }
        Ok(Some(cairn_agent::StopReason::Cancelled)) => {
            Ok(PromptResponse::new(StopReason::Cancelled))
        }
        Ok(Some(cairn_agent::StopReason::Refused)) => Ok(PromptResponse::new(StopReason::Refusal)),
        Err(message) => Err(AcpError::internal_error().data(message)),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn prompt_text_joins_text_and_embedded_files() {
        let blocks: Vec<ContentBlock> = serde_json::from_value(serde_json::json!([
            {"type": "text", "text": "explain"},
            {"type": "resource", "resource": {"uri": "file:///a.rs", "text": "fn a() {}"}}
        ]))
        .unwrap();
        let text = prompt_text(&blocks);
        assert!(text.starts_with("explain"), "{text}");
        assert!(
            text.contains("file:///a.rs") && text.contains("fn a() {}"),
            "{text}"
        );
    }

    #[test]
    fn a_command_is_the_first_text_block_and_attachments_stay_out_of_it() {
        let blocks: Vec<ContentBlock> = serde_json::from_value(serde_json::json!([
            {"type": "text", "text": "/review depth=2"},
            {"type": "resource", "resource": {"uri": "file:///a.rs", "text": "fn a() {}"}}
        ]))
        .unwrap();
        let (first, rest) = split_command(&blocks);
        assert_eq!(first, "/review depth=2");
        assert!(rest.contains("fn a() {}"), "{rest}");
        // Without a text block first there is no command, and the message is whole.
        let (first, rest) = split_command(&blocks[1..]);
        assert_eq!(first, "");
        assert_eq!(rest, prompt_text(&blocks[1..]));
    }

    #[test]
    fn relative_cwd_is_refused_naming_the_field() {
        let e = workspace_root(Path::new("rel")).unwrap_err();
        assert!(format!("{e:?}").contains("cwd"), "{e:?}");
    }
}
