//! The results every built-in tool returns, built one way: text, structured content, errors,
//! edit reports, and argument errors that name the field.

use crate::error::ToolError;
use cairn_agent::tools::{EditReport, attach_edits};
use rmcp::model::{CallToolResult, ContentBlock};
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

/// A successful result of `text`.
pub fn text(text: impl Into<String>) -> CallToolResult {
    CallToolResult::success(vec![ContentBlock::text(text)])
}

/// An error result the model reads: what went wrong and what to do.
pub fn error(text: impl Into<String>) -> CallToolResult {
    CallToolResult::error(vec![ContentBlock::text(text)])
}

/// A text result, or an error result with the error's message, from a `Result` of text.
pub fn from_text<T: Into<String>, E: std::fmt::Display>(result: Result<T, E>) -> CallToolResult {
    match result {
        Ok(t) => text(t),
        Err(e) => error(e.to_string()),
    }
}

/// A failed call reads as an error result with the error's message.
impl From<ToolError> for CallToolResult {
    fn from(e: ToolError) -> CallToolResult {
        error(e.to_string())
    }
}

/// A successful result with `value` as structured content and its JSON as the text (clients that
/// read only text see the same data).
pub fn structured(value: Value) -> CallToolResult {
    let shown = serde_json::to_string_pretty(&value).unwrap_or_default();
    let mut result = text(shown);
    result.structured_content = Some(value);
    result
}

/// `result` reporting the edits it made or tried to make, for the editor.
pub fn with_edits(result: CallToolResult, reports: &[EditReport]) -> CallToolResult {
    attach_edits(result, reports)
}

/// Deserialises `arguments` for tool `tool`, or an error result that names the offending field.
// The error is the result the model gets, built at most once per call; boxing it would only
// move every caller's `?` through a `Box` (it grew past the lint's limit when the ACP SDK turned
// on serde_json's `preserve_order` for the workspace).
#[allow(clippy::result_large_err)]
pub fn parse_args<T: DeserializeOwned>(
    tool: &str,
    arguments: Map<String, Value>,
) -> Result<T, CallToolResult> {
    serde_path_to_error::deserialize(Value::Object(arguments)).map_err(|e| {
        let path = e.path().to_string();
        // Missing and unknown fields are reported at the top level; their message names them.
        if path == "." {
            error(format!("invalid arguments for {tool}: {}", e.inner()))
        } else {
            error(format!(
                "invalid argument `{path}` for {tool}: {}",
                e.inner()
            ))
        }
    })
}

/// `result` with the edit of `path` reported for the editor (applied, or not with `reason`),
/// as the built-in file tools report theirs: for tools that save a file (downloads).
pub fn with_edit(
    result: CallToolResult,
    path: &cairn_workspace::WorkspacePath,
    reason: Option<String>,
) -> CallToolResult {
    let report = EditReport {
        uri: path.uri(),
        applied: reason.is_none(),
        reason,
    };
    with_edits(result, &[report])
}

/// Whether the user approved `key` once, for this call: after a [`strict_question`] the agent
/// holds that approval in `approvals` while the same call runs again, then drops it.
pub fn approved_once(approvals: &cairn_workspace::ExactApprovals, key: &str) -> bool {
    approvals.holds(std::path::Path::new(key), cairn_workspace::Operation::Write)
}

/// The refusal that makes the agent ask the strict question about `shown` (allow once only; no
/// `--yes`, no session grant covers it), keyed on `key`; the same call runs again with the
/// approval held, where [`approved_once`] sees it.
pub fn strict_question(message: String, shown: String, key: String, why: &str) -> CallToolResult {
    cairn_agent::tools::attach_protected(
        error(message),
        &[cairn_agent::tools::ProtectedPath {
            path: shown,
            key,
            operation: "write".into(),
            why: why.to_owned(),
        }],
    )
}
