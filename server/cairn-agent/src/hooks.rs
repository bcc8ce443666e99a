//! The hooks seam: the user's own commands around tool calls and at the end of a turn.
//!
//! The binary runs them (processes, timeouts, a clean environment); the turn loop only decides
//! what their answers mean: a pre-tool hook that denies, or that fails, stops the call with a
//! reason the model reads; one that asks makes the call go to the user even where the policy
//! allows it; a post-tool hook's output is added to the result the model reads.

use futures::future::BoxFuture;
use serde::Serialize;

pub use crate::events::{HookOutcome, HookStage};

/// What a hook is told (serialised as JSON on its stdin).
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct HookInput {
    pub stage: HookStage,
    pub session_id: String,
    pub run_id: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub call_id: Option<String>,
    /// The tool's name (pre- and post-tool).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub arguments: Option<serde_json::Value>,
    /// The result text the model would read (post-tool).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub result: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub is_error: Option<bool>,
    /// The model's last answer (turn end).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub answer: Option<String>,
}

/// What one hook came to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HookReport {
    /// The command, as configured (for the user; never its environment).
    pub command: String,
    pub outcome: HookOutcome,
    /// The reason (denied, asked, failed) or the output.
    pub message: String,
}

/// Runs the hooks configured for a stage, in order, and reports each that ran.
pub trait Hooks: Send + Sync {
    fn run(&self, input: HookInput) -> BoxFuture<'_, Vec<HookReport>>;
}

/// Hooks without the turn-end stage: a sub-agent's, whose end is not the turn's.
pub struct WithoutTurnEnd(pub std::sync::Arc<dyn Hooks>);

impl Hooks for WithoutTurnEnd {
    fn run(&self, input: HookInput) -> BoxFuture<'_, Vec<HookReport>> {
        if input.stage == HookStage::TurnEnd {
            return Box::pin(async { Vec::new() });
        }
        self.0.run(input)
    }
}
