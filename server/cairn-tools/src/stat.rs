//! `stat`: what a path is, its size, mode and modification time.

use cairn_toolkit::reply::{error, text};
use cairn_toolkit::{CallContext, Category, Effect, JsonSchema, Paths, Tool};
use cairn_workspace::EntryKind;
use rmcp::model::CallToolResult;
use serde::Deserialize;

use crate::Files;
use crate::util::blocking;

/// The `stat` tool.
pub struct Stat;

/// Arguments of `stat`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// Path to describe, relative to the workspace root (or absolute inside it).
    path: String,
}

impl Tool for Stat {
    type Host = Files;
    type Args = Args;
    const NAME: &'static str = "stat";
    const TITLE: &'static str = "File info";
    const DESCRIPTION: &'static str = "Say whether a path exists and what it is (file, directory, symlink), with its size, permissions and modification time; use it before creating or overwriting.";
    const CATEGORY: Category = Category::File;
    const EFFECT: Effect = Effect::Read;
    const AGENT_ONLY: bool = false;

    /// Metadata only: no content is read, and the scope still refuses paths outside the roots.
    fn paths(_: &Args) -> Paths {
        Paths::metadata()
    }

    async fn call(files: &Files, args: Args, _: CallContext) -> CallToolResult {
        blocking(files.workspace(), move |ws| {
            match ws
                .resolve(&args.path)
                .and_then(|p| ws.stat(&p).map(|s| (p, s)))
            {
                Ok((path, st)) => {
                    let kind = match st.kind {
                        EntryKind::File => "file",
                        EntryKind::Dir => "directory",
                        EntryKind::Symlink => "symlink (not followed)",
                        EntryKind::Other => "special file",
                    };
                    let mut out = format!("{}: {kind}, {} bytes", path.display_path(), st.len);
                    if let Some(mode) = st.mode {
                        out.push_str(&format!(", mode {mode:o}"));
                    }
                    if let Some(t) = st.modified_unix {
                        out.push_str(&format!(", modified {t} (Unix time)"));
                    }
                    if ws.open_buffer(&path).is_some() {
                        out.push_str(", open in the editor");
                    }
                    text(out)
                }
                Err(cairn_workspace::ScopeError::NotFound { .. }) => {
                    text(format!("{} does not exist", args.path))
                }
                Err(e) => error(e.to_string()),
            }
        })
        .await
    }
}
