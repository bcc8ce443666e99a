//! `cairn acp`: the workspaces the ACP front opens, composed as `cairn chat` and `cairn lsp`
//! compose theirs (configuration layers of the root, the hub with its servers, the same agent).

use std::path::Path;
use std::sync::{Arc, Mutex};

use cairn_config::{Config, McpServerConfig, McpTransport};
use cairn_lsp::McpHandle;
use cairn_workspace::DocumentOverlay;
use futures::future::BoxFuture;
use futures::stream::BoxStream;

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

/// The client's servers join the configured ones as the user's own would (the user put them in
/// the editor's settings): behind the same pinning, review and approval policy. A name the
/// configuration already uses is refused rather than replaced.
fn with_client_servers(
    mut config: Config,
    extra: &[cairn_acp::ClientServer],
) -> Result<Config, String> {
    for server in extra {
        if config.mcp.servers.contains_key(&server.name) {
            return Err(format!(
                "mcpServers: `{}` is already an MCP server in cairn's configuration",
                server.name
            ));
        }
        let transport = match (&server.command, server.sse) {
            (Some(_), _) => McpTransport::Stdio,
            (None, true) => McpTransport::Sse,
            (None, false) => McpTransport::Http,
        };
        config.mcp.servers.insert(
            server.name.clone(),
            McpServerConfig {
                command: server.command.clone(),
                args: server.args.clone(),
                env: server.env.iter().cloned().collect(),
                url: server.url.clone(),
                headers: server.headers.iter().cloned().collect(),
                transport: Some(transport),
                ..McpServerConfig::default()
            },
        );
    }
    Ok(config)
}

impl cairn_acp::Workspaces for Workspaces {
    fn open<'a>(
        &'a self,
        root: &'a Path,
        extra: &'a [cairn_acp::ClientServer],
        overlay: Option<Arc<dyn DocumentOverlay>>,
    ) -> BoxFuture<'a, Result<cairn_acp::Opened, String>> {
        Box::pin(async move {
            let layers =
                compose::load_layers(&self.env, Some(root)).map_err(|e| format!("{e:#}"))?;
            let config = layers.resolve().map_err(|e| e.to_string())?;
            let config = with_client_servers(config, extra)?;
            let mcp = compose::terminal_hub(&config, &layers, &self.env, root, overlay).await?;
            for (name, problem) in &mcp.problems {
                tracing::warn!("MCP server `{name}` not started: {problem}");
            }
            let opened = cairn_acp::Opened {
                agent: compose::agent(&config, &self.env, &mcp),
                sessions_dir: compose::sessions_dir(&config, &self.env),
                commands: Arc::new(HubCommands(mcp.hub.clone())),
                workspace: mcp.workspace.clone(),
            };
            if let Ok(mut hubs) = self.hubs.lock() {
                hubs.push(mcp);
            }
            Ok(opened)
        })
    }
}

/// A workspace's slash commands: its hub's MCP prompts, expanded as every front expands them.
struct HubCommands(cairn_mcp::Hub);

impl cairn_acp::Commands for HubCommands {
    fn list(&self) -> BoxFuture<'_, Vec<cairn_acp::Command>> {
        Box::pin(async move {
            self.0
                .slash_commands()
                .await
                .into_iter()
                .map(|c| cairn_acp::Command {
                    name: c.name,
                    description: c.description,
                    hint: c.hint,
                })
                .collect()
        })
    }

    fn expand<'a>(&'a self, message: &'a str) -> BoxFuture<'a, Result<String, String>> {
        Box::pin(async move {
            self.0
                .expand_slash(message)
                .await
                .map_err(|e| e.to_string())
        })
    }

    /// The hub's events: a server that comes, goes or changes its catalog may change its
    /// prompts.
    fn changes(&self) -> BoxStream<'static, ()> {
        use tokio::sync::broadcast::error::RecvError;
        Box::pin(futures::stream::unfold(
            self.0.subscribe(),
            |mut events| async move {
                match events.recv().await {
                    Ok(_) | Err(RecvError::Lagged(_)) => Some(((), events)),
                    Err(RecvError::Closed) => None,
                }
            },
        ))
    }
}
