//! `workspace/didChangeWorkspaceFolders`: the roots, the workspace configuration layer, the
//! built-in tools and the MCP servers' roots follow the folders.

use std::path::PathBuf;

use cairn_config::Layer;
use tower_lsp_server::ls_types::DidChangeWorkspaceFoldersParams;

use super::set_layer;
use crate::editor::canonical_path;
use crate::state::State;

pub(crate) async fn handle(state: &State, params: DidChangeWorkspaceFoldersParams) {
    if let Ok(mut roots) = state.roots.lock() {
        let removed: Vec<PathBuf> = params
            .event
            .removed
            .iter()
            .filter_map(|f| canonical_path(&f.uri))
            .collect();
        roots.retain(|r| !removed.contains(r));
        for added in params
            .event
            .added
            .iter()
            .filter_map(|f| canonical_path(&f.uri))
        {
            if !roots.contains(&added) {
                roots.push(added);
            }
        }
    }
    // The workspace file belongs to the first folder, which may have changed.
    let first = state.roots().into_iter().next();
    let layer = match first {
        Some(root) => Layer::from_file(&root.join(".cairn").join("config.toml"), true),
        None => Ok(None),
    };
    set_layer(
        state,
        layer,
        |l| &mut l.workspace,
        "workspace configuration ignored",
    )
    .await;
    // The built-in tools follow the folders, and MCP servers hear about the new roots.
    let _ = state.agent();
    if let Some(handle) = state.factory.mcp() {
        handle.hub.notify_roots_changed().await;
    }
}
