//! [`Cloud`], what every cloud tool shares: the accounts, the web guard, the workspace, the
//! approvals and the vault's [`SecretStore`].
//!
//! Its own file, apart from `lib.rs`, so that the request path and the tools can import it
//! without importing the list of tools, which imports them.

use std::collections::BTreeMap;
use std::sync::Arc;

use cairn_config::{CloudAccountConfig, CloudKind};
use cairn_web::WebGuard;
use cairn_workspace::{ExactApprovals, Workspace};

use crate::account::{self, Account, AccountError};
use crate::error::CloudError;

/// Where a secret a cloud API returned is stored, when the user agrees: the binary's vault.
pub trait SecretStore: Send + Sync {
    /// Stores `value` as vault secret `name`, bound to `hosts`.
    fn store(&self, name: &str, hosts: &[String], value: &str) -> Result<(), String>;
}

/// What the cloud tools share.
pub struct Cloud {
    pub(crate) guard: Option<Arc<WebGuard>>,
    pub(crate) accounts: BTreeMap<String, Account>,
    pub(crate) workspace: Option<Arc<Workspace>>,
    pub(crate) approvals: Arc<ExactApprovals>,
    pub(crate) secrets: Option<Arc<dyn SecretStore>>,
    /// Who the web guard's per-user rate limit counts these tools' requests against.
    pub(crate) user: String,
}

impl std::fmt::Debug for Cloud {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Cloud")
            .field("accounts", &self.accounts.keys().collect::<Vec<_>>())
            .finish_non_exhaustive()
    }
}

impl cairn_toolkit::Host for Cloud {
    fn workspace(&self) -> Option<&Arc<Workspace>> {
        self.workspace.as_ref()
    }
}

impl Cloud {
    /// The tools' host over the user's `[cloud.NAME]` accounts. An account that does not check
    /// out is left out and returned with why, for the caller to log. Without a guard every tool
    /// refuses.
    pub fn new(
        accounts: &BTreeMap<String, CloudAccountConfig>,
        guard: Option<Arc<WebGuard>>,
        workspace: Option<Arc<Workspace>>,
        approvals: Arc<ExactApprovals>,
    ) -> (Cloud, Vec<(String, AccountError)>) {
        let mut ok = BTreeMap::new();
        let mut problems = Vec::new();
        for (name, config) in accounts {
            match Account::from_config(name, config) {
                Ok(a) => {
                    ok.insert(name.clone(), a);
                }
                Err(e) => problems.push((name.clone(), e)),
            }
        }
        let cloud = Cloud {
            guard,
            accounts: ok,
            workspace,
            approvals,
            secrets: None,
            user: "local".into(),
        };
        (cloud, problems)
    }

    /// Where secrets returned by cloud APIs are stored when the user agrees.
    pub fn with_secret_store(mut self, store: Arc<dyn SecretStore>) -> Cloud {
        self.secrets = Some(store);
        self
    }

    /// The user the web guard counts requests against (the access identity).
    pub fn with_user(mut self, user: impl Into<String>) -> Cloud {
        self.user = user.into();
        self
    }

    /// The account a call names, or the only one of `kinds` when it names none.
    pub(crate) fn account(
        &self,
        name: Option<&str>,
        kinds: &[CloudKind],
    ) -> Result<&Account, CloudError> {
        account::pick(&self.accounts, name, kinds)
    }
}
