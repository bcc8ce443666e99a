//! `cairn/context`: which project rules files reach the system prompt, for a turn in a file's
//! context, and how much of each.

use tower_lsp_server::jsonrpc::Result;

use super::internal_error;
use crate::protocol::{ContextParams, ContextResult, RuleEntry};
use crate::state::State;

pub(crate) async fn handle(state: &State, params: Option<ContextParams>) -> Result<ContextResult> {
    let params = params.unwrap_or_default();
    let agent = state.agent().map_err(internal_error)?;
    let paths: Vec<String> = params
        .uri
        .and_then(|u| crate::editor::canonical_path(&u).map(|p| p.display().to_string()))
        .into_iter()
        .collect();
    let rules = agent
        .rules
        .as_ref()
        .map(|r| r.rules(&paths).files)
        .unwrap_or_default();
    Ok(ContextResult {
        rules: rules
            .into_iter()
            .map(|f| RuleEntry {
                path: f.path.display().to_string(),
                bytes: f.bytes,
                included: f.included,
                truncated: f.truncated,
            })
            .collect(),
        max_bytes: state.config().agent.rules_max_bytes,
    })
}
