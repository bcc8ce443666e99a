//! `head_tail`: the first and/or last lines of a file.

use std::fmt::Write as _;
use std::sync::Arc;

use cairn_workspace::Workspace;
use rmcp::model::{CallToolResult, Tool};
use serde::Deserialize;
use serde_json::{Map, Value, json};

use crate::util::{
    MAX_OUTPUT_BYTES, blocking, cut_line, error_result, object_schema, parse_args, text_result,
    tool,
};

const DEFAULT_HEAD: usize = 10;
const MAX_LINES: usize = 1000;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Args {
    path: String,
    head: Option<usize>,
    tail: Option<usize>,
}

pub(crate) fn definition() -> Tool {
    let schema = object_schema(
        json!({
            "path": {"type": "string", "description": "File to read, relative to the workspace root (or absolute inside it)."},
            "head": {"type": "integer", "minimum": 0, "maximum": MAX_LINES, "description": "Lines from the start. Default 10 when tail is not given, else 0."},
            "tail": {"type": "integer", "minimum": 0, "maximum": MAX_LINES, "description": "Lines from the end. Default 0."}
        }),
        &["path"],
    );
    tool(
        "head_tail",
        "First/last lines",
        "Show the first and/or last N numbered lines of a file; use it to peek at a log or a long file without reading it all.",
        schema,
        true,
    )
}

pub(crate) fn render(text: &str, head: usize, tail: usize) -> String {
    let lines: Vec<&str> = text.lines().collect();
    let total = lines.len();
    if total == 0 {
        return "(empty file)".to_owned();
    }
    let mut wanted: Vec<usize> = (0..head.min(total)).collect();
    let tail_start = total.saturating_sub(tail).max(head.min(total));
    let mut out = String::new();
    let gap = tail_start > head && tail > 0;
    wanted.extend(tail_start..total);
    for (k, i) in wanted.iter().enumerate() {
        if gap && k == head {
            let _ = writeln!(out, "  ...\t[{} lines skipped]", tail_start - head);
        }
        let (line, _) = cut_line(lines.get(*i).copied().unwrap_or(""), 2000);
        let _ = writeln!(out, "{:>5}\t{line}", i + 1);
        if out.len() > MAX_OUTPUT_BYTES {
            out.push_str("[output capped]\n");
            break;
        }
    }
    let _ = write!(out, "[{total} lines in all]");
    out
}

pub(crate) async fn call(ws: Arc<Workspace>, arguments: Map<String, Value>) -> CallToolResult {
    let args: Args = match parse_args("head_tail", arguments) {
        Ok(args) => args,
        Err(result) => return result,
    };
    let tail = args.tail.unwrap_or(0);
    let head = args
        .head
        .unwrap_or(if args.tail.is_some() { 0 } else { DEFAULT_HEAD });
    if head > MAX_LINES || tail > MAX_LINES {
        return error_result(format!(
            "invalid arguments for head_tail: head and tail are at most {MAX_LINES}"
        ));
    }
    blocking(ws, move |ws| {
        match ws.resolve(&args.path).and_then(|p| ws.read_text(&p)) {
            Ok((text, _)) => text_result(render(&text, head, tail)),
            Err(e) => error_result(e.to_string()),
        }
    })
    .await
}
