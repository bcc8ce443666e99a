//! What the user must look at before an external tool reaches the model: tools whose
//! definition changed since it was pinned (rug pulls), and tools whose text looks like an
//! attack on the model (poisoning).
//!
//! A tool is pinned the first time cairn sees it from a server the user configured (or, for a
//! workspace's own servers, trusted): configuring the server is the user's approval. From then
//! on a different fingerprint, also after a restart or after the tool vanished and came back,
//! disables the tool until the user approves the new definition, and the review says what
//! changed. A tool with suspicious text is disabled until the user approves it.

use std::sync::{Arc, Mutex};

use serde::Serialize;

use crate::hub::{Hub, HubEvent};
use crate::pinning::{PinState, PinStore, Severity, inspect};

/// Why a tool waits for the user.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(
    tag = "kind",
    rename_all = "camelCase",
    rename_all_fields = "camelCase"
)]
pub enum ReviewReason {
    /// The definition differs from the approved one.
    Changed { diff: String },
    /// The definition has instruction-like or hidden content.
    Flagged { flags: Vec<String> },
}

/// A tool disabled until the user approves it.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Review {
    pub server: String,
    pub tool: String,
    pub public_name: String,
    pub reason: ReviewReason,
}

/// Keeps the hub's external tools in line with the pins.
#[derive(Clone)]
pub struct Reviewer {
    hub: Hub,
    store: Arc<Mutex<PinStore>>,
    pending: Arc<Mutex<Vec<Review>>>,
}

impl Reviewer {
    /// Watches `hub`'s catalog; pins live in `store`.
    pub fn start(hub: Hub, store: PinStore) -> Reviewer {
        let reviewer = Reviewer {
            hub,
            store: Arc::new(Mutex::new(store)),
            pending: Arc::default(),
        };
        let mut events = reviewer.hub.subscribe();
        reviewer.check_all();
        let watcher = reviewer.clone();
        tokio::spawn(async move {
            loop {
                match events.recv().await {
                    Ok(HubEvent::CatalogChanged)
                    | Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => {
                        watcher.check_all()
                    }
                    Ok(_) => {}
                    Err(tokio::sync::broadcast::error::RecvError::Closed) => break,
                }
            }
        });
        reviewer
    }

    /// Tools waiting for the user.
    pub fn pending(&self) -> Vec<Review> {
        self.pending.lock().map(|p| p.clone()).unwrap_or_default()
    }

    /// Checks every external tool against its pin and its text.
    pub fn check_all(&self) {
        let Ok(mut store) = self.store.lock() else {
            return;
        };
        let mut pending = Vec::new();
        for st in self.hub.server_tools() {
            if st.builtin {
                continue;
            }
            let tool_name = st.tool.name.to_string();
            let reason = match store.check(&st.server, &st.tool) {
                PinState::Approved => None,
                PinState::Changed { diff } => Some(ReviewReason::Changed { diff }),
                PinState::New => {
                    let suspicious: Vec<String> = inspect(&st.tool)
                        .into_iter()
                        .filter(|f| f.severity == Severity::Suspicious)
                        .map(|f| f.to_string())
                        .collect();
                    if suspicious.is_empty() {
                        if let Err(e) = store.approve(&st.server, &st.tool) {
                            tracing::warn!("could not pin {}: {e}", st.public_name);
                        }
                        None
                    } else {
                        Some(ReviewReason::Flagged { flags: suspicious })
                    }
                }
            };
            let enabled = reason.is_none();
            if self.hub.set_tool_enabled(&st.public_name, enabled) && !enabled {
                tracing::warn!(tool = %st.public_name, "MCP tool disabled until the user reviews it");
            }
            if let Some(reason) = reason {
                pending.push(Review {
                    server: st.server,
                    tool: tool_name,
                    public_name: st.public_name,
                    reason,
                });
            }
        }
        if let Ok(mut p) = self.pending.lock() {
            *p = pending;
        }
    }

    /// The user approves a tool's current definition: it is pinned and enabled.
    pub fn approve(&self, server: &str, tool: &str) -> Result<(), String> {
        let found = self
            .hub
            .server_tools()
            .into_iter()
            .find(|t| t.server == server && t.tool.name == tool);
        let Some(st) = found else {
            return Err(format!("no tool `{tool}` on MCP server `{server}`"));
        };
        {
            let mut store = self
                .store
                .lock()
                .map_err(|_| "pin store unavailable".to_string())?;
            store.approve(server, &st.tool).map_err(|e| e.to_string())?;
        }
        self.check_all();
        Ok(())
    }
}
