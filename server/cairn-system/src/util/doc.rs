//! JSON, YAML and TOML documents for the data-format tools: read from given text or a
//! workspace file (through the scope, under a size cap), parsed into one JSON value, and written
//! back out. The parsers bound what hostile input costs: serde_json stops at 128 levels of
//! nesting, serde_norway at 128 levels and refuses alias expansion beyond a multiple of the
//! document's events (a "billion laughs" YAML fails fast with "repetition limit exceeded").

use cairn_workspace::Workspace;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;

/// Bytes of one document, given or read.
pub(crate) const MAX_INPUT: u64 = 8 * 1024 * 1024;
/// Bytes of text one result shows.
pub(crate) const MAX_OUTPUT: usize = 256 * 1024;

/// A document format.
#[derive(Debug, Clone, Copy, Deserialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum Format {
    Json,
    Yaml,
    Toml,
}

impl Format {
    pub(crate) fn name(self) -> &'static str {
        match self {
            Format::Json => "JSON",
            Format::Yaml => "YAML",
            Format::Toml => "TOML",
        }
    }

    /// The format a file name says, if it says one.
    pub(crate) fn of_path(path: &str) -> Option<Format> {
        let lower = path.to_ascii_lowercase();
        let ext = lower.rsplit_once('.').map(|(_, e)| e)?;
        match ext {
            "json" | "jsonc" | "geojson" | "ipynb" => Some(Format::Json),
            "yaml" | "yml" => Some(Format::Yaml),
            "toml" => Some(Format::Toml),
            _ => None,
        }
    }
}

/// The document's text: `text` itself, or the workspace file `path` read through the scope.
pub(crate) fn source(
    ws: Option<&Workspace>,
    text: Option<String>,
    path: Option<&str>,
    what: &str,
) -> Result<String, String> {
    match (text, path) {
        (Some(_), Some(_)) => Err(format!("give the {what} as text or as a file, not both")),
        (None, None) => Err(format!("no {what}: give it as text or as a workspace file")),
        (Some(t), None) => {
            if t.len() as u64 > MAX_INPUT {
                Err(format!(
                    "the {what} is {} bytes, over the {MAX_INPUT}-byte cap",
                    t.len()
                ))
            } else {
                Ok(t)
            }
        }
        (None, Some(p)) => {
            let Some(ws) = ws else {
                return Err(format!(
                    "no workspace is open to read {p} from: give the {what} as text"
                ));
            };
            let path = ws.resolve(p).map_err(|e| e.to_string())?;
            let (text, _) = ws.read_text(&path).map_err(|e| e.to_string())?;
            if text.len() as u64 > MAX_INPUT {
                return Err(format!(
                    "{p} is {} bytes, over the {MAX_INPUT}-byte cap",
                    text.len()
                ));
            }
            Ok(text)
        }
    }
}

/// `text` parsed as `format`; when `format` is `None`, JSON, then TOML, then YAML (YAML reads
/// almost anything, so it goes last).
pub(crate) fn parse(text: &str, format: Option<Format>) -> Result<(Value, Format), String> {
    let one = |f: Format| -> Result<Value, String> {
        match f {
            Format::Json => serde_json::from_str(text).map_err(|e| e.to_string()),
            Format::Yaml => serde_norway::from_str(text).map_err(|e| {
                let s = e.to_string();
                if s.contains("repetition limit") {
                    format!("{s}: the aliases expand to far more than the document holds (an alias bomb); refused")
                } else {
                    s
                }
            }),
            Format::Toml => toml::from_str::<Value>(text).map_err(|e| e.to_string()),
        }
    };
    match format {
        Some(f) => one(f)
            .map(|v| (v, f))
            .map_err(|e| format!("not valid {}: {e}", f.name())),
        None => {
            let mut errors = Vec::new();
            for f in [Format::Json, Format::Toml, Format::Yaml] {
                match one(f) {
                    Ok(v) => return Ok((v, f)),
                    Err(e) => errors.push(format!("as {}: {e}", f.name())),
                }
            }
            Err(format!(
                "cannot parse the document; say its format. {}",
                errors.join("; ")
            ))
        }
    }
}

/// `value` written as `format`.
pub(crate) fn render(value: &Value, format: Format) -> Result<String, String> {
    match format {
        Format::Json => serde_json::to_string_pretty(value).map_err(|e| e.to_string()),
        Format::Yaml => serde_norway::to_string(value).map_err(|e| e.to_string()),
        Format::Toml => {
            if !value.is_object() {
                return Err("TOML needs a table (an object) at the top".to_owned());
            }
            if let Some(at) = find_null(value, String::new()) {
                return Err(format!(
                    "TOML has no null, and the document has one at {}: remove it or use another value",
                    if at.is_empty() { "the top" } else { &at }
                ));
            }
            toml::to_string_pretty(value).map_err(|e| e.to_string())
        }
    }
}

/// The path of the first null in `v`, as `.a[0].b`.
fn find_null(v: &Value, at: String) -> Option<String> {
    match v {
        Value::Null => Some(at),
        Value::Array(items) => items
            .iter()
            .enumerate()
            .find_map(|(i, x)| find_null(x, format!("{at}[{i}]"))),
        Value::Object(map) => map
            .iter()
            .find_map(|(k, x)| find_null(x, format!("{at}.{k}"))),
        _ => None,
    }
}

/// `text` cut to [`MAX_OUTPUT`] bytes at a character boundary, with a note when cut.
pub(crate) fn capped(text: String) -> String {
    if text.len() <= MAX_OUTPUT {
        return text;
    }
    let mut end = MAX_OUTPUT;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!(
        "{}\n… (cut: {} of {} bytes shown; query a part of it with json_query)",
        text.get(..end).unwrap_or_default(),
        end,
        text.len()
    )
}
