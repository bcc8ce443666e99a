//! `insert_at_line`: insert text before a given line (or at the end).

use std::sync::Arc;

use cairn_workspace::Workspace;
use rmcp::model::{CallToolResult, Tool};
use serde::Deserialize;
use serde_json::{Map, Value, json};

use crate::util::{
    object_schema, parse_args, plural, report, text_result, tool, with_edits, write_whole,
};

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Args {
    path: String,
    line: usize,
    text: String,
}

pub(crate) fn definition() -> Tool {
    let schema = object_schema(
        json!({
            "path": {"type": "string", "description": "File to change, relative to the workspace root (or absolute inside it)."},
            "line": {"type": "integer", "minimum": 1, "description": "The inserted text becomes this line (1-based); one past the last line appends."},
            "text": {"type": "string", "description": "Lines to insert; a final line break is added when missing."}
        }),
        &["path", "line", "text"],
    );
    tool(
        "insert_at_line",
        "Insert at line",
        "Insert lines before a given line number of a file (or append with last line + 1); use it to add code where no unique text anchors an edit.",
        schema,
        false,
    )
}

/// Where line `line` (1-based) starts in `text`; `None` past one after the last line.
pub(crate) fn insert(text: &str, line: usize, new: &str) -> Result<String, String> {
    let crlf = text.contains("\r\n");
    let nl = if crlf { "\r\n" } else { "\n" };
    let mut new = if crlf {
        new.replace("\r\n", "\n").replace('\n', "\r\n")
    } else {
        new.to_owned()
    };
    if !new.is_empty() && !new.ends_with('\n') {
        new.push_str(nl);
    }
    let total = text.lines().count();
    if line == 0 || line > total + 1 {
        return Err(format!(
            "line {line} is out of range: the file has {total} lines, so use 1 to {}",
            total + 1
        ));
    }
    let mut starts = text.match_indices('\n').map(|(i, _)| i + 1);
    let at = if line == 1 {
        0
    } else {
        starts.nth(line - 2).unwrap_or(text.len())
    };
    let mut out = String::with_capacity(text.len() + new.len() + 2);
    out.push_str(text.get(..at).unwrap_or(text));
    if at == text.len() && !text.is_empty() && !text.ends_with('\n') {
        out.push_str(nl);
    }
    out.push_str(&new);
    out.push_str(text.get(at..).unwrap_or(""));
    Ok(out)
}

pub(crate) async fn call(ws: Arc<Workspace>, arguments: Map<String, Value>) -> CallToolResult {
    let args: Args = match parse_args("insert_at_line", arguments) {
        Ok(args) => args,
        Err(result) => return result,
    };
    let (path, read) = match crate::util::read_for_edit(&ws, &args.path).await {
        Ok(r) => r,
        Err(result) => return result,
    };
    let rejected = |reason: String| crate::util::rejected(&path, reason);
    let (old, version) = match read {
        Ok(Some(read)) => read,
        Ok(None) => return rejected(format!("{} does not exist", path.display_path())),
        Err(e) => return rejected(e),
    };
    let new = match insert(&old, args.line, &args.text) {
        Ok(new) => new,
        Err(e) => return rejected(format!("{}: {e}", path.display_path())),
    };
    let n = args.text.lines().count().max(1);
    match write_whole(&ws, &path, &old, version, new).await {
        Ok(where_) => with_edits(
            text_result(format!(
                "inserted {} at line {} of {}{where_}",
                plural(n, "line"),
                args.line,
                path.display_path()
            )),
            vec![report(&path, None)],
        ),
        Err(e) => rejected(e),
    }
}
