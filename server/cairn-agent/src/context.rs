//! The project rules seam: instructions a project keeps for agents (`AGENTS.md`, `CLAUDE.md`,
//! `.cairn/rules/*.md`), found by the binary (this crate reads no workspace file) and added to
//! the system prompt as text. They are words for the model only: nothing in them reaches the
//! policy, the limits or the configuration.

use std::path::PathBuf;

use serde::Serialize;

/// One rules file and how much of it reached the prompt.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RuleFile {
    pub path: PathBuf,
    /// Its size.
    pub bytes: u64,
    /// How many of its bytes were included (0 when the cap was reached before it).
    pub included: u64,
    pub truncated: bool,
}

/// The rules for a turn: the text for the system prompt and the files it came from.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Rules {
    pub text: String,
    pub files: Vec<RuleFile>,
}

/// Finds the rules that apply to a turn.
pub trait ProjectRules: Send + Sync {
    /// The rules of the workspace root and of the directories above `paths` (files the turn
    /// names, as the editor or the model gave them: relative to a root, or absolute).
    fn rules(&self, paths: &[String]) -> Rules;
}

/// Paths a tool call names in its arguments (`path`, `file`, `paths`, `source`, `destination`,
/// ...), so the rules of the directories it works in join the prompt from the next step on.
pub fn paths_in(arguments: &serde_json::Value) -> Vec<String> {
    const KEYS: [&str; 8] = [
        "path",
        "file",
        "paths",
        "files",
        "source",
        "destination",
        "from",
        "to",
    ];
    let mut out = Vec::new();
    for key in KEYS {
        match arguments.get(key) {
            Some(serde_json::Value::String(s)) => out.push(s.clone()),
            Some(serde_json::Value::Array(items)) => out.extend(
                items
                    .iter()
                    .filter_map(|v| v.as_str().map(str::to_owned))
                    .take(32),
            ),
            _ => {}
        }
    }
    out
}
