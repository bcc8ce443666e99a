//! Planning exact replacements in a text, with `edit_file`'s rules (shared with `multi_edit`).
//!
//! - `old` must match exactly once, unless `replace_all` is set; zero or several matches are an
//!   error that says how many and what to do.
//! - An empty `old` fills an empty text; on a text with content it is an error.
//! - Line endings are kept: in a text with CRLF line endings, `new`'s line breaks become CRLF,
//!   and an `old` written with LF matches its CRLF spelling.

use cairn_toolkit::ToolError;
use cairn_workspace::ByteEdit;

/// The planned change to one text.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Plan {
    /// Byte edits into the text that was read, ascending and disjoint.
    pub(crate) edits: Vec<ByteEdit>,
    /// 1-based line of the first edit.
    pub(crate) first_line: usize,
}

/// Find `old` in `text` and plan its replacement; the error says what went wrong and what to do.
pub(crate) fn plan(
    text: &str,
    path: &str,
    old: &str,
    new: &str,
    replace_all: bool,
) -> Result<Plan, ToolError> {
    let crlf = text.contains("\r\n");
    let new = if crlf { to_crlf(new) } else { new.to_owned() };
    if old.is_empty() {
        if text.is_empty() {
            return Ok(Plan {
                edits: vec![ByteEdit {
                    start: 0,
                    end: 0,
                    new_text: new,
                }],
                first_line: 1,
            });
        }
        return Err(ToolError::invalid_argument(
            "old_string",
            format!(
                "old_string is empty but {path} already has content; give the exact text to replace (read the file first)"
            ),
        ));
    }
    let mut old = old.to_owned();
    let mut starts: Vec<usize> = text.match_indices(old.as_str()).map(|(i, _)| i).collect();
    if starts.is_empty() && crlf && old.contains('\n') {
        let spelled = to_crlf(&old);
        starts = text
            .match_indices(spelled.as_str())
            .map(|(i, _)| i)
            .collect();
        old = spelled;
    }
    if old == new {
        return Err(ToolError::invalid_argument(
            "new_string",
            "old_string and new_string are the same; there is nothing to change",
        ));
    }
    match starts.len() {
        0 => Err(ToolError::not_found(format!(
            "old_string was not found in {path}; it must match the file exactly, including whitespace and indentation: read the file again with read_file and copy the text without the line-number prefixes"
        ))),
        n if n > 1 && !replace_all => Err(ToolError::invalid_argument(
            "old_string",
            format!(
                "old_string matched {n} times in {path}; include more surrounding lines so that it matches exactly once, or set replace_all to true to replace every occurrence"
            ),
        )),
        _ => {
            let first = starts.first().copied().unwrap_or(0);
            let first_line = 1 + text.get(..first).map_or(0, |t| t.matches('\n').count());
            let edits = starts
                .into_iter()
                .map(|start| ByteEdit {
                    start,
                    end: start + old.len(),
                    new_text: new.clone(),
                })
                .collect();
            Ok(Plan { edits, first_line })
        }
    }
}

/// `s` with every line break spelled CRLF.
fn to_crlf(s: &str) -> String {
    s.replace("\r\n", "\n").replace('\n', "\r\n")
}

/// Apply a [`plan`]'s edits (ascending, disjoint, on character boundaries by construction) to
/// the text it was made from; an invalid plan leaves the text as it was.
pub(crate) fn apply(text: &str, edits: &[ByteEdit]) -> String {
    ByteEdit::apply_all(text, edits).unwrap_or_else(|| text.to_owned())
}
