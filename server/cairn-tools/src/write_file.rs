//! `write_file`: replace a file's whole content (or create it); through the editor when open.

use cairn_toolkit::reply::{text, with_edits};
use cairn_toolkit::{CallContext, Category, Effect, JsonSchema, Paths, Tool};
use rmcp::model::CallToolResult;
use serde::Deserialize;

use crate::Files;
use crate::util::{plural, read_for_edit, rejected, report, write_whole};

/// The `write_file` tool.
pub struct WriteFile;

/// Arguments of `write_file`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// File to write, relative to the workspace root (or absolute inside it).
    path: String,
    /// The whole new content of the file.
    content: String,
}

impl Tool for WriteFile {
    type Host = Files;
    type Args = Args;
    const NAME: &'static str = "write_file";
    const TITLE: &'static str = "Write file";
    const DESCRIPTION: &'static str = "Replace a file's whole content, or create it (with missing directories); prefer edit_file for small changes to an existing file.";
    const CATEGORY: Category = Category::File;
    const EFFECT: Effect = Effect::Write;
    const AGENT_ONLY: bool = true;

    fn paths(args: &Args) -> Paths {
        Paths::write(&args.path)
    }

    async fn call(files: &Files, args: Args, _: CallContext) -> CallToolResult {
        let ws = files.workspace();
        let (path, read) = match read_for_edit(&ws, &args.path).await {
            Ok(r) => r,
            Err(result) => return result,
        };
        let shown = path.display_path();
        let (old, version) = match read {
            Ok(Some((old, version))) => (old, version),
            Ok(None) => (String::new(), None),
            Err(e) => return rejected(&path, e),
        };
        let existed = !(old.is_empty() && version.is_none());
        let lines = plural(args.content.lines().count(), "line");
        match write_whole(&ws, &path, &old, version, args.content).await {
            Ok(where_) => {
                let verb = if existed { "wrote" } else { "created" };
                with_edits(
                    text(format!("{verb} {shown} ({lines}){where_}")),
                    &[report(&path, None)],
                )
            }
            Err(e) => rejected(&path, e),
        }
    }
}
