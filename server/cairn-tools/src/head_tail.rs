//! `head_tail`: the first and/or last lines of a file.

use std::fmt::Write as _;

use cairn_toolkit::reply::{error, text};
use cairn_toolkit::{CallContext, Category, Effect, JsonSchema, Paths, Tool};
use rmcp::model::CallToolResult;
use serde::Deserialize;

use crate::Files;
use crate::util::{MAX_OUTPUT_BYTES, blocking, cut_line};

const DEFAULT_HEAD: usize = 10;
const MAX_LINES: usize = 1000;

/// The `head_tail` tool.
pub struct HeadTail;

/// Arguments of `head_tail`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// File to read, relative to the workspace root (or absolute inside it).
    path: String,
    /// Lines from the start. Default 10 when tail is not given, else 0.
    #[schemars(range(min = 0, max = 1000))]
    head: Option<usize>,
    /// Lines from the end. Default 0.
    #[schemars(range(min = 0, max = 1000))]
    tail: Option<usize>,
}

impl Tool for HeadTail {
    type Host = Files;
    type Args = Args;
    const NAME: &'static str = "head_tail";
    const TITLE: &'static str = "First/last lines";
    const DESCRIPTION: &'static str = "Show the first and/or last N numbered lines of a file; use it to peek at a log or a long file without reading it all.";
    const CATEGORY: Category = Category::File;
    const EFFECT: Effect = Effect::Read;
    const AGENT_ONLY: bool = false;

    fn paths(args: &Args) -> Paths {
        Paths::read(&args.path)
    }

    async fn call(files: &Files, args: Args, _: CallContext) -> CallToolResult {
        let tail = args.tail.unwrap_or(0);
        let head = args
            .head
            .unwrap_or(if args.tail.is_some() { 0 } else { DEFAULT_HEAD });
        if head > MAX_LINES || tail > MAX_LINES {
            return error(format!(
                "invalid arguments for head_tail: head and tail are at most {MAX_LINES}"
            ));
        }
        blocking(files.workspace(), move |ws| {
            match ws.resolve(&args.path).and_then(|p| ws.read_text(&p)) {
                Ok((content, _)) => text(render(&content, head, tail)),
                Err(e) => error(e.to_string()),
            }
        })
        .await
    }
}

fn render(text: &str, head: usize, tail: usize) -> String {
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
