//! The `LanguageServer` implementation: lifecycle, documents, configuration, code actions,
//! commands, and the `cairn/` requests.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use cairn_agent::Agent;
use cairn_agent::policy::{ApprovalAnswer, SessionGrants};
use cairn_config::{Config, Layer, Layers};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;
use tower_lsp_server::jsonrpc::{Error, ErrorCode, Result};
use tower_lsp_server::ls_types::*;
use tower_lsp_server::{Client, LanguageServer, LspService, Server};

use crate::chatdoc;
use crate::documents::{Document, Encoding};
use crate::editor::{Documents, EditorOverlay, PendingApprovals, canonical_path};
use crate::panic::CatchPanic;
use crate::protocol::{
    self, ChatParams, ChatResult, ClientExtensions, InitializationOptions, SessionsParams,
    ToolEntry, ToolsParams, commands,
};
use crate::protocol::{CancelParams as CairnCancelParams, CancelResult};
use crate::runs::{self, Origin};
use crate::{AgentFactory, ServeOptions};

/// A run in flight.
pub(crate) struct RunHandle {
    pub cancel: CancellationToken,
}

/// Per chat session, in memory.
#[derive(Default, Clone)]
pub(crate) struct SessionState {
    pub grants: SessionGrants,
    /// Tools offered in the session's last turn.
    pub last_offered: Vec<String>,
}

/// Everything the handlers share.
pub(crate) struct State {
    pub client: Client,
    pub documents: Arc<Mutex<Documents>>,
    pub encoding: Arc<Mutex<Encoding>>,
    pub roots: Mutex<Vec<PathBuf>>,
    pub layers: Mutex<Layers>,
    pub config: Mutex<Config>,
    pub extensions: Mutex<ClientExtensions>,
    pub factory: Arc<dyn AgentFactory>,
    pub agent: Mutex<Option<std::result::Result<Agent, String>>>,
    pub runs: Mutex<HashMap<String, RunHandle>>,
    pub sessions: Mutex<HashMap<String, SessionState>>,
    /// Approvals waiting for a command (editors without `window/showMessageRequest`).
    pub approvals: Arc<Mutex<PendingApprovals>>,
    /// Configuration problems found before the client could be told.
    pub startup_warnings: Mutex<Vec<String>>,
    /// The client only logs a failed `workspace/executeCommand` (Helix does), so the error is
    /// also shown with `window/showMessage`.
    pub hides_command_errors: std::sync::atomic::AtomicBool,
}

impl State {
    pub fn config(&self) -> Config {
        self.config.lock().map(|c| c.clone()).unwrap_or_default()
    }

    /// `text` as the editor may be shown it: vault values and credential patterns replaced.
    pub fn redact(&self, text: impl Into<String>) -> String {
        let text = text.into();
        match self.factory.redactor() {
            Some(r) => r.redact(&text),
            None => text,
        }
    }

    /// `value` with every string in it redacted, as [`State::redact`].
    pub fn redact_value(&self, value: serde_json::Value) -> serde_json::Value {
        match self.factory.redactor() {
            Some(r) => cairn_agent::redact::redact_json(r.as_ref(), value),
            None => value,
        }
    }

    pub fn encoding(&self) -> Encoding {
        self.encoding.lock().map(|e| *e).unwrap_or_default()
    }

    pub fn roots(&self) -> Vec<PathBuf> {
        self.roots.lock().map(|r| r.clone()).unwrap_or_default()
    }

    pub fn overlay(&self) -> EditorOverlay {
        EditorOverlay {
            documents: self.documents.clone(),
            encoding: self.encoding.clone(),
            client: self.client.clone(),
        }
    }

    /// The agent for the current configuration, built once per change of configuration or roots.
    pub fn agent(&self) -> std::result::Result<Agent, String> {
        let mut cached = self
            .agent
            .lock()
            .map_err(|_| "internal error: agent lock poisoned".to_string())?;
        if let Some(agent) = cached.as_ref() {
            return agent.clone();
        }
        let layers = self.layers.lock().map(|l| l.clone()).unwrap_or_default();
        let built = self.factory.build(
            &self.config(),
            &layers,
            &self.roots(),
            Arc::new(self.overlay()),
        );
        *cached = Some(built.clone());
        built
    }

    /// Recomputes the configuration from the layers; on error the previous one stays.
    fn reload_config(&self) -> std::result::Result<(), String> {
        let layers = self
            .layers
            .lock()
            .map_err(|_| "lock poisoned".to_string())?
            .clone();
        let config = layers.resolve().map_err(|e| e.to_string())?;
        if let Ok(mut c) = self.config.lock() {
            *c = config;
        }
        if let Ok(mut a) = self.agent.lock() {
            *a = None;
        }
        Ok(())
    }

    pub fn session(&self, id: &str) -> SessionState {
        self.sessions
            .lock()
            .map(|mut s| s.entry(id.to_string()).or_default().clone())
            .unwrap_or_default()
    }

    pub fn document_text(&self, uri: &Uri) -> Option<(String, i32)> {
        let docs = self.documents.lock().ok()?;
        docs.by_uri.get(uri).map(|d| (d.text(), d.version))
    }

    /// Cancels every run and ends every MCP server, bounded in time: the process is about to
    /// exit and must leave no child behind.
    pub async fn stop(&self) {
        self.cancel_all();
        if let Some(handle) = self.factory.mcp() {
            let _ = tokio::time::timeout(Duration::from_millis(1500), handle.hub.shutdown()).await;
        }
    }

    pub fn cancel_all(&self) {
        if let Ok(runs) = self.runs.lock() {
            for run in runs.values() {
                run.cancel.cancel();
            }
        }
    }
}

/// The server.
pub(crate) struct Backend {
    pub state: Arc<State>,
    test_faults: bool,
}

fn invalid_params(message: impl Into<String>) -> Error {
    Error {
        code: ErrorCode::InvalidParams,
        message: message.into().into(),
        data: None,
    }
}

fn parse_args<T: serde::de::DeserializeOwned>(command: &str, args: &[Value]) -> Result<T> {
    let first = args.first().cloned().unwrap_or(Value::Null);
    serde_json::from_value(first).map_err(|e| invalid_params(format!("{command}: {e}")))
}

/// `{uri, range}` arguments of the selection commands.
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct SelectionArgs {
    uri: Uri,
    #[serde(default)]
    range: Option<Range>,
}

#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct ApproveToolArgs {
    server: String,
    tool: String,
}

#[derive(serde::Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct ApproveArgs {
    approval_id: String,
    decision: ApprovalAnswer,
}

#[derive(serde::Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct CancelArgs {
    #[serde(default)]
    run_id: Option<String>,
}

impl Backend {
    async fn chat(&self, params: ChatParams) -> Result<ChatResult> {
        runs::start(&self.state, params, Origin::Client).await
    }

    async fn cancel(&self, params: CairnCancelParams) -> Result<CancelResult> {
        let found = self
            .state
            .runs
            .lock()
            .ok()
            .and_then(|runs| runs.get(&params.run_id).map(|r| r.cancel.clone()));
        if let Some(token) = &found {
            token.cancel();
        }
        Ok(CancelResult {
            cancelled: found.is_some(),
        })
    }

    async fn sessions(&self, params: Option<SessionsParams>) -> Result<Value> {
        let params = params.unwrap_or_default();
        let store = cairn_agent::sessions::SessionStore::new(
            self.state.factory.sessions_dir(&self.state.config()),
        );
        match params.session_id {
            None => {
                let list = store.list().map_err(|e| Error {
                    code: ErrorCode::InternalError,
                    message: e.to_string().into(),
                    data: None,
                })?;
                Ok(json!({ "sessions": list }))
            }
            Some(id) => match store.load(&id) {
                Ok(records) => Ok(json!({ "sessionId": id, "records": records })),
                Err(
                    e @ (cairn_agent::sessions::SessionError::NotFound(_)
                    | cairn_agent::sessions::SessionError::InvalidId(_)),
                ) => Err(invalid_params(format!("sessionId: {e}"))),
                Err(e) => Err(Error {
                    code: ErrorCode::InternalError,
                    message: e.to_string().into(),
                    data: None,
                }),
            },
        }
    }

    async fn tools(&self, params: Option<ToolsParams>) -> Result<Value> {
        let params = params.unwrap_or_default();

        let agent = self.state.agent().map_err(|e| Error {
            code: ErrorCode::InternalError,
            message: e.into(),
            data: None,
        })?;
        if let Some(mcp) = self.state.factory.mcp() {
            let limit = Duration::from_secs(self.state.config().mcp.handshake_timeout_secs);
            mcp.hub.settled(limit).await;
        }
        let selected = params
            .session_id
            .map(|id| self.state.session(&id).last_offered)
            .unwrap_or_default();
        let tools: Vec<ToolEntry> = agent
            .tools
            .list()
            .into_iter()
            .map(|t| ToolEntry {
                name: t.tool.name.to_string(),
                description: t
                    .tool
                    .description
                    .as_deref()
                    .unwrap_or_default()
                    .to_string(),
                category: t.category.clone(),
                effect: t.effect,
                agent_only: t.agent_only,
                policy: agent.policy.decide(&t).decision,
                selected: selected.iter().any(|s| s == t.tool.name.as_ref()),
                input_schema: Value::Object((*t.tool.input_schema).clone()),
            })
            .collect();
        Ok(json!({ "tools": tools }))
    }

    /// Replaces one configuration layer and reloads; on an error the user is told and the
    /// previous configuration stays.
    async fn set_layer(
        &self,
        layer: std::result::Result<Option<Layer>, cairn_config::ConfigError>,
        slot: fn(&mut Layers) -> &mut Option<Layer>,
        what: &str,
    ) {
        let result = layer.map_err(|e| e.to_string()).and_then(|layer| {
            if let Ok(mut layers) = self.state.layers.lock() {
                *slot(&mut layers) = layer;
            }
            self.state.reload_config()
        });
        if let Err(e) = result {
            self.state
                .client
                .show_message(
                    MessageType::ERROR,
                    self.state.redact(format!("cairn: {what}: {e}")),
                )
                .await;
        }
    }

    /// Answers a waiting approval; an unknown or already answered id is an error.
    fn answer_approval(&self, approval_id: Option<&str>, decision: ApprovalAnswer) -> Result<bool> {
        let answered = self
            .state
            .approvals
            .lock()
            .map(|mut p| p.answer(approval_id, decision))
            .unwrap_or(false);
        if answered {
            Ok(true)
        } else {
            Err(invalid_params("no approval is waiting for that answer"))
        }
    }

    async fn mcp_resources(&self, _params: Option<Value>) -> Result<Value> {
        let resources = match self.state.factory.mcp() {
            Some(h) => h.hub.resources().await,
            None => Vec::new(),
        };
        Ok(json!({ "resources": resources }))
    }

    async fn mcp_prompts(&self, _params: Option<Value>) -> Result<Value> {
        let prompts = match self.state.factory.mcp() {
            Some(h) => h.hub.prompts().await,
            None => Vec::new(),
        };
        Ok(json!({ "prompts": prompts }))
    }

    async fn debug_panic(&self, _params: Option<Value>) -> Result<Value> {
        if self.test_faults {
            panic!("injected fault");
        }
        Err(Error::method_not_found())
    }
}

impl LanguageServer for Backend {
    async fn initialize(&self, params: InitializeParams) -> Result<InitializeResult> {
        let options: InitializationOptions = match params.initialization_options.clone() {
            Some(v) => serde_json::from_value(v)
                .map_err(|e| invalid_params(format!("initializationOptions: {e}")))?,
            None => InitializationOptions::default(),
        };
        if let Ok(mut ext) = self.state.extensions.lock() {
            *ext = options.capabilities;
        }
        let helix = params
            .client_info
            .as_ref()
            .is_some_and(|c| c.name == "helix");
        self.state
            .hides_command_errors
            .store(helix, std::sync::atomic::Ordering::Relaxed);

        let offers_utf8 = params
            .capabilities
            .general
            .as_ref()
            .and_then(|g| g.position_encodings.as_ref())
            .is_some_and(|encs| encs.contains(&PositionEncodingKind::UTF8));
        let encoding = if offers_utf8 {
            Encoding::Utf8
        } else {
            Encoding::Utf16
        };
        if let Ok(mut e) = self.state.encoding.lock() {
            *e = encoding;
        }

        let mut roots: Vec<PathBuf> = params
            .workspace_folders
            .iter()
            .flatten()
            .filter_map(|f| canonical_path(&f.uri))
            .collect();
        #[allow(deprecated)]
        if roots.is_empty()
            && let Some(path) = params.root_uri.as_ref().and_then(canonical_path)
        {
            roots.push(path);
        }
        // Helix sends only `rootPath` (its working directory) when no root marker of the
        // language is found above the file.
        #[allow(deprecated)]
        if roots.is_empty()
            && let Some(path) = params.root_path.as_deref().filter(|p| !p.is_empty())
        {
            let path = PathBuf::from(path);
            if path.is_absolute() {
                roots.push(std::fs::canonicalize(&path).unwrap_or(path));
            }
        }
        let mut warnings = Vec::new();
        if let Ok(mut layers) = self.state.layers.lock() {
            layers.workspace = match roots.first() {
                Some(root) => {
                    match Layer::from_file(&root.join(".cairn").join("config.toml"), true) {
                        Ok(layer) => layer,
                        Err(e) => {
                            warnings.push(format!("cairn: workspace configuration ignored: {e}"));
                            None
                        }
                    }
                }
                None => None,
            };
            if let Some(config) = &options.config {
                match Layer::from_json(config) {
                    Ok(layer) => layers.client = Some(layer),
                    Err(e) => warnings.push(format!("cairn: editor settings ignored: {e}")),
                }
            }
        }
        if let Ok(mut r) = self.state.roots.lock() {
            *r = roots;
        }
        if let Err(e) = self.state.reload_config() {
            warnings.push(format!("cairn: configuration error: {e}"));
        }
        if let Ok(mut w) = self.state.startup_warnings.lock() {
            w.extend(warnings);
        }

        if let Some(pid) = params.process_id {
            watch_parent(pid, self.state.clone());
        }

        let encoding_kind = match encoding {
            Encoding::Utf8 => PositionEncodingKind::UTF8,
            Encoding::Utf16 => PositionEncodingKind::UTF16,
        };
        Ok(InitializeResult {
            server_info: Some(ServerInfo {
                name: "cairn".into(),
                version: Some(env!("CARGO_PKG_VERSION").into()),
            }),
            capabilities: ServerCapabilities {
                position_encoding: Some(encoding_kind),
                text_document_sync: Some(TextDocumentSyncCapability::Options(
                    TextDocumentSyncOptions {
                        open_close: Some(true),
                        change: Some(TextDocumentSyncKind::INCREMENTAL),
                        ..Default::default()
                    },
                )),
                code_action_provider: Some(CodeActionProviderCapability::Simple(true)),
                execute_command_provider: Some(ExecuteCommandOptions {
                    commands: commands::ALL.iter().map(|c| c.to_string()).collect(),
                    ..Default::default()
                }),
                workspace: Some(WorkspaceServerCapabilities {
                    workspace_folders: Some(WorkspaceFoldersServerCapabilities {
                        supported: Some(true),
                        change_notifications: Some(OneOf::Left(true)),
                    }),
                    file_operations: None,
                }),
                experimental: Some(
                    json!({ "cairn": { "methods": protocol::METHODS, "commands": commands::ALL } }),
                ),
                ..Default::default()
            },
            offset_encoding: None,
        })
    }

    async fn initialized(&self, _: InitializedParams) {
        let warnings = self
            .state
            .startup_warnings
            .lock()
            .map(|mut w| std::mem::take(&mut *w))
            .unwrap_or_default();
        for w in warnings {
            self.state
                .client
                .show_message(MessageType::ERROR, self.state.redact(w))
                .await;
        }
        // Building the agent starts the MCP servers in the background.
        if let Err(e) = self.state.agent() {
            self.state
                .client
                .show_message(MessageType::ERROR, self.state.redact(format!("cairn: {e}")))
                .await;
        }
        if let Some(handle) = self.state.factory.mcp() {
            let delegate = crate::mcp::EditorDelegate {
                state: Arc::downgrade(&self.state),
            };
            handle.hub.set_delegate(Arc::new(delegate));
        }
        crate::mcp::watch(self.state.clone());
        crate::selection::watch(self.state.clone());
    }

    async fn shutdown(&self) -> Result<()> {
        self.state.cancel_all();
        Ok(())
    }

    async fn did_open(&self, params: DidOpenTextDocumentParams) {
        let doc = Document::new(&params.text_document.text, params.text_document.version);
        if let Ok(mut docs) = self.state.documents.lock() {
            docs.open(params.text_document.uri, doc);
        }
    }

    async fn did_change(&self, params: DidChangeTextDocumentParams) {
        let enc = self.state.encoding();
        if let Ok(mut docs) = self.state.documents.lock()
            && let Some(doc) = docs.by_uri.get_mut(&params.text_document.uri)
        {
            for change in &params.content_changes {
                doc.apply_change(change, enc);
            }
            doc.version = params.text_document.version;
        }
    }

    async fn did_close(&self, params: DidCloseTextDocumentParams) {
        if let Ok(mut docs) = self.state.documents.lock() {
            docs.close(&params.text_document.uri);
        }
    }

    async fn did_change_configuration(&self, params: DidChangeConfigurationParams) {
        // VS Code sends `{cairn: {...}}`, Helix repeats `{config: {...}}` from its
        // initialization options, other clients send the settings object itself.
        let settings = params
            .settings
            .get("cairn")
            .or_else(|| params.settings.get("config"))
            .cloned()
            .unwrap_or(params.settings);
        let layer = Layer::from_json(&settings).map(Some);
        self.set_layer(layer, |l| &mut l.client, "settings not applied")
            .await;
    }

    async fn did_change_workspace_folders(&self, params: DidChangeWorkspaceFoldersParams) {
        if let Ok(mut roots) = self.state.roots.lock() {
            let removed: Vec<PathBuf> = params
                .event
                .removed
                .iter()
                .filter_map(|f| canonical_path(&f.uri))
                .collect();
            roots.retain(|r| !removed.contains(r));
            for added in params
                .event
                .added
                .iter()
                .filter_map(|f| canonical_path(&f.uri))
            {
                if !roots.contains(&added) {
                    roots.push(added);
                }
            }
        }
        // The workspace file belongs to the first folder, which may have changed.
        let first = self.state.roots().into_iter().next();
        let layer = match first {
            Some(root) => Layer::from_file(&root.join(".cairn").join("config.toml"), true),
            None => Ok(None),
        };
        self.set_layer(
            layer,
            |l| &mut l.workspace,
            "workspace configuration ignored",
        )
        .await;
        // The built-in tools follow the folders, and MCP servers hear about the new roots.
        let _ = self.state.agent();
        if let Some(handle) = self.state.factory.mcp() {
            handle.hub.notify_roots_changed().await;
        }
    }

    async fn code_action(&self, params: CodeActionParams) -> Result<Option<CodeActionResponse>> {
        let uri = params.text_document.uri;
        let range = params.range;
        let arg = json!({ "uri": uri, "range": range });
        let mut actions = Vec::new();
        let command = |title: &str, name: &str, args: Value| {
            CodeActionOrCommand::CodeAction(CodeAction {
                title: title.into(),
                command: Some(Command {
                    title: title.into(),
                    command: name.into(),
                    arguments: Some(vec![args]),
                }),
                ..Default::default()
            })
        };
        // A waiting approval comes first: in Helix this is how the user answers it.
        let waiting = self.state.approvals.lock().ok().and_then(|p| {
            p.waiting
                .first()
                .map(|w| (w.approval_id.clone(), w.tool.clone()))
        });
        if let Some((approval_id, tool)) = waiting {
            for (title, decision) in [
                (format!("cairn: Allow once `{tool}`"), "allowOnce"),
                (
                    format!("cairn: Allow `{tool}` for this session"),
                    "allowSession",
                ),
                (format!("cairn: Deny `{tool}`"), "deny"),
            ] {
                let args = json!({ "approvalId": approval_id, "decision": decision });
                actions.push(command(&title, commands::APPROVE, args));
            }
        }
        if canonical_path(&uri).is_some_and(|p| chatdoc::is_chat_document(&p)) {
            actions.push(command("Send", commands::SEND, json!({ "uri": uri })));
        }
        actions.push(command("Ask cairn", commands::ASK, arg.clone()));
        actions.push(command("Explain", commands::EXPLAIN, arg.clone()));
        actions.push(command("Fix", commands::FIX, arg));
        Ok(Some(actions))
    }

    async fn execute_command(&self, params: ExecuteCommandParams) -> Result<Option<Value>> {
        let command = params.command.clone();
        let result = self.run_command(params).await;
        if let Err(e) = &result
            && self
                .state
                .hides_command_errors
                .load(std::sync::atomic::Ordering::Relaxed)
        {
            let message = self
                .state
                .redact(format!("cairn: {command}: {}", e.message));
            self.state
                .client
                .show_message(MessageType::ERROR, message)
                .await;
        }
        result
    }
}

impl Backend {
    async fn run_command(&self, params: ExecuteCommandParams) -> Result<Option<Value>> {
        let args = &params.arguments;
        let result = match params.command.as_str() {
            commands::CHAT => {
                let chat: ChatParams = parse_args(commands::CHAT, args)?;
                serde_json::to_value(self.chat(chat).await?).ok()
            }
            commands::SEND => {
                let a: SelectionArgs = parse_args(commands::SEND, args)?;
                serde_json::to_value(runs::send_chat_document(&self.state, a.uri).await?).ok()
            }
            commands::ASK | commands::EXPLAIN | commands::FIX => {
                let a: SelectionArgs = parse_args(&params.command, args)?;
                let started =
                    runs::selection_command(&self.state, &params.command, a.uri, a.range).await?;
                started.and_then(|r| serde_json::to_value(r).ok())
            }
            commands::CANCEL => {
                let a: CancelArgs = if args.is_empty() {
                    CancelArgs { run_id: None }
                } else {
                    parse_args(commands::CANCEL, args)?
                };
                match a.run_id {
                    Some(run_id) => {
                        serde_json::to_value(self.cancel(CairnCancelParams { run_id }).await?).ok()
                    }
                    None => {
                        self.state.cancel_all();
                        Some(json!({ "cancelled": true }))
                    }
                }
            }
            commands::MCP_STATUS => self
                .state
                .factory
                .mcp()
                .map(|h| self.state.redact_value(crate::mcp::status_json(&h))),
            commands::TRUST_WORKSPACE => {
                let Some(root) = self.state.roots().into_iter().next() else {
                    return Err(invalid_params("no workspace folder to trust"));
                };
                let layers = self
                    .state
                    .layers
                    .lock()
                    .map(|l| l.clone())
                    .unwrap_or_default();
                let trusted = self
                    .state
                    .factory
                    .trust_workspace(&self.state.config(), &layers, &root)
                    .map_err(invalid_params)?;
                // Rebuilding applies the trust: the servers start.
                if let Ok(mut a) = self.state.agent.lock() {
                    *a = None;
                }
                let _ = self.state.agent();
                Some(json!({ "trusted": trusted }))
            }
            commands::APPROVE_TOOL => {
                let a: ApproveToolArgs = parse_args(commands::APPROVE_TOOL, args)?;
                let handle = self
                    .state
                    .factory
                    .mcp()
                    .ok_or_else(|| invalid_params("no MCP hub is running"))?;
                handle
                    .reviewer
                    .approve(&a.server, &a.tool)
                    .map_err(invalid_params)?;
                Some(json!({ "approved": true }))
            }
            commands::APPROVE => {
                let a: ApproveArgs = parse_args(commands::APPROVE, args)?;
                Some(json!({ "answered": self.answer_approval(Some(&a.approval_id), a.decision)? }))
            }
            commands::ALLOW_ONCE | commands::ALLOW_SESSION | commands::DENY => {
                let decision = match params.command.as_str() {
                    commands::ALLOW_ONCE => ApprovalAnswer::AllowOnce,
                    commands::ALLOW_SESSION => ApprovalAnswer::AllowSession,
                    _ => ApprovalAnswer::Deny,
                };
                Some(json!({ "answered": self.answer_approval(None, decision)? }))
            }
            other => return Err(invalid_params(format!("unknown command `{other}`"))),
        };
        Ok(result)
    }
}

/// Exits when the editor process dies, as the LSP `processId` asks.
fn watch_parent(pid: u32, state: Arc<State>) {
    tokio::spawn(async move {
        loop {
            tokio::time::sleep(Duration::from_millis(500)).await;
            if !process_alive(pid) {
                tracing::info!(pid, "the editor process is gone; exiting");
                state.stop().await;
                std::process::exit(0);
            }
        }
    });
}

#[cfg(unix)]
fn process_alive(pid: u32) -> bool {
    let Ok(pid) = libc::pid_t::try_from(pid) else {
        return false;
    };
    // Signal 0 only probes. EPERM means it exists under another user.
    #[allow(unsafe_code)]
    let rc = unsafe { libc::kill(pid, 0) };
    rc == 0 || std::io::Error::last_os_error().raw_os_error() == Some(libc::EPERM)
}

#[cfg(not(unix))]
fn process_alive(_pid: u32) -> bool {
    true
}

/// Serves LSP on stdin/stdout until the editor says `exit`, closes stdin, or dies.
pub async fn serve(options: ServeOptions) {
    let ServeOptions {
        layers,
        factory,
        test_faults,
    } = options;
    let initial = layers.resolve().unwrap_or_default();
    let mut builder = LspService::build(|client: Client| Backend {
        state: Arc::new(State {
            client,
            documents: Arc::default(),
            encoding: Arc::default(),
            roots: Mutex::default(),
            layers: Mutex::new(layers.clone()),
            config: Mutex::new(initial.clone()),
            extensions: Mutex::default(),
            factory: factory.clone(),
            agent: Mutex::default(),
            runs: Mutex::default(),
            sessions: Mutex::default(),
            approvals: Arc::default(),
            startup_warnings: Mutex::default(),
            hides_command_errors: Default::default(),
        }),
        test_faults,
    })
    .custom_method(protocol::CHAT, Backend::chat)
    .custom_method(protocol::CANCEL, Backend::cancel)
    .custom_method(protocol::SESSIONS, Backend::sessions)
    .custom_method(protocol::TOOLS, Backend::tools)
    .custom_method(protocol::MCP_RESOURCES, Backend::mcp_resources)
    .custom_method(protocol::MCP_PROMPTS, Backend::mcp_prompts);
    if test_faults {
        builder = builder.custom_method("cairn/debug/panic", Backend::debug_panic);
    }
    let (service, socket) = builder.finish();
    let state = service.inner().state.clone();
    let framing = crate::transport::frame(
        tokio::io::stdin(),
        tokio::io::stdout(),
        crate::transport::MAX_FRAME,
    );
    Server::new(framing.server_input, framing.server_output, socket)
        .serve(CatchPanic(service))
        .await;
    state.stop().await;
    // Let the last replies reach the editor.
    let _ = tokio::time::timeout(Duration::from_millis(500), framing.writer).await;
}
