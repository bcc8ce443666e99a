//! `initialize`: the client's extensions and position encoding, the workspace roots, the
//! configuration layers, and the capabilities, `cairn/` methods and commands offered.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use cairn_config::Layer;
use serde_json::json;
use tower_lsp_server::jsonrpc::Result;
use tower_lsp_server::ls_types::*;

use super::invalid_params;
use crate::documents::Encoding;
use crate::editor::canonical_path;
use crate::protocol::{self, InitializationOptions, commands};
use crate::state::State;

pub(crate) async fn handle(
    state: &Arc<State>,
    params: InitializeParams,
) -> Result<InitializeResult> {
    let options: InitializationOptions = match params.initialization_options.clone() {
        Some(v) => serde_json::from_value(v)
            .map_err(|e| invalid_params(format!("initializationOptions: {e}")))?,
        None => InitializationOptions::default(),
    };
    state.diagnostics.sends.store(
        options.capabilities.diagnostics,
        std::sync::atomic::Ordering::Relaxed,
    );
    if let Ok(mut ext) = state.extensions.lock() {
        *ext = options.capabilities;
    }
    let helix = params
        .client_info
        .as_ref()
        .is_some_and(|c| c.name == "helix");
    state
        .hides_command_errors
        .store(helix, std::sync::atomic::Ordering::Relaxed);

    let offers_utf8 = params
        .capabilities
        .general
        .as_ref()
        .and_then(|g| g.position_encodings.as_ref())
        .is_some_and(|encs| encs.contains(&PositionEncodingKind::UTF8));
    let encoding = if offers_utf8 {
        Encoding::Utf8
    } else {
        Encoding::Utf16
    };
    if let Ok(mut e) = state.encoding.lock() {
        *e = encoding;
    }

    let mut roots: Vec<PathBuf> = params
        .workspace_folders
        .iter()
        .flatten()
        .filter_map(|f| canonical_path(&f.uri))
        .collect();
    #[allow(deprecated)]
    if roots.is_empty()
        && let Some(path) = params.root_uri.as_ref().and_then(canonical_path)
    {
        roots.push(path);
    }
    // Helix sends only `rootPath` (its working directory) when no root marker of the
    // language is found above the file.
    #[allow(deprecated)]
    if roots.is_empty()
        && let Some(path) = params.root_path.as_deref().filter(|p| !p.is_empty())
    {
        let path = PathBuf::from(path);
        if path.is_absolute() {
            roots.push(std::fs::canonicalize(&path).unwrap_or(path));
        }
    }
    let mut warnings = Vec::new();
    if let Ok(mut layers) = state.layers.lock() {
        layers.workspace = match roots.first() {
            Some(root) => match Layer::from_file(&root.join(".cairn").join("config.toml"), true) {
                Ok(layer) => layer,
                Err(e) => {
                    warnings.push(format!("cairn: workspace configuration ignored: {e}"));
                    None
                }
            },
            None => None,
        };
        if let Some(config) = &options.config {
            match Layer::from_json(config) {
                Ok(layer) => layers.client = Some(layer),
                Err(e) => warnings.push(format!("cairn: editor settings ignored: {e}")),
            }
        }
    }
    if let Ok(mut r) = state.roots.lock() {
        *r = roots;
    }
    if let Err(e) = state.reload_config() {
        warnings.push(format!("cairn: configuration error: {e}"));
    }
    if let Ok(mut w) = state.startup_warnings.lock() {
        w.extend(warnings);
    }

    if let Some(pid) = params.process_id {
        watch_parent(pid, state.clone());
    }

    let encoding_kind = match encoding {
        Encoding::Utf8 => PositionEncodingKind::UTF8,
        Encoding::Utf16 => PositionEncodingKind::UTF16,
    };
    Ok(InitializeResult {
        server_info: Some(ServerInfo {
            name: "cairn".into(),
            version: Some(env!("CARGO_PKG_VERSION").into()),
        }),
        capabilities: ServerCapabilities {
            position_encoding: Some(encoding_kind),
            text_document_sync: Some(TextDocumentSyncCapability::Options(
                TextDocumentSyncOptions {
                    open_close: Some(true),
                    change: Some(TextDocumentSyncKind::INCREMENTAL),
                    ..Default::default()
                },
            )),
            code_action_provider: Some(CodeActionProviderCapability::Simple(true)),
            execute_command_provider: Some(ExecuteCommandOptions {
                commands: commands::ALL.iter().map(|c| c.to_string()).collect(),
                ..Default::default()
            }),
            workspace: Some(WorkspaceServerCapabilities {
                workspace_folders: Some(WorkspaceFoldersServerCapabilities {
                    supported: Some(true),
                    change_notifications: Some(OneOf::Left(true)),
                }),
                file_operations: None,
            }),
            experimental: Some(
                json!({ "cairn": { "methods": protocol::METHODS, "commands": commands::ALL } }),
            ),
            ..Default::default()
        },
        offset_encoding: None,
    })
}

/// Exits when the editor process dies, as the LSP `processId` asks.
fn watch_parent(pid: u32, state: Arc<State>) {
    tokio::spawn(async move {
        loop {
            tokio::time::sleep(Duration::from_millis(500)).await;
            if !process_alive(pid) {
                tracing::info!(pid, "the editor process is gone; exiting");
                state.stop().await;
                std::process::exit(0);
            }
        }
    });
}

#[cfg(unix)]
fn process_alive(pid: u32) -> bool {
    let Ok(pid) = libc::pid_t::try_from(pid) else {
        return false;
    };
    // Signal 0 only probes. EPERM means it exists under another user.
    #[allow(unsafe_code)]
    let rc = unsafe { libc::kill(pid, 0) };
    rc == 0 || std::io::Error::last_os_error().raw_os_error() == Some(libc::EPERM)
}

#[cfg(not(unix))]
fn process_alive(_pid: u32) -> bool {
    true
}
