//! `read_many`: several files at once, each capped, the editor's unsaved text when open.

use std::fmt::Write as _;
use std::sync::Arc;

use cairn_workspace::Workspace;
use rmcp::model::{CallToolResult, Tool};
use serde::Deserialize;
use serde_json::{Map, Value, json};

use crate::util::{
    MAX_OUTPUT_BYTES, blocking, error_result, object_schema, parse_args, text_result, tool,
};

const MAX_PATHS: usize = 20;
const DEFAULT_LINES: usize = 300;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Args {
    paths: Vec<String>,
    max_lines_per_file: Option<usize>,
}

pub(crate) fn definition() -> Tool {
    let schema = object_schema(
        json!({
            "paths": {"type": "array", "items": {"type": "string"}, "minItems": 1, "maxItems": MAX_PATHS, "description": "Files to read, relative to the workspace root (or absolute inside it)."},
            "max_lines_per_file": {"type": "integer", "minimum": 1, "description": format!("Lines shown per file. Default {DEFAULT_LINES}.")}
        }),
        &["paths"],
    );
    tool(
        "read_many",
        "Read several files",
        "Read several text files in one call, each with line numbers and capped; use it to look at a few related files at once (read_file pages through a long one).",
        schema,
        true,
    )
}

pub(crate) async fn call(ws: Arc<Workspace>, arguments: Map<String, Value>) -> CallToolResult {
    let args: Args = match parse_args("read_many", arguments) {
        Ok(args) => args,
        Err(result) => return result,
    };
    if args.paths.is_empty() || args.paths.len() > MAX_PATHS {
        return error_result(format!(
            "invalid argument `paths` for read_many: give 1 to {MAX_PATHS} paths"
        ));
    }
    let limit = args.max_lines_per_file.unwrap_or(DEFAULT_LINES).max(1);
    // Each file gets an equal share of the output cap.
    let share = MAX_OUTPUT_BYTES / args.paths.len();
    blocking(ws, move |ws| {
        let mut out = String::new();
        let mut failed = 0;
        for requested in &args.paths {
            match ws
                .resolve(requested)
                .and_then(|p| ws.read_text(&p).map(|t| (p, t)))
            {
                Ok((path, (text, _))) => {
                    let _ = writeln!(out, "==> {} <==", path.display_path());
                    let body = match crate::read_file::render(&text, 1, limit) {
                        Ok(body) => body,
                        Err(e) => e,
                    };
                    let body = if body.len() > share {
                        let mut cut = share;
                        while !body.is_char_boundary(cut) {
                            cut -= 1;
                        }
                        format!(
                            "{}\n[cut at {share} bytes; read the rest with read_file]",
                            body.get(..cut).unwrap_or("")
                        )
                    } else {
                        body
                    };
                    let _ = writeln!(out, "{}", body.trim_end_matches('\n'));
                }
                Err(e) => {
                    failed += 1;
                    let _ = writeln!(out, "==> {requested} <==\nerror: {e}");
                }
            }
        }
        if failed == args.paths.len() {
            error_result(out.trim_end().to_owned())
        } else {
            text_result(out.trim_end().to_owned())
        }
    })
    .await
}
