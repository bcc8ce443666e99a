//! `make_directory`: create a directory and its missing parents.

use cairn_toolkit::reply::{error, text};
use cairn_toolkit::{CallContext, Category, Effect, JsonSchema, Paths, Tool};
use rmcp::model::CallToolResult;
use serde::Deserialize;

use crate::Files;
use crate::util::blocking;

/// The `make_directory` tool.
pub struct MakeDirectory;

/// Arguments of `make_directory`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// Directory to create, relative to the workspace root (or absolute inside it).
    path: String,
}

impl Tool for MakeDirectory {
    type Host = Files;
    type Args = Args;
    const NAME: &'static str = "make_directory";
    const TITLE: &'static str = "Make directory";
    const DESCRIPTION: &'static str = "Create a directory (and missing parents); an existing directory is fine. Files do not need it: writing a file creates its directories.";
    const CATEGORY: Category = Category::File;
    const EFFECT: Effect = Effect::Write;
    const AGENT_ONLY: bool = true;

    fn paths(args: &Args) -> Paths {
        Paths::write(&args.path)
    }

    async fn call(files: &Files, args: Args, _: CallContext) -> CallToolResult {
        blocking(files.workspace(), move |ws| {
            match ws
                .resolve(&args.path)
                .and_then(|p| ws.create_dir(&p).map(|()| p))
            {
                Ok(path) => text(format!("created directory {}", path.display_path())),
                Err(e) => error(e.to_string()),
            }
        })
        .await
    }
}
