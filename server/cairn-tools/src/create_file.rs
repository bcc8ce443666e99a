//! `create_file`: a new file; refused when anything already exists at the path.

use cairn_toolkit::reply::{error, text, with_edits};
use cairn_toolkit::{CallContext, Category, Effect, JsonSchema, Paths, Tool};
use rmcp::model::CallToolResult;
use serde::Deserialize;

use crate::Files;
use crate::util::{blocking, plural, report};

/// The `create_file` tool.
pub struct CreateFile;

/// Arguments of `create_file`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// New file, relative to the workspace root (or absolute inside it); missing directories are created.
    path: String,
    /// The content of the new file.
    content: String,
}

impl Tool for CreateFile {
    type Host = Files;
    type Args = Args;
    const NAME: &'static str = "create_file";
    const TITLE: &'static str = "Create file";
    const DESCRIPTION: &'static str = "Create a new file with the given content; it fails if the path already exists, so it never overwrites anything.";
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
            let exists_in_editor = ws.open_buffer(&path).is_some();
            let created = if exists_in_editor {
                Err(format!(
                    "{} is open in the editor; use write_file or edit_file",
                    path.display_path()
                ))
            } else {
                ws.create_text_exclusive(&path, &args.content)
                    .map_err(|e| e.to_string())
            };
            match created {
                Ok(()) => with_edits(
                    text(format!(
                        "created {} ({})",
                        path.display_path(),
                        plural(args.content.lines().count(), "line")
                    )),
                    &[report(&path, None)],
                ),
                Err(e) => with_edits(error(e.clone()), &[report(&path, Some(e))]),
            }
        })
        .await
    }
}
