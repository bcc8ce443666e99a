//! `count`: lines, words and bytes of files (directories are walked, ignore-aware).

use std::fmt::Write as _;

use cairn_toolkit::reply::{error, text};
use cairn_toolkit::{CallContext, Category, Effect, JsonSchema, Paths, Tool};
use cairn_workspace::{EntryKind, WalkOptions};
use rmcp::model::CallToolResult;
use serde::Deserialize;

use crate::Files;
use crate::util::blocking;

const MAX_FILES_SHOWN: usize = 200;

/// The `count` tool.
pub struct Count;

/// Arguments of `count`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// Files or directories (walked, skipping ignored files) to count.
    #[schemars(length(min = 1))]
    paths: Vec<String>,
}

impl Tool for Count {
    type Host = Files;
    type Args = Args;
    const NAME: &'static str = "count";
    const TITLE: &'static str = "Count lines/words/bytes";
    const DESCRIPTION: &'static str = "Count the lines, words and bytes of files, like wc, with a total; use it to judge a file's size before reading it.";
    const CATEGORY: Category = Category::File;
    const EFFECT: Effect = Effect::Read;
    const AGENT_ONLY: bool = false;

    fn paths(args: &Args) -> Paths {
        Paths::read_all(&args.paths)
    }

    async fn call(files: &Files, args: Args, _: CallContext) -> CallToolResult {
        if args.paths.is_empty() {
            return error("invalid argument `paths` for count: give at least one path");
        }
        blocking(files.workspace(), move |ws| {
            let mut files = Vec::new();
            for requested in &args.paths {
                let path = match ws.resolve(requested) {
                    Ok(p) => p,
                    Err(e) => return error(e.to_string()),
                };
                match ws.kind_of(&path) {
                    Ok(EntryKind::Dir) => match ws.walk(&path, &WalkOptions::default()) {
                        Ok(walk) => files.extend(walk.flatten()),
                        Err(e) => return error(e.to_string()),
                    },
                    Ok(_) => files.push(path),
                    Err(e) => return error(e.to_string()),
                }
            }
            let mut out = String::from("lines\twords\tbytes\tfile\n");
            let (mut tl, mut tw, mut tb, mut skipped) = (0, 0, 0, 0);
            for (i, file) in files.iter().enumerate() {
                match ws.read_text(file) {
                    Ok((content, _)) => {
                        let (l, w, b) = (
                            content.lines().count(),
                            content.split_whitespace().count(),
                            content.len(),
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
            text(out)
        })
        .await
    }
}
