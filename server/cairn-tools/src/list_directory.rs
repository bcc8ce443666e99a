//! `list_directory`: the entries of a directory, symlinks marked and not followed.

use std::fmt::Write as _;

use cairn_toolkit::reply::{error, text};
use cairn_toolkit::{CallContext, Category, Effect, JsonSchema, Paths, Tool};
use cairn_workspace::{DirEntry, EntryKind};
use rmcp::model::CallToolResult;
use serde::Deserialize;

use crate::Files;
use crate::util::{MAX_OUTPUT_BYTES, blocking};

/// Entries shown at most.
const MAX_ENTRIES: usize = 1000;

/// The `list_directory` tool.
pub struct ListDirectory;

/// Arguments of `list_directory`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// Directory to list, relative to the workspace root (or absolute inside it). Default: the root.
    path: Option<String>,
}

impl Tool for ListDirectory {
    type Host = Files;
    type Args = Args;
    const NAME: &'static str = "list_directory";
    const TITLE: &'static str = "List directory";
    const DESCRIPTION: &'static str = "List a directory's entries (directories end in `/`, symlinks in `@`); use it to find your way around the workspace.";
    const CATEGORY: Category = Category::File;
    const EFFECT: Effect = Effect::Read;
    const AGENT_ONLY: bool = false;

    /// Names only: no file content is read, and the scope still refuses paths outside the
    /// roots.
    fn paths(_: &Args) -> Paths {
        Paths::metadata()
    }

    async fn call(files: &Files, args: Args, _: CallContext) -> CallToolResult {
        blocking(files.workspace(), move |ws| {
            let requested = args.path.as_deref().unwrap_or(".");
            match ws
                .resolve(requested)
                .and_then(|p| ws.list_dir(&p).map(|e| (p, e)))
            {
                Ok((path, entries)) => text(render(&path.display_path(), &entries)),
                Err(e) => error(e.to_string()),
            }
        })
        .await
    }
}

fn render(path: &str, entries: &[DirEntry]) -> String {
    if entries.is_empty() {
        return format!("{path} is an empty directory");
    }
    let mut out = format!(
        "{path} ({} entries; `/` marks a directory, `@` a symlink, which is not followed)\n",
        entries.len()
    );
    let mut shown = 0;
    for entry in entries {
        let suffix = match entry.kind {
            EntryKind::File => "",
            EntryKind::Dir => "/",
            EntryKind::Symlink => "@",
            EntryKind::Other => " (special file)",
        };
        if shown == MAX_ENTRIES || out.len() > MAX_OUTPUT_BYTES {
            break;
        }
        let _ = writeln!(out, "{}{suffix}", entry.name);
        shown += 1;
    }
    if shown < entries.len() {
        let _ = write!(
            out,
            "[showed {shown} of {} entries; list a subdirectory or use grep with a glob to narrow]",
            entries.len()
        );
    }
    out
}
