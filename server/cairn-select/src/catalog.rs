//! Tool catalogs and labelled queries in the benchmark format (JSON Lines), and the text a tool
//! is retrieved by.
//!
//! A catalog line is `{"id", "server", "name", "description", "inputSchema"}`; a query line is
//! `{"qid", "query", "relevant": [ids]}`. A malformed line fails the whole load with the file and
//! line number, because a benchmark over a silently shortened set would report wrong figures.

use std::path::{Path, PathBuf};

use serde::Deserialize;
use serde_json::Value;

/// The longest description (in characters) that goes into a tool's retrieval text: a tool
/// description is written by whoever publishes the server, and an unbounded one could stuff
/// itself with words to be chosen for every request.
pub const MAX_DESCRIPTION_CHARS: usize = 1_000;

/// The longest description of one parameter that goes into the retrieval text.
pub const MAX_PARAM_DESCRIPTION_CHARS: usize = 200;

/// At most this many parameters are named in the retrieval text, for the same reason.
pub const MAX_PARAMS: usize = 30;

/// The longest parameters section of the retrieval text, in characters.
pub const MAX_PARAMS_CHARS: usize = 1_000;

/// One tool of a catalog.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct Tool {
    pub id: String,
    #[serde(default)]
    pub server: String,
    pub name: String,
    #[serde(default)]
    pub description: String,
    #[serde(rename = "inputSchema", default)]
    pub input_schema: Value,
}

/// One labelled request: the tools that should be selected for it.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct Query {
    pub qid: String,
    pub query: String,
    pub relevant: Vec<String>,
}

/// Why a catalog or query file could not be loaded.
#[derive(Debug, thiserror::Error)]
pub enum CatalogError {
    #[error("cannot read {}: {source}", path.display())]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{}:{line}: {source}", path.display())]
    Line {
        path: PathBuf,
        line: usize,
        source: serde_json::Error,
    },
    #[error("{}:{line}: duplicate tool id `{id}`", path.display())]
    DuplicateId {
        path: PathBuf,
        line: usize,
        id: String,
    },
}

/// Parses JSON Lines text (blank lines are skipped); `path` only names the source in errors.
fn parse_lines<T: for<'de> Deserialize<'de>>(
    path: &Path,
    text: &str,
) -> Result<Vec<(usize, T)>, CatalogError> {
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let item = serde_json::from_str(line).map_err(|source| CatalogError::Line {
            path: path.to_owned(),
            line: i + 1,
            source,
        })?;
        out.push((i + 1, item));
    }
    Ok(out)
}

fn read(path: &Path) -> Result<String, CatalogError> {
    std::fs::read_to_string(path).map_err(|source| CatalogError::Read {
        path: path.to_owned(),
        source,
    })
}

/// Parses a catalog from text; ids must be unique, since queries name tools by id.
pub fn parse_catalog(path: &Path, text: &str) -> Result<Vec<Tool>, CatalogError> {
    // Refuse never skips, so the list of skipped lines is empty.
    let (tools, _) = parse_catalog_with(path, text, Duplicates::Refuse)?;
    Ok(tools)
}

/// What to do with a second tool under an id already seen in the same catalog.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Duplicates {
    /// Fail, naming the file and line: a scored catalog with two tools under one id would make
    /// the labels ambiguous.
    Refuse,
    /// Keep the first and skip the rest: a distractor pool only has to be large and realistic,
    /// and the public registries it is built from do repeat themselves.
    KeepFirst,
}

/// A tool left out of a catalog because its id came earlier in the same file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SkippedDuplicate {
    pub line: usize,
    pub id: String,
}

/// Parses a catalog from text, handling repeated ids as `duplicates` says; returns the tools and
/// the lines skipped (always empty with [`Duplicates::Refuse`]).
pub fn parse_catalog_with(
    path: &Path,
    text: &str,
    duplicates: Duplicates,
) -> Result<(Vec<Tool>, Vec<SkippedDuplicate>), CatalogError> {
    let mut seen = std::collections::HashSet::new();
    let mut tools = Vec::new();
    let mut skipped = Vec::new();
    for (line, tool) in parse_lines::<Tool>(path, text)? {
        if !seen.insert(tool.id.clone()) {
            match duplicates {
                Duplicates::Refuse => {
                    return Err(CatalogError::DuplicateId {
                        path: path.to_owned(),
                        line,
                        id: tool.id,
                    });
                }
                Duplicates::KeepFirst => {
                    skipped.push(SkippedDuplicate { line, id: tool.id });
                    continue;
                }
            }
        }
        tools.push(tool);
    }
    Ok((tools, skipped))
}

/// Parses labelled queries from text.
pub fn parse_queries(path: &Path, text: &str) -> Result<Vec<Query>, CatalogError> {
    Ok(parse_lines(path, text)?
        .into_iter()
        .map(|(_, q)| q)
        .collect())
}

/// Loads a catalog file.
pub fn load_catalog(path: &Path) -> Result<Vec<Tool>, CatalogError> {
    parse_catalog(path, &read(path)?)
}

/// Loads a catalog file, handling repeated ids as `duplicates` says (see [`parse_catalog_with`]).
pub fn load_catalog_with(
    path: &Path,
    duplicates: Duplicates,
) -> Result<(Vec<Tool>, Vec<SkippedDuplicate>), CatalogError> {
    parse_catalog_with(path, &read(path)?, duplicates)
}

/// Loads a query file.
pub fn load_queries(path: &Path) -> Result<Vec<Query>, CatalogError> {
    parse_queries(path, &read(path)?)
}

/// The first `max` characters of `s` (never splitting a character).
fn cap(s: &str, max: usize) -> &str {
    match s.char_indices().nth(max) {
        Some((at, _)) => &s[..at],
        None => s,
    }
}

impl Tool {
    /// The text the tool is retrieved by: name, server, description, then parameter names with
    /// their descriptions, each part capped. Name and description come first because the
    /// embedder truncates long inputs, and they say most about what the tool is for.
    pub fn retrieval_text(&self) -> String {
        let mut text = format!(
            "{}: {}",
            self.name,
            cap(self.description.trim(), MAX_DESCRIPTION_CHARS)
        );
        if !self.server.is_empty() && self.server != self.name {
            text.push_str(&format!(" (server: {})", self.server));
        }
        let params = self.params_text();
        if !params.is_empty() {
            text.push_str(" Parameters: ");
            text.push_str(cap(&params, MAX_PARAMS_CHARS));
        }
        text
    }

    /// `name: description; …` for the schema's properties (or the free-text parameter list some
    /// converted catalogs carry instead).
    fn params_text(&self) -> String {
        if let Some(props) = self
            .input_schema
            .get("properties")
            .and_then(Value::as_object)
        {
            let parts: Vec<String> = props
                .iter()
                .take(MAX_PARAMS)
                .map(
                    |(name, spec)| match spec.get("description").and_then(Value::as_str) {
                        Some(d) if !d.trim().is_empty() => {
                            format!("{name}: {}", cap(d.trim(), MAX_PARAM_DESCRIPTION_CHARS))
                        }
                        _ => name.clone(),
                    },
                )
                .collect();
            return parts.join("; ");
        }
        self.input_schema
            .get("x-parameters-text")
            .and_then(Value::as_str)
            .map(str::to_owned)
            .unwrap_or_default()
    }

    /// The definition a model would be shown: name, description and input schema, as JSON.
    pub fn definition_json(&self) -> String {
        serde_json::json!({
            "name": self.name,
            "description": self.description,
            "inputSchema": self.input_schema,
        })
        .to_string()
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn a_malformed_line_names_file_and_line() {
        let text = concat!(
            r#"{"id":"a","server":"s","name":"a","description":"d","inputSchema":{}}"#,
            "\n\n",
            r#"{"id":"b","server":"s","name":"b","#,
            "\n"
        );
        let err = parse_catalog(Path::new("cat.jsonl"), text).unwrap_err();
        let msg = err.to_string();
        assert!(msg.starts_with("cat.jsonl:3:"), "{msg}");

        let err = parse_queries(Path::new("q.jsonl"), r#"{"qid":"1","query":"x"}"#).unwrap_err();
        assert!(err.to_string().starts_with("q.jsonl:1:"), "{err}");
    }

    #[test]
    fn duplicate_ids_are_refused() {
        let line = r#"{"id":"a","server":"s","name":"a","description":"d","inputSchema":{}}"#;
        let err = parse_catalog(Path::new("c"), &format!("{line}\n{line}\n")).unwrap_err();
        assert!(
            err.to_string().contains("c:2: duplicate tool id `a`"),
            "{err}"
        );
    }

    #[test]
    fn a_distractor_catalog_keeps_the_first_of_repeated_ids() {
        let a1 = r#"{"id":"a","server":"s","name":"a","description":"first","inputSchema":{}}"#;
        let b = r#"{"id":"b","server":"s","name":"b","description":"d","inputSchema":{}}"#;
        let a2 = r#"{"id":"a","server":"s","name":"a","description":"second","inputSchema":{}}"#;
        let text = format!("{a1}\n{b}\n\n{a2}\n");
        let (tools, skipped) =
            parse_catalog_with(Path::new("d"), &text, Duplicates::KeepFirst).unwrap();
        assert_eq!(tools.len(), 2);
        assert_eq!(tools[0].description, "first");
        assert_eq!(
            skipped,
            [SkippedDuplicate {
                line: 4,
                id: "a".into()
            }]
        );
        // The same text as a scored catalog is refused at the repeated line.
        let err = parse_catalog_with(Path::new("d"), &text, Duplicates::Refuse).unwrap_err();
        assert!(
            err.to_string().contains("d:4: duplicate tool id `a`"),
            "{err}"
        );
    }

    #[test]
    fn retrieval_text_holds_params_and_caps_the_description() {
        let tool = Tool {
            id: "x".into(),
            server: "weather".into(),
            name: "get_forecast".into(),
            description: "w".repeat(5_000),
            input_schema: serde_json::json!({"properties": {"city": {"description": "City name"}}}),
        };
        let text = tool.retrieval_text();
        assert!(text.starts_with("get_forecast: www"));
        assert!(text.contains("(server: weather)"));
        assert!(text.ends_with("Parameters: city: City name"));
        assert!(text.len() < 1_100);
    }
}
