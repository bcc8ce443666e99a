//! Where a text tool's input comes from: the text given in the call or a workspace file, read
//! through the scope and bounded (a huge file is cut with a note; binary files are refused).

use std::io::Read;

use crate::ml::Ml;

/// At most this many bytes of one input are used: the metrics are quadratic or worse in
/// places, and the model reads the result, not the input.
pub(crate) const MAX_BYTES: usize = 1 << 20;

/// A NUL in this many leading bytes marks a file as binary, as the workspace's own reads judge.
const SNIFF: usize = 8192;

/// One input's text, and what was left out of it.
#[derive(Debug)]
pub(crate) struct Input {
    pub(crate) text: String,
    /// Said to the model when the input was cut.
    pub(crate) note: Option<String>,
}

/// The text of `text` or of the file `path` (exactly one of them; `field` and `path_field`
/// name them in errors).
pub(crate) async fn load(
    ml: &Ml,
    text: Option<String>,
    path: Option<String>,
    field: &str,
    path_field: &str,
) -> Result<Input, String> {
    match (text, path) {
        (Some(_), Some(_)) => Err(format!("give either `{field}` or `{path_field}`, not both")),
        (None, None) => Err(format!(
            "give `{field}` (the text) or `{path_field}` (a workspace file)"
        )),
        (Some(t), None) => Ok(cut(t, "the text")),
        (None, Some(p)) => read_file(ml, p).await,
    }
}

/// The text of the workspace file `path`, bounded.
pub(crate) async fn read_file(ml: &Ml, path: String) -> Result<Input, String> {
    let Some(ws) = ml.workspace.clone() else {
        return Err(format!(
            "no workspace is open, so `{path}` cannot be read; pass the text itself instead"
        ));
    };
    tokio::task::spawn_blocking(move || {
        let p = ws.resolve(&path).map_err(|e| e.to_string())?;
        let shown = p.display_path();
        if let Some(doc) = ws.open_document(&p) {
            // The editor's unsaved text is what the user sees.
            return Ok(cut(doc.text, &shown));
        }
        let file = ws.open_read(&p).map_err(|e| e.to_string())?;
        let mut bytes = Vec::new();
        file.take(MAX_BYTES as u64 + 1)
            .read_to_end(&mut bytes)
            .map_err(|e| format!("reading {shown}: {e}"))?;
        if bytes[..bytes.len().min(SNIFF)].contains(&0) {
            return Err(format!(
                "{shown} is a binary file; these tools read text only"
            ));
        }
        let more = bytes.len() > MAX_BYTES;
        bytes.truncate(MAX_BYTES);
        let text = match String::from_utf8(bytes) {
            Ok(t) => t,
            // A cut may split a character: keep the whole ones before it.
            Err(e) if more && e.utf8_error().error_len().is_none() => {
                let valid = e.utf8_error().valid_up_to();
                let mut bytes = e.into_bytes();
                bytes.truncate(valid);
                String::from_utf8(bytes).map_err(|_| format!("{shown} is not UTF-8 text"))?
            }
            Err(_) => return Err(format!("{shown} is not UTF-8 text; convert it first")),
        };
        Ok(Input {
            note: more.then(|| {
                format!(
                    "only the first {MAX_BYTES} bytes of {shown} were used (the file is larger)"
                )
            }),
            text,
        })
    })
    .await
    .map_err(|e| format!("reading the file failed: {e}"))?
}

/// `text` cut to [`MAX_BYTES`] at a character boundary, with a note when cut.
fn cut(mut text: String, what: &str) -> Input {
    if text.len() <= MAX_BYTES {
        return Input { text, note: None };
    }
    let mut end = MAX_BYTES;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    text.truncate(end);
    Input {
        text,
        note: Some(format!(
            "only the first {MAX_BYTES} bytes of {what} were used"
        )),
    }
}

/// The notes of `inputs`, one per line, after a blank line; empty when nothing was cut.
pub(crate) fn notes<'a>(inputs: impl IntoIterator<Item = &'a Input>) -> String {
    let lines: Vec<&str> = inputs
        .into_iter()
        .filter_map(|i| i.note.as_deref())
        .collect();
    if lines.is_empty() {
        String::new()
    } else {
        format!("\n\nNote: {}.", lines.join("; "))
    }
}
