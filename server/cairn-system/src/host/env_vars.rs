//! `env_vars`: the names of cairn's environment variables, and the values of the few the user
//! allows, never of a secret-looking name.

use cairn_toolkit::table::cut;
use cairn_toolkit::{CallContext, Category, Effect, JsonSchema, Paths, Tool};
use rmcp::model::CallToolResult;
use serde::Deserialize;

use super::table;
use crate::system::System;

/// The `env_vars` tool.
pub struct EnvVars;

/// Arguments of `env_vars`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// Only names containing this text (case-insensitive).
    #[serde(default)]
    filter: Option<String>,
}

/// Rows shown at most.
const MAX_ROWS: usize = 500;

/// Parts of a name that mark it as holding a secret, whatever the user listed.
const SECRET_WORDS: &[&str] = &[
    "TOKEN",
    "SECRET",
    "KEY",
    "PASSWORD",
    "PASSWD",
    "PASS",
    "PWD_HASH",
    "CREDENTIAL",
    "AUTH",
    "COOKIE",
    "SESSION",
    "PRIVATE",
    "SIGNATURE",
    "CERT",
    "DSN",
    "CONNECTION_STRING",
];

/// Whether `name` looks like it holds a secret. `PWD` (the working directory) is not one.
pub(crate) fn secret_looking(name: &str) -> bool {
    let upper = name.to_ascii_uppercase();
    SECRET_WORDS.iter().any(|w| upper.contains(w))
}

impl Tool for EnvVars {
    type Host = System;
    type Args = Args;
    const NAME: &'static str = "env_vars";
    const TITLE: &'static str = "Environment variables";
    const DESCRIPTION: &'static str = "List the names of cairn's environment variables; values are shown only for names the user allows (`system.env_values`, by default PATH, HOME, SHELL, LANG, TERM, USER, PWD, EDITOR) and never for secret-looking names (TOKEN, KEY, PASSWORD...).";
    const CATEGORY: Category = Category::System;
    const EFFECT: Effect = Effect::Read;
    const AGENT_ONLY: bool = false;

    fn paths(_: &Args) -> Paths {
        Paths::none()
    }

    async fn call(system: &System, args: Args, _: CallContext) -> CallToolResult {
        let needle = args.filter.as_deref().map(str::to_ascii_lowercase);
        let mut vars: Vec<(String, String)> = std::env::vars_os()
            .map(|(k, v)| {
                (
                    k.to_string_lossy().into_owned(),
                    v.to_string_lossy().into_owned(),
                )
            })
            .filter(|(k, _)| {
                needle
                    .as_ref()
                    .is_none_or(|n| k.to_ascii_lowercase().contains(n))
            })
            .collect();
        vars.sort();
        let more = vars.len() > MAX_ROWS;
        vars.truncate(MAX_ROWS);
        let rows = vars
            .into_iter()
            .map(|(name, value)| {
                let shown = if secret_looking(&name) {
                    "(hidden: the name looks like a secret)".to_owned()
                } else if !system.settings.env_values.iter().any(|n| n == &name) {
                    "(hidden: not in system.env_values)".to_owned()
                } else {
                    cut(&system.shown(&value), 500)
                };
                vec![system.shown(&name), shown]
            })
            .collect();
        table(
            "Environment of cairn (values only for the names the user allows)",
            &["name", "value"],
            rows,
            more,
            "narrow with `filter`",
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secret_looking_names_are_caught_and_ordinary_ones_are_not() {
        for name in [
            "GITHUB_TOKEN",
            "aws_secret_access_key",
            "DB_PASSWORD",
            "SESSION_ID",
            "MY_API_KEY",
        ] {
            assert!(secret_looking(name), "{name}");
        }
        for name in ["PATH", "HOME", "PWD", "LANG", "EDITOR", "TERM"] {
            assert!(!secret_looking(name), "{name}");
        }
    }
}
