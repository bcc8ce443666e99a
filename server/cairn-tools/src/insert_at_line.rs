//! `insert_at_line`: insert text before a given line (or at the end).

use cairn_toolkit::ToolError;
use cairn_toolkit::reply::{text, with_edits};
use cairn_toolkit::{CallContext, Category, Effect, JsonSchema, Paths, Tool};
use rmcp::model::CallToolResult;
use serde::Deserialize;

use crate::Files;
use crate::util::{plural, read_for_edit, report, write_whole};

/// The `insert_at_line` tool.
pub struct InsertAtLine;

/// Arguments of `insert_at_line`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// File to change, relative to the workspace root (or absolute inside it).
    path: String,
    /// The inserted text becomes this line (1-based); one past the last line appends.
    #[schemars(range(min = 1))]
    line: usize,
    /// Lines to insert; a final line break is added when missing.
    text: String,
}

impl Tool for InsertAtLine {
    type Host = Files;
    type Args = Args;
    const NAME: &'static str = "insert_at_line";
    const TITLE: &'static str = "Insert at line";
    const DESCRIPTION: &'static str = "Insert lines before a given line number of a file (or append with last line + 1); use it to add code where no unique text anchors an edit.";
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
        let rejected = |reason: String| crate::util::rejected(&path, reason);
        let (old, version) = match read {
            Ok(Some(read)) => read,
            Ok(None) => return rejected(format!("{} does not exist", path.display_path())),
            Err(e) => return rejected(e.to_string()),
        };
        let new = match insert(&old, args.line, &args.text) {
            Ok(new) => new,
            Err(e) => return rejected(format!("{}: {e}", path.display_path())),
        };
        let n = args.text.lines().count().max(1);
        match write_whole(&ws, &path, &old, version, new).await {
            Ok(where_) => with_edits(
                text(format!(
                    "inserted {} at line {} of {}{where_}",
                    plural(n, "line"),
                    args.line,
                    path.display_path()
                )),
                &[report(&path, None)],
            ),
            Err(e) => rejected(e.to_string()),
        }
    }
}

/// Where line `line` (1-based) starts in `text`; `None` past one after the last line.
fn insert(text: &str, line: usize, new: &str) -> Result<String, ToolError> {
    let crlf = text.contains("\r\n");
    let nl = if crlf { "\r\n" } else { "\n" };
    let mut new = if crlf {
        new.replace("\r\n", "\n").replace('\n', "\r\n")
    } else {
        new.to_owned()
    };
    if !new.is_empty() && !new.ends_with('\n') {
        new.push_str(nl);
    }
    let total = text.lines().count();
    if line == 0 || line > total + 1 {
        return Err(ToolError::invalid_argument(
            "line",
            format!(
                "line {line} is out of range: the file has {total} lines, so use 1 to {}",
                total + 1
            ),
        ));
    }
    let mut starts = text.match_indices('\n').map(|(i, _)| i + 1);
    let at = if line == 1 {
        0
    } else {
        starts.nth(line - 2).unwrap_or(text.len())
    };
    let mut out = String::with_capacity(text.len() + new.len() + 2);
    out.push_str(text.get(..at).unwrap_or(text));
    if at == text.len() && !text.is_empty() && !text.ends_with('\n') {
        out.push_str(nl);
    }
    out.push_str(&new);
    out.push_str(text.get(at..).unwrap_or(""));
    Ok(out)
}
