//! Calling a built-in tool set the way the hub does, for the tool crates' tests: arguments as a
//! JSON object, a call context with its own cancellation, a time limit that fails a hung call,
//! and what the model would read.

use std::time::Duration;

use cairn_agent::tools::{CallContext, ToolHost};
use rmcp::model::CallToolResult;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

/// Longer than any tool's own limit: a call that takes this long hangs.
const HUNG: Duration = Duration::from_secs(300);

/// What one call came to.
#[derive(Debug)]
pub struct Seen {
    pub is_error: bool,
    /// The text blocks, joined by line breaks: what the model reads.
    pub text: String,
    pub result: CallToolResult,
}

/// A call context for a test: fixed ids, and `cancel`.
pub fn context(cancel: CancellationToken) -> CallContext {
    CallContext {
        session_id: "s".into(),
        run_id: "r".into(),
        call_id: "c".into(),
        cancel,
    }
}

/// The text blocks of `result`, joined by line breaks.
pub fn text_of(result: &CallToolResult) -> String {
    result
        .content
        .iter()
        .filter_map(|c| c.as_text().map(|t| t.text.clone()))
        .collect::<Vec<_>>()
        .join("\n")
}

/// Calls `name` on `host` with `args` (a JSON object).
pub async fn call(host: &impl ToolHost, name: &str, args: Value) -> Seen {
    call_with(host, name, args, CancellationToken::new()).await
}

/// [`call`], cancelled when `cancel` fires.
///
/// # Panics
/// When `args` is not an object or the call outlives the hang limit: the test fails.
pub async fn call_with(
    host: &impl ToolHost,
    name: &str,
    args: Value,
    cancel: CancellationToken,
) -> Seen {
    let Value::Object(args) = args else {
        panic!("arguments must be a JSON object")
    };
    let Ok(result) = tokio::time::timeout(HUNG, host.call(name, args, context(cancel))).await
    else {
        panic!("`{name}` hung: no result in {} s", HUNG.as_secs())
    };
    Seen {
        is_error: result.is_error == Some(true),
        text: text_of(&result),
        result,
    }
}
