//! `cairn acp`: the workspaces the ACP front opens, composed as `cairn chat` and `cairn lsp`
//! compose theirs (configuration layers of the root, the hub with its servers, the same agent).

use std::path::Path;
use std::sync::Mutex;

use cairn_lsp::McpHandle;
use futures::future::BoxFuture;

use crate::compose::{self, Env};

/// Opens each workspace root an ACP session names, and keeps its hub until the server stops.
pub struct Workspaces {
    env: Env,
    hubs: Mutex<Vec<McpHandle>>,
}

impl Workspaces {
    pub fn new(env: Env) -> Self {
        Self {
            env,
            hubs: Mutex::default(),
        }
    }

    /// Stops the MCP servers, Python sessions and warm containers the sessions started.
    pub async fn shutdown(&self) {
        let hubs = self.hubs.lock().map(|mut h| std::mem::take(&mut *h));
        for handle in hubs.unwrap_or_default() {
            handle.hub.shutdown().await;
        }
        let _ = tokio::time::timeout(
            std::time::Duration::from_secs(10),
            compose::shutdown_sandbox(),
        )
        .await;
    }
}

impl cairn_acp::Workspaces for Workspaces {
    fn open<'a>(&'a self, root: &'a Path) -> BoxFuture<'a, Result<cairn_acp::Opened, String>> {
        Box::pin(async move {
            let (config, mcp) = compose::terminal_setup(&self.env, root, false)
                .await
                .map_err(|e| format!("{e:#}"))?;
            for (name, problem) in &mcp.problems {
                tracing::warn!("MCP server `{name}` not started: {problem}");
            }
            let opened = cairn_acp::Opened {
                agent: compose::agent(&config, &self.env, &mcp),
                sessions_dir: compose::sessions_dir(&config, &self.env),
            };
            if let Ok(mut hubs) = self.hubs.lock() {
                hubs.push(mcp);
            }
            Ok(opened)
        })
    }
}
