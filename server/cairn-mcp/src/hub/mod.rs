//! The hub: supervises every MCP server (external and in-process), keeps the catalog of their
//! tools under public names, and routes calls. Servers start in the background; a server that
//! crashes, hangs or misbehaves costs its own tools and nothing else.
//!
//! This module holds the [`Hub`] type and its public API; its options and status types are in
//! `types`, a server's slot in `slot`, and the state its jobs share (the server slots, the
//! catalog, the delegate) in `shared`. The jobs are one module each: `supervise` (starting
//! servers, restarting them with backoff), `connect` (the transports and their handshake),
//! `conn` (a live connection and why it ended), `catalog` (the public names), `client` (cairn's
//! side of each connection) and `host` (the hub as the agent's `ToolHost`: routing calls).

mod catalog;
mod client;
mod conn;
mod connect;
mod host;
mod shared;
mod slot;
mod supervise;
mod types;

use std::collections::{BTreeMap, HashSet};
use std::sync::atomic::AtomicU64;
use std::sync::{Arc, Mutex, RwLock};
use std::time::Duration;

use cairn_config::{McpConfig, McpServerConfig};
use rmcp::model::Tool;
use rmcp::service::Peer;
use rmcp::{RoleClient, ServerHandler, ServiceExt};
use tokio::sync::broadcast;
use tokio::task::JoinHandle;

use crate::error::fmt_duration;
use crate::names::Collision;

use catalog::Catalog;
use shared::{Shared, lock};
use slot::{Kind, ServeFn};
pub use types::{
    HubEvent, HubOptions, ServerState, ServerStatus, ServerTool, ToolMeta, TransportKind,
};

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

    /// Serves a built-in tool host in-process as server `name` (through [`ToolServer`]); its
    /// tools keep their plain names and the effects, categories and `agent_only` the host
    /// declares, which are trusted for built-ins only (an external server's never are).
    pub fn add_builtin<H: cairn_agent::tools::ToolHost + Clone + 'static>(
        &self,
        name: &'static str,
        host: H,
    ) {
        let server = crate::in_process::ToolServer::new(name, host);
        let infos = server.infos();
        self.add_in_process(name, server, move |tool| {
            let info = infos.iter().find(|i| i.tool.name == tool.name);
            ToolMeta {
                effect: info.map_or(cairn_agent::tools::Effect::Execute, |i| i.effect),
                category: info.map_or_else(|| "builtin".to_string(), |i| i.category.clone()),
                agent_only: info.is_some_and(|i| i.agent_only),
            }
        });
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
