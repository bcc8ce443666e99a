//! What a run reports as it goes. The LSP front sends these as `cairn/runEvent`; the terminal
//! prints them. The wire shape (`kind` plus camelCase fields) is documented in
//! `docs/lsp-extensions.md`.

use serde::{Deserialize, Serialize};
use tokio::sync::mpsc;

use crate::model::Usage;
use crate::policy::ApprovalAnswer;

/// One event of a run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(
    tag = "kind",
    rename_all = "camelCase",
    rename_all_fields = "camelCase"
)]
pub enum RunEvent {
    /// A piece of the model's answer.
    Text { delta: String },
    /// The model asked for a tool call.
    ToolCall {
        call_id: String,
        name: String,
        arguments: serde_json::Value,
    },
    /// The user is asked to approve a call (`state: asked`), or answered (`state: answered`).
    Approval {
        call_id: String,
        name: String,
        state: ApprovalState,
        #[serde(skip_serializing_if = "Option::is_none")]
        answer: Option<ApprovalAnswer>,
        reason: String,
    },
    /// A tool call finished. `images` are the raster pictures its result carried (a chart, a
    /// screenshot), for the editor to show; the model reads `content`.
    ToolResult {
        call_id: String,
        is_error: bool,
        content: String,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        images: Vec<Image>,
    },
    /// A tool edited (or tried to edit) a file.
    Edit {
        call_id: String,
        uri: String,
        applied: bool,
        #[serde(skip_serializing_if = "Option::is_none")]
        reason: Option<String>,
    },
    /// The run ended. `stopped` says why, when it ended early.
    Done {
        usage: Usage,
        tool_calls: u32,
        #[serde(skip_serializing_if = "Option::is_none")]
        stopped: Option<StopReason>,
    },
    /// The run failed.
    Error { message: String },
    /// The model's plan for the task changed; `steps` is the whole list now.
    Plan {
        call_id: String,
        steps: Vec<PlanStep>,
    },
    /// One event of a sub-agent's run, started by the `task` call `call_id`.
    SubAgent {
        call_id: String,
        event: Box<RunEvent>,
    },
    /// A hook the user configured ran.
    Hook {
        stage: HookStage,
        command: String,
        #[serde(skip_serializing_if = "Option::is_none")]
        call_id: Option<String>,
        outcome: HookOutcome,
        message: String,
    },
    /// Older turns of the session were summarised to fit the model's context window.
    Compacted {
        turns: u32,
        tokens_before: u64,
        tokens_after: u64,
        summary: String,
    },
}

/// One step of a plan.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PlanStep {
    /// What the step does, in a few words.
    pub title: String,
    pub state: StepState,
}

/// Where a plan step stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum StepState {
    Pending,
    InProgress,
    Done,
}

/// When a hook runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum HookStage {
    /// Before a tool call runs; it may allow, deny or ask.
    PreTool,
    /// After a tool call; its output can be fed back to the model.
    PostTool,
    /// When the turn ends.
    TurnEnd,
}

/// What a hook came to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum HookOutcome {
    Allowed,
    Denied,
    Asked,
    /// It printed something (fed back to the model after a tool call).
    Output,
    /// It could not run, timed out or exited with an error.
    Failed,
}

/// A picture of a tool result: PNG, JPEG, GIF or WebP, base64.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Image {
    pub mime_type: String,
    pub data: String,
}

/// Approval progress.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum ApprovalState {
    Asked,
    Answered,
}

/// Why a run ended before the model finished on its own.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum StopReason {
    /// The tool-call budget (`agent.max_tool_calls`) was used up.
    ToolBudget,
    /// The user cancelled.
    Cancelled,
    /// The provider refused to answer (the model's refusal, or the provider's content filter).
    Refused,
}

/// Where a run sends its events. Unbounded because events are small and the receiver is a
/// single forwarding task; a slow editor must not stall the run.
pub type EventSender = mpsc::UnboundedSender<RunEvent>;
