//! What the handlers share: the editor connection, the documents and diagnostics, the
//! configuration and the agent built from it, the runs in flight and the per-session memory.
//!
//! It sits below the handlers, runs and the MCP bridge, and imports none of them, so the
//! modules form no cycle through it; pieces that need only part of it (the document
//! notifications, `cairn/cancel`, the MCP and selection watchers) are given only that part.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use cairn_agent::Agent;
use cairn_agent::policy::SessionGrants;
use cairn_config::{Config, Layers};
use tokio_util::sync::CancellationToken;
use tower_lsp_server::Client;
use tower_lsp_server::ls_types::Uri;

use crate::documents::Encoding;
use crate::editor::{Documents, EditorDiagnostics, EditorOverlay, PendingApprovals};
use crate::factory::AgentFactory;
use crate::protocol::ClientExtensions;

/// The runs in flight, by run id.
pub(crate) type Runs = Mutex<HashMap<String, RunHandle>>;

/// `text` as the editor may be shown it: vault values and credential patterns replaced.
pub(crate) fn redact(factory: &dyn AgentFactory, text: impl Into<String>) -> String {
    let text = text.into();
    match factory.redactor() {
        Some(r) => r.redact(&text),
        None => text,
    }
}

/// `value` with every string in it redacted, as [`redact`].
pub(crate) fn redact_value(
    factory: &dyn AgentFactory,
    value: serde_json::Value,
) -> serde_json::Value {
    match factory.redactor() {
        Some(r) => cairn_agent::redact::redact_json(r.as_ref(), value),
        None => value,
    }
}

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
    /// The diagnostics the editor sent (`cairn/diagnostics`), for the tools.
    pub diagnostics: Arc<EditorDiagnostics>,
    pub roots: Mutex<Vec<PathBuf>>,
    pub layers: Mutex<Layers>,
    pub config: Mutex<Config>,
    pub extensions: Mutex<ClientExtensions>,
    pub factory: Arc<dyn AgentFactory>,
    pub agent: Mutex<Option<std::result::Result<Agent, String>>>,
    pub runs: Runs,
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
        redact(self.factory.as_ref(), text)
    }

    /// `value` with every string in it redacted, as [`State::redact`].
    pub fn redact_value(&self, value: serde_json::Value) -> serde_json::Value {
        redact_value(self.factory.as_ref(), value)
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
            diagnostics: self.diagnostics.clone(),
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
    pub fn reload_config(&self) -> std::result::Result<(), String> {
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
        cancel_all(&self.runs);
    }
}

/// Cancels every run in flight.
pub(crate) fn cancel_all(runs: &Runs) {
    if let Ok(runs) = runs.lock() {
        for run in runs.values() {
            run.cancel.cancel();
        }
    }
}
