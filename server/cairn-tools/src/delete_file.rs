//! `delete_file`: delete one regular file (never a directory, symlink or special file).

use cairn_toolkit::reply::{error, text, with_edits};
use cairn_toolkit::{CallContext, Category, Effect, JsonSchema, Paths, Tool};
use rmcp::model::CallToolResult;
use serde::Deserialize;

use crate::Files;
use crate::util::{blocking, report};

/// The `delete_file` tool.
pub struct DeleteFile;

/// Arguments of `delete_file`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// File to delete, relative to the workspace root (or absolute inside it).
    path: String,
}

impl Tool for DeleteFile {
    type Host = Files;
    type Args = Args;
    const NAME: &'static str = "delete_file";
    const TITLE: &'static str = "Delete file";
    const DESCRIPTION: &'static str =
        "Delete one file (not a directory); use it to remove a file that is no longer needed.";
    const CATEGORY: Category = Category::File;
    const EFFECT: Effect = Effect::Write;
    const AGENT_ONLY: bool = true;

    fn paths(args: &Args) -> Paths {
        Paths::write(&args.path)
    }

    async fn call(files: &Files, args: Args, _: CallContext) -> CallToolResult {
        blocking(files.workspace(), move |ws| {
            let path = match ws.resolve(&args.path) {
                Ok(path) => path,
                Err(e) => return error(e.to_string()),
            };
            match ws.remove_file(&path) {
                Ok(()) => with_edits(
                    text(format!("deleted {}", path.display_path())),
                    &[report(&path, None)],
                ),
                Err(e) => with_edits(error(e.to_string()), &[report(&path, Some(e.to_string()))]),
            }
        })
        .await
    }
}
