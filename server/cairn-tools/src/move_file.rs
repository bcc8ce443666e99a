//! `move_file`: Move or rename a file or directory; it fails if the destination exists, so it never overwrites anything.

use cairn_toolkit::reply::{error, text, with_edits};
use cairn_toolkit::{CallContext, Category, Effect, JsonSchema, Paths, Tool};
use rmcp::model::CallToolResult;
use serde::Deserialize;

use crate::Files;
use crate::util::{blocking, report};

/// The `move_file` tool.
pub struct MoveFile;

/// Arguments of `move_file`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// Source path, relative to the workspace root (or absolute inside it).
    from: String,
    /// Destination path, which must not exist yet.
    to: String,
}

impl Tool for MoveFile {
    type Host = Files;
    type Args = Args;
    const NAME: &'static str = "move_file";
    const TITLE: &'static str = "Move file";
    const DESCRIPTION: &'static str = "Move or rename a file or directory; it fails if the destination exists, so it never overwrites anything.";
    const CATEGORY: Category = Category::File;
    const EFFECT: Effect = Effect::Write;
    const AGENT_ONLY: bool = true;

    fn paths(args: &Args) -> Paths {
        Paths::write(&args.from).and_write(&args.to)
    }

    async fn call(files: &Files, args: Args, _: CallContext) -> CallToolResult {
        blocking(files.workspace(), move |ws| {
            let (from, to) = match ws
                .resolve(&args.from)
                .and_then(|f| ws.resolve(&args.to).map(|t| (f, t)))
            {
                Ok(paths) => paths,
                Err(e) => return error(e.to_string()),
            };
            match ws.rename(&from, &to) {
                Ok(()) => with_edits(
                    text(format!(
                        "moved {} to {}",
                        from.display_path(),
                        to.display_path()
                    )),
                    &[report(&from, None), report(&to, None)],
                ),
                Err(e) => with_edits(error(e.to_string()), &[report(&to, Some(e.to_string()))]),
            }
        })
        .await
    }
}
