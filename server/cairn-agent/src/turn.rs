//! The turn loop (`Agent::run`): one step after another (the tools on offer, the request,
//! compaction when it would overflow, the model's answer, its tool calls), until the model
//! answers without tools, the tool-call budget is used up, the provider refuses, or the user
//! cancels; then the turn-end hooks and exactly one `done` or `error` event.
//!
//! Named `turn.rs` rather than `loop.rs` because `loop` is a Rust keyword, and a module reached
//! through `#[path]` and `r#loop` would read worse than the name of what it runs: one turn.

use std::collections::BTreeSet;
use std::sync::{Mutex, PoisonError};

use crate::call::{SearchContext, Step};
use crate::events::{RunEvent, StopReason};
use crate::hooks::{HookInput, HookStage};
use crate::model::{Message, ModelRequest, ToolCallRequest, ToolSpec, Usage};
use crate::policy::Decision;
use crate::run::{
    Agent, COMPACT_COMMAND, Compaction, Ended, Mode, RunInput, RunOutcome, end_event,
};
use crate::select::{RunSelection, Selection};
use crate::stream::ModelTurn;
use crate::tools::ToolInfo;

/// What the steps of one turn carry from one to the next.
struct Turn {
    /// The history, then this turn's messages from `first_new` on.
    messages: Vec<Message>,
    first_new: usize,
    usage: Usage,
    calls_made: u32,
    /// Names of the tools offered at any step.
    offered: BTreeSet<String>,
    /// Set once the turn tried to compact, whether or not it could.
    compaction: Option<Compaction>,
    /// Files the turn has named so far: the rules of their directories join the prompt.
    rule_paths: Vec<String>,
    selection: Mutex<RunSelection>,
}

/// The tool spec the model is offered for a catalog tool.
fn tool_spec(info: &ToolInfo) -> ToolSpec {
    ToolSpec {
        name: info.tool.name.to_string(),
        description: info
            .tool
            .description
            .as_deref()
            .unwrap_or_default()
            .to_string(),
        input_schema: serde_json::Value::Object((*info.tool.input_schema).clone()),
    }
}

/// Takes the model's answer into the turn: `Ok` with the tool calls to run, or how the turn
/// ended (an error, a refusal, or an answer without tools).
fn record_answer(
    turn: &mut Turn,
    answer: Result<ModelTurn, String>,
) -> Result<Vec<ToolCallRequest>, Ended> {
    let ModelTurn {
        text,
        calls,
        usage,
        refused,
    } = answer.map_err(Err)?;
    turn.usage += usage;
    if refused {
        // Whatever it asked to call as it refused is not run.
        turn.messages.push(Message::Assistant {
            text,
            tool_calls: Vec::new(),
        });
        return Err(Ok(Some(StopReason::Refused)));
    }
    turn.messages.push(Message::Assistant {
        text,
        tool_calls: calls.clone(),
    });
    if calls.is_empty() {
        return Err(Ok(None));
    }
    Ok(calls)
}

impl Agent {
    /// Runs one turn to its end and reports every step on `input.events`. Ends with exactly one
    /// `done` or `error` event.
    pub async fn run(&self, input: RunInput<'_>) -> RunOutcome {
        // Everything the editor is told passes the redactor too: the model's text and arguments
        // can carry a credential pattern, and an error can quote a provider's answer.
        let emit = |e: RunEvent| {
            let _ = input.events.send(self.redacted_event(e));
        };
        // The editor may have attached context below the command; the command is the first line.
        if input.message.trim_start().lines().next().map(str::trim) == Some(COMPACT_COMMAND) {
            return self.compact_on_demand(&input, &emit).await;
        }
        let mut messages = input.history.clone();
        let first_new = messages.len();
        messages.push(Message::User {
            text: self.redacted("user_message", &input.message),
            images: Vec::new(),
        });
        let mut turn = Turn {
            messages,
            first_new,
            usage: Usage::default(),
            calls_made: 0,
            offered: BTreeSet::new(),
            compaction: None,
            rule_paths: Vec::new(),
            selection: Mutex::new(RunSelection::default()),
        };
        let result = loop {
            if let Some(ended) = self.step(&mut turn, &input, &emit).await {
                break ended;
            }
        };
        self.turn_end_hooks(&turn.messages, &input, &emit).await;
        let tool_calls = turn.calls_made.min(self.limits.max_tool_calls);
        emit(end_event(&result, turn.usage, tool_calls));
        RunOutcome {
            messages: turn.messages.split_off(turn.first_new),
            usage: turn.usage,
            tool_calls,
            offered: turn.offered.into_iter().collect(),
            compaction: turn.compaction.filter(|c| c.drop > 0),
            result,
        }
    }

    /// One step: a model request and the tool calls it asks for. `Some` when the turn ended.
    async fn step(
        &self,
        turn: &mut Turn,
        input: &RunInput<'_>,
        emit: &impl Fn(RunEvent),
    ) -> Option<Ended> {
        let catalog: Vec<ToolInfo> = self
            .tools
            .list()
            .into_iter()
            .filter(|t| input.mode == Mode::Agent || !t.agent_only)
            .collect();
        let budget_left = self.limits.max_tool_calls.saturating_sub(turn.calls_made);
        let allowed: Vec<&ToolInfo> = catalog
            .iter()
            .filter(|t| self.policy.decide(t).decision != Decision::Deny)
            .collect();
        // Selection runs when the allowed tools are more than it would offer anyway.
        let selection = self
            .selection
            .as_ref()
            .filter(|s| allowed.len() > s.config.max_tools + s.config.core_tools.len());
        let tools = self
            .offered_tools(&allowed, selection, budget_left, turn, input)
            .await;
        turn.offered.extend(tools.iter().map(|t| t.name.clone()));
        let mut request = ModelRequest {
            system: self.system_prompt_for(&turn.rule_paths),
            messages: turn.messages.clone(),
            tools,
        };
        if let Some(ended) = self.compact_if_full(turn, &mut request, input, emit).await {
            return Some(ended);
        }
        let answer = tokio::select! {
            _ = input.cancel.cancelled() => return Some(Ok(Some(StopReason::Cancelled))),
            answer = self.model_turn(request, emit) => answer,
        };
        let calls = match record_answer(turn, answer) {
            Ok(calls) => calls,
            Err(ended) => return Some(ended),
        };
        let runnable = calls.len().min(budget_left as usize);
        let (run_now, over_budget) = calls.split_at(runnable);
        // A sub-agent may use what is left once this step's calls are counted.
        let step = Step {
            catalog: &catalog,
            allowed: &allowed,
            task_budget: budget_left - runnable as u32,
        };
        self.run_calls(turn, run_now, &step, selection, input, emit)
            .await;
        self.refuse_over_budget(turn, over_budget, emit);
        self.stop_after_calls(turn, !over_budget.is_empty(), input, emit)
    }

    /// The tools offered at this step: none once the budget is used up (the model is asked to
    /// answer without tools), else the allowed ones (or the selection's choice), then the
    /// agent's own.
    async fn offered_tools(
        &self,
        allowed: &[&ToolInfo],
        selection: Option<&Selection>,
        budget_left: u32,
        turn: &mut Turn,
        input: &RunInput<'_>,
    ) -> Vec<ToolSpec> {
        if budget_left == 0 {
            return Vec::new();
        }
        let mut tools = match selection {
            Some(selection) => self.selected(selection, allowed, turn, input).await,
            None => allowed.iter().map(|t| tool_spec(t)).collect(),
        };
        tools.push(crate::builtin::plan_spec());
        if self.sub_agents {
            tools.push(crate::builtin::task_spec());
        }
        if selection.is_some() {
            tools.push(crate::select::tool_search_spec());
        }
        tools
    }

    /// The tools selection chooses for this step from the allowed ones.
    async fn selected(
        &self,
        selection: &Selection,
        allowed: &[&ToolInfo],
        turn: &mut Turn,
        input: &RunInput<'_>,
    ) -> Vec<ToolSpec> {
        // A step's calls are done before the next step chooses, so nothing else holds the lock.
        let state = turn
            .selection
            .get_mut()
            .unwrap_or_else(PoisonError::into_inner);
        let chosen = crate::select::choose(
            selection,
            self.model.as_ref(),
            allowed,
            &turn.messages,
            &input.message,
            state,
        )
        .await;
        turn.usage += chosen.usage;
        tracing::debug!(
            offered = ?chosen.names,
            candidates = chosen.candidates.len(),
            catalog = allowed.len(),
            degraded = ?chosen.degraded,
            filter = ?chosen.filter,
            "tools selected"
        );
        chosen
            .names
            .iter()
            .filter_map(|n| allowed.iter().find(|t| t.tool.name == n.as_str()))
            .map(|t| tool_spec(t))
            .collect()
    }

    /// Once a turn, when the request would overflow the window, the older turns are
    /// summarised; a failed summary is said and the request goes as it is.
    async fn compact_if_full(
        &self,
        turn: &mut Turn,
        request: &mut ModelRequest,
        input: &RunInput<'_>,
        emit: &impl Fn(RunEvent),
    ) -> Option<Ended> {
        if turn.compaction.is_some() || turn.first_new == 0 {
            return None;
        }
        let window = self.model.context_window()?;
        if self.model.count_tokens(request) <= window * crate::compact::TRIGGER_PERCENT / 100 {
            return None;
        }
        let compacted = tokio::select! {
            _ = input.cancel.cancelled() => return Some(Ok(Some(StopReason::Cancelled))),
            c = self.compact(&mut turn.messages, &mut turn.first_new, &request.system, window, false, emit) => c,
        };
        match compacted {
            Ok((c, summary_usage)) => {
                turn.usage += summary_usage;
                turn.compaction = Some(c);
                request.messages = turn.messages.clone();
            }
            Err(why) => {
                tracing::warn!(%why, "compaction failed");
                emit(RunEvent::Text {
                    delta: format!(
                        "[cairn could not summarise the older turns ({why}); sending the whole conversation]\n\n"
                    ),
                });
                // Tried: not again this turn.
                turn.compaction = Some(Compaction {
                    drop: 0,
                    summary: String::new(),
                    turns: 0,
                    tokens_before: 0,
                    tokens_after: 0,
                });
            }
        }
        None
    }

    /// Runs this step's calls side by side, counts them (and a sub-agent's) against the
    /// budget, and notes the files they name for the rules.
    async fn run_calls(
        &self,
        turn: &mut Turn,
        calls: &[ToolCallRequest],
        step: &Step<'_>,
        selection: Option<&Selection>,
        input: &RunInput<'_>,
        emit: &impl Fn(RunEvent),
    ) {
        let state = &turn.selection;
        let results = futures::future::join_all(calls.iter().map(|call| {
            let search = selection.map(|selection| SearchContext {
                selection,
                allowed: step.allowed,
                state,
            });
            self.tool_call(call, step, search, input, emit)
        }))
        .await;
        turn.calls_made += calls.len() as u32;
        for (message, tool_usage, nested) in results {
            turn.messages.push(message);
            turn.usage += tool_usage;
            turn.calls_made += nested;
        }
        for call in calls {
            if let Ok(arguments) = serde_json::from_str::<serde_json::Value>(&call.arguments) {
                for path in crate::context::paths_in(&arguments) {
                    if !turn.rule_paths.contains(&path) {
                        turn.rule_paths.push(path);
                    }
                }
            }
        }
    }

    /// Answers the calls beyond the budget "not run", without reaching the gate.
    fn refuse_over_budget(
        &self,
        turn: &mut Turn,
        calls: &[ToolCallRequest],
        emit: &impl Fn(RunEvent),
    ) {
        for call in calls {
            let content = format!(
                "not run: this turn's budget of {} tool calls (agent.max_tool_calls) is used up",
                self.limits.max_tool_calls
            );
            emit(RunEvent::ToolResult {
                call_id: call.id.clone(),
                is_error: true,
                content: content.clone(),
                images: Vec::new(),
            });
            turn.messages.push(Message::Tool {
                call_id: call.id.clone(),
                name: call.name.clone(),
                content,
                is_error: true,
            });
        }
    }

    /// After the calls: the turn ends when the user cancelled or the budget was overrun (said
    /// to the user and kept in the transcript).
    fn stop_after_calls(
        &self,
        turn: &mut Turn,
        refused_any: bool,
        input: &RunInput<'_>,
        emit: &impl Fn(RunEvent),
    ) -> Option<Ended> {
        if input.cancel.is_cancelled() {
            return Some(Ok(Some(StopReason::Cancelled)));
        }
        if !refused_any && turn.calls_made <= self.limits.max_tool_calls {
            return None;
        }
        let note = format!(
            "\n\n[cairn stopped this turn: the model asked for more than {} tool calls \
             (agent.max_tool_calls). Ask again to continue.]",
            self.limits.max_tool_calls
        );
        emit(RunEvent::Text {
            delta: note.clone(),
        });
        turn.messages.push(Message::Assistant {
            text: note,
            tool_calls: Vec::new(),
        });
        Some(Ok(Some(StopReason::ToolBudget)))
    }

    /// The user's turn-end hooks, told the model's last answer; they only report.
    async fn turn_end_hooks(
        &self,
        messages: &[Message],
        input: &RunInput<'_>,
        emit: &impl Fn(RunEvent),
    ) {
        let Some(hooks) = &self.hooks else {
            return;
        };
        let answer = messages.iter().rev().find_map(|m| match m {
            Message::Assistant { text, .. } if !text.is_empty() => Some(text.clone()),
            _ => None,
        });
        let hook_input = HookInput {
            stage: HookStage::TurnEnd,
            session_id: input.session_id.clone(),
            run_id: input.run_id.clone(),
            call_id: None,
            tool: None,
            arguments: None,
            result: None,
            is_error: None,
            answer,
        };
        crate::hooks::run_and_report(hooks.as_ref(), hook_input, emit).await;
    }
}
