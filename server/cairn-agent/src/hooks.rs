//! The hooks seam: the user's own commands around tool calls and at the end of a turn.
//!
//! The binary runs them (processes, timeouts, a clean environment); the turn loop only decides
//! what their answers mean: a pre-tool hook that denies, or that fails, stops the call with a
//! reason the model reads; one that asks makes the call go to the user even where the policy
//! allows it; a post-tool hook's output is added to the result the model reads.
//! `run_and_report`, `pre_tool_verdict` and `with_post_tool_notes` below are that meaning,
//! written once for every stage (`call.rs` before and after a call, `turn.rs` at the turn's end).

use futures::future::BoxFuture;
use serde::Serialize;

use crate::events::RunEvent;
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

/// Runs `hooks` for `input`'s stage and tells the editor what each hook came to, in order. The
/// one way the run calls hooks, at every stage; the caller decides what the reports mean.
pub(crate) async fn run_and_report(
    hooks: &dyn Hooks,
    input: HookInput,
    emit: &impl Fn(RunEvent),
) -> Vec<HookReport> {
    let stage = input.stage;
    let call_id = input.call_id.clone();
    let reports = hooks.run(input).await;
    for r in &reports {
        emit(RunEvent::Hook {
            stage,
            command: r.command.clone(),
            call_id: call_id.clone(),
            outcome: r.outcome,
            message: r.message.clone(),
        });
    }
    reports
}

/// What pre-tool reports mean for the call: `Err` with the reason the model reads when a hook
/// denied or failed (the first such stops it), else whether one asked for the user's approval.
pub(crate) fn pre_tool_verdict(reports: &[HookReport]) -> Result<bool, String> {
    let stop = reports.iter().find_map(|r| match r.outcome {
        HookOutcome::Denied => Some(format!(
            "denied by the user's hook `{}`: {}",
            r.command, r.message
        )),
        HookOutcome::Failed => Some(format!(
            "not run: the user's hook `{}` failed ({}), and a pre-tool hook that fails stops the call",
            r.command, r.message
        )),
        _ => None,
    });
    match stop {
        Some(stop) => Err(stop),
        None => Ok(reports.iter().any(|r| r.outcome == HookOutcome::Asked)),
    }
}

/// `content` with what the post-tool hooks said (or that one failed) added for the model.
pub(crate) fn with_post_tool_notes(mut content: String, reports: &[HookReport]) -> String {
    for r in reports {
        match r.outcome {
            HookOutcome::Failed => content.push_str(&format!(
                "\n\n[the user's hook `{}` failed: {}]",
                r.command, r.message
            )),
            _ if !r.message.trim().is_empty() => content.push_str(&format!(
                "\n\n[the user's hook `{}` says]\n{}",
                r.command,
                r.message.trim_end()
            )),
            _ => {}
        }
    }
    content
}
