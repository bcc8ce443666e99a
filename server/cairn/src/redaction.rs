//! The agent's redactor: vault values and credential patterns, through the `Redact` seam of
//! `cairn-agent` (the vault crate does not depend on the agent crate, nor it on the vault).

use std::sync::Arc;

use cairn_agent::redact::Redact;
use cairn_vault::Redactor;

use crate::compose::Env;

/// A [`Redactor`] as the agent's [`Redact`].
pub struct VaultRedactor(pub Redactor);

impl Redact for VaultRedactor {
    fn redact(&self, text: &str) -> String {
        self.0.redact(text).into_owned()
    }
}

/// The agent's redactor: the same as the log's (the default vault's values when its store
/// exists, else credential patterns alone).
pub fn agent_redactor(env: &Env) -> Arc<dyn Redact> {
    Arc::new(VaultRedactor(crate::secrets::log_redactor(env)))
}
