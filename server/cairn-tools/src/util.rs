//! Helpers shared by the tools: argument parsing, results, schemas, caps.

use std::sync::Arc;

use cairn_workspace::Workspace;
use rmcp::model::{CallToolResult, ContentBlock, JsonObject, Tool, ToolAnnotations};
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

/// Cap on the text a tool returns, so one call cannot flood the model's context.
pub(crate) const MAX_OUTPUT_BYTES: usize = 50_000;

pub(crate) fn text_result(text: impl Into<String>) -> CallToolResult {
    CallToolResult::success(vec![ContentBlock::text(text)])
}

pub(crate) fn error_result(text: impl Into<String>) -> CallToolResult {
    CallToolResult::error(vec![ContentBlock::text(text)])
}

/// Deserialise the arguments, or an `is_error` result that names the offending field.
pub(crate) fn parse_args<T: DeserializeOwned>(
    tool: &str,
    arguments: Map<String, Value>,
) -> Result<T, CallToolResult> {
    serde_path_to_error::deserialize(Value::Object(arguments)).map_err(|e| {
        let path = e.path().to_string();
        // Missing and unknown fields are reported at the top level; their message names them.
        if path == "." {
            error_result(format!("invalid arguments for {tool}: {}", e.inner()))
        } else {
            error_result(format!(
                "invalid argument `{path}` for {tool}: {}",
                e.inner()
            ))
        }
    })
}

/// An object schema that refuses unknown properties.
pub(crate) fn object_schema(properties: Value, required: &[&str]) -> JsonObject {
    let mut schema = Map::new();
    schema.insert("type".to_owned(), Value::from("object"));
    schema.insert("properties".to_owned(), properties);
    schema.insert("required".to_owned(), Value::from(required.to_vec()));
    schema.insert("additionalProperties".to_owned(), Value::Bool(false));
    schema
}

/// A tool definition; `read_only` tools are also idempotent and non-destructive.
pub(crate) fn tool(
    name: &'static str,
    title: &str,
    description: &'static str,
    schema: JsonObject,
    read_only: bool,
) -> Tool {
    let annotations = ToolAnnotations::with_title(title)
        .read_only(read_only)
        .destructive(!read_only)
        .idempotent(read_only)
        .open_world(false);
    Tool::new(name, description, Arc::new(schema)).with_annotations(annotations)
}

/// Run blocking file work off the async executor; a panic inside becomes an error result.
pub(crate) async fn blocking(
    ws: Arc<Workspace>,
    f: impl FnOnce(&Workspace) -> CallToolResult + Send + 'static,
) -> CallToolResult {
    match tokio::task::spawn_blocking(move || f(&ws)).await {
        Ok(result) => result,
        Err(e) => error_result(format!("internal error: the tool failed ({e})")),
    }
}

/// `line`, cut to at most `max` characters with a marker when it was longer.
pub(crate) fn cut_line(line: &str, max: usize) -> (std::borrow::Cow<'_, str>, bool) {
    match line.char_indices().nth(max) {
        Some((at, _)) => (
            format!("{}… [line cut]", line.get(..at).unwrap_or(line)).into(),
            true,
        ),
        None => (line.into(), false),
    }
}
