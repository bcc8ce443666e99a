//! One tool call, as a short pipeline of named steps: [`parse`] the arguments (and show the
//! call), answer the agent's own tools (`tool_search`, `plan`, `task`), run the user's pre-tool
//! hooks, pass the [`Gate`] and call the tool (asking about protected paths and calling once more
//! when a built-in tool names them), run the post-tool hooks, and cut the result to
//! `agent.tool_result_max_bytes` for the model.
//!
//! Each step hands its value on or ends the call early with an [`Outcome`] (the `Err` of
//! [`Next`]), so the order of the steps reads in [`Agent::pipeline`] alone.

use std::sync::Mutex;

use rmcp::model::CallToolResult;
use serde_json::{Map, Value};

use crate::events::{ApprovalState, Image, RunEvent};
use crate::gate::Gate;
use crate::hooks::{HookInput, HookStage};
use crate::model::{Message, ToolCallRequest, Usage};
use crate::output::{images_of, result_text, truncate};
use crate::policy::{ApprovalAnswer, Approver};
use crate::redact::RedactingApprover;
use crate::run::{Agent, RunInput};
use crate::select::{RunSelection, Selection, TOOL_SEARCH};
use crate::tools::{CallContext, ToolInfo, edits_of, usage_of};

/// What the calls of one step share.
pub(crate) struct Step<'a> {
    pub catalog: &'a [ToolInfo],
    pub allowed: &'a [&'a ToolInfo],
    /// Tool calls a `task` of this step may make.
    pub task_budget: u32,
}

/// What a tool call needs to run `tool_search` (when selection is on).
pub(crate) struct SearchContext<'a> {
    pub selection: &'a Selection,
    pub allowed: &'a [&'a ToolInfo],
    pub state: &'a Mutex<RunSelection>,
}

/// What one tool call came to.
pub(crate) struct Outcome {
    pub is_error: bool,
    pub content: String,
    /// Pictures the result carried, for the editor.
    pub images: Vec<Image>,
    /// Tokens the tool spent on a model request of its own.
    pub usage: Usage,
    /// Tool calls a sub-agent made for it.
    pub nested_calls: u32,
}

impl Outcome {
    fn text(is_error: bool, content: String) -> Outcome {
        Outcome {
            is_error,
            content,
            images: Vec::new(),
            usage: Usage::default(),
            nested_calls: 0,
        }
    }

    pub(crate) fn failed(why: impl Into<String>) -> Outcome {
        Outcome::text(true, why.into())
    }

    fn ok(content: String) -> Outcome {
        Outcome::text(false, content)
    }
}

/// A step's value, or the call's outcome reached early (a refusal, a failure, an own tool).
type Next<T> = Result<T, Outcome>;

/// Parses the arguments and shows the call to the editor (as the model wrote it when it is not
/// JSON); only a JSON object goes on.
fn parse(call: &ToolCallRequest, emit: &impl Fn(RunEvent)) -> Next<Map<String, Value>> {
    let parsed: Result<Value, _> = if call.arguments.trim().is_empty() {
        Ok(serde_json::json!({}))
    } else {
        serde_json::from_str(&call.arguments)
    };
    let shown = parsed
        .as_ref()
        .map_or_else(|_| Value::String(call.arguments.clone()), Clone::clone);
    emit(RunEvent::ToolCall {
        call_id: call.id.clone(),
        name: call.name.clone(),
        arguments: shown,
    });
    match parsed {
        Ok(Value::Object(map)) => Ok(map),
        Ok(_) => Err(Outcome::failed("the arguments must be a JSON object")),
        Err(e) => Err(Outcome::failed(format!(
            "the arguments are not valid JSON ({e}); send a JSON object"
        ))),
    }
}

/// `plan`: the steps go to the editor as a `plan` event; the model reads a summary.
fn plan(
    call: &ToolCallRequest,
    arguments: &Map<String, Value>,
    emit: &impl Fn(RunEvent),
) -> Outcome {
    match crate::builtin::parse_plan(Value::Object(arguments.clone())) {
        Ok(steps) => {
            let content = crate::builtin::plan_summary(&steps);
            emit(RunEvent::Plan {
                call_id: call.id.clone(),
                steps,
            });
            Outcome::ok(content)
        }
        Err(why) => Outcome::failed(why),
    }
}

/// What a tool hook is told about this call (`result` is the text and error flag, post-tool).
fn tool_hook_input(
    stage: HookStage,
    input: &RunInput<'_>,
    call: &ToolCallRequest,
    arguments: &Value,
    result: Option<(&str, bool)>,
) -> HookInput {
    HookInput {
        stage,
        session_id: input.session_id.clone(),
        run_id: input.run_id.clone(),
        call_id: Some(call.id.clone()),
        tool: Some(call.name.clone()),
        arguments: Some(arguments.clone()),
        result: result.map(|(text, _)| text.to_string()),
        is_error: result.map(|(_, is_error)| is_error),
        answer: None,
    }
}

/// What a call runs: the catalog's tool and the arguments.
struct Target<'c> {
    info: &'c ToolInfo,
    arguments: Map<String, Value>,
    /// The same arguments as one value, as hashed, shown and given to hooks.
    value: &'c Value,
}

impl Agent {
    /// One tool call through policy and approval; returns the tool message for the model, the
    /// tokens the tool spent on a model request of its own, and the calls a sub-agent made.
    pub(crate) async fn tool_call(
        &self,
        call: &ToolCallRequest,
        step: &Step<'_>,
        search: Option<SearchContext<'_>>,
        input: &RunInput<'_>,
        emit: &impl Fn(RunEvent),
    ) -> (Message, Usage, u32) {
        let outcome = match self.pipeline(call, step, search, input, emit).await {
            Ok(outcome) | Err(outcome) => outcome,
        };
        self.cut(call, outcome, emit)
    }

    /// The steps of one call, in order.
    async fn pipeline(
        &self,
        call: &ToolCallRequest,
        step: &Step<'_>,
        search: Option<SearchContext<'_>>,
        input: &RunInput<'_>,
        emit: &impl Fn(RunEvent),
    ) -> Next<Outcome> {
        let arguments = parse(call, emit)?;
        self.own_tool(call, &arguments, step, search, input, emit)
            .await?;
        let info = self.find(call, step.catalog)?;
        let value = Value::Object(arguments.clone());
        let ask_anyway = self.pre_hooks(call, &value, input, emit).await?;
        let target = Target {
            info,
            arguments,
            value: &value,
        };
        let result = self
            .gate_and_call(target, ask_anyway, call, input, emit)
            .await?;
        Ok(self.post_hooks(call, &value, &result, input, emit).await)
    }

    /// The agent's own tools, which act on the run and so are answered here: `Err` with the
    /// outcome when the call is one of them.
    async fn own_tool(
        &self,
        call: &ToolCallRequest,
        arguments: &Map<String, Value>,
        step: &Step<'_>,
        search: Option<SearchContext<'_>>,
        input: &RunInput<'_>,
        emit: &impl Fn(RunEvent),
    ) -> Next<()> {
        if let Some(search) = &search {
            if call.name == TOOL_SEARCH {
                let (is_error, content) = crate::select::tool_search(
                    search.selection,
                    search.allowed,
                    arguments,
                    search.state,
                )
                .await;
                return Err(Outcome::text(is_error, content));
            }
            // A tool the model has called stays on offer for the rest of the run.
            if let Ok(mut state) = search.state.lock() {
                state.keep(&call.name);
            }
        }
        if call.name == crate::builtin::PLAN {
            return Err(plan(call, arguments, emit));
        }
        if call.name == crate::builtin::TASK && self.sub_agents {
            return Err(
                match crate::builtin::parse_task(Value::Object(arguments.clone())) {
                    Ok(task) => self.sub_agent(call, task, step, input, emit).await,
                    Err(why) => Outcome::failed(why),
                },
            );
        }
        Ok(())
    }

    /// The catalog's tool of that name, or why there is none (the host may know, e.g. a server
    /// that is down).
    fn find<'c>(&self, call: &ToolCallRequest, catalog: &'c [ToolInfo]) -> Next<&'c ToolInfo> {
        catalog
            .iter()
            .find(|t| t.tool.name == call.name)
            .ok_or_else(|| {
                Outcome::failed(
                    self.tools
                        .unavailable(&call.name)
                        .unwrap_or_else(|| format!("unknown tool `{}`", call.name)),
                )
            })
    }

    /// The user's pre-tool hooks: a denial or a failure stops the call with a reason the model
    /// reads; an ask (`Ok(true)`) sends it to the user whatever the policy says.
    async fn pre_hooks(
        &self,
        call: &ToolCallRequest,
        arguments: &Value,
        input: &RunInput<'_>,
        emit: &impl Fn(RunEvent),
    ) -> Next<bool> {
        let Some(hooks) = &self.hooks else {
            return Ok(false);
        };
        let hook_input = tool_hook_input(HookStage::PreTool, input, call, arguments, None);
        let reports = crate::hooks::run_and_report(hooks.as_ref(), hook_input, emit).await;
        crate::hooks::pre_tool_verdict(&reports).map_err(Outcome::failed)
    }

    /// The gate, then the call through it: the gate is built once because both the policy's
    /// question and a protected path's go through it.
    async fn gate_and_call(
        &self,
        target: Target<'_>,
        ask_anyway: bool,
        call: &ToolCallRequest,
        input: &RunInput<'_>,
        emit: &impl Fn(RunEvent),
    ) -> Next<CallToolResult> {
        // What the user is asked shows the model's texts redacted; the hash covers the real ones.
        let redacting = self.redactor.as_ref().map(|redactor| RedactingApprover {
            inner: input.approver,
            redactor: redactor.as_ref(),
        });
        let approver: &dyn Approver = match &redacting {
            Some(redacting) => redacting,
            None => input.approver,
        };
        let gate = Gate {
            policy: &self.policy,
            grants: &input.grants,
            approver,
            paths: self.path_approvals.as_deref(),
            ask_anyway,
        };
        let on_approval = |state: ApprovalState, answer: Option<ApprovalAnswer>, reason: &str| {
            emit(RunEvent::Approval {
                call_id: call.id.clone(),
                name: call.name.clone(),
                state,
                answer,
                reason: reason.to_string(),
            });
        };
        let authorized = tokio::select! {
            _ = input.cancel.cancelled() => Err("cancelled".to_string()),
            r = gate.authorize(target.info, &input.run_id, &call.id, target.value, on_approval) => r,
        };
        authorized.map_err(Outcome::failed)?;
        if input.cancel.is_cancelled() {
            return Err(Outcome::failed("cancelled"));
        }
        self.call(&gate, target, call, input, on_approval).await
    }

    /// Calls the tool; when a built-in tool stopped at protected paths, asks about exactly
    /// those and, approved, calls once more while they are held.
    async fn call(
        &self,
        gate: &Gate<'_>,
        target: Target<'_>,
        call: &ToolCallRequest,
        input: &RunInput<'_>,
        on_approval: impl Fn(ApprovalState, Option<ApprovalAnswer>, &str),
    ) -> Next<CallToolResult> {
        let Target {
            info,
            arguments,
            value,
        } = target;
        let cancelled = || Outcome::failed("cancelled");
        let ctx = CallContext {
            session_id: input.session_id.clone(),
            run_id: input.run_id.clone(),
            call_id: call.id.clone(),
            cancel: input.cancel.child_token(),
        };
        let result = tokio::select! {
            _ = input.cancel.cancelled() => return Err(cancelled()),
            r = self.tools.call_tool(info, arguments.clone(), ctx.clone()) => r,
        };
        let approved = tokio::select! {
            _ = input.cancel.cancelled() => return Err(cancelled()),
            a = gate.approve_protected(info, &input.run_id, &call.id, value, &result, on_approval) => a,
        };
        let Some(paths) = approved else {
            return Ok(result);
        };
        let _held = gate.hold(paths);
        tokio::select! {
            _ = input.cancel.cancelled() => Err(cancelled()),
            r = self.tools.call_tool(info, arguments, ctx) => Ok(r),
        }
    }

    /// Reports the result's edits, then runs the user's post-tool hooks, whose output joins
    /// the text the model reads.
    async fn post_hooks(
        &self,
        call: &ToolCallRequest,
        arguments: &Value,
        result: &CallToolResult,
        input: &RunInput<'_>,
        emit: &impl Fn(RunEvent),
    ) -> Outcome {
        for edit in edits_of(result) {
            emit(RunEvent::Edit {
                call_id: call.id.clone(),
                uri: edit.uri,
                applied: edit.applied,
                reason: edit.reason,
            });
        }
        let is_error = result.is_error.unwrap_or(false);
        let mut content = result_text(result);
        if let Some(hooks) = &self.hooks {
            let seen = Some((content.as_str(), is_error));
            let hook_input = tool_hook_input(HookStage::PostTool, input, call, arguments, seen);
            let reports = crate::hooks::run_and_report(hooks.as_ref(), hook_input, emit).await;
            content = crate::hooks::with_post_tool_notes(content, &reports);
        }
        Outcome {
            is_error,
            content,
            images: images_of(result),
            usage: usage_of(result),
            nested_calls: 0,
        }
    }

    /// The last step: the text the model reads, redacted and cut to the limit, goes to the
    /// editor as the call's result and becomes the tool message.
    fn cut(
        &self,
        call: &ToolCallRequest,
        outcome: Outcome,
        emit: &impl Fn(RunEvent),
    ) -> (Message, Usage, u32) {
        let Outcome {
            is_error,
            content,
            images,
            usage,
            nested_calls,
        } = outcome;
        let content = truncate(
            self.redacted("tool_result", &content),
            self.limits.tool_result_max_bytes,
        );
        emit(RunEvent::ToolResult {
            call_id: call.id.clone(),
            is_error,
            content: content.clone(),
            images,
        });
        let message = Message::Tool {
            call_id: call.id.clone(),
            name: call.name.clone(),
            content,
            is_error,
        };
        (message, usage, nested_calls)
    }
}
