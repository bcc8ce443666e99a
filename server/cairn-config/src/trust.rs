//! Trust in the MCP servers a workspace's own config declares.
//!
//! Opening a repository must not start the programs its `.cairn/config.toml` names. A server
//! entry that comes from (or is changed by) the workspace file runs only after the user trusted
//! that workspace for that exact entry; the store keeps a hash of each trusted entry, so an
//! edited entry needs trust again.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use crate::layers::{ConfigError, Layers};
use crate::model::{HookConfig, McpServerConfig};

/// Why the trust store could not be used. A damaged store trusts nothing.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TrustError {
    #[error("trust store {path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error(
        "trust store {path} is damaged ({message}); no workspace server is trusted until it is fixed or removed"
    )]
    Damaged { path: PathBuf, message: String },
}

/// SHA-256 over the canonical JSON of an entry: what the user trusted, exactly.
pub fn entry_hash(entry: &McpServerConfig) -> String {
    // serde_json maps are ordered by key, so the encoding is canonical.
    let value = serde_json::to_value(entry).unwrap_or_default();
    let digest = Sha256::digest(value.to_string().as_bytes());
    digest.iter().map(|b| format!("{b:02x}")).collect()
}

/// The store's entry for a workspace's hooks. A server that took the name could not pass for
/// them, nor they for it: each is compared with its own kind of hash.
const HOOKS_ENTRY: &str = "#hooks";

/// SHA-256 over the canonical JSON of a workspace's hooks, all of them: adding, changing or
/// reordering one needs trust again.
pub fn hooks_hash(hooks: &[HookConfig]) -> String {
    let value = serde_json::to_value(hooks).unwrap_or_default();
    let digest = Sha256::digest(value.to_string().as_bytes());
    digest.iter().map(|b| format!("{b:02x}")).collect()
}

/// Entries whose value depends on the workspace file: declared there, or changed by it.
pub fn workspace_servers(
    layers: &Layers,
) -> Result<BTreeMap<String, McpServerConfig>, ConfigError> {
    let with = layers.resolve()?.mcp.servers;
    let without = Layers {
        workspace: None,
        ..layers.clone()
    }
    .resolve()?
    .mcp
    .servers;
    Ok(with
        .into_iter()
        .filter(|(name, entry)| without.get(name) != Some(entry))
        .collect())
}

/// Trusted entries per workspace, kept in a JSON file in the user's data directory.
#[derive(Debug, Clone)]
pub struct TrustStore {
    path: PathBuf,
    trusted: BTreeMap<String, BTreeMap<String, String>>,
}

impl TrustStore {
    /// Loads the store; a missing file is an empty store.
    pub fn load(path: &Path) -> Result<TrustStore, TrustError> {
        let trusted = match std::fs::read_to_string(path) {
            Ok(text) => serde_json::from_str(&text).map_err(|e| TrustError::Damaged {
                path: path.to_path_buf(),
                message: e.to_string(),
            })?,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => BTreeMap::new(),
            Err(source) => {
                return Err(TrustError::Io {
                    path: path.to_path_buf(),
                    source,
                });
            }
        };
        Ok(TrustStore {
            path: path.to_path_buf(),
            trusted,
        })
    }

    fn key(workspace: &Path) -> String {
        workspace.display().to_string()
    }

    /// Whether this exact entry was trusted for this workspace.
    pub fn is_trusted(&self, workspace: &Path, name: &str, entry: &McpServerConfig) -> bool {
        self.trusted
            .get(&Self::key(workspace))
            .and_then(|servers| servers.get(name))
            .is_some_and(|hash| *hash == entry_hash(entry))
    }

    /// Trusts these entries for this workspace and saves the store (temporary file + rename).
    pub fn trust(
        &mut self,
        workspace: &Path,
        entries: &BTreeMap<String, McpServerConfig>,
    ) -> Result<(), TrustError> {
        let servers = self.trusted.entry(Self::key(workspace)).or_default();
        for (name, entry) in entries {
            servers.insert(name.clone(), entry_hash(entry));
        }
        self.save()
    }

    /// Whether the workspace's hooks, exactly these, were trusted for this workspace.
    pub fn hooks_trusted(&self, workspace: &Path, hooks: &[HookConfig]) -> bool {
        self.trusted
            .get(&Self::key(workspace))
            .and_then(|entries| entries.get(HOOKS_ENTRY))
            .is_some_and(|hash| *hash == hooks_hash(hooks))
    }

    /// Trusts the workspace's hooks, as they are, and saves the store.
    pub fn trust_hooks(
        &mut self,
        workspace: &Path,
        hooks: &[HookConfig],
    ) -> Result<(), TrustError> {
        self.trusted
            .entry(Self::key(workspace))
            .or_default()
            .insert(HOOKS_ENTRY.to_string(), hooks_hash(hooks));
        self.save()
    }

    fn save(&self) -> Result<(), TrustError> {
        let io = |source| TrustError::Io {
            path: self.path.clone(),
            source,
        };
        if let Some(dir) = self.path.parent() {
            std::fs::create_dir_all(dir).map_err(io)?;
        }
        let text = serde_json::to_string_pretty(&self.trusted).unwrap_or_default();
        let tmp = self.path.with_extension("tmp");
        std::fs::write(&tmp, text).map_err(io)?;
        std::fs::rename(&tmp, &self.path).map_err(io)
    }
}

/// The configured servers split into those that may start and those waiting for trust.
pub fn gate(
    servers: &BTreeMap<String, McpServerConfig>,
    from_workspace: &BTreeMap<String, McpServerConfig>,
    store: Option<&TrustStore>,
    workspace: Option<&Path>,
) -> (BTreeMap<String, McpServerConfig>, Vec<String>) {
    let mut runnable = BTreeMap::new();
    let mut waiting = Vec::new();
    for (name, entry) in servers {
        let needs_trust = from_workspace.contains_key(name);
        let trusted = match (store, workspace) {
            (Some(store), Some(ws)) => store.is_trusted(ws, name, entry),
            _ => false,
        };
        if needs_trust && !trusted {
            waiting.push(name.clone());
        } else {
            runnable.insert(name.clone(), entry.clone());
        }
    }
    (runnable, waiting)
}
