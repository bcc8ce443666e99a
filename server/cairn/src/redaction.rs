//! The redactor the agent and the editor's messages use: vault values and credential patterns,
//! through the `Redact` seam of `cairn-agent` (the vault crate does not depend on the agent
//! crate, nor it on the vault).
//!
//! It follows the vault: when the store file changes (`cairn vault set` in another terminal),
//! the next text is redacted with the new values, without a restart.

use std::sync::{Arc, Mutex, PoisonError};
use std::time::SystemTime;

use cairn_agent::redact::Redact;
use cairn_vault::Redactor;

use crate::compose::Env;

/// The default vault's redactor, rebuilt when the store's modification time changes.
pub struct VaultRedactor {
    env: Env,
    /// The store's modification time when `redactor` was built (`None`: no store then).
    current: Mutex<(Option<SystemTime>, Arc<Redactor>)>,
}

impl VaultRedactor {
    pub fn new(env: Env) -> Self {
        let stamp = crate::secrets::store_modified(&env);
        let redactor = Arc::new(crate::secrets::log_redactor(&env));
        Self {
            env,
            current: Mutex::new((stamp, redactor)),
        }
    }

    fn redactor(&self) -> Arc<Redactor> {
        let stamp = crate::secrets::store_modified(&self.env);
        let mut current = self.current.lock().unwrap_or_else(PoisonError::into_inner);
        if current.0 != stamp {
            *current = (stamp, Arc::new(crate::secrets::log_redactor(&self.env)));
        }
        current.1.clone()
    }
}

impl Redact for VaultRedactor {
    fn redact(&self, text: &str) -> String {
        self.redactor().redact(text).into_owned()
    }

    fn redact_file(&self, bytes: &[u8]) -> Option<Vec<u8>> {
        let (out, count) = self.redactor().redact_values(bytes);
        (count > 0).then(|| out.into_owned())
    }
}

/// The redactor of this process's environment: one per process, shared by every agent built
/// and by the editor's messages.
pub fn agent_redactor(env: &Env) -> Arc<dyn Redact> {
    static SHARED: Mutex<Option<Arc<VaultRedactor>>> = Mutex::new(None);
    let mut shared = SHARED.lock().unwrap_or_else(PoisonError::into_inner);
    match shared.as_ref() {
        Some(r) if r.env.0 == env.0 => r.clone(),
        _ => {
            let r = Arc::new(VaultRedactor::new(env.clone()));
            *shared = Some(r.clone());
            r
        }
    }
}
