//! The arguments several web tools take alike: a URL alone, or a URL read in parts.

use cairn_toolkit::JsonSchema;
use serde::Deserialize;

/// A URL and nothing else.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct UrlArgs {
    /// An http or https URL.
    pub url: String,
}

/// A URL whose content comes in parts.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PageArgs {
    /// An http or https URL.
    pub url: String,
    /// The character to start from (default 0); use the value a truncated result names.
    #[serde(default)]
    pub start_index: usize,
    /// At most this many characters (default 20000).
    #[schemars(range(min = 1))]
    pub max_length: Option<usize>,
}
