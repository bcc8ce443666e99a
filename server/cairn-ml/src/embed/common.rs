//! What the embedding tools share: where the texts come from (a list, or a workspace file's
//! lines, CSV column or JSONL field), the caps on them, embedding on a blocking thread that a
//! cancelled run stops waiting for, and the small vector arithmetic.

use std::io::Read;
use std::sync::Arc;

use cairn_toolkit::{CallContext, Host};
use cairn_workspace::{ScopeError, Workspace, WorkspacePath};

use crate::ml::Ml;

/// Texts one call embeds at most: a few seconds of the model on a laptop's CPU.
pub(crate) const MAX_TEXTS: usize = 2000;
/// Characters of one text kept; the model reads 256 tokens anyway, so the rest would be lost.
pub(crate) const MAX_TEXT_CHARS: usize = 2000;
/// Rows shown in a result; the rest are counted.
pub(crate) const MAX_SHOWN: usize = 100;

/// One text and where it came from (`#3` in a list, `line 3`, `row 3` of a file).
#[derive(Debug, Clone)]
pub(crate) struct Item {
    pub text: String,
    pub origin: String,
}

/// The texts of a call, and notes on what was cut or skipped.
#[derive(Debug, Default)]
pub(crate) struct Loaded {
    pub items: Vec<Item>,
    pub notes: Vec<String>,
}

impl Loaded {
    /// The texts as the embedder takes them.
    pub fn texts(&self) -> Vec<&str> {
        self.items.iter().map(|i| i.text.as_str()).collect()
    }

    /// The notes, as lines to append to a result (empty when there are none).
    pub fn notes_text(&self) -> String {
        self.notes.iter().map(|n| format!("\n({n})")).collect()
    }
}

/// `text` cut to [`MAX_TEXT_CHARS`] characters; whether it was cut.
fn bounded(text: &str) -> (String, bool) {
    if text.chars().count() <= MAX_TEXT_CHARS {
        (text.to_owned(), false)
    } else {
        (text.chars().take(MAX_TEXT_CHARS).collect(), true)
    }
}

/// The texts given inline or read from `path` (`column` naming a CSV column or JSONL field;
/// without it, the file's non-empty lines). Exactly one of `texts` and `path`; at most
/// [`MAX_TEXTS`] texts, refused beyond that rather than silently sampled.
pub(crate) async fn load(
    ml: &Ml,
    texts: Option<Vec<String>>,
    path: Option<String>,
    column: Option<String>,
) -> Result<Loaded, String> {
    match (texts, path) {
        (Some(_), Some(_)) => Err("give either `texts` or `path`, not both".into()),
        (None, None) => {
            Err("give the texts: a list in `texts`, or a workspace file in `path`".into())
        }
        (Some(texts), None) => {
            if column.is_some() {
                return Err("`column` applies to a file in `path`, not to `texts`".into());
            }
            from_list(texts)
        }
        (None, Some(path)) => {
            let rows = read_rows(ml, path.clone(), column.map(|c| vec![c])).await?;
            let mut loaded = Loaded::default();
            let mut cut = 0;
            for (origin, mut values) in rows.rows {
                let (text, was_cut) = bounded(values.remove(0).trim());
                if text.is_empty() {
                    continue;
                }
                cut += usize::from(was_cut);
                loaded.items.push(Item { text, origin });
            }
            if loaded.items.is_empty() {
                return Err(format!("{path} has no non-empty texts to read"));
            }
            if cut > 0 {
                loaded.notes.push(format!(
                    "{cut} texts were cut to {MAX_TEXT_CHARS} characters"
                ));
            }
            loaded.notes.extend(rows.notes);
            Ok(loaded)
        }
    }
}

/// The texts of a list, checked against the caps.
pub(crate) fn from_list(texts: Vec<String>) -> Result<Loaded, String> {
    if texts.len() > MAX_TEXTS {
        return Err(format!(
            "{} texts is too many: at most {MAX_TEXTS} per call; split them, or put them in a workspace file and sample it",
            texts.len()
        ));
    }
    let mut loaded = Loaded::default();
    let mut cut = 0;
    for (i, t) in texts.iter().enumerate() {
        let (text, was_cut) = bounded(t);
        cut += usize::from(was_cut);
        loaded.items.push(Item {
            text,
            origin: format!("#{}", i + 1),
        });
    }
    if loaded.items.is_empty() {
        return Err("`texts` is empty: give at least one text".into());
    }
    if cut > 0 {
        loaded.notes.push(format!(
            "{cut} texts were cut to {MAX_TEXT_CHARS} characters"
        ));
    }
    Ok(loaded)
}

/// Rows read from a file: each with where it came from and the values of the columns asked for.
#[derive(Debug, Default)]
pub(crate) struct Rows {
    pub rows: Vec<(String, Vec<String>)>,
    pub notes: Vec<String>,
}

/// What kind of file a path names, by its extension.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Format {
    Csv(u8),
    Jsonl,
    Lines,
}

fn format_of(path: &str) -> Format {
    let lower = path.to_ascii_lowercase();
    if lower.ends_with(".csv") {
        Format::Csv(b',')
    } else if lower.ends_with(".tsv") || lower.ends_with(".tab") {
        Format::Csv(b'\t')
    } else if lower.ends_with(".jsonl") || lower.ends_with(".ndjson") {
        Format::Jsonl
    } else {
        Format::Lines
    }
}

/// The workspace, or the error a call without one gets.
pub(crate) fn workspace(ml: &Ml) -> Result<Arc<Workspace>, String> {
    ml.workspace().cloned().ok_or_else(|| {
        "no workspace is open, so there is no file to read; give the texts inline".to_owned()
    })
}

/// The values of `columns` in each row of the workspace file `path` (through the scope: the
/// size cap, binary files and protected paths are refused there). `None` reads plain lines;
/// a CSV or JSONL file then needs the column named. At most [`MAX_TEXTS`] rows are kept.
pub(crate) async fn read_rows(
    ml: &Ml,
    path: String,
    columns: Option<Vec<String>>,
) -> Result<Rows, String> {
    let ws = workspace(ml)?;
    cairn_workspace::off_thread(&ws, move |ws| {
        let resolved = ws.resolve(&path).map_err(|e| e.to_string())?;
        let (text, note) = match ws.read_text(&resolved) {
            Ok((text, _)) => (text, None),
            Err(ScopeError::TooLarge { size, limit, .. }) => {
                let text = read_head(ws, &resolved, limit)?;
                let note = format!(
                    "{path} is {size} bytes: only its first {} bytes (whole lines) were read",
                    text.len()
                );
                (text, Some(note))
            }
            Err(e) => return Err(e.to_string()),
        };
        let mut rows = parse_rows(&path, &text, columns.as_deref())?;
        rows.notes.extend(note);
        Ok(rows)
    })
    .await?
}

/// The first `limit` bytes of a file too large to read whole, cut after its last full line;
/// binary files are refused as [`Workspace::read_text`] refuses them.
fn read_head(ws: &Workspace, path: &WorkspacePath, limit: u64) -> Result<String, String> {
    let file = ws.open_read(path).map_err(|e| e.to_string())?;
    let mut bytes = Vec::new();
    file.take(limit)
        .read_to_end(&mut bytes)
        .map_err(|e| format!("reading {}: {e}", path.display_path()))?;
    if bytes.iter().take(8192).any(|&b| b == 0) {
        return Err(format!(
            "{} looks like a binary file; it was not read",
            path.display_path()
        ));
    }
    // The last line may be cut anywhere, even inside a character: it is dropped.
    let end = bytes.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
    bytes.truncate(end);
    String::from_utf8(bytes).map_err(|e| {
        format!(
            "{} is not valid UTF-8 (first bad byte at offset {})",
            path.display_path(),
            e.utf8_error().valid_up_to()
        )
    })
}

fn parse_rows(path: &str, text: &str, columns: Option<&[String]>) -> Result<Rows, String> {
    let format = format_of(path);
    let mut out = Rows::default();
    let mut more = 0usize;
    let mut keep = |out: &mut Rows, origin: String, values: Vec<String>| {
        if out.rows.len() < MAX_TEXTS {
            out.rows.push((origin, values));
        } else {
            more += 1;
        }
    };
    match (format, columns) {
        (Format::Lines, Some(_)) => {
            return Err(format!(
                "{path} is read as plain lines (columns need a .csv, .tsv or .jsonl file); leave `column` out"
            ));
        }
        (Format::Csv(_) | Format::Jsonl, None) => {
            return Err(format!("{path} has columns: name the text's in `column`"));
        }
        (Format::Lines, None) => {
            for (i, line) in text.lines().enumerate() {
                if !line.trim().is_empty() {
                    keep(&mut out, format!("line {}", i + 1), vec![line.to_owned()]);
                }
            }
        }
        (Format::Csv(delimiter), Some(columns)) => {
            let mut reader = csv::ReaderBuilder::new()
                .delimiter(delimiter)
                .flexible(true)
                .from_reader(text.as_bytes());
            let headers: Vec<String> = reader
                .headers()
                .map_err(|e| format!("{path}: the header row is not valid CSV: {e}"))?
                .iter()
                .map(str::to_owned)
                .collect();
            let mut at = Vec::new();
            for c in columns {
                let i = headers
                    .iter()
                    .position(|h| h == c)
                    .or_else(|| headers.iter().position(|h| h.eq_ignore_ascii_case(c)))
                    .ok_or_else(|| {
                        format!(
                            "{path} has no column `{c}`; its columns are: {}",
                            headers.join(", ")
                        )
                    })?;
                at.push(i);
            }
            for (n, record) in reader.records().enumerate() {
                let record =
                    record.map_err(|e| format!("{path}: row {} is not valid CSV: {e}", n + 1))?;
                let values = at
                    .iter()
                    .map(|&i| record.get(i).unwrap_or("").to_owned())
                    .collect();
                keep(&mut out, format!("row {}", n + 1), values);
            }
        }
        (Format::Jsonl, Some(columns)) => {
            let mut missing = 0usize;
            for (i, line) in text.lines().enumerate() {
                if line.trim().is_empty() {
                    continue;
                }
                let value: serde_json::Value = serde_json::from_str(line)
                    .map_err(|e| format!("{path}: line {} is not JSON: {e}", i + 1))?;
                let mut values = Vec::new();
                for c in columns {
                    match value.get(c) {
                        Some(serde_json::Value::String(s)) => values.push(s.clone()),
                        Some(serde_json::Value::Null) | None => break,
                        Some(other) => values.push(other.to_string()),
                    }
                }
                if values.len() == columns.len() {
                    keep(&mut out, format!("line {}", i + 1), values);
                } else {
                    missing += 1;
                }
            }
            if out.rows.is_empty() && missing > 0 {
                return Err(format!(
                    "no line of {path} has the field{} {}",
                    if columns.len() == 1 { "" } else { "s" },
                    columns
                        .iter()
                        .map(|c| format!("`{c}`"))
                        .collect::<Vec<_>>()
                        .join(", ")
                ));
            }
            if missing > 0 {
                out.notes
                    .push(format!("{missing} lines without the field were skipped"));
            }
        }
    }
    if more > 0 {
        out.notes.push(format!(
            "only the first {MAX_TEXTS} rows were read; {more} more were left out"
        ));
    }
    Ok(out)
}

/// The unit-length embeddings of `texts`, computed on a blocking thread; a cancelled call
/// stops waiting (the batch in flight finishes on its own).
pub(crate) async fn embed(
    ml: &Ml,
    texts: Vec<String>,
    cx: &CallContext,
) -> Result<Vec<Vec<f32>>, String> {
    let embedder = ml.embedder().await?;
    let work = tokio::task::spawn_blocking(move || {
        let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
        embedder.embed(&refs)
    });
    tokio::select! {
        // A cancelled run wins, even over a result that is ready.
        biased;
        () = cx.cancel.cancelled() => Err("cancelled".into()),
        done = work => done
            .map_err(|e| format!("internal error: embedding failed ({e})"))?
            .map_err(|e| format!("embedding failed: {e}")),
    }
}

/// `text` on one line and cut for a table cell.
pub(crate) fn cell(text: &str) -> String {
    cairn_toolkit::table::escape(&cairn_toolkit::table::cut(text, 120))
}
