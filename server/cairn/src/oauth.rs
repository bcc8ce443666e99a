//! OAuth for HTTP MCP servers, as the binary wires it: grants kept in the vault and the
//! terminal's sign-in prompt. (The editor's prompt is `cairn-lsp`'s delegate; the flow itself is
//! `cairn_mcp::oauth`.)
//!
//! A grant (access and refresh token, the client it was issued to, its token endpoint) is one
//! vault secret, `oauth.<server>`, bound to the host of the server's URL: encrypted at rest,
//! handed back only for that host, and never shown by `cairn vault list` (names only). When
//! there is no vault yet, the first grant creates one with a fresh key file, as
//! `cairn vault set` does.

use std::sync::Arc;

use cairn_mcp::{AuthorizationPrompt, OAuthOptions, StoredGrant, TokenStore};
use cairn_vault::{KeySource, Secret, Vault, VaultError};
use futures::future::BoxFuture;

use crate::compose::Env;

/// The hub's OAuth options for this process: the vault store and the terminal prompt.
pub fn options(env: &Env) -> OAuthOptions {
    OAuthOptions {
        store: Arc::new(VaultTokenStore { env: env.clone() }),
        prompt: Arc::new(TerminalPrompt),
        ..OAuthOptions::default()
    }
}

/// The vault name of server `server`'s grant: `oauth.` and the name with characters a vault
/// name cannot hold replaced by `_`, shortened (with a hash, so two long names stay apart) to
/// the vault's 64-character limit.
pub fn secret_name(server: &str) -> String {
    let clean: String = server
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-') {
                c
            } else {
                '_'
            }
        })
        .collect();
    let name = format!("oauth.{clean}");
    if name.len() <= 64 && clean == server {
        return name;
    }
    // FNV-1a over the original name: stable across runs, and enough to keep names apart.
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for b in server.bytes() {
        hash ^= u64::from(b);
        hash = hash.wrapping_mul(0x0100_0000_01b3);
    }
    let keep: String = clean.chars().take(40).collect();
    format!("oauth.{keep}-{hash:016x}")
}

/// Grants in the user's vault.
struct VaultTokenStore {
    env: Env,
}

impl VaultTokenStore {
    fn open(&self) -> Result<Vault, String> {
        let get = |k: &str| self.env.get(k).map(str::to_string);
        let path = cairn_vault::default_store_path(get)
            .ok_or_else(|| "no place for the vault: set XDG_DATA_HOME or HOME".to_string())?;
        let key = KeySource::from_env(&path, get);
        Vault::open(path, key).map_err(|e| format!("the vault could not be opened: {e}"))
    }
}

impl TokenStore for VaultTokenStore {
    fn load<'a>(
        &'a self,
        server: &'a str,
        url: &'a str,
    ) -> BoxFuture<'a, Result<Option<StoredGrant>, String>> {
        Box::pin(async move {
            let Some(host) = crate::secrets::url_host(url) else {
                return Ok(None);
            };
            let name = secret_name(server);
            let env = self.env.clone();
            // Opening may derive a key from a passphrase (Argon2id, a second or so).
            let found = tokio::task::spawn_blocking(move || {
                let Some(vault) = crate::secrets::open_default(&env)? else {
                    return Ok(None);
                };
                match vault.secret_for_host(&name, &host) {
                    Ok(secret) => Ok(Some(secret)),
                    // Not stored, or stored for another host (the server's URL changed): no
                    // grant for this server as configured now.
                    Err(VaultError::NotFound { .. } | VaultError::NotBound { .. }) => Ok(None),
                    Err(e) => Err(e.to_string()),
                }
            })
            .await
            .map_err(|e| e.to_string())??;
            let Some(secret) = found else {
                return Ok(None);
            };
            // The secret holds `{"url": ..., "grant": ...}`: the grant and the URL it was issued
            // for.
            let saved: serde_json::Value = serde_json::from_str(secret.expose())
                .map_err(|_| format!("the vault's `{}` is not a grant", secret_name(server)))?;
            if saved.get("url").and_then(serde_json::Value::as_str) != Some(url) {
                // Issued for another URL of the same host: not for this server.
                return Ok(None);
            }
            let grant = saved
                .get("grant")
                .cloned()
                .and_then(|g| serde_json::from_value::<StoredGrant>(g).ok())
                .ok_or_else(|| format!("the vault's `{}` is not a grant", secret_name(server)))?;
            Ok(Some(grant))
        })
    }

    fn save<'a>(
        &'a self,
        server: &'a str,
        url: &'a str,
        grant: &'a StoredGrant,
    ) -> BoxFuture<'a, Result<(), String>> {
        Box::pin(async move {
            let host = crate::secrets::url_host(url)
                .ok_or_else(|| format!("{url} has no host to bind the token to"))?;
            let grant = serde_json::to_value(grant).map_err(|e| e.to_string())?;
            let saved = serde_json::json!({"url": url, "grant": grant});
            let value = Secret::new(saved.to_string());
            let name = secret_name(server);
            let store = VaultTokenStore {
                env: self.env.clone(),
            };
            tokio::task::spawn_blocking(move || {
                let mut vault = store.open()?;
                vault
                    .set(&name, value, vec![host])
                    .map_err(|e| format!("storing `{name}`: {e}"))
            })
            .await
            .map_err(|e| e.to_string())?
        })
    }
}

/// The terminal's prompt: the URL on stderr (stdout belongs to the LSP transport or to the
/// command's output). No browser is started: cairn may run over SSH or in a container, where
/// `xdg-open` would fail or open the page on another screen.
struct TerminalPrompt;

impl AuthorizationPrompt for TerminalPrompt {
    fn open<'a>(&'a self, server: &'a str, url: &'a str) -> BoxFuture<'a, Result<(), String>> {
        Box::pin(async move {
            use std::io::Write as _;
            let mut err = std::io::stderr().lock();
            let _ = writeln!(
                err,
                "cairn: MCP server `{server}` needs you to sign in; open this URL in a browser \
                 on this machine (the sign-in redirects to a listener on 127.0.0.1):\n  {url}"
            );
            let _ = err.flush();
            Ok(())
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(dir: &std::path::Path) -> Env {
        let mut map = std::collections::HashMap::new();
        map.insert("XDG_DATA_HOME".to_string(), dir.display().to_string());
        Env(map)
    }

    #[tokio::test]
    async fn grants_go_into_a_new_vault_bound_to_the_host() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let store = VaultTokenStore {
            env: env(dir.path()),
        };
        let url = "https://mcp.example.com/mcp";
        let grant = StoredGrant {
            resource: url.to_string(),
            token_endpoint: "https://auth.example.com/token".to_string(),
            client_id: "c".to_string(),
            auth_method: "none".to_string(),
            access_token: "tok-123".to_string(),
            refresh_token: Some("ref-456".to_string()),
            ..StoredGrant::default()
        };
        assert_eq!(store.load("tracker", url).await, Ok(None));
        store
            .save("tracker", url, &grant)
            .await
            .unwrap_or_else(|e| panic!("{e}"));
        // A vault was created, and the token is not in its files in the clear.
        let vault_dir = dir.path().join("cairn");
        let files: Vec<_> = std::fs::read_dir(&vault_dir)
            .unwrap_or_else(|e| panic!("{e}"))
            .flatten()
            .collect();
        assert!(!files.is_empty());
        for f in files {
            let bytes = std::fs::read(f.path()).unwrap_or_default();
            assert!(!String::from_utf8_lossy(&bytes).contains("tok-123"));
        }
        assert_eq!(store.load("tracker", url).await, Ok(Some(grant)));
        // Another URL on the same host, or another host: not this grant.
        assert_eq!(
            store.load("tracker", "https://mcp.example.com/other").await,
            Ok(None)
        );
        assert_eq!(
            store
                .load("tracker", "https://elsewhere.example.com/mcp")
                .await,
            Ok(None)
        );
    }

    #[test]
    fn secret_names_are_valid_vault_names() {
        for server in ["github", "my server/ä", &"x".repeat(100), "a.b-c_d"] {
            let name = secret_name(server);
            assert!(cairn_vault::validate_name(&name).is_ok(), "{name}");
        }
        assert_eq!(secret_name("github"), "oauth.github");
        assert_ne!(secret_name("a b"), secret_name("a_b"));
    }
}
