//! The `task` sub-agent: the same turn loop with a fresh context, some of the parent's tools and
//! what is left of the turn's tool-call budget, under the parent's policy, approver and hooks.
//! Its events reach the editor inside `subAgent` events; the model reads its final answer.
//!
//! A sub-agent is never wider than its parent: `task_tools` refuses a tool the parent does not
//! have, and the budget is the parent turn's.

use std::collections::BTreeSet;
use std::sync::Arc;

use crate::builtin::TaskArgs;
use crate::call::{Outcome, Step};
use crate::events::{RunEvent, StopReason};
use crate::model::{Message, ToolCallRequest};
use crate::run::{Agent, RunInput, RunOutcome};

/// The tools a task gets: the ones it asked for (all among the parent's allowed tools), or all of
/// the parent's.
fn task_tools(asked: Option<Vec<String>>, step: &Step<'_>) -> Result<BTreeSet<String>, Outcome> {
    let parent: BTreeSet<String> = step
        .allowed
        .iter()
        .map(|t| t.tool.name.to_string())
        .collect();
    let Some(asked) = asked else {
        return Ok(parent);
    };
    let unknown: Vec<&String> = asked.iter().filter(|n| !parent.contains(*n)).collect();
    if !unknown.is_empty() {
        return Err(Outcome::failed(format!(
            "task: {} not among your tools; a task gets some of your tools, never others",
            unknown
                .iter()
                .map(|n| format!("`{n}`"))
                .collect::<Vec<_>>()
                .join(", ")
        )));
    }
    Ok(asked.into_iter().collect())
}

/// What the model reads of a finished sub-agent: its last answer, or why there is none.
fn outcome_of(outcome: RunOutcome) -> Outcome {
    let answer = outcome
        .messages
        .iter()
        .rev()
        .find_map(|m| match m {
            Message::Assistant { text, .. } if !text.trim().is_empty() => Some(text.clone()),
            _ => None,
        })
        .unwrap_or_default();
    let (is_error, content) = match &outcome.result {
        Ok(None) => (false, answer),
        Ok(Some(StopReason::ToolBudget)) => (
            false,
            format!("{answer}\n[the sub-agent used up the turn's tool calls before it finished]"),
        ),
        Ok(Some(StopReason::Cancelled)) => (true, "cancelled".to_string()),
        Ok(Some(StopReason::Refused)) => (true, format!("the sub-agent's model refused: {answer}")),
        Err(e) => (true, format!("the sub-agent failed: {e}")),
    };
    Outcome {
        is_error,
        content,
        images: Vec::new(),
        usage: outcome.usage,
        nested_calls: outcome.tool_calls,
    }
}

impl Agent {
    /// Runs a `task`: a sub-agent with a fresh context, the parent's policy and approver, the
    /// tools it was given (never more than the parent's), and what is left of the turn's budget.
    /// Its events reach the editor inside `subAgent` events; the model reads its final answer.
    pub(crate) async fn sub_agent(
        &self,
        call: &ToolCallRequest,
        task: TaskArgs,
        step: &Step<'_>,
        input: &RunInput<'_>,
        emit: &impl Fn(RunEvent),
    ) -> Outcome {
        let names = match task_tools(task.tools, step) {
            Ok(names) => names,
            Err(refused) => return refused,
        };
        if step.task_budget == 0 {
            return Outcome::failed(format!(
                "task: no tool calls are left in this turn's budget of {} (agent.max_tool_calls)",
                self.limits.max_tool_calls
            ));
        }
        let sub = self.sub_agent_with(names, step.task_budget);
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
        let sub_input = RunInput {
            session_id: input.session_id.clone(),
            run_id: input.run_id.clone(),
            mode: input.mode,
            history: Vec::new(),
            message: task.prompt,
            approver: input.approver,
            grants: input.grants.clone(),
            events: tx,
            cancel: input.cancel.child_token(),
        };
        let forward = async {
            while let Some(event) = rx.recv().await {
                emit(RunEvent::SubAgent {
                    call_id: call.id.clone(),
                    event: Box::new(event),
                });
            }
        };
        let (outcome, ()) = futures::join!(sub.run_boxed(sub_input), forward);
        outcome_of(outcome)
    }

    /// This agent narrowed for a task: only `names` of its tools, `budget` tool calls, no
    /// sub-agents of its own, no turn-end hooks, and the sub-agent's prompt added.
    fn sub_agent_with(&self, names: BTreeSet<String>, budget: u32) -> Agent {
        let mut sub = self.clone();
        sub.tools = Arc::new(crate::tools::Only {
            inner: self.tools.clone(),
            names,
        });
        sub.limits.max_tool_calls = budget;
        sub.sub_agents = false;
        // The user's turn-end hooks are for the turn, which the sub-agent's end is not.
        sub.hooks = self
            .hooks
            .clone()
            .map(|h| Arc::new(crate::hooks::WithoutTurnEnd(h)) as Arc<dyn crate::hooks::Hooks>);
        sub.system_prompt = format!(
            "{}\n\n{}",
            self.system_prompt,
            crate::builtin::SUB_AGENT_PROMPT
        );
        sub
    }

    /// A recursive run (a sub-agent's) as a boxed future, so the run's future type stays finite.
    fn run_boxed<'a>(&'a self, input: RunInput<'a>) -> futures::future::BoxFuture<'a, RunOutcome> {
        Box::pin(self.run(input))
    }
}
