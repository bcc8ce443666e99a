//! `copy_file`: Copy a file to a new path (missing directories are created); it fails if the destination exists.

use cairn_toolkit::reply::{error, text, with_edits};
use cairn_toolkit::{CallContext, Category, Effect, JsonSchema, Paths, Tool};
use rmcp::model::CallToolResult;
use serde::Deserialize;

use crate::Files;
use crate::util::{blocking, report};

/// The `copy_file` tool.
pub struct CopyFile;

/// Arguments of `copy_file`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// Source path, relative to the workspace root (or absolute inside it).
    from: String,
    /// Destination path, which must not exist yet.
    to: String,
}

impl Tool for CopyFile {
    type Host = Files;
    type Args = Args;
    const NAME: &'static str = "copy_file";
    const TITLE: &'static str = "Copy file";
    const DESCRIPTION: &'static str = "Copy a file to a new path (missing directories are created); it fails if the destination exists.";
    const CATEGORY: Category = Category::File;
    const EFFECT: Effect = Effect::Write;
    const AGENT_ONLY: bool = true;

    fn paths(args: &Args) -> Paths {
        Paths::read(&args.from).and_write(&args.to)
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
            match ws.copy_file(&from, &to) {
                Ok(bytes) => with_edits(
                    text(format!(
                        "copied {} to {} ({bytes} bytes)",
                        from.display_path(),
                        to.display_path()
                    )),
                    &[report(&to, None)],
                ),
                Err(e) => with_edits(error(e.to_string()), &[report(&to, Some(e.to_string()))]),
            }
        })
        .await
    }
}
