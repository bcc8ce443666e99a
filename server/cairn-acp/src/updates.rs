//! Run events and stored transcripts as ACP `session/update` notifications.

use agent_client_protocol::v1::schema::{
    ContentBlock, ContentChunk, ImageContent, Plan, PlanEntry, PlanEntryPriority, PlanEntryStatus,
    SessionUpdate, ToolCall, ToolCallContent, ToolCallStatus, ToolCallUpdate, ToolCallUpdateFields,
    ToolKind,
};
use cairn_agent::RunEvent;
use cairn_agent::events::ApprovalState;
use cairn_agent::events::{HookOutcome, StepState};
use cairn_agent::model::Message;
use cairn_agent::policy::ApprovalAnswer;
use cairn_agent::sessions::Record;

/// What the client is told of one run event; `None` for events it has no update for (the end
/// of the run is the prompt's response).
pub(crate) fn of_event(event: &RunEvent) -> Option<SessionUpdate> {
    match event {
        RunEvent::Text { delta } => Some(SessionUpdate::AgentMessageChunk(ContentChunk::new(
            delta.clone().into(),
        ))),
        RunEvent::ToolCall {
            call_id,
            name,
            arguments,
        } => Some(SessionUpdate::ToolCall(
            ToolCall::new(call_id.clone(), name.clone())
                .kind(kind_of(name))
                .status(ToolCallStatus::Pending)
                .raw_input(arguments.clone()),
        )),
        // Allowed calls run now; a refused one is reported by its (error) result.
        RunEvent::Approval {
            call_id,
            state: ApprovalState::Answered,
            answer: Some(ApprovalAnswer::AllowOnce | ApprovalAnswer::AllowSession),
            ..
        } => Some(SessionUpdate::ToolCallUpdate(ToolCallUpdate::new(
            call_id.clone(),
            ToolCallUpdateFields::new().status(ToolCallStatus::InProgress),
        ))),
        RunEvent::Approval { .. } => None,
        RunEvent::ToolResult {
            call_id,
            is_error,
            content,
            images,
        } => Some(SessionUpdate::ToolCallUpdate(ToolCallUpdate::new(
            call_id.clone(),
            ToolCallUpdateFields::new()
                .status(if *is_error {
                    ToolCallStatus::Failed
                } else {
                    ToolCallStatus::Completed
                })
                .content(
                    std::iter::once(content.clone().into())
                        .chain(images.iter().map(|i| {
                            ContentBlock::Image(ImageContent::new(
                                i.data.clone(),
                                i.mime_type.clone(),
                            ))
                            .into()
                        }))
                        .collect::<Vec<ToolCallContent>>(),
                ),
        ))),
        RunEvent::Plan { steps, .. } => Some(SessionUpdate::Plan(Plan::new(
            steps
                .iter()
                .map(|s| {
                    PlanEntry::new(
                        s.title.clone(),
                        PlanEntryPriority::Medium,
                        match s.state {
                            StepState::Pending => PlanEntryStatus::Pending,
                            StepState::InProgress => PlanEntryStatus::InProgress,
                            StepState::Done => PlanEntryStatus::Completed,
                        },
                    )
                })
                .collect(),
        ))),
        // ACP has no nested runs: a sub-agent's tool calls show as calls of their own (their
        // ids under the task's), its text stays inside it (the task's result is its answer).
        RunEvent::SubAgent { call_id, event } => match event.as_ref() {
            RunEvent::ToolCall {
                call_id: inner,
                name,
                arguments,
            } => Some(SessionUpdate::ToolCall(
                ToolCall::new(format!("{call_id}/{inner}"), format!("task: {name}"))
                    .kind(kind_of(name))
                    .status(ToolCallStatus::Pending)
                    .raw_input(arguments.clone()),
            )),
            RunEvent::ToolResult {
                call_id: inner,
                is_error,
                content,
                ..
            } => Some(SessionUpdate::ToolCallUpdate(ToolCallUpdate::new(
                format!("{call_id}/{inner}"),
                ToolCallUpdateFields::new()
                    .status(if *is_error {
                        ToolCallStatus::Failed
                    } else {
                        ToolCallStatus::Completed
                    })
                    .content(vec![content.clone().into()]),
            ))),
            _ => None,
        },
        // Hooks and compaction are the agent's own doings: thoughts, so the answer stays clean.
        RunEvent::Hook {
            command,
            outcome,
            message,
            ..
        } => {
            let said = match outcome {
                HookOutcome::Allowed if message.trim().is_empty() => return None,
                HookOutcome::Allowed => format!("hook `{command}`: {message}"),
                HookOutcome::Denied => format!("hook `{command}` denied the call: {message}"),
                HookOutcome::Asked => format!("hook `{command}` asks for your approval: {message}"),
                HookOutcome::Output => format!("hook `{command}` says: {message}"),
                HookOutcome::Failed => format!("hook `{command}` failed: {message}"),
            };
            Some(SessionUpdate::AgentThoughtChunk(ContentChunk::new(
                format!("{said}\n").into(),
            )))
        }
        RunEvent::Compacted {
            turns,
            tokens_before,
            tokens_after,
            ..
        } => Some(SessionUpdate::AgentThoughtChunk(ContentChunk::new(
            format!(
                "Summarised {turns} older turns to fit the context window ({tokens_before} → {tokens_after} tokens).\n"
            )
            .into(),
        ))),
        RunEvent::Edit { .. } | RunEvent::Done { .. } | RunEvent::Error { .. } => None,
    }
}

/// The ACP kind of a tool, from its name, so clients can pick an icon.
pub(crate) fn kind_of(name: &str) -> ToolKind {
    // External tools are `server__tool`; their own name says what they do.
    let own = name.rsplit("__").next().unwrap_or(name);
    let has = |words: &[&str]| words.iter().any(|w| own.contains(w));
    if has(&["delete", "remove"]) {
        ToolKind::Delete
    } else if has(&["move", "rename"]) {
        ToolKind::Move
    } else if has(&["write", "edit", "patch", "create", "replace", "insert"]) {
        ToolKind::Edit
    } else if has(&["grep", "glob", "search", "find"]) {
        ToolKind::Search
    } else if has(&["fetch", "http", "web", "download"]) {
        ToolKind::Fetch
    } else if has(&["run", "exec", "python", "shell", "command"]) {
        ToolKind::Execute
    } else if has(&[
        "read", "list", "stat", "tree", "show", "log", "diff", "status",
    ]) {
        ToolKind::Read
    } else {
        ToolKind::Other
    }
}

/// A stored transcript as the updates that show it again: the user's messages and the agent's
/// answers, in order.
pub(crate) fn of_transcript(records: &[Record]) -> Vec<SessionUpdate> {
    records
        .iter()
        .filter_map(|record| match record {
            Record::Message {
                message: Message::User { text, .. },
                ..
            } => Some(SessionUpdate::UserMessageChunk(ContentChunk::new(
                text.clone().into(),
            ))),
            Record::Message {
                message: Message::Assistant { text, .. },
                ..
            } if !text.is_empty() => Some(SessionUpdate::AgentMessageChunk(ContentChunk::new(
                text.clone().into(),
            ))),
            _ => None,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn tool_kinds_follow_the_name() {
        assert_eq!(kind_of("read_file"), ToolKind::Read);
        assert_eq!(kind_of("write_file"), ToolKind::Edit);
        assert_eq!(kind_of("grep"), ToolKind::Search);
        assert_eq!(kind_of("time__get_current_time"), ToolKind::Other);
        assert_eq!(kind_of("delete_file"), ToolKind::Delete);
    }
}
