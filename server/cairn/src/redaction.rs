//! The agent's redactor: vault values and credential patterns, through the `Redact` seam of
//! `cairn-agent` (the vault crate does not depend on the agent crate, nor it on the vault).

use std::sync::Arc;

use cairn_agent::redact::Redact;
use cairn_vault::{KeySource, Redactor, Vault};

use crate::compose::Env;

/// A [`Redactor`] as the agent's [`Redact`].
pub struct VaultRedactor(pub Redactor);

impl Redact for VaultRedactor {
    fn redact(&self, text: &str) -> String {
        self.0.redact(text).into_owned()
    }
}

/// The redactor for the default vault when its store exists; patterns only when there is no
/// vault, or (with a warning) when it cannot be opened.
pub fn agent_redactor(env: &Env) -> Arc<dyn Redact> {
    let get = |k: &str| env.get(k).map(str::to_string);
    let redactor = match cairn_vault::default_store_path(get) {
        Some(path) if path.exists() => {
            let key = KeySource::from_env(&path, get);
            match Vault::open(&path, key) {
                Ok(vault) => Redactor::from_vault(&vault),
                Err(e) => {
                    tracing::warn!(
                        "the vault could not be opened, so only credential patterns are redacted: {e}"
                    );
                    Redactor::patterns_only()
                }
            }
        }
        _ => Redactor::patterns_only(),
    };
    Arc::new(VaultRedactor(redactor))
}
