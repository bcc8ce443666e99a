//! The hub: supervises every MCP server (external and in-process), keeps the catalog of their
//! tools under public names, and routes calls. Servers start in the background; a server that
//! crashes, hangs or misbehaves costs its own tools and nothing else.
//!
//! Supervision rule: a connection that fails (spawn, handshake, crash) counts one failure; the
//! server is restarted after `backoff_base * 2^(failures-1)`, capped at `backoff_max`; after
//! `max_restarts` consecutive failures it is `Failed` with the last reason. A connection that
//! stayed up for `stable_after` resets the count. Failures a restart cannot fix (missing
//! binary, bad configuration, unsupported protocol version) fail at once.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, RwLock, Weak};
use std::time::{Duration, Instant};

use cairn_agent::tools::{CallContext, Effect, ToolHost, ToolInfo, ToolOrigin};
use cairn_config::{McpConfig, McpServerConfig, McpTransport};
use futures::future::BoxFuture;
use rmcp::model::{
    CallToolRequest, CallToolRequestParams, CallToolResult, CancelledNotification,
    CancelledNotificationParam, ClientCapabilities, ClientRequest, ContentBlock, Implementation,
    InitializeRequestParams, ServerResult, Tool,
};
use rmcp::service::{
    ClientInitializeError, NotificationContext, Peer, PeerRequestOptions, QuitReason,
    RunningService, RunningServiceCancellationToken, ServiceError,
};
use rmcp::{ClientHandler, RoleClient, ServerHandler, ServiceExt};
use serde::Serialize;
use tokio::sync::broadcast;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use crate::error::{McpError, fmt_duration};
use crate::http::{ConfiguredHeaders, HeaderSource};
use crate::names::{Collision, NameIndex, is_valid_server_tool_name, public_name};
use crate::stdio::StdioChild;

/// How the hub behaves beyond what `McpConfig` says.
#[derive(Clone)]
pub struct HubOptions {
    /// Names external tools may never take (the built-in tools' names), so no server shadows them.
    pub reserved_names: Vec<String>,
    /// Headers for HTTP servers; the vault plugs in here.
    pub header_source: Arc<dyn HeaderSource>,
    /// OAuth for HTTP servers that answer 401: where tokens are kept and how the user is asked
    /// to sign in when no delegate (the editor) is set.
    pub oauth: crate::oauth::OAuthOptions,
    /// First restart delay; it doubles per consecutive failure.
    pub backoff_base: Duration,
    /// Longest restart delay.
    pub backoff_max: Duration,
    /// A connection that lived this long resets the failure count.
    pub stable_after: Duration,
    /// How long `shutdown` waits for all servers together.
    pub shutdown_timeout: Duration,
}

impl Default for HubOptions {
    fn default() -> Self {
        Self {
            reserved_names: Vec::new(),
            header_source: Arc::new(ConfiguredHeaders),
            oauth: crate::oauth::OAuthOptions::default(),
            backoff_base: Duration::from_millis(500),
            backoff_max: Duration::from_secs(30),
            stable_after: Duration::from_secs(30),
            shutdown_timeout: Duration::from_secs(5),
        }
    }
}

impl std::fmt::Debug for HubOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HubOptions")
            .field("reserved_names", &self.reserved_names)
            .field("oauth", &self.oauth)
            .field("backoff_base", &self.backoff_base)
            .field("backoff_max", &self.backoff_max)
            .field("stable_after", &self.stable_after)
            .field("shutdown_timeout", &self.shutdown_timeout)
            .finish_non_exhaustive()
    }
}

/// Where a server is in its life.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "state", rename_all = "camelCase")]
pub enum ServerState {
    Starting,
    Running { tools: usize },
    Restarting { attempt: u32, reason: String },
    Failed { reason: String },
    Disabled,
}

/// How the hub reaches a server.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum TransportKind {
    Stdio,
    /// Streamable HTTP.
    Http,
    /// Legacy HTTP+SSE.
    Sse,
    /// A built-in server in this process.
    InProcess,
}

/// One server's status, as `cairn mcp status` and `cairn/mcpStatus` show it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ServerStatus {
    pub name: String,
    pub transport: TransportKind,
    /// Flattened: `{"name", "transport", "state": "running", "tools": 3}`.
    #[serde(flatten)]
    pub state: ServerState,
}

/// What the LSP front turns into `cairn/mcpStatus` and `$/progress`.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum HubEvent {
    /// A server changed state.
    Server(ServerStatus),
    /// The set of tools on offer changed (a server came or went, a list changed, a tool was
    /// enabled or disabled).
    CatalogChanged,
}

/// What a built-in server says about one of its tools; built-ins are trusted for this, external
/// servers are not (their tools are always `Execute` in category `mcp:<server>`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolMeta {
    pub effect: Effect,
    pub category: String,
    pub agent_only: bool,
}

/// A tool as its server defined it, next to its public name; the pinning code fingerprints
/// `tool` (name, description, input schema as the server sent them).
#[derive(Debug, Clone)]
pub struct ServerTool {
    pub server: String,
    pub public_name: String,
    pub tool: Tool,
    pub enabled: bool,
    /// Whether it comes from an in-process (built-in) server.
    pub builtin: bool,
}

type ServeFn = Arc<dyn Fn(tokio::io::DuplexStream) -> BoxFuture<'static, ()> + Send + Sync>;
type MetaFn = Arc<dyn Fn(&Tool) -> ToolMeta + Send + Sync>;

#[derive(Clone)]
enum Kind {
    External(Box<McpServerConfig>),
    InProcess { serve: ServeFn, meta: MetaFn },
}

struct Slot {
    kind: Kind,
    transport: TransportKind,
    state: ServerState,
    peer: Option<Peer<RoleClient>>,
    tools: Vec<Tool>,
    /// Identifies the supervisor that owns the slot; a replaced supervisor's late writes are
    /// ignored.
    generation: u64,
    stop: CancellationToken,
    task: Option<JoinHandle<()>>,
}

struct Entry {
    server: String,
    original: String,
    tool: Tool,
    info: ToolInfo,
    builtin: bool,
}

#[derive(Default)]
struct Catalog {
    entries: Vec<Entry>,
    by_name: HashMap<String, usize>,
    /// Names left out because two tools could carry them.
    collisions: BTreeMap<String, Collision>,
}

struct Shared {
    options: HubOptions,
    config: Mutex<McpConfig>,
    servers: Mutex<BTreeMap<String, Slot>>,
    catalog: RwLock<Catalog>,
    disabled_tools: Mutex<HashSet<String>>,
    events: broadcast::Sender<HubEvent>,
    generations: AtomicU64,
    /// Who answers servers' roots, sampling and elicitation requests.
    delegate: RwLock<Option<Arc<dyn crate::delegate::ClientDelegate>>>,
}

/// The MCP hub. Cheap to clone; all clones share the servers.
#[derive(Clone)]
pub struct Hub {
    shared: Arc<Shared>,
}

impl std::fmt::Debug for Hub {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Hub")
            .field("servers", &self.status())
            .finish_non_exhaustive()
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    // A panic while holding one of these locks leaves plain data behind, still usable.
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

fn transport_of(cfg: &McpServerConfig) -> TransportKind {
    match (cfg.transport, cfg.command.is_some()) {
        (Some(McpTransport::Stdio), _) => TransportKind::Stdio,
        (Some(McpTransport::Http), _) => TransportKind::Http,
        (Some(McpTransport::Sse), _) => TransportKind::Sse,
        (None, true) => TransportKind::Stdio,
        (None, false) => TransportKind::Http,
    }
}

impl Hub {
    /// Builds the hub and starts every enabled server in the background; returns at once.
    /// Must be called inside a tokio runtime.
    pub fn new(config: McpConfig, options: HubOptions) -> Hub {
        let (events, _) = broadcast::channel(256);
        let hub = Hub {
            shared: Arc::new(Shared {
                options,
                config: Mutex::new(config.clone()),
                servers: Mutex::new(BTreeMap::new()),
                catalog: RwLock::new(Catalog::default()),
                disabled_tools: Mutex::new(HashSet::new()),
                events,
                generations: AtomicU64::new(1),
                delegate: RwLock::new(None),
            }),
        };
        for (name, cfg) in &config.servers {
            hub.start_slot(name, Kind::External(Box::new(cfg.clone())), cfg.disabled);
        }
        hub
    }

    /// Adds a built-in server, served in this process over an in-memory pipe through the same
    /// client path as external servers. Its tools keep their plain names; `meta` gives each
    /// tool's effect, category and `agent_only`. If the connection ever ends, the server is
    /// started again from a clone of `handler`, however often that takes.
    pub fn add_in_process<H, F>(&self, name: &str, handler: H, meta: F)
    where
        H: ServerHandler + Clone,
        F: Fn(&Tool) -> ToolMeta + Send + Sync + 'static,
    {
        let serve: ServeFn = Arc::new(move |io| {
            let handler = handler.clone();
            Box::pin(async move {
                match handler.serve(io).await {
                    Ok(service) => {
                        let _ = service.waiting().await;
                    }
                    Err(e) => tracing::warn!("built-in MCP server failed to start: {e}"),
                }
            })
        });
        self.start_slot(
            name,
            Kind::InProcess {
                serve,
                meta: Arc::new(meta),
            },
            false,
        );
    }

    /// Applies a new configuration: removed servers stop, added ones start, changed ones (their
    /// entry or the global limits changed) restart, and the rest keep running untouched.
    /// In-process servers are not affected. Returns at once.
    pub fn set_servers(&self, config: McpConfig) {
        let limits_changed = {
            let mut cur = lock(&self.shared.config);
            let strip = |c: &McpConfig| McpConfig {
                servers: BTreeMap::new(),
                ..c.clone()
            };
            let changed = strip(&cur) != strip(&config);
            *cur = config.clone();
            changed
        };
        let existing: Vec<(String, Option<McpServerConfig>)> = lock(&self.shared.servers)
            .iter()
            .map(|(name, slot)| {
                let cfg = match &slot.kind {
                    Kind::External(c) => Some((**c).clone()),
                    Kind::InProcess { .. } => None,
                };
                (name.clone(), cfg)
            })
            .collect();
        for (name, old) in &existing {
            let Some(old) = old else { continue };
            match config.servers.get(name) {
                None => self.remove_slot(name),
                Some(new) if new != old || limits_changed => {
                    self.start_slot(name, Kind::External(Box::new(new.clone())), new.disabled)
                }
                Some(_) => {}
            }
        }
        for (name, cfg) in &config.servers {
            if !existing.iter().any(|(n, _)| n == name) {
                self.start_slot(name, Kind::External(Box::new(cfg.clone())), cfg.disabled);
            }
        }
    }

    /// Every server's status, in name order.
    pub fn status(&self) -> Vec<ServerStatus> {
        lock(&self.shared.servers)
            .iter()
            .map(|(name, slot)| ServerStatus {
                name: name.clone(),
                transport: slot.transport,
                state: slot.state.clone(),
            })
            .collect()
    }

    /// State changes and catalog changes, from now on.
    pub fn subscribe(&self) -> broadcast::Receiver<HubEvent> {
        self.shared.events.subscribe()
    }

    /// Every tool of every running server as the server defined it, with its public name.
    pub fn server_tools(&self) -> Vec<ServerTool> {
        let disabled = lock(&self.shared.disabled_tools).clone();
        let catalog = self
            .shared
            .catalog
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        catalog
            .entries
            .iter()
            .map(|e| ServerTool {
                server: e.server.clone(),
                public_name: e.info.tool.name.to_string(),
                tool: e.tool.clone(),
                enabled: !disabled.contains(e.info.tool.name.as_ref()),
                builtin: e.builtin,
            })
            .collect()
    }

    /// Enables or disables a tool by public name. A disabled tool is not listed and its calls
    /// are refused; the setting survives restarts and catalog refreshes. Returns whether the
    /// setting changed.
    pub fn set_tool_enabled(&self, public_name: &str, enabled: bool) -> bool {
        let changed = {
            let mut disabled = lock(&self.shared.disabled_tools);
            if enabled {
                disabled.remove(public_name)
            } else {
                disabled.insert(public_name.to_owned())
            }
        };
        if changed {
            let _ = self.shared.events.send(HubEvent::CatalogChanged);
        }
        changed
    }

    /// Stops every server and waits for them to end, at most `shutdown_timeout` in all.
    pub async fn shutdown(&self) {
        let tasks: Vec<JoinHandle<()>> = {
            let mut servers = lock(&self.shared.servers);
            servers
                .values_mut()
                .filter_map(|slot| {
                    slot.stop.cancel();
                    slot.task.take()
                })
                .collect()
        };
        let limit = self.shared.options.shutdown_timeout;
        if tokio::time::timeout(limit, futures::future::join_all(tasks))
            .await
            .is_err()
        {
            tracing::warn!(
                "MCP servers did not all stop within {}",
                fmt_duration(limit)
            );
        }
    }

    fn start_slot(&self, name: &str, kind: Kind, disabled: bool) {
        let generation = self.shared.generations.fetch_add(1, Ordering::Relaxed);
        let stop = CancellationToken::new();
        let transport = match &kind {
            Kind::External(cfg) => transport_of(cfg),
            Kind::InProcess { .. } => TransportKind::InProcess,
        };
        let state = if disabled {
            ServerState::Disabled
        } else {
            ServerState::Starting
        };
        let old = {
            let mut servers = lock(&self.shared.servers);
            let old = servers.insert(
                name.to_owned(),
                Slot {
                    kind,
                    transport,
                    state: state.clone(),
                    peer: None,
                    tools: Vec::new(),
                    generation,
                    stop: stop.clone(),
                    task: None,
                },
            );
            if !disabled {
                let shared = self.shared.clone();
                let server = name.to_owned();
                let task = tokio::spawn(async move {
                    let inner =
                        tokio::spawn(supervise(shared.clone(), server.clone(), generation, stop));
                    // A bug in the supervisor must not leave the server shown as running.
                    if let Err(e) = inner.await
                        && e.is_panic()
                    {
                        with_slot(&shared, &server, generation, |slot| {
                            slot.peer = None;
                            slot.tools.clear();
                        });
                        set_state(
                            &shared,
                            &server,
                            generation,
                            ServerState::Failed {
                                reason: "its supervisor panicked (a bug in cairn)".to_owned(),
                            },
                        );
                        rebuild_catalog(&shared);
                    }
                });
                if let Some(slot) = servers.get_mut(name) {
                    slot.task = Some(task);
                }
            }
            old
        };
        if let Some(old) = old {
            old.stop.cancel();
        }
        emit_state(&self.shared, name, transport, state);
        rebuild_catalog(&self.shared);
    }

    fn remove_slot(&self, name: &str) {
        let old = lock(&self.shared.servers).remove(name);
        if let Some(old) = old {
            old.stop.cancel();
        }
        rebuild_catalog(&self.shared);
    }

    async fn call_inner(
        &self,
        name: &str,
        expected: Option<&ToolOrigin>,
        arguments: serde_json::Map<String, serde_json::Value>,
        ctx: CallContext,
    ) -> Result<CallToolResult, (String, McpError)> {
        let (server, original) = {
            let catalog = self
                .shared
                .catalog
                .read()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            if let Some(collision) = catalog.collisions.get(name) {
                return Err((
                    String::new(),
                    McpError::NameCollision(collision.to_string()),
                ));
            }
            let Some(entry) = catalog
                .by_name
                .get(name)
                .and_then(|i| catalog.entries.get(*i))
            else {
                return Err((String::new(), McpError::UnknownTool(name.to_owned())));
            };
            // The caller decided (policy, approval, grant) for one server's tool; if the name
            // now belongs to another (the configuration changed in between), nothing runs.
            if let Some(expected) = expected
                && (expected.server != entry.server || expected.tool != entry.original)
            {
                return Err((
                    String::new(),
                    McpError::ToolMoved {
                        name: name.to_owned(),
                        decided_for: format!(
                            "tool `{}` of server `{}`",
                            expected.tool, expected.server
                        ),
                    },
                ));
            }
            (entry.server.clone(), entry.original.clone())
        };
        if lock(&self.shared.disabled_tools).contains(name) {
            return Err((server, McpError::ToolDisabled(name.to_owned())));
        }
        let (peer, timeout, max_total, in_process) = {
            let servers = lock(&self.shared.servers);
            let config = lock(&self.shared.config);
            let Some(slot) = servers.get(&server) else {
                return Err((server, McpError::NotRunning("removed".to_owned())));
            };
            let Some(peer) = slot.peer.clone() else {
                return Err((server.clone(), McpError::NotRunning(describe(&slot.state))));
            };
            let secs = match &slot.kind {
                Kind::External(cfg) => cfg.call_timeout_secs.unwrap_or(config.call_timeout_secs),
                Kind::InProcess { .. } => config.call_timeout_secs,
            };
            let timeout = Duration::from_secs(secs.max(1));
            let max_total = Duration::from_secs(config.max_call_timeout_secs).max(timeout);
            let in_process = matches!(slot.kind, Kind::InProcess { .. });
            (peer, timeout, max_total, in_process)
        };
        let mut options = PeerRequestOptions::with_timeout(timeout)
            .reset_timeout_on_progress()
            .with_max_total_timeout(max_total);
        options.meta = None;
        let mut params = CallToolRequestParams::new(original).with_arguments(arguments);
        if in_process {
            // Built-in tools learn which chat session, run and call they serve; external
            // servers never see these ids.
            let mut meta = rmcp::model::MetaObject::default();
            for (key, value) in [
                ("cairn/sessionId", &ctx.session_id),
                ("cairn/runId", &ctx.run_id),
                ("cairn/callId", &ctx.call_id),
            ] {
                meta.insert(key.to_owned(), serde_json::Value::String(value.clone()));
            }
            params.meta = Some(rmcp::model::RequestMetaObject(meta));
        }
        let request = ClientRequest::CallToolRequest(CallToolRequest::new(params));
        let fail = |e| (server.clone(), e);
        let handle = peer
            .send_request_with_option(request, options)
            .await
            .map_err(|e| fail(service_error(e, timeout)))?;
        let id = handle.id.clone();
        // rmcp enforces both timeouts; this outer bound only guarantees "never a hang" should a
        // response path ever be lost.
        let guard = max_total + Duration::from_secs(5);
        tokio::select! {
            result = tokio::time::timeout(guard, handle.await_response()) => match result {
                Ok(Ok(ServerResult::CallToolResult(r))) => Ok(r),
                Ok(Ok(_)) => Err(fail(McpError::Protocol(
                    "the server answered tools/call with something other than a tool result"
                        .to_owned(),
                ))),
                Ok(Err(e)) => match service_error(e, timeout) {
                    McpError::Crashed(None) => Err(fail(McpError::Crashed(self.crash_reason(&server).await))),
                    other => Err(fail(other)),
                },
                Err(_) => Err(fail(McpError::CallTimeout(guard))),
            },
            _ = ctx.cancel.cancelled() => {
                let note = CancelledNotification::new(CancelledNotificationParam::new(
                    Some(id),
                    Some("cancelled by the user".to_owned()),
                ));
                let _ = tokio::time::timeout(
                    Duration::from_secs(1),
                    peer.send_notification(note.into()),
                )
                .await;
                Err(fail(McpError::Cancelled))
            }
        }
    }
}

impl Hub {
    /// Why a server's connection just ended, as the supervisor sees it: it notices the end a
    /// moment after the call does, so this waits for it briefly.
    async fn crash_reason(&self, server: &str) -> Option<String> {
        for _ in 0..50 {
            let state = lock(&self.shared.servers)
                .get(server)
                .map(|slot| slot.state.clone());
            match state {
                Some(ServerState::Restarting { reason, .. } | ServerState::Failed { reason }) => {
                    return Some(reason);
                }
                None => return None,
                _ => tokio::time::sleep(Duration::from_millis(10)).await,
            }
        }
        None
    }
}

fn service_error(e: ServiceError, timeout: Duration) -> McpError {
    match e {
        ServiceError::Timeout { timeout: t } => McpError::CallTimeout(t.max(timeout)),
        ServiceError::TransportClosed | ServiceError::TransportSend(_) => McpError::Crashed(None),
        ServiceError::McpError(data) => McpError::Rpc(data.message.to_string()),
        ServiceError::Cancelled { .. } => McpError::Cancelled,
        other => McpError::Protocol(other.to_string()),
    }
}

fn describe(state: &ServerState) -> String {
    match state {
        ServerState::Starting => "still starting".to_owned(),
        ServerState::Running { .. } => "reconnecting".to_owned(),
        ServerState::Restarting { attempt, reason } => {
            format!("restarting (attempt {attempt}) after: {reason}")
        }
        ServerState::Failed { reason } => format!("failed: {reason}"),
        ServerState::Disabled => "disabled in the configuration".to_owned(),
    }
}

fn error_result(text: String) -> CallToolResult {
    CallToolResult::error(vec![ContentBlock::text(text)])
}

impl ToolHost for Hub {
    fn list(&self) -> Vec<ToolInfo> {
        let disabled = lock(&self.shared.disabled_tools).clone();
        let catalog = self
            .shared
            .catalog
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        catalog
            .entries
            .iter()
            .filter(|e| !disabled.contains(e.info.tool.name.as_ref()))
            .map(|e| e.info.clone())
            .collect()
    }

    fn call(
        &self,
        name: &str,
        arguments: serde_json::Map<String, serde_json::Value>,
        ctx: CallContext,
    ) -> BoxFuture<'_, CallToolResult> {
        self.call_as(name, None, arguments, ctx)
    }

    fn call_tool(
        &self,
        info: &ToolInfo,
        arguments: serde_json::Map<String, serde_json::Value>,
        ctx: CallContext,
    ) -> BoxFuture<'_, CallToolResult> {
        self.call_as(info.tool.name.as_ref(), info.origin.clone(), arguments, ctx)
    }

    fn unavailable(&self, name: &str) -> Option<String> {
        self.shared
            .catalog
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .collisions
            .get(name)
            .map(|c| McpError::NameCollision(c.to_string()).to_string())
    }
}

impl Hub {
    /// Names that no tool carries because two tools could, with who claims them.
    pub fn collisions(&self) -> Vec<Collision> {
        self.shared
            .catalog
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .collisions
            .values()
            .cloned()
            .collect()
    }

    fn call_as(
        &self,
        name: &str,
        expected: Option<ToolOrigin>,
        arguments: serde_json::Map<String, serde_json::Value>,
        ctx: CallContext,
    ) -> BoxFuture<'_, CallToolResult> {
        let name = name.to_owned();
        Box::pin(async move {
            match self
                .call_inner(&name, expected.as_ref(), arguments, ctx)
                .await
            {
                Ok(result) => result,
                Err((server, e)) => {
                    let text = if server.is_empty() {
                        format!("{e}")
                    } else {
                        format!("MCP server `{server}`: tool `{name}`: {e}")
                    };
                    error_result(text)
                }
            }
        })
    }
}

fn emit_state(shared: &Shared, name: &str, transport: TransportKind, state: ServerState) {
    let _ = shared.events.send(HubEvent::Server(ServerStatus {
        name: name.to_owned(),
        transport,
        state,
    }));
}

/// Updates a slot if `generation` still owns it; returns whether it did.
fn with_slot(shared: &Shared, name: &str, generation: u64, f: impl FnOnce(&mut Slot)) -> bool {
    let mut servers = lock(&shared.servers);
    match servers.get_mut(name) {
        Some(slot) if slot.generation == generation => {
            f(slot);
            true
        }
        _ => false,
    }
}

fn set_state(shared: &Shared, name: &str, generation: u64, state: ServerState) {
    let mut transport = TransportKind::Stdio;
    let owned = with_slot(shared, name, generation, |slot| {
        slot.state = state.clone();
        transport = slot.transport;
    });
    if owned {
        match &state {
            ServerState::Failed { reason } | ServerState::Restarting { reason, .. } => {
                tracing::warn!(server = %name, "MCP server: {}", describe(&state));
                let _ = reason;
            }
            _ => tracing::info!(server = %name, "MCP server: {state:?}"),
        }
        emit_state(shared, name, transport, state);
    }
}

/// Keeps the tools whose names follow the SEP, once each.
fn accept_tools(server: &str, tools: Vec<Tool>) -> Vec<Tool> {
    let mut seen = HashSet::new();
    tools
        .into_iter()
        .filter(|t| {
            if !is_valid_server_tool_name(&t.name) {
                tracing::warn!(
                    server = %server,
                    "rejecting tool with invalid name {:?}",
                    t.name.chars().take(140).collect::<String>()
                );
                return false;
            }
            if !seen.insert(t.name.to_string()) {
                tracing::warn!(server = %server, tool = %t.name, "rejecting duplicate tool");
                return false;
            }
            true
        })
        .collect()
}

/// Recomputes every public name from the servers' tool lists: built-ins first under their own
/// names, then external tools as `server__tool` ([`crate::names::public_name`], a function of
/// the pair alone). A name two pairs could carry, counting every configured server whether it
/// runs or not, is left out of the catalog and kept in `collisions`, so the hub can say why.
fn rebuild_catalog(shared: &Shared) {
    let mut entries = Vec::new();
    // The catalog is stored while the servers are still locked: two servers coming up at once
    // each rebuild it, and the rebuild that read the older state must not be stored last (a
    // server shown `Running` whose tools are missing from the catalog).
    let servers = lock(&shared.servers);
    let configured: Vec<String> = lock(&shared.config).servers.keys().cloned().collect();
    let mut reserved: HashSet<String> = shared.options.reserved_names.iter().cloned().collect();
    for (name, slot) in servers.iter() {
        if let Kind::InProcess { meta, .. } = &slot.kind {
            for tool in &slot.tools {
                // Built-ins are trusted and always present: a duplicate among them takes the
                // `server__tool` form, which no external tool can then take.
                let public = if reserved.insert(tool.name.to_string()) {
                    tool.name.to_string()
                } else {
                    let public = public_name(name, &tool.name);
                    reserved.insert(public.clone());
                    public
                };
                let m = meta(tool);
                let mut shown = tool.clone();
                shown.name = public.clone().into();
                entries.push(Entry {
                    server: name.clone(),
                    original: tool.name.to_string(),
                    tool: tool.clone(),
                    info: ToolInfo {
                        tool: shown,
                        effect: m.effect,
                        category: m.category,
                        agent_only: m.agent_only,
                        origin: Some(ToolOrigin {
                            server: name.clone(),
                            tool: tool.name.to_string(),
                        }),
                    },
                    builtin: true,
                });
            }
        }
    }
    let external: Vec<(&str, &Tool)> = servers
        .iter()
        .filter(|(_, slot)| matches!(slot.kind, Kind::External(_)))
        .flat_map(|(name, slot)| slot.tools.iter().map(move |t| (name.as_str(), t)))
        .collect();
    let index = NameIndex::build(
        &reserved,
        configured.iter().map(String::as_str),
        external.iter().map(|(s, t)| (*s, t.name.as_ref())),
    );
    for (name, tool) in &external {
        let public = public_name(name, &tool.name);
        if !index.names.contains_key(&public) {
            continue;
        }
        let mut shown = (*tool).clone();
        shown.name = public.into();
        entries.push(Entry {
            server: (*name).to_owned(),
            original: tool.name.to_string(),
            tool: (*tool).clone(),
            info: ToolInfo {
                tool: shown,
                effect: Effect::Execute,
                category: format!("mcp:{name}"),
                agent_only: false,
                origin: Some(ToolOrigin {
                    server: (*name).to_owned(),
                    tool: tool.name.to_string(),
                }),
            },
            builtin: false,
        });
    }
    let by_name = entries
        .iter()
        .enumerate()
        .map(|(i, e)| (e.info.tool.name.to_string(), i))
        .collect();
    let mut catalog = shared
        .catalog
        .write()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    for (name, collision) in &index.collisions {
        if catalog.collisions.get(name) != Some(collision) {
            tracing::warn!("MCP tool names: {collision}");
        }
    }
    *catalog = Catalog {
        entries,
        by_name,
        collisions: index.collisions,
    };
    drop(catalog);
    drop(servers);
    let _ = shared.events.send(HubEvent::CatalogChanged);
}

/// The client side of every connection: it identifies cairn and refreshes the tool list when
/// the server says it changed.
#[derive(Clone)]
struct HubClient {
    shared: Weak<Shared>,
    server: String,
    generation: u64,
}

impl HubClient {
    fn delegate(&self) -> Option<Arc<dyn crate::delegate::ClientDelegate>> {
        let shared = self.shared.upgrade()?;

        shared.delegate.read().ok()?.clone()
    }
}

// Roots and sampling are deprecated by SEP-2577 (a later protocol revision); servers of the
// versions in use today still rely on them.
#[allow(deprecated)]
impl ClientHandler for HubClient {
    fn get_info(&self) -> InitializeRequestParams {
        // Offered always: without a delegate the answers are an empty root list, a refused
        // sampling request and a declined elicitation, which servers handle.
        let capabilities = ClientCapabilities::builder()
            .enable_roots()
            .enable_roots_list_changed()
            .enable_sampling()
            .enable_elicitation()
            .build();
        // The newest revision (2026-07-28) drops the initialize handshake; servers of today
        // speak the last one that has it.
        InitializeRequestParams::new(
            capabilities,
            Implementation::new("cairn", env!("CARGO_PKG_VERSION")),
        )
        .with_protocol_version(rmcp::model::ProtocolVersion::LATEST_WITH_INITIALIZE)
    }

    async fn list_roots(
        &self,
        _context: rmcp::service::RequestContext<RoleClient>,
    ) -> Result<rmcp::model::ListRootsResult, rmcp::ErrorData> {
        let roots = self
            .delegate()
            .map(|d| d.roots())
            .unwrap_or_default()
            .into_iter()
            .map(|(uri, name)| {
                let mut root = rmcp::model::Root::new(uri);
                root.name = Some(name);
                root
            })
            .collect();
        Ok(rmcp::model::ListRootsResult::new(roots))
    }

    async fn create_message(
        &self,
        params: rmcp::model::CreateMessageRequestParams,
        _context: rmcp::service::RequestContext<RoleClient>,
    ) -> Result<rmcp::model::CreateMessageResult, rmcp::ErrorData> {
        let Some(delegate) = self.delegate() else {
            return Err(rmcp::ErrorData::invalid_request(
                "cairn has no user to ask for sampling here",
                None,
            ));
        };
        let messages = params
            .messages
            .iter()
            .map(|m| {
                let role = match m.role {
                    rmcp::model::Role::User => "user",
                    rmcp::model::Role::Assistant => "assistant",
                };
                let text: Vec<String> = m
                    .content
                    .clone()
                    .into_vec()
                    .iter()
                    .map(|c| {
                        c.as_text().map_or_else(
                            || "[non-text content omitted]".to_string(),
                            |t| t.text.clone(),
                        )
                    })
                    .collect();
                (role.to_string(), text.join("\n"))
            })
            .collect();
        let request = crate::delegate::SamplingRequest {
            system: params.system_prompt.clone(),
            messages,
            max_tokens: params.max_tokens,
        };
        match delegate.sample(&self.server, request).await {
            Ok((model, text)) => {
                let mut result = rmcp::model::CreateMessageResult::new(
                    rmcp::model::SamplingMessage::assistant_text(text),
                    model,
                );
                result.stop_reason = Some("endTurn".to_string());
                Ok(result)
            }
            Err(why) => Err(rmcp::ErrorData::invalid_request(why, None)),
        }
    }

    async fn create_elicitation(
        &self,
        request: rmcp::model::ElicitRequestParams,
        _context: rmcp::service::RequestContext<RoleClient>,
    ) -> Result<rmcp::model::ElicitResult, rmcp::ErrorData> {
        use rmcp::model::{ElicitResult, ElicitationAction};
        let value = serde_json::to_value(&request).unwrap_or_default();
        let message = value
            .get("message")
            .and_then(|m| m.as_str())
            .unwrap_or_default()
            .to_string();
        let schema = value.get("requestedSchema").cloned().unwrap_or_default();
        let answer = match self.delegate() {
            Some(d) => d.elicit(&self.server, message, schema).await,
            None => crate::delegate::Elicited::Decline,
        };
        let (action, content) = match answer {
            crate::delegate::Elicited::Accept(content) => {
                (ElicitationAction::Accept, Some(content))
            }
            crate::delegate::Elicited::Decline => (ElicitationAction::Decline, None),
            crate::delegate::Elicited::Cancel => (ElicitationAction::Cancel, None),
        };
        let mut result = ElicitResult::new(action);
        result.content = content;
        Ok(result)
    }

    fn on_tool_list_changed(
        &self,
        context: NotificationContext<RoleClient>,
    ) -> impl Future<Output = ()> + Send + '_ {
        let this = self.clone();
        // The refresh is a request on the same connection; it runs as its own task so the
        // connection's loop, which delivers this notification, stays free to read the answer.
        tokio::spawn(async move {
            let Some(shared) = this.shared.upgrade() else {
                return;
            };
            let timeout = Duration::from_secs(lock(&shared.config).handshake_timeout_secs.max(1));
            match tokio::time::timeout(timeout, context.peer.list_all_tools()).await {
                Ok(Ok(tools)) => {
                    let tools = accept_tools(&this.server, tools);
                    let count = tools.len();
                    let mut transport = TransportKind::Stdio;
                    let mut running = false;
                    let owned = with_slot(&shared, &this.server, this.generation, |slot| {
                        if slot.peer.is_some() {
                            slot.tools = tools;
                            slot.state = ServerState::Running { tools: count };
                            transport = slot.transport;
                            running = true;
                        }
                    });
                    if owned && running {
                        rebuild_catalog(&shared);
                        emit_state(
                            &shared,
                            &this.server,
                            transport,
                            ServerState::Running { tools: count },
                        );
                    }
                }
                Ok(Err(e)) => {
                    tracing::warn!(server = %this.server, "refreshing tools failed: {e}")
                }
                Err(_) => tracing::warn!(server = %this.server, "refreshing tools timed out"),
            }
        });
        std::future::ready(())
    }
}

/// A live connection.
struct Conn {
    peer: Peer<RoleClient>,
    /// What the server answered `initialize` with.
    protocol_version: Option<rmcp::model::ProtocolVersion>,
    quit: JoinHandle<Result<QuitReason, tokio::task::JoinError>>,
    /// A finished `JoinHandle` panics when polled again, so its end is remembered.
    quit_done: bool,
    cancel: Option<RunningServiceCancellationToken>,
    child: Option<StdioChild>,
    max_line_bytes: usize,
    /// The OAuth authorization of an HTTP server, whose sign-ins do not count against the
    /// handshake limit.
    auth: Option<Arc<crate::oauth::Authorizer>>,
}

/// Runs `fut` with `limit`, extended for as long as an OAuth flow of `auth` runs (the user is
/// signing in) or ended less than `limit` ago; `None` when the time ran out.
async fn within_limit<F: std::future::Future>(
    limit: Duration,
    auth: Option<&Arc<crate::oauth::Authorizer>>,
    fut: F,
) -> Option<F::Output> {
    tokio::pin!(fut);
    loop {
        match tokio::time::timeout(limit, &mut fut).await {
            Ok(out) => return Some(out),
            Err(_) if auth.is_some_and(|a| a.busy(limit)) => continue,
            Err(_) => return None,
        }
    }
}

impl Conn {
    fn new(
        service: RunningService<RoleClient, HubClient>,
        child: Option<StdioChild>,
        max_line_bytes: usize,
    ) -> Conn {
        let peer = service.peer().clone();
        let protocol_version = service
            .peer_info()
            .map(|info| info.protocol_version.clone());
        let cancel = Some(service.cancellation_token());
        let quit = tokio::spawn(service.waiting());
        Conn {
            peer,
            protocol_version,
            quit,
            quit_done: false,
            cancel,
            child,
            max_line_bytes,
            auth: None,
        }
    }

    /// Waits until the connection ends (the reason) or `stop` fires (`None`).
    async fn wait_end(&mut self, stop: &CancellationToken) -> Option<String> {
        enum End {
            Quit,
            Exit(std::io::Result<std::process::ExitStatus>),
            Stop,
        }
        let end = match self.child.as_mut() {
            Some(child) => tokio::select! {
                _ = &mut self.quit => End::Quit,
                status = child.child.wait() => End::Exit(status),
                _ = stop.cancelled() => End::Stop,
            },
            None => tokio::select! {
                _ = &mut self.quit => End::Quit,
                _ = stop.cancelled() => End::Stop,
            },
        };
        if matches!(end, End::Quit) {
            self.quit_done = true;
        }
        match end {
            End::Stop => None,
            // An oversized line makes the child fail its writes and exit: that line is the cause.
            End::Exit(_)
                if self
                    .child
                    .as_ref()
                    .is_some_and(|c| c.oversized.load(Ordering::Relaxed)) =>
            {
                Some(oversized_reason(self.max_line_bytes))
            }
            End::Exit(status) => Some(self.exit_reason(status, "while running").await),
            End::Quit => {
                let Some(child) = self.child.as_mut() else {
                    return Some("the connection closed".to_owned());
                };
                if child.oversized.load(Ordering::Relaxed) {
                    return Some(oversized_reason(self.max_line_bytes));
                }
                // The pipe usually closes because the child exited; give it a moment to say how.
                match tokio::time::timeout(Duration::from_secs(1), child.child.wait()).await {
                    Ok(status) => Some(self.exit_reason(status, "while running").await),
                    Err(_) => Some("closed its stdout".to_owned()),
                }
            }
        }
    }

    async fn exit_reason(
        &mut self,
        status: std::io::Result<std::process::ExitStatus>,
        during: &'static str,
    ) -> String {
        let stderr = match self.child.as_mut() {
            Some(child) => child.stderr.last_line().await,
            None => None,
        };
        McpError::Exited {
            status: status_text(status),
            during,
            stderr,
        }
        .to_string()
    }

    /// Closes the connection and ends the child, bounded.
    async fn close(mut self) {
        if let Some(cancel) = self.cancel.take() {
            cancel.cancel();
        }
        if !self.quit_done {
            let _ = tokio::time::timeout(Duration::from_secs(1), &mut self.quit).await;
        }
        self.quit.abort();
        if let Some(mut child) = self.child.take() {
            child.kill(Duration::from_secs(2)).await;
        }
    }
}

fn oversized_reason(max: usize) -> String {
    format!("sent a line longer than the {max}-byte limit (mcp.max_line_bytes)")
}

fn status_text(status: std::io::Result<std::process::ExitStatus>) -> String {
    use std::os::unix::process::ExitStatusExt;
    match status {
        Ok(s) => match (s.code(), s.signal()) {
            (Some(code), _) => format!("status {code}"),
            (None, Some(sig)) => format!("signal {sig}"),
            _ => "an unknown status".to_owned(),
        },
        Err(e) => format!("an unknown status ({e})"),
    }
}

fn init_error(e: ClientInitializeError) -> McpError {
    match e {
        ClientInitializeError::NoCompatibleProtocolVersion {
            server_supported, ..
        } => McpError::Protocol(format!(
            "unsupported protocol version {}",
            server_supported
                .iter()
                .map(|v| v.to_string())
                .collect::<Vec<_>>()
                .join(", ")
        )),
        ClientInitializeError::TransportError { error, .. } => {
            crate::error::auth_failure(&*error.error).unwrap_or_else(|| {
                McpError::Transport(format!(
                    "during initialize: {}",
                    crate::error::chain(&*error.error)
                ))
            })
        }
        other => McpError::Protocol(format!(
            "initialize failed: {}",
            crate::error::chain(&other)
        )),
    }
}

/// Whether a failed streamable-HTTP initialize means "this is a legacy SSE server": the MCP
/// spec's backwards-compatibility rule is an HTTP 4xx to the initialize POST (old servers answer
/// 404 or 405, having no POST route there). 401, 403 and 429 are not: they mean auth or rate
/// limits, which SSE would not fix.
fn wants_sse_fallback(e: &ClientInitializeError) -> bool {
    match crate::http::status_in_error(e) {
        Some(code) => (400..500).contains(&code) && !matches!(code, 401 | 403 | 429),
        None => false,
    }
}

/// Connects, then refuses a server that answered with a protocol version cairn does not know:
/// its messages could mean something else.
async fn connect_checked(
    shared: &Arc<Shared>,
    name: &str,
    generation: u64,
    kind: &Kind,
    config: &McpConfig,
) -> Result<Conn, McpError> {
    let conn = connect(shared, name, generation, kind, config).await?;
    if let Some(version) = conn.protocol_version.clone() {
        let known = rmcp::model::ProtocolVersion::KNOWN_VERSIONS.contains(&version);
        if !known {
            conn.close().await;
            return Err(McpError::Protocol(format!(
                "unsupported protocol version {version}"
            )));
        }
    }
    Ok(conn)
}

/// How long a server has to answer `initialize` and its first `tools/list`. A built-in server
/// is this process's own code and cannot hang on a peer, but on a machine busy with other work
/// (embedding a catalog, a build) it can take longer than an external server is allowed; failing
/// it would leave the turn without its file, git or code tools.
fn handshake_limit(config: &McpConfig, builtin: bool) -> Duration {
    let limit = Duration::from_secs(config.handshake_timeout_secs.max(1));
    if builtin {
        limit.max(Duration::from_secs(60))
    } else {
        limit
    }
}

async fn connect(
    shared: &Arc<Shared>,
    name: &str,
    generation: u64,
    kind: &Kind,
    config: &McpConfig,
) -> Result<Conn, McpError> {
    let handshake = handshake_limit(config, matches!(kind, Kind::InProcess { .. }));
    let client = HubClient {
        shared: Arc::downgrade(shared),
        server: name.to_owned(),
        generation,
    };
    let max_line = config.max_line_bytes.max(1024);
    let cfg = match kind {
        Kind::InProcess { serve, .. } => {
            let (ours, theirs) = tokio::io::duplex(64 * 1024);
            tokio::spawn(serve(theirs));
            let service = tokio::time::timeout(handshake, client.serve(ours))
                .await
                .map_err(|_| McpError::HandshakeTimeout(handshake))?
                .map_err(init_error)?;
            return Ok(Conn::new(service, None, max_line));
        }
        Kind::External(cfg) => cfg,
    };
    match transport_of(cfg) {
        TransportKind::Stdio | TransportKind::InProcess => {
            connect_stdio(name, cfg, client, handshake, max_line).await
        }
        TransportKind::Sse => connect_sse(shared, name, cfg, client, handshake, max_line).await,
        TransportKind::Http => {
            let url = cfg
                .url
                .as_deref()
                .ok_or_else(|| McpError::Config("an HTTP server needs `url`".to_owned()))?;
            let headers = headers_for(shared, name, cfg).await?;
            let auth = authorizer(shared, name, url, cfg);
            let transport = crate::http::streamable(
                url,
                headers,
                max_line,
                auth.clone(),
                shared.options.oauth.max_step_ups,
            )?;
            match within_limit(handshake, auth.as_ref(), client.clone().serve(transport)).await {
                None => Err(McpError::HandshakeTimeout(handshake)),
                Some(Ok(service)) => {
                    let mut conn = Conn::new(service, None, max_line);
                    conn.auth = auth;
                    Ok(conn)
                }
                Some(Err(e)) if cfg.transport.is_none() && wants_sse_fallback(&e) => {
                    tracing::info!(server = %name, "streamable HTTP refused ({e}); trying legacy SSE");
                    with_slot(shared, name, generation, |slot| {
                        slot.transport = TransportKind::Sse
                    });
                    connect_sse(shared, name, cfg, client, handshake, max_line).await
                }
                Some(Err(e)) => Err(init_error(e)),
            }
        }
    }
}

/// OAuth for an HTTP server, unless its configuration sends an `Authorization` header itself
/// (a static token the user chose; a 401 then means that token is wrong).
fn authorizer(
    shared: &Arc<Shared>,
    name: &str,
    url: &str,
    cfg: &McpServerConfig,
) -> Option<Arc<crate::oauth::Authorizer>> {
    if cfg
        .headers
        .keys()
        .any(|k| k.eq_ignore_ascii_case("authorization"))
    {
        return None;
    }
    let mut options = shared.options.oauth.clone();
    options.prompt = Arc::new(HubPrompt {
        shared: Arc::downgrade(shared),
    });
    Some(crate::oauth::Authorizer::new(
        name,
        url,
        cfg.oauth.clone(),
        options,
    ))
}

/// Asks the delegate (the editor, or the conformance client's headless browser) to show an
/// authorization page; without one, the prompt of the hub's options (the terminal).
struct HubPrompt {
    shared: Weak<Shared>,
}

impl crate::oauth::AuthorizationPrompt for HubPrompt {
    fn open<'a>(&'a self, server: &'a str, url: &'a str) -> BoxFuture<'a, Result<(), String>> {
        Box::pin(async move {
            let shared = self
                .shared
                .upgrade()
                .ok_or_else(|| "the hub is gone".to_owned())?;
            let delegate = shared
                .delegate
                .read()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .clone();
            if let Some(shown) = delegate
                .as_ref()
                .and_then(|d| d.open_authorization(server, url))
            {
                return shown.await;
            }
            shared.options.oauth.prompt.open(server, url).await
        })
    }
}

async fn headers_for(
    shared: &Shared,
    name: &str,
    cfg: &McpServerConfig,
) -> Result<HashMap<reqwest13::header::HeaderName, reqwest13::header::HeaderValue>, McpError> {
    let headers = shared
        .options
        .header_source
        .headers(name, &cfg.headers)
        .await
        .map_err(|e| McpError::Config(format!("headers: {e}")))?;
    crate::http::header_map(&headers)
}

async fn connect_sse(
    shared: &Shared,
    name: &str,
    cfg: &McpServerConfig,
    client: HubClient,
    handshake: Duration,
    max_line: usize,
) -> Result<Conn, McpError> {
    let url = cfg
        .url
        .as_deref()
        .ok_or_else(|| McpError::Config("an SSE server needs `url`".to_owned()))?;
    let headers = headers_for(shared, name, cfg).await?;
    let http = crate::http::client()?;
    let service = tokio::time::timeout(handshake, async {
        let transport = crate::sse::connect(http, url, headers, max_line).await?;
        client.serve(transport).await.map_err(init_error)
    })
    .await
    .map_err(|_| McpError::HandshakeTimeout(handshake))??;
    Ok(Conn::new(service, None, max_line))
}

async fn connect_stdio(
    name: &str,
    cfg: &McpServerConfig,
    client: HubClient,
    handshake: Duration,
    max_line: usize,
) -> Result<Conn, McpError> {
    let (transport, mut child) = crate::stdio::spawn(name, cfg, max_line)?;
    let transport = crate::ids::KnownIds::new(transport);
    enum Outcome<T> {
        Served(T),
        Exited(std::io::Result<std::process::ExitStatus>),
    }
    let outcome = {
        let serve = tokio::time::timeout(handshake, client.serve(transport));
        tokio::select! {
            r = serve => Outcome::Served(r),
            s = child.child.wait() => Outcome::Exited(s),
        }
    };
    let err = match outcome {
        Outcome::Served(Ok(Ok(service))) => return Ok(Conn::new(service, Some(child), max_line)),
        Outcome::Served(Err(_)) => McpError::HandshakeTimeout(handshake),
        Outcome::Served(Ok(Err(e))) => {
            if child.oversized.load(Ordering::Relaxed) {
                McpError::Protocol(oversized_reason(max_line))
            } else {
                match tokio::time::timeout(Duration::from_millis(500), child.child.wait()).await {
                    Ok(status) => McpError::Exited {
                        status: status_text(status),
                        during: "during initialize",
                        stderr: child.stderr.last_line().await,
                    },
                    Err(_) => init_error(e),
                }
            }
        }
        Outcome::Exited(status) => McpError::Exited {
            status: status_text(status),
            during: "during initialize",
            stderr: child.stderr.last_line().await,
        },
    };
    child.kill(Duration::from_secs(2)).await;
    Err(err)
}

async fn supervise(shared: Arc<Shared>, name: String, generation: u64, stop: CancellationToken) {
    let mut failures: u32 = 0;
    loop {
        if stop.is_cancelled() {
            return;
        }
        let kind = {
            let servers = lock(&shared.servers);
            match servers.get(&name) {
                Some(slot) if slot.generation == generation => slot.kind.clone(),
                _ => return,
            }
        };
        let builtin = matches!(kind, Kind::InProcess { .. });
        let config = lock(&shared.config).clone();
        let started = Instant::now();
        let attempt = tokio::select! {
            r = connect_checked(&shared, &name, generation, &kind, &config) => r,
            _ = stop.cancelled() => return,
        };
        let reason = match attempt {
            Err(e) => {
                if e.is_permanent() && !builtin {
                    set_state(
                        &shared,
                        &name,
                        generation,
                        ServerState::Failed {
                            reason: e.to_string(),
                        },
                    );
                    return;
                }
                e.to_string()
            }
            Ok(mut conn) => {
                let handshake = handshake_limit(&config, builtin);
                let listed = tokio::select! {
                    r = within_limit(handshake, conn.auth.as_ref(), conn.peer.list_all_tools()) => Some(r.ok_or(())),
                    _ = stop.cancelled() => None,
                };
                match listed {
                    None => {
                        conn.close().await;
                        return;
                    }
                    Some(Err(_)) => {
                        conn.close().await;
                        format!(
                            "did not answer tools/list within {}",
                            fmt_duration(handshake)
                        )
                    }
                    Some(Ok(Err(e))) => {
                        conn.close().await;
                        match crate::error::auth_failure(&e) {
                            Some(auth) if auth.is_permanent() && !builtin => {
                                set_state(
                                    &shared,
                                    &name,
                                    generation,
                                    ServerState::Failed {
                                        reason: auth.to_string(),
                                    },
                                );
                                return;
                            }
                            Some(auth) => auth.to_string(),
                            None => format!("tools/list failed: {e}"),
                        }
                    }
                    Some(Ok(Ok(tools))) => {
                        let tools = accept_tools(&name, tools);
                        let count = tools.len();
                        let peer = conn.peer.clone();
                        with_slot(&shared, &name, generation, |slot| {
                            slot.tools = tools;
                            slot.peer = Some(peer);
                        });
                        // The catalog first: whoever sees `Running` must find the tools.
                        rebuild_catalog(&shared);
                        set_state(
                            &shared,
                            &name,
                            generation,
                            ServerState::Running { tools: count },
                        );
                        let end = conn.wait_end(&stop).await;
                        with_slot(&shared, &name, generation, |slot| {
                            slot.tools.clear();
                            slot.peer = None;
                        });
                        rebuild_catalog(&shared);
                        conn.close().await;
                        match end {
                            None => return,
                            Some(reason) => {
                                if started.elapsed() >= shared.options.stable_after {
                                    failures = 0;
                                }
                                reason
                            }
                        }
                    }
                }
            }
        };
        failures = failures.saturating_add(1);
        if failures > config.max_restarts && !builtin {
            set_state(&shared, &name, generation, ServerState::Failed { reason });
            return;
        }
        set_state(
            &shared,
            &name,
            generation,
            ServerState::Restarting {
                attempt: failures,
                reason,
            },
        );
        let exp = failures.saturating_sub(1).min(16);
        let delay = shared
            .options
            .backoff_base
            .saturating_mul(1u32 << exp)
            .min(shared.options.backoff_max);
        tokio::select! {
            _ = tokio::time::sleep(delay) => {}
            _ = stop.cancelled() => return,
        }
    }
}

impl Hub {
    /// Waits until no server is still in its first start, at most `limit` for external servers
    /// (at least 60 s for built-in ones), so a command run right after start sees the tools of
    /// the servers that came up. Restarting servers are not waited for.
    pub async fn settled(&self, limit: std::time::Duration) {
        let mut events = self.subscribe();
        let start = tokio::time::Instant::now();
        // Built-in servers are this process's own code and cannot hang on a peer; on a loaded
        // machine they may still take longer than an external server's limit, and a turn
        // without the built-in tools is a broken turn. They get a longer bound.
        let external_deadline = start + limit;
        let builtin_deadline = start + limit.max(std::time::Duration::from_secs(60));
        loop {
            let status = self.status();
            let starting = |in_process: bool| {
                status.iter().any(|s| {
                    matches!(s.state, ServerState::Starting)
                        && matches!(s.transport, TransportKind::InProcess) == in_process
                })
            };
            let now = tokio::time::Instant::now();
            let wait_builtin = starting(true) && now < builtin_deadline;
            let wait_external = starting(false) && now < external_deadline;
            if !wait_builtin && !wait_external {
                return;
            }
            let deadline = if wait_external {
                external_deadline.min(builtin_deadline)
            } else {
                builtin_deadline
            };
            // Waking at the external deadline re-evaluates what is still worth waiting for.
            if let Ok(Err(tokio::sync::broadcast::error::RecvError::Closed)) =
                tokio::time::timeout_at(deadline, events.recv()).await
            {
                return;
            }
        }
    }
}

impl Hub {
    /// Sets who answers servers' roots, sampling and elicitation requests.
    pub fn set_delegate(&self, delegate: Arc<dyn crate::delegate::ClientDelegate>) {
        if let Ok(mut d) = self.shared.delegate.write() {
            *d = Some(delegate);
        }
    }

    /// Tells every connected server that the roots changed.
    pub async fn notify_roots_changed(&self) {
        let peers: Vec<Peer<RoleClient>> = lock(&self.shared.servers)
            .values()
            .filter_map(|s| s.peer.clone())
            .collect();
        for peer in peers {
            let _ = tokio::time::timeout(Duration::from_secs(1), peer.notify_roots_list_changed())
                .await;
        }
    }
}

impl Hub {
    /// Connected external servers, by name.
    pub(crate) fn external_peers(&self) -> Vec<(String, Peer<RoleClient>)> {
        lock(&self.shared.servers)
            .iter()
            .filter(|(_, slot)| matches!(slot.kind, Kind::External(_)))
            .filter_map(|(name, slot)| slot.peer.clone().map(|p| (name.clone(), p)))
            .collect()
    }
}
