//! Helpers shared by the file tools: running off the executor, cutting lines, reading and
//! writing files for an edit, edit reports, caps.

use cairn_toolkit::ToolError;
use std::sync::Arc;

use cairn_toolkit::reply::{error, with_edits};
use cairn_workspace::Workspace;
use cairn_workspace::checkpoint::carry;
use rmcp::model::CallToolResult;

/// Cap on the text a tool returns, so one call cannot flood the model's context.
pub(crate) const MAX_OUTPUT_BYTES: usize = 50_000;

/// Run blocking file work off the async executor; a panic inside becomes an error result.
pub(crate) async fn blocking(
    ws: Arc<Workspace>,
    f: impl FnOnce(&Workspace) -> CallToolResult + Send + 'static,
) -> CallToolResult {
    match tokio::task::spawn_blocking(carry(move || f(&ws))).await {
        Ok(result) => result,
        Err(e) => error(format!("internal error: the tool failed ({e})")),
    }
}

/// `line`, cut to at most `max` characters with a marker when it was longer.
pub(crate) fn cut_line(line: &str, max: usize) -> (std::borrow::Cow<'_, str>, bool) {
    match line.char_indices().nth(max) {
        Some((at, _)) => (
            format!("{}… [line cut]", line.get(..at).unwrap_or(line)).into(),
            true,
        ),
        None => (line.into(), false),
    }
}

/// An edit report for `path`: applied, or rejected with a reason.
pub(crate) fn report(
    path: &cairn_workspace::WorkspacePath,
    reason: Option<String>,
) -> cairn_agent::tools::EditReport {
    cairn_agent::tools::EditReport {
        uri: path.uri(),
        applied: reason.is_none(),
        reason,
    }
}

/// A rejected edit of `path`: an error result that reports it, with the reason.
pub(crate) fn rejected(
    path: &cairn_workspace::WorkspacePath,
    reason: impl std::fmt::Display,
) -> CallToolResult {
    let reason = reason.to_string();
    with_edits(error(reason.clone()), &[report(path, Some(reason))])
}

/// What an editing tool read: the text and the editor's version when open, `None` when the
/// file does not exist, or why it could not be read.
pub(crate) type ReadForEdit = Result<Option<(String, Option<i32>)>, ToolError>;

/// Resolves `requested` and reads it for an edit, off the executor. `Err` is the result to
/// return at once (the path was refused, before there is a file to report on).
pub(crate) async fn read_for_edit(
    ws: &Arc<Workspace>,
    requested: &str,
) -> Result<(cairn_workspace::WorkspacePath, ReadForEdit), CallToolResult> {
    let requested = requested.to_owned();
    let resolved = off_thread(ws, move |ws| {
        let path = ws.resolve(&requested)?;
        let read = match ws.read_text(&path) {
            Ok(read) => Ok(Some(read)),
            Err(cairn_workspace::ScopeError::NotFound { .. }) => Ok(None),
            Err(e) => Err(e.into()),
        };
        Ok::<_, cairn_workspace::ScopeError>((path, read))
    })
    .await;
    match resolved {
        Ok(Ok(r)) => Ok(r),
        Ok(Err(denied)) => Err(error(denied.to_string())),
        Err(e) => Err(error(e)),
    }
}

/// Run blocking work off the executor, for a value rather than a result.
pub(crate) use cairn_workspace::off_thread;

/// Replace the whole text of a file that was read as `old` (at `version` when open in the
/// editor): through the editor when it was open there, else atomically on disk. `Ok` says
/// where it went (empty for the disk).
pub(crate) async fn write_whole(
    ws: &Arc<Workspace>,
    path: &cairn_workspace::WorkspacePath,
    old: &str,
    version: Option<i32>,
    new: String,
) -> Result<String, ToolError> {
    match version {
        Some(version) => {
            let edit = cairn_workspace::ByteEdit {
                start: 0,
                end: old.len(),
                new_text: new,
            };
            ws.apply_edits_in_editor(path, version, vec![edit])
                .await
                .map(|()| format!(", {}", ws.editor_note()))
                .map_err(ToolError::peer)
        }
        None => {
            let path = path.clone();
            off_thread(ws, move |ws| ws.write_text_atomic(&path, &new))
                .await
                .map_err(ToolError::peer)?
                .map(|()| String::new())
                .map_err(ToolError::from)
        }
    }
}

/// `n` and the noun, plural when `n != 1`.
pub(crate) fn plural(n: usize, noun: &str) -> String {
    if n == 1 {
        format!("1 {noun}")
    } else {
        format!("{n} {noun}s")
    }
}
