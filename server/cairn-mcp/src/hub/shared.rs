//! The state every job of the hub shares ([`Shared`]: options, configuration, the server slots,
//! the catalog, the event channel, the delegate) and the few operations on it that several jobs
//! use: updating a slot its supervisor owns, announcing a state, rebuilding the catalog.
//!
//! Apart from `mod.rs` and below the jobs, so supervision, connections and the client side
//! import it without importing each other.

use std::collections::{BTreeMap, HashSet};
use std::sync::atomic::AtomicU64;
use std::sync::{Arc, Mutex, RwLock};

use cairn_config::McpConfig;
use tokio::sync::broadcast;

use super::catalog::Catalog;
use super::slot::Slot;
use super::types::{HubEvent, HubOptions, ServerState, ServerStatus, TransportKind, describe};

/// What every clone of the hub and every job shares.
pub(super) struct Shared {
    pub(super) options: HubOptions,
    pub(super) config: Mutex<McpConfig>,
    pub(super) servers: Mutex<BTreeMap<String, Slot>>,
    pub(super) catalog: RwLock<Catalog>,
    pub(super) disabled_tools: Mutex<HashSet<String>>,
    pub(super) events: broadcast::Sender<HubEvent>,
    pub(super) generations: AtomicU64,
    /// Who answers servers' roots, sampling and elicitation requests.
    pub(super) delegate: RwLock<Option<Arc<dyn crate::delegate::ClientDelegate>>>,
}

pub(super) fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    // A panic while holding one of these locks leaves plain data behind, still usable.
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

pub(super) fn emit_state(
    shared: &Shared,
    name: &str,
    transport: TransportKind,
    state: ServerState,
) {
    let _ = shared.events.send(HubEvent::Server(ServerStatus {
        name: name.to_owned(),
        transport,
        state,
    }));
}

/// Updates a slot if `generation` still owns it; returns whether it did.
pub(super) fn with_slot(
    shared: &Shared,
    name: &str,
    generation: u64,
    f: impl FnOnce(&mut Slot),
) -> bool {
    let mut servers = lock(&shared.servers);
    match servers.get_mut(name) {
        Some(slot) if slot.generation == generation => {
            f(slot);
            true
        }
        _ => false,
    }
}

pub(super) fn set_state(shared: &Shared, name: &str, generation: u64, state: ServerState) {
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

/// Rebuilds the catalog from the servers' tool lists ([`Catalog::build`]), logs each new
/// collision, and announces the change.
pub(super) fn rebuild_catalog(shared: &Shared) {
    // The catalog is stored while the servers are still locked: two servers coming up at once
    // each rebuild it, and the rebuild that read the older state must not be stored last (a
    // server shown `Running` whose tools are missing from the catalog).
    let servers = lock(&shared.servers);
    let configured: Vec<String> = lock(&shared.config).servers.keys().cloned().collect();
    let reserved: HashSet<String> = shared.options.reserved_names.iter().cloned().collect();
    let fresh = Catalog::build(&servers, &configured, reserved);
    let mut catalog = shared
        .catalog
        .write()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    for (name, collision) in &fresh.collisions {
        if catalog.collisions.get(name) != Some(collision) {
            tracing::warn!("MCP tool names: {collision}");
        }
    }
    *catalog = fresh;
    drop(catalog);
    drop(servers);
    let _ = shared.events.send(HubEvent::CatalogChanged);
}
