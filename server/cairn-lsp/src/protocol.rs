//! The `cairn/` extensions to LSP: method names and the shapes of their parameters and results.
//!
//! Documented in `docs/lsp-extensions.md`; a test keeps that file in step with this one (it
//! records this file's hash). Fields may be added; these shapes are never changed.

use cairn_agent::Mode;
use serde::{Deserialize, Serialize};
use tower_lsp_server::ls_types::{Range, Uri};

/// Request, client to server: start a run. Answers at once.
pub const CHAT: &str = "cairn/chat";
/// Request, client to server: cancel a run.
pub const CANCEL: &str = "cairn/cancel";
/// Request, client to server: list sessions, or load one transcript.
pub const SESSIONS: &str = "cairn/sessions";
/// Request, client to server: the tool catalog.
pub const TOOLS: &str = "cairn/tools";
/// Notification, server to client: one event of a run.
pub const RUN_EVENT: &str = "cairn/runEvent";
/// Request, server to client: ask the user to approve a tool call (only for clients that
/// announced `capabilities.approvals` in `initializationOptions`).
pub const APPROVE: &str = "cairn/approve";

/// Notification, server to client: the MCP servers' states, what waits for trust, and the tools
/// waiting for review. Sent on every change.
pub const MCP_STATUS: &str = "cairn/mcpStatus";

/// Every `cairn/` method, for the `experimental` capability and the documentation test.
pub const METHODS: &[&str] = &[
    CHAT,
    CANCEL,
    SESSIONS,
    TOOLS,
    RUN_EVENT,
    APPROVE,
    MCP_STATUS,
    MCP_RESOURCES,
    MCP_PROMPTS,
    ELICIT,
];

/// Request, client to server: the resources (and resource templates) the MCP servers offer.
pub const MCP_RESOURCES: &str = "cairn/mcpResources";
/// Request, client to server: the prompts the MCP servers offer, for slash commands.
pub const MCP_PROMPTS: &str = "cairn/mcpPrompts";
/// Request, server to client: an MCP server asks the user for input (only for clients that
/// announced `capabilities.elicitation`).
pub const ELICIT: &str = "cairn/elicit";

/// Commands for `workspace/executeCommand` (and code actions), for clients that cannot send
/// custom requests (Helix).
pub mod commands {
    /// Arguments: one `ChatParams` object. Result: `ChatResult`.
    pub const CHAT: &str = "cairn.chat";
    /// Arguments: `{uri, range}`. Opens a chat document quoting the selection.
    pub const ASK: &str = "cairn.ask";
    /// Arguments: `{uri, range}`. Explains the selection in a chat document.
    pub const EXPLAIN: &str = "cairn.explain";
    /// Arguments: `{uri, range}`. Runs the agent to fix the selection; the edits go to the buffer.
    pub const FIX: &str = "cairn.fix";
    /// Arguments: `{uri}` of a chat document. Sends its last `## You` section.
    pub const SEND: &str = "cairn.send";
    /// Arguments: `{runId}`, or none to cancel every run.
    pub const CANCEL: &str = "cairn.cancel";
    /// Arguments: `{approvalId, decision}` with `decision` one of `allowOnce`, `allowSession`,
    /// `deny`. Answers an approval that is waiting for a command (editors without
    /// `window/showMessageRequest`).
    pub const APPROVE: &str = "cairn.approve";
    /// No arguments: allow the oldest waiting approval once.
    pub const ALLOW_ONCE: &str = "cairn.allowOnce";
    /// No arguments: allow the oldest waiting approval's tool for the session.
    pub const ALLOW_SESSION: &str = "cairn.allowSession";
    /// No arguments: deny the oldest waiting approval.
    pub const DENY: &str = "cairn.deny";
    /// No arguments. Result: the same object as the `cairn/mcpStatus` notification.
    pub const MCP_STATUS: &str = "cairn.mcpStatus";
    /// No arguments: the MCP servers this workspace declares may start, as they are now.
    pub const TRUST_WORKSPACE: &str = "cairn.trustWorkspace";
    /// Arguments: `{server, tool}`. Approves a tool's current definition after a change or a
    /// poisoning flag; it is pinned and enabled.
    pub const APPROVE_TOOL: &str = "cairn.approveTool";
    pub const ALL: &[&str] = &[
        CHAT,
        ASK,
        EXPLAIN,
        FIX,
        SEND,
        CANCEL,
        APPROVE,
        ALLOW_ONCE,
        ALLOW_SESSION,
        DENY,
        MCP_STATUS,
        TRUST_WORKSPACE,
        APPROVE_TOOL,
    ];
}

/// `initializationOptions`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct InitializationOptions {
    /// Configuration, the same keys as `config.toml`.
    pub config: Option<serde_json::Value>,
    pub capabilities: ClientExtensions,
}

/// What the client handles itself.
#[derive(Debug, Clone, Copy, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct ClientExtensions {
    /// The client answers `cairn/approve` with its own approval UI.
    pub approvals: bool,
    /// The client answers `cairn/elicit` with a form.
    pub elicitation: bool,
}

/// `cairn/chat` parameters.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ChatParams {
    pub message: String,
    #[serde(default)]
    pub session_id: Option<String>,
    #[serde(default)]
    pub mode: Option<Mode>,
    #[serde(default)]
    pub context: Option<ChatContext>,
    /// MCP resources to attach as context.
    #[serde(default)]
    pub attachments: Option<Vec<ResourceRef>>,
}

/// One MCP resource, by server and URI.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ResourceRef {
    pub server: String,
    pub uri: String,
}

/// `cairn/elicit` parameters (server to client).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ElicitParams {
    pub server: String,
    pub message: String,
    /// A JSON schema of a flat object; `default`s are suggestions.
    pub requested_schema: serde_json::Value,
}

/// `cairn/elicit` result: `action` is `accept` (with `content`), `decline` or `cancel`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ElicitResult {
    pub action: String,
    #[serde(default)]
    pub content: Option<serde_json::Value>,
}

/// Editor context attached to a message.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ChatContext {
    pub uri: Uri,
    #[serde(default)]
    pub range: Option<Range>,
}

/// `cairn/chat` result.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ChatResult {
    pub run_id: String,
    pub session_id: String,
}

/// `cairn/cancel` parameters.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CancelParams {
    pub run_id: String,
}

/// `cairn/cancel` result: whether a running run was found.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CancelResult {
    pub cancelled: bool,
}

/// `cairn/sessions` parameters: without `sessionId` the list, with it one transcript.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SessionsParams {
    #[serde(default)]
    pub session_id: Option<String>,
}

/// `cairn/tools` parameters.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ToolsParams {
    #[serde(default)]
    pub session_id: Option<String>,
}

/// One tool in `cairn/tools`.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolEntry {
    pub name: String,
    pub description: String,
    pub category: String,
    pub effect: cairn_agent::tools::Effect,
    pub agent_only: bool,
    /// `allow`, `ask` or `deny` under the current policy.
    pub policy: cairn_agent::policy::Decision,
    /// Offered to the model in the session's last turn.
    pub selected: bool,
    pub input_schema: serde_json::Value,
}

/// `cairn/approve` parameters (server to client).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ApproveParams {
    pub approval_id: String,
    pub run_id: String,
    pub call_id: String,
    pub tool: String,
    pub arguments: serde_json::Value,
    pub args_hash: String,
    pub reason: String,
    /// The tool's own description, in full.
    pub description: String,
    /// What the client may answer (`allowSession` is not offered for protected paths).
    pub options: Vec<cairn_agent::policy::ApprovalAnswer>,
    /// Protected paths (secrets, files that run code) this approval is for: the user approves
    /// these very paths, once.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub protected_paths: Vec<String>,
}

/// `cairn/approve` result: it must echo `approvalId`, `runId` and `callId`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ApproveResult {
    pub approval_id: String,
    pub run_id: String,
    pub call_id: String,
    pub decision: cairn_agent::policy::ApprovalAnswer,
}

/// `cairn/runEvent` parameters: the run id and one event, flattened.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RunEventParams {
    pub run_id: String,
    #[serde(flatten)]
    pub event: cairn_agent::RunEvent,
}
