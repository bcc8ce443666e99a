//! The agent's own tools, answered by the turn loop rather than a tool host: `plan` (a short
//! list of steps the user sees) and `task` (a side task for a sub-agent with a fresh context).
//!
//! They live here because they act on the run itself (its events, its budget, its tools);
//! every tool that touches the world is a `ToolHost`'s.

use serde::Deserialize;
use serde_json::json;

use crate::events::{PlanStep, StepState};
use crate::model::ToolSpec;

/// The plan tool's name.
pub const PLAN: &str = "plan";
/// The sub-agent tool's name.
pub const TASK: &str = "task";

/// Most steps a plan holds; a plan is a short list, not a log.
pub const MAX_PLAN_STEPS: usize = 20;
/// Most characters of one step's title.
const MAX_STEP_TITLE: usize = 200;

/// What the model is told about `plan`.
pub fn plan_spec() -> ToolSpec {
    ToolSpec {
        name: PLAN.to_owned(),
        description: "Keep the plan of a task of three or more steps, shown to the user. Send \
                      the whole list each time (it replaces the last one), with one step \
                      `inProgress` while you work on it and steps `done` as you finish them. \
                      Skip it for quick questions."
            .to_owned(),
        input_schema: json!({
            "type": "object",
            "properties": {
                "steps": {
                    "type": "array",
                    "maxItems": MAX_PLAN_STEPS,
                    "items": {
                        "type": "object",
                        "properties": {
                            "title": {"type": "string", "description": "The step, in a few words"},
                            "state": {"type": "string", "enum": ["pending", "inProgress", "done"]}
                        },
                        "required": ["title", "state"]
                    }
                }
            },
            "required": ["steps"]
        }),
    }
}

/// What the model is told about `task`.
pub fn task_spec() -> ToolSpec {
    ToolSpec {
        name: TASK.to_owned(),
        description: "Hand a self-contained side task (research across many files, a check, a \
                      summary) to a sub-agent that starts with a fresh context and returns only \
                      its final answer. Put everything it needs in `prompt`; it does not see this \
                      conversation. `tools` narrows the tools it may use (names from your own \
                      tools; default: all of yours). Its tool calls count against this turn's \
                      budget."
            .to_owned(),
        input_schema: json!({
            "type": "object",
            "properties": {
                "description": {"type": "string", "description": "A short title, shown to the user"},
                "prompt": {"type": "string", "description": "The whole task, with the context it needs"},
                "tools": {"type": "array", "items": {"type": "string"},
                          "description": "The only tools it may use"}
            },
            "required": ["description", "prompt"]
        }),
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct PlanArgs {
    steps: Vec<PlanStep>,
}

/// The steps of a `plan` call, or the error the model reads.
pub fn parse_plan(arguments: serde_json::Value) -> Result<Vec<PlanStep>, String> {
    let args: PlanArgs = serde_json::from_value(arguments)
        .map_err(|e| format!("plan: {e}; send {{\"steps\": [{{\"title\", \"state\"}}]}}"))?;
    if args.steps.len() > MAX_PLAN_STEPS {
        return Err(format!(
            "plan: {} steps is more than {MAX_PLAN_STEPS}; keep the plan short",
            args.steps.len()
        ));
    }
    Ok(args
        .steps
        .into_iter()
        .map(|mut s| {
            s.title = s.title.trim().chars().take(MAX_STEP_TITLE).collect();
            s
        })
        .collect())
}

/// What the model reads back after a plan update.
pub fn plan_summary(steps: &[PlanStep]) -> String {
    let count = |state| steps.iter().filter(|s| s.state == state).count();
    format!(
        "plan updated: {} done, {} in progress, {} pending",
        count(StepState::Done),
        count(StepState::InProgress),
        count(StepState::Pending)
    )
}

/// A `task` call's arguments.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TaskArgs {
    pub description: String,
    pub prompt: String,
    #[serde(default)]
    pub tools: Option<Vec<String>>,
}

/// The arguments of a `task` call, or the error the model reads.
pub fn parse_task(arguments: serde_json::Value) -> Result<TaskArgs, String> {
    let args: TaskArgs = serde_json::from_value(arguments).map_err(|e| {
        format!("task: {e}; send {{\"description\", \"prompt\", \"tools\" (optional)}}")
    })?;
    if args.prompt.trim().is_empty() {
        return Err("task: `prompt` is empty; say what the sub-agent should do".into());
    }
    Ok(args)
}

/// What a sub-agent is told on top of the parent's system prompt.
pub const SUB_AGENT_PROMPT: &str = "You are a sub-agent: another agent gave you the task below. \
You do not see its conversation. Do the task with your tools, then answer with exactly what it \
needs (findings, file paths, the result), briefly: your final answer is all it receives.";

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn plans_are_parsed_capped_and_summarised() {
        let steps = parse_plan(json!({"steps": [
            {"title": " read ", "state": "done"},
            {"title": "fix", "state": "inProgress"},
            {"title": "test", "state": "pending"}
        ]}))
        .unwrap();
        assert_eq!(steps[0].title, "read");
        assert_eq!(
            plan_summary(&steps),
            "plan updated: 1 done, 1 in progress, 1 pending"
        );
        let err = parse_plan(json!({"steps": [{"title": "x", "state": "started"}]})).unwrap_err();
        assert!(err.contains("unknown variant `started`"), "{err}");
        let many: Vec<_> = (0..21)
            .map(|i| json!({"title": i.to_string(), "state": "pending"}))
            .collect();
        assert!(
            parse_plan(json!({ "steps": many }))
                .unwrap_err()
                .contains("more than 20")
        );
    }

    #[test]
    fn a_task_needs_a_prompt() {
        assert!(
            parse_task(json!({"description": "d", "prompt": " "}))
                .unwrap_err()
                .contains("empty")
        );
        let t =
            parse_task(json!({"description": "d", "prompt": "p", "tools": ["read_file"]})).unwrap();
        assert_eq!(t.tools.unwrap(), vec!["read_file"]);
    }
}
