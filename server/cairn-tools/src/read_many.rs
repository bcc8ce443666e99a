//! `read_many`: several files at once, each capped, the editor's unsaved text when open.

use std::fmt::Write as _;

use cairn_toolkit::reply::{error, text};
use cairn_toolkit::{CallContext, Category, Effect, JsonSchema, Paths, Tool};
use rmcp::model::CallToolResult;
use serde::Deserialize;

use crate::Files;
use crate::numbered::render;
use crate::util::{MAX_OUTPUT_BYTES, blocking};

const MAX_PATHS: usize = 20;
const DEFAULT_LINES: usize = 300;

/// The `read_many` tool.
pub struct ReadMany;

/// Arguments of `read_many`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// Files to read, relative to the workspace root (or absolute inside it).
    #[schemars(length(min = 1, max = 20))]
    paths: Vec<String>,
    /// Lines shown per file. Default 300.
    #[schemars(range(min = 1))]
    max_lines_per_file: Option<usize>,
}

impl Tool for ReadMany {
    type Host = Files;
    type Args = Args;
    const NAME: &'static str = "read_many";
    const TITLE: &'static str = "Read several files";
    const DESCRIPTION: &'static str = "Read several text files in one call, each with line numbers and capped; use it to look at a few related files at once (read_file pages through a long one).";
    const CATEGORY: Category = Category::File;
    const EFFECT: Effect = Effect::Read;
    const AGENT_ONLY: bool = false;

    fn paths(args: &Args) -> Paths {
        Paths::read_all(&args.paths)
    }

    async fn call(files: &Files, args: Args, _: CallContext) -> CallToolResult {
        if args.paths.is_empty() || args.paths.len() > MAX_PATHS {
            return error(format!(
                "invalid argument `paths` for read_many: give 1 to {MAX_PATHS} paths"
            ));
        }
        let limit = args.max_lines_per_file.unwrap_or(DEFAULT_LINES).max(1);
        // Each file gets an equal share of the output cap.
        let share = MAX_OUTPUT_BYTES / args.paths.len();
        blocking(files.workspace(), move |ws| {
            let mut out = String::new();
            let mut failed = 0;
            for requested in &args.paths {
                match ws
                    .resolve(requested)
                    .and_then(|p| ws.read_text(&p).map(|t| (p, t)))
                {
                    Ok((path, (content, _))) => {
                        let _ = writeln!(out, "==> {} <==", path.display_path());
                        let body = match render(&content, 1, limit) {
                            Ok(body) => body,
                            Err(e) => e.to_string(),
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
                error(out.trim_end().to_owned())
            } else {
                text(out.trim_end().to_owned())
            }
        })
        .await
    }
}
