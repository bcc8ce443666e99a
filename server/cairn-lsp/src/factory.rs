//! What the binary hands the language server: the [`AgentFactory`] that builds the agent and
//! its tools from configuration, and the [`McpHandle`] it returns for the MCP side.
//!
//! It lives apart from `lib.rs` so the modules that call the factory import it from here, not
//! from the crate root that declares them.

use std::path::PathBuf;
use std::sync::Arc;

use cairn_agent::Agent;
use cairn_config::{Config, Layers};
use cairn_workspace::DocumentOverlay;

/// The MCP side of the tools, for status, reviews and trust.
#[derive(Clone)]
pub struct McpHandle {
    pub hub: cairn_mcp::Hub,
    pub reviewer: cairn_mcp::Reviewer,
    /// The scope the built-in tools write through (with its checkpoints), for rewinds; `None`
    /// without workspace roots.
    pub workspace: Option<Arc<cairn_workspace::Workspace>>,
    /// Servers the workspace declares that wait for the user's trust.
    pub waiting_for_trust: Vec<String>,
    /// Servers whose entry could not be used (for example an unset variable), with why.
    pub problems: Vec<(String, String)>,
    /// The workspace roots the built-in tools serve.
    pub roots: Vec<std::path::PathBuf>,
    /// The user and access rules the built-in tools were built with; they restart when it changes.
    pub access_key: String,
    /// Approvals of protected paths, held while the call they were given for runs.
    pub path_approvals: Arc<cairn_workspace::ExactApprovals>,
    /// The model built-in tools ask for completions of their own; the agent factory sets it to
    /// the agent's model each time it builds one.
    pub model: cairn_agent::model::SharedModel,
}

/// Builds the pieces the front needs from configuration; the binary implements it, so this crate
/// does not know which model provider or tools exist.
pub trait AgentFactory: Send + Sync {
    /// The agent for this configuration and these workspace roots. An error is shown to the user.
    /// MCP servers start in the background; this returns at once.
    fn build(
        &self,
        config: &Config,
        layers: &Layers,
        roots: &[PathBuf],
        overlay: Arc<dyn DocumentOverlay>,
    ) -> Result<Agent, String>;
    /// The MCP hub, once `build` made it.
    fn mcp(&self) -> Option<McpHandle>;
    /// Trusts the MCP servers the workspace at `root` declares, as they are now.
    fn trust_workspace(
        &self,
        config: &Config,
        layers: &Layers,
        root: &std::path::Path,
    ) -> Result<Vec<String>, String>;
    /// Where transcripts are kept under this configuration.
    fn sessions_dir(&self, config: &Config) -> PathBuf;
    /// What every text the editor is shown passes (`cairn/runEvent` is redacted by the agent).
    fn redactor(&self) -> Option<Arc<dyn cairn_agent::redact::Redact>> {
        None
    }
    /// Calls `listener` whenever the tool-selection model's state changes, and once with the
    /// state it has now (when it has one).
    fn watch_selection(
        &self,
        _listener: Arc<dyn Fn(cairn_agent::select::RankerStatus) + Send + Sync>,
    ) {
    }
    /// Calls `listener` with what a model running on this machine is doing (the notice that the
    /// default one answers, its download and load), and once with the state it has now.
    fn watch_model(
        &self,
        _listener: Arc<dyn Fn(&cairn_agent::model::ProviderStatus) + Send + Sync>,
    ) {
    }
}
