//! `count`: lines, words and bytes of files (directories are walked, ignore-aware).

use std::fmt::Write as _;
use std::sync::Arc;

use cairn_workspace::{EntryKind, WalkOptions, Workspace};
use rmcp::model::{CallToolResult, Tool};
use serde::Deserialize;
use serde_json::{Map, Value, json};

use crate::util::{blocking, error_result, object_schema, parse_args, text_result, tool};

const MAX_FILES_SHOWN: usize = 200;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Args {
    paths: Vec<String>,
}

pub(crate) fn definition() -> Tool {
    let schema = object_schema(
        json!({"paths": {"type": "array", "items": {"type": "string"}, "minItems": 1, "description": "Files or directories (walked, skipping ignored files) to count."}}),
        &["paths"],
    );
    tool(
        "count",
        "Count lines/words/bytes",
        "Count the lines, words and bytes of files, like wc, with a total; use it to judge a file's size before reading it.",
        schema,
        true,
    )
}

pub(crate) async fn call(ws: Arc<Workspace>, arguments: Map<String, Value>) -> CallToolResult {
    let args: Args = match parse_args("count", arguments) {
        Ok(args) => args,
        Err(result) => return result,
    };
    if args.paths.is_empty() {
        return error_result("invalid argument `paths` for count: give at least one path");
    }
    blocking(ws, move |ws| {
        let mut files = Vec::new();
        for requested in &args.paths {
            let path = match ws.resolve(requested) {
                Ok(p) => p,
                Err(e) => return error_result(e.to_string()),
            };
            match ws.kind_of(&path) {
                Ok(EntryKind::Dir) => match ws.walk(&path, &WalkOptions::default()) {
                    Ok(walk) => files.extend(walk.flatten()),
                    Err(e) => return error_result(e.to_string()),
                },
                Ok(_) => files.push(path),
                Err(e) => return error_result(e.to_string()),
            }
        }
        let mut out = String::from("lines\twords\tbytes\tfile\n");
        let (mut tl, mut tw, mut tb, mut skipped) = (0, 0, 0, 0);
        for (i, file) in files.iter().enumerate() {
            match ws.read_text(file) {
                Ok((text, _)) => {
                    let (l, w, b) = (
                        text.lines().count(),
                        text.split_whitespace().count(),
                        text.len(),
                    );
                    (tl, tw, tb) = (tl + l, tw + w, tb + b);
                    if i < MAX_FILES_SHOWN {
                        let _ = writeln!(out, "{l}\t{w}\t{b}\t{}", file.display_path());
                    }
                }
                Err(e) => {
                    skipped += 1;
                    if i < MAX_FILES_SHOWN {
                        let _ = writeln!(out, "-\t-\t-\t{} ({e})", file.display_path());
                    }
                }
            }
        }
        if files.len() > MAX_FILES_SHOWN {
            let _ = writeln!(
                out,
                "[showed {MAX_FILES_SHOWN} of {} files; the total counts all]",
                files.len()
            );
        }
        let _ = write!(
            out,
            "{tl}\t{tw}\t{tb}\ttotal ({} files",
            files.len() - skipped
        );
        if skipped > 0 {
            let _ = write!(out, ", {skipped} not text, skipped");
        }
        out.push(')');
        text_result(out)
    })
    .await
}
