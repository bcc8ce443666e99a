//! `workspace/didChangeConfiguration`: the editor's settings become the client layer.

use cairn_config::Layer;
use tower_lsp_server::ls_types::DidChangeConfigurationParams;

use super::set_layer;
use crate::state::State;

pub(crate) async fn handle(state: &State, params: DidChangeConfigurationParams) {
    // VS Code sends `{cairn: {...}}`, Helix repeats `{config: {...}}` from its
    // initialization options, other clients send the settings object itself.
    let settings = params
        .settings
        .get("cairn")
        .or_else(|| params.settings.get("config"))
        .cloned()
        .unwrap_or(params.settings);
    let layer = Layer::from_json(&settings).map(Some);
    set_layer(state, layer, |l| &mut l.client, "settings not applied").await;
}
