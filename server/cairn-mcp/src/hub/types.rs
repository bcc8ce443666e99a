//! The hub's public types: its options, a server's state and transport, the status and events
//! it reports, and what is known of each tool; and how a state reads in a message.
//!
//! They sit below every job of the hub (supervision, connections, the catalog, routing), which
//! all take them from here.

use std::sync::Arc;
use std::time::Duration;

use cairn_agent::tools::Effect;
use rmcp::model::Tool;
use serde::Serialize;

use crate::http::{ConfiguredHeaders, HeaderSource};

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

/// What a built-in server says about one of its tools; built-ins are trusted for this, external
/// servers are not (their tools are always `Execute` in category `mcp:<server>`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolMeta {
    pub effect: Effect,
    pub category: String,
    pub agent_only: bool,
}

pub(super) fn describe(state: &ServerState) -> String {
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
