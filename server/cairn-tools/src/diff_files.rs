//! `diff_files`: a unified diff of two files (the editor's unsaved text when open).

use cairn_toolkit::reply::{error, text};
use cairn_toolkit::{CallContext, Category, Effect, JsonSchema, Paths, Tool};
use rmcp::model::CallToolResult;
use serde::Deserialize;

use crate::Files;
use crate::util::{MAX_OUTPUT_BYTES, blocking};

/// The `diff_files` tool.
pub struct DiffFiles;

/// Arguments of `diff_files`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// The old file, relative to the workspace root (or absolute inside it).
    a: String,
    /// The new file.
    b: String,
    /// Context lines around changes. Default 3.
    #[schemars(range(min = 0, max = 20))]
    context: Option<usize>,
}

impl Tool for DiffFiles {
    type Host = Files;
    type Args = Args;
    const NAME: &'static str = "diff_files";
    const TITLE: &'static str = "Diff two files";
    const DESCRIPTION: &'static str = "Show a unified diff between two text files; use it to compare a file with a copy or a variant.";
    const CATEGORY: Category = Category::File;
    const EFFECT: Effect = Effect::Read;
    const AGENT_ONLY: bool = false;

    fn paths(args: &Args) -> Paths {
        Paths::read(&args.a).and_read(&args.b)
    }

    async fn call(files: &Files, args: Args, _: CallContext) -> CallToolResult {
        let context = args.context.unwrap_or(3).min(20);
        blocking(files.workspace(), move |ws| {
            let read = |p: &str| {
                ws.resolve(p)
                    .and_then(|p| ws.read_text(&p).map(|(t, _)| (p, t)))
            };
            let ((pa, ta), (pb, tb)) =
                match read(&args.a).and_then(|a| read(&args.b).map(|b| (a, b))) {
                    Ok(both) => both,
                    Err(e) => return error(e.to_string()),
                };
            let diff =
                crate::diff::unified(&ta, &tb, &pa.display_path(), &pb.display_path(), context);
            if diff.is_empty() {
                return text(format!(
                    "{} and {} have the same lines",
                    pa.display_path(),
                    pb.display_path()
                ));
            }
            if diff.len() > MAX_OUTPUT_BYTES {
                let mut cut = MAX_OUTPUT_BYTES;
                while !diff.is_char_boundary(cut) {
                    cut -= 1;
                }
                return text(format!(
                    "{}\n[diff cut at {MAX_OUTPUT_BYTES} bytes of {}]",
                    diff.get(..cut).unwrap_or(""),
                    diff.len()
                ));
            }
            text(diff)
        })
        .await
    }
}
