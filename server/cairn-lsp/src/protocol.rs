//! The `cairn/` extensions to LSP: one type per method, holding its name, its parameters and its
//! result (as `Request` or `Notification`, like rust-analyzer's `lsp/ext.rs`), and those shapes.
//!
//! Documented in `docs/lsp-extensions.md`; a test keeps that file in step with this one (it
//! records this file's hash), and `tests/protocol_ts.rs` keeps the VS Code extension's
//! `protocol.ts` in step (method names and field names). Fields may be added; these shapes are
//! never changed.

use cairn_agent::Mode;
use serde::{Deserialize, Serialize};
use tower_lsp_server::ls_types::notification::Notification;
use tower_lsp_server::ls_types::request::Request;
use tower_lsp_server::ls_types::{Diagnostic, Range, Uri};

/// `cairn/chat`, client to server: start a run. Answers at once.
pub enum ChatRequest {}

impl Request for ChatRequest {
    type Params = ChatParams;
    type Result = ChatResult;
    const METHOD: &'static str = "cairn/chat";
}

/// `cairn/cancel`, client to server: cancel a run.
pub enum CancelRequest {}

impl Request for CancelRequest {
    type Params = CancelParams;
    type Result = CancelResult;
    const METHOD: &'static str = "cairn/cancel";
}

/// `cairn/sessions`, client to server: list sessions, or load one transcript. `params` may be
/// `null`.
pub enum SessionsRequest {}

impl Request for SessionsRequest {
    type Params = Option<SessionsParams>;
    type Result = SessionsResult;
    const METHOD: &'static str = "cairn/sessions";
}

/// `cairn/tools`, client to server: the tool catalog. `params` may be `null`.
pub enum ToolsRequest {}

impl Request for ToolsRequest {
    type Params = Option<ToolsParams>;
    type Result = ToolsResult;
    const METHOD: &'static str = "cairn/tools";
}

/// `cairn/context`, client to server: the project rules files that reach the system prompt for
/// a turn in a file's context (`AGENTS.md`, `CLAUDE.md`, `.cairn/rules/*.md`), and how much of
/// each. `params` may be `null`.
pub enum ContextRequest {}

impl Request for ContextRequest {
    type Params = Option<ContextParams>;
    type Result = ContextResult;
    const METHOD: &'static str = "cairn/context";
}

/// `cairn/compact`, client to server: summarise a session's turns now (as the message
/// `/compact` does), and answer with what it came to. It waits for the model's summary, which
/// never asks the user anything.
pub enum CompactRequest {}

impl Request for CompactRequest {
    type Params = CompactParams;
    type Result = CompactResult;
    const METHOD: &'static str = "cairn/compact";
}

/// `cairn/checkpoints`, client to server: a session's turns and the files each changed that a
/// rewind would restore.
pub enum CheckpointsRequest {}

impl Request for CheckpointsRequest {
    type Params = CheckpointsParams;
    type Result = CheckpointsResult;
    const METHOD: &'static str = "cairn/checkpoints";
}

/// `cairn/rewind`, client to server: restore every file the session's turns from `turn` on
/// changed to its state before `turn`.
pub enum RewindRequest {}

impl Request for RewindRequest {
    type Params = RewindParams;
    type Result = RewindResult;
    const METHOD: &'static str = "cairn/rewind";
}

/// `cairn/runEvent`, server to client: one event of a run.
pub enum RunEventNotification {}

impl Notification for RunEventNotification {
    type Params = RunEventParams;
    const METHOD: &'static str = "cairn/runEvent";
}

/// `cairn/approve`, server to client: ask the user to approve a tool call (only for clients that
/// announced `capabilities.approvals` in `initializationOptions`).
pub enum ApproveRequest {}

impl Request for ApproveRequest {
    type Params = ApproveParams;
    type Result = ApproveResult;
    const METHOD: &'static str = "cairn/approve";
}

/// `cairn/mcpStatus`, server to client: the MCP servers' states, what waits for trust, and the
/// tools waiting for review. Sent on every change. The params are the object `mcp::status_json`
/// builds (every string in it redacted), so they stay a JSON value here.
pub enum McpStatusNotification {}

impl Notification for McpStatusNotification {
    type Params = serde_json::Value;
    const METHOD: &'static str = "cairn/mcpStatus";
}

/// `cairn/mcpResources`, client to server: the resources (and resource templates) the MCP
/// servers offer. Any params are ignored.
pub enum McpResourcesRequest {}

impl Request for McpResourcesRequest {
    type Params = Option<serde_json::Value>;
    type Result = McpResourcesResult;
    const METHOD: &'static str = "cairn/mcpResources";
}

/// `cairn/mcpPrompts`, client to server: the prompts the MCP servers offer, for slash commands.
/// Any params are ignored.
pub enum McpPromptsRequest {}

impl Request for McpPromptsRequest {
    type Params = Option<serde_json::Value>;
    type Result = McpPromptsResult;
    const METHOD: &'static str = "cairn/mcpPrompts";
}

/// `cairn/elicit`, server to client: an MCP server asks the user for input (only for clients
/// that announced `capabilities.elicitation`).
pub enum ElicitRequest {}

impl Request for ElicitRequest {
    type Params = ElicitParams;
    type Result = ElicitResult;
    const METHOD: &'static str = "cairn/elicit";
}

/// `cairn/diagnostics`, client to server: the diagnostics the editor holds for one file,
/// replacing those sent for it before (an empty list clears them). Clients that announce
/// `capabilities.diagnostics` send every file's once after `initialized`, then each change;
/// the `get_diagnostics` tool and the file tools' edits read them.
pub enum DiagnosticsNotification {}

impl Notification for DiagnosticsNotification {
    type Params = DiagnosticsParams;
    const METHOD: &'static str = "cairn/diagnostics";
}

/// `cairn/diagnostics` parameters: a file and its LSP `Diagnostic`s (`range`, `severity`,
/// `message`, `source`, `code`; other fields are ignored).
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct DiagnosticsParams {
    pub uri: Uri,
    pub diagnostics: Vec<Diagnostic>,
}

/// Every `cairn/` method, for the `experimental` capability and the documentation test.
pub const METHODS: &[&str] = &[
    ChatRequest::METHOD,
    CancelRequest::METHOD,
    SessionsRequest::METHOD,
    ToolsRequest::METHOD,
    RunEventNotification::METHOD,
    ApproveRequest::METHOD,
    McpStatusNotification::METHOD,
    McpResourcesRequest::METHOD,
    McpPromptsRequest::METHOD,
    ElicitRequest::METHOD,
    DiagnosticsNotification::METHOD,
    ContextRequest::METHOD,
    CompactRequest::METHOD,
    CheckpointsRequest::METHOD,
    RewindRequest::METHOD,
];

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
    /// Arguments: the session id (a string). Result: `CompactResult`, also shown as a message.
    pub const COMPACT: &str = "cairn.compact";
    /// Arguments: `sessionId`, `turn` (two values). Result: `RewindResult`, as `cairn/rewind`.
    pub const REWIND: &str = "cairn.rewind";
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
        REWIND,
        COMPACT,
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
    /// The client sends its diagnostics with `cairn/diagnostics`; without it the
    /// `get_diagnostics` tool answers that this editor does not send them.
    pub diagnostics: bool,
}

/// `cairn/chat` parameters.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ChatParams {
    pub message: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mode: Option<Mode>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context: Option<ChatContext>,
    /// MCP resources to attach as context.
    #[serde(default, skip_serializing_if = "Option::is_none")]
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
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CancelParams {
    pub run_id: String,
}

/// `cairn/cancel` result: whether a running run was found.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CancelResult {
    pub cancelled: bool,
}

/// `cairn/sessions` parameters: without `sessionId` the list, with it one transcript.
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SessionsParams {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_id: Option<String>,
}

/// `cairn/checkpoints` parameters.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CheckpointsParams {
    pub session_id: String,
}

/// `cairn/checkpoints` result: every turn of the session, in order.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct CheckpointsResult {
    pub turns: Vec<CheckpointTurn>,
}

/// One turn in `cairn/checkpoints`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CheckpointTurn {
    /// 1-based, in the session's order of runs.
    pub turn: usize,
    pub run_id: String,
    /// The first line of the user's message.
    pub message: String,
    /// The files the turn changed that a rewind would restore (relative to their root).
    pub files: Vec<String>,
}

/// `cairn/rewind` parameters.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RewindParams {
    pub session_id: String,
    /// 1-based; the turns from this one on are undone.
    pub turn: usize,
}

/// `cairn/rewind` result: what was restored, what changed since cairn wrote it (left alone),
/// and what could not be restored.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RewindResult {
    pub restored: Vec<String>,
    pub conflicts: Vec<RewindProblem>,
    pub failed: Vec<RewindProblem>,
}

/// A file a rewind did not restore, and why.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RewindProblem {
    pub path: String,
    pub reason: String,
}

/// `cairn/tools` parameters.
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ToolsParams {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_id: Option<String>,
}

/// `cairn/compact` parameters.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CompactParams {
    pub session_id: String,
}

/// `cairn/compact` result: `compacted` with the figures, or why not.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CompactResult {
    pub compacted: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub turns: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tokens_before: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tokens_after: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

/// `cairn/context` parameters.
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ContextParams {
    /// A file the turn is about; the rules of the directories above it are included too.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub uri: Option<Uri>,
}

/// `cairn/context` result.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ContextResult {
    pub rules: Vec<RuleEntry>,
    /// The cap on all rules together (`agent.rules_max_bytes`).
    pub max_bytes: usize,
}

/// One rules file.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RuleEntry {
    pub path: String,
    pub bytes: u64,
    /// How many of its bytes reach the prompt.
    pub included: u64,
    pub truncated: bool,
}

/// `cairn/sessions` result: the list, or the transcript asked for.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(untagged)]
pub enum SessionsResult {
    #[serde(rename_all = "camelCase")]
    Transcript {
        session_id: String,
        records: Vec<cairn_agent::sessions::Record>,
    },
    List {
        sessions: Vec<cairn_agent::sessions::SessionSummary>,
    },
}

/// `cairn/tools` result.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ToolsResult {
    pub tools: Vec<ToolEntry>,
}

/// `cairn/mcpResources` result.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct McpResourcesResult {
    pub resources: Vec<cairn_mcp::ServerResource>,
}

/// `cairn/mcpPrompts` result.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct McpPromptsResult {
    pub prompts: Vec<cairn_mcp::ServerPrompt>,
}

/// One tool in `cairn/tools`.
#[derive(Debug, Clone, Serialize, Deserialize)]
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
