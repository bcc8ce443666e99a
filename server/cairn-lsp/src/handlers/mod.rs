//! One module per request or notification, as ruff's server has it; `server.rs` routes to them.
//! Each handler takes only the part of the state it needs.

pub(crate) mod cancel;
pub(crate) mod chat;
pub(crate) mod code_action;
pub(crate) mod compact;
pub(crate) mod context;
pub(crate) mod diagnostics;
pub(crate) mod did_change;
pub(crate) mod did_change_configuration;
pub(crate) mod did_change_workspace_folders;
pub(crate) mod did_close;
pub(crate) mod did_open;
pub(crate) mod execute_command;
pub(crate) mod initialize;
pub(crate) mod initialized;
pub(crate) mod mcp_prompts;
pub(crate) mod mcp_resources;
pub(crate) mod rewind;
pub(crate) mod sessions;
pub(crate) mod tools;

use cairn_config::{Layer, Layers};
use tower_lsp_server::jsonrpc::{Error, ErrorCode};
use tower_lsp_server::ls_types::MessageType;

use crate::state::State;

pub(crate) fn invalid_params(message: impl Into<String>) -> Error {
    Error {
        code: ErrorCode::InvalidParams,
        message: message.into().into(),
        data: None,
    }
}

pub(crate) fn internal_error(message: impl Into<String>) -> Error {
    Error {
        code: ErrorCode::InternalError,
        message: message.into().into(),
        data: None,
    }
}

/// Replaces one configuration layer and reloads; on an error the user is told and the previous
/// configuration stays.
pub(crate) async fn set_layer(
    state: &State,
    layer: std::result::Result<Option<Layer>, cairn_config::ConfigError>,
    slot: fn(&mut Layers) -> &mut Option<Layer>,
    what: &str,
) {
    let result = layer.map_err(|e| e.to_string()).and_then(|layer| {
        if let Ok(mut layers) = state.layers.lock() {
            *slot(&mut layers) = layer;
        }
        state.reload_config()
    });
    if let Err(e) = result {
        state
            .client
            .show_message(
                MessageType::ERROR,
                state.redact(format!("cairn: {what}: {e}")),
            )
            .await;
    }
}
