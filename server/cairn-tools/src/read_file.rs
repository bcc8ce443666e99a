//! `read_file`: numbered lines of a file, the editor's unsaved text when it is open.

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

/// Lines shown when no `limit` is given.
const DEFAULT_LIMIT: usize = 2000;
/// Longer lines (minified code) are cut, so one line cannot eat the whole output.
const MAX_LINE_CHARS: usize = 2000;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Args {
    path: String,
    offset: Option<usize>,
    limit: Option<usize>,
}

pub(crate) fn definition() -> Tool {
    let schema = object_schema(
        json!({
            "path": {
                "type": "string",
                "description": "File to read, relative to the workspace root (or absolute inside it)."
            },
            "offset": {
                "type": "integer", "minimum": 1,
                "description": "First line to show, counting from 1. Default 1."
            },
            "limit": {
                "type": "integer", "minimum": 1,
                "description": format!("How many lines to show. Default {DEFAULT_LIMIT}.")
            }
        }),
        &["path"],
    );
    tool(
        "read_file",
        "Read file",
        "Read a text file with line numbers (the editor's unsaved text if it is open); use it before editing a file, and offset/limit to page through long files.",
        schema,
        true,
    )
}

pub(crate) async fn call(ws: Arc<Workspace>, arguments: Map<String, Value>) -> CallToolResult {
    let args: Args = match parse_args("read_file", arguments) {
        Ok(args) => args,
        Err(result) => return result,
    };
    if args.offset == Some(0) {
        return error_result("invalid argument `offset` for read_file: lines are numbered from 1");
    }
    if args.limit == Some(0) {
        return error_result("invalid argument `limit` for read_file: it must be at least 1");
    }
    blocking(ws, move |ws| {
        let read = ws
            .resolve(&args.path)
            .and_then(|p| ws.read_text(&p).map(|t| (p, t)));
        match read {
            Ok((path, (text, _version))) => {
                match render(
                    &text,
                    args.offset.unwrap_or(1),
                    args.limit.unwrap_or(DEFAULT_LIMIT),
                ) {
                    Ok(out) => text_result(out),
                    Err(e) => error_result(format!("{}: {e}", path.display_path())),
                }
            }
            Err(e) => error_result(e.to_string()),
        }
    })
    .await
}

/// Lines `offset..offset + limit` (1-based) as `{n:>5}\t{line}`, with a note on how to read on.
pub(crate) fn render(text: &str, offset: usize, limit: usize) -> Result<String, String> {
    let total = text.lines().count();
    if total == 0 {
        return Ok("(empty file)".to_owned());
    }
    if offset > total {
        return Err(format!(
            "offset {offset} is past the end of the file, which has {total} lines"
        ));
    }
    let mut out = String::new();
    let mut last = offset - 1;
    let mut capped = false;
    let mut cut_any = false;
    for (n, line) in text
        .lines()
        .enumerate()
        .map(|(i, l)| (i + 1, l))
        .skip(offset - 1)
        .take(limit)
    {
        let (line, cut) = cut_line(line, MAX_LINE_CHARS);
        let entry = format!("{n:>5}\t{line}\n");
        if out.len() + entry.len() > MAX_OUTPUT_BYTES && n > offset {
            capped = true;
            break;
        }
        cut_any |= cut;
        out.push_str(&entry);
        last = n;
    }
    if last < total {
        let why = if capped {
            format!("output capped at {MAX_OUTPUT_BYTES} bytes; ")
        } else {
            String::new()
        };
        let _ = write!(
            out,
            "[{why}showed lines {offset}-{last} of {total}; call read_file with offset={} to read on]",
            last + 1
        );
    }
    if cut_any {
        let _ = write!(
            out,
            "\n[lines longer than {MAX_LINE_CHARS} characters were cut]"
        );
    }
    Ok(out)
}
