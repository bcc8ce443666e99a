//! Numbered lines of a text, as `read_file` and `read_many` show them: capped, long lines
//! cut, with a note on how to read on.

use cairn_toolkit::ToolError;
use std::fmt::Write as _;

use crate::util::{MAX_OUTPUT_BYTES, cut_line};

/// Longer lines (minified code) are cut, so one line cannot eat the whole output.
const MAX_LINE_CHARS: usize = 2000;

/// Lines `offset..offset + limit` (1-based) as `{n:>5}\t{line}`, with a note on how to read on.
pub(crate) fn render(text: &str, offset: usize, limit: usize) -> Result<String, ToolError> {
    let total = text.lines().count();
    if total == 0 {
        return Ok("(empty file)".to_owned());
    }
    if offset > total {
        return Err(ToolError::invalid_argument(
            "offset",
            format!("offset {offset} is past the end of the file, which has {total} lines"),
        ));
    }
    let mut out = String::new();
    let mut last = offset - 1;
    let mut capped = false;
    let mut cut_any = false;
    for (n, line) in text
        .lines()
        .enumerate()
        .map(|(i, l)| (i + 1, l))
        .skip(offset - 1)
        .take(limit)
    {
        let (line, cut) = cut_line(line, MAX_LINE_CHARS);
        let entry = format!("{n:>5}\t{line}\n");
        if out.len() + entry.len() > MAX_OUTPUT_BYTES && n > offset {
            capped = true;
            break;
        }
        cut_any |= cut;
        out.push_str(&entry);
        last = n;
    }
    if last < total {
        let why = if capped {
            format!("output capped at {MAX_OUTPUT_BYTES} bytes; ")
        } else {
            String::new()
        };
        let _ = write!(
            out,
            "[{why}showed lines {offset}-{last} of {total}; call read_file with offset={} to read on]",
            last + 1
        );
    }
    if cut_any {
        let _ = write!(
            out,
            "\n[lines longer than {MAX_LINE_CHARS} characters were cut]"
        );
    }
    Ok(out)
}
