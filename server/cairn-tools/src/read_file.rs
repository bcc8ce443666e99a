//! `read_file`: numbered lines of a file, the editor's unsaved text when it is open.

use cairn_toolkit::reply::{error, text};
use cairn_toolkit::{CallContext, Category, Effect, JsonSchema, Paths, Tool};
use rmcp::model::CallToolResult;
use serde::Deserialize;

use crate::Files;
use crate::numbered::render;
use crate::util::blocking;

/// Lines shown when no `limit` is given.
const DEFAULT_LIMIT: usize = 2000;

/// The `read_file` tool.
pub struct ReadFile;

/// Arguments of `read_file`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// File to read, relative to the workspace root (or absolute inside it).
    path: String,
    /// First line to show, counting from 1. Default 1.
    #[schemars(range(min = 1))]
    offset: Option<usize>,
    /// How many lines to show. Default 2000.
    #[schemars(range(min = 1))]
    limit: Option<usize>,
}

impl Tool for ReadFile {
    type Host = Files;
    type Args = Args;
    const NAME: &'static str = "read_file";
    const TITLE: &'static str = "Read file";
    const DESCRIPTION: &'static str = "Read a text file with line numbers (the editor's unsaved text if it is open); use it before editing a file, and offset/limit to page through long files.";
    const CATEGORY: Category = Category::File;
    const EFFECT: Effect = Effect::Read;
    const AGENT_ONLY: bool = false;

    fn paths(args: &Args) -> Paths {
        Paths::read(&args.path)
    }

    async fn call(files: &Files, args: Args, _: CallContext) -> CallToolResult {
        if args.offset == Some(0) {
            return error("invalid argument `offset` for read_file: lines are numbered from 1");
        }
        if args.limit == Some(0) {
            return error("invalid argument `limit` for read_file: it must be at least 1");
        }
        blocking(files.workspace(), move |ws| {
            let read = ws
                .resolve(&args.path)
                .and_then(|p| ws.read_text(&p).map(|t| (p, t)));
            match read {
                Ok((path, (content, _version))) => {
                    match render(
                        &content,
                        args.offset.unwrap_or(1),
                        args.limit.unwrap_or(DEFAULT_LIMIT),
                    ) {
                        Ok(out) => text(out),
                        Err(e) => error(format!("{}: {e}", path.display_path())),
                    }
                }
                Err(e) => error(e.to_string()),
            }
        })
        .await
    }
}
