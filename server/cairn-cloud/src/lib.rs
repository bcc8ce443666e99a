//! The cloud tools (category `cloud`), one type per file, served in-process as the [`ToolSet`]
//! [`cloud_tools`] builds from [`CLOUD_TOOLS`].
//!
//! They act on the user's `[cloud.NAME]` accounts ([`account`]): object storage on S3, Azure
//! Blob and Google Cloud Storage through one interface (`storage/`), queues and tables across
//! AWS, Azure and Google (`queues/`, `tables/`), the accounts and the secrets cloud APIs hold
//! (`secrets/`), and AWS services (`aws/`). Every request goes
//! through the web guard ([`request`]): its address checks, rate limits and size cap, and its
//! credential step, which signs the request with the account's vault secret at the last moment
//! (SigV4, Azure Shared Key or SAS, a Google access token). No tool sees a key.
//!
//! A secret that a cloud API hands back (Secrets Manager, a SecureString parameter) is never
//! shown to the model: the tool offers to store it in the vault, through [`SecretStore`].

pub mod account;
mod aws;
mod queues;
mod request;
mod secrets;
mod storage;
mod tables;

pub use account::{Account, AccountError};
pub use request::CloudError;

use std::collections::BTreeMap;
use std::sync::Arc;

use cairn_config::{CloudAccountConfig, CloudKind};
use cairn_toolkit::{Entry, ToolSet};
use cairn_web::WebGuard;
use cairn_workspace::{ExactApprovals, Workspace};

/// Where a secret a cloud API returned is stored, when the user agrees: the binary's vault.
pub trait SecretStore: Send + Sync {
    /// Stores `value` as vault secret `name`, bound to `hosts`.
    fn store(&self, name: &str, hosts: &[String], value: &str) -> Result<(), String>;
}

/// What the cloud tools share.
pub struct Cloud {
    guard: Option<Arc<WebGuard>>,
    accounts: BTreeMap<String, Account>,
    workspace: Option<Arc<Workspace>>,
    approvals: Arc<ExactApprovals>,
    secrets: Option<Arc<dyn SecretStore>>,
    /// Who the web guard's per-user rate limit counts these tools' requests against.
    user: String,
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

/// The cloud tools, in the order listed.
pub const CLOUD_TOOLS: &[Entry<Cloud>] = &[
    // object storage (storage/)
    Entry::of::<storage::buckets::StorageBuckets>(),
    Entry::of::<storage::list::StorageList>(),
    Entry::of::<storage::head::StorageHead>(),
    Entry::of::<storage::download::StorageDownload>(),
    Entry::of::<storage::upload::StorageUpload>(),
    Entry::of::<storage::copy::StorageCopy>(),
    Entry::of::<storage::delete::StorageDelete>(),
    Entry::of::<storage::create_bucket::StorageCreateBucket>(),
    Entry::of::<storage::presign::StoragePresign>(),
    // -- end of storage
    // queues and notifications (queues/)
    Entry::of::<queues::list::QueueList>(),
    Entry::of::<queues::send::QueueSend>(),
    Entry::of::<queues::receive::QueueReceive>(),
    Entry::of::<queues::purge::QueuePurge>(),
    Entry::of::<queues::sns_topics::SnsTopics>(),
    Entry::of::<queues::sns_publish::SnsPublish>(),
    // -- end of queues
    // tables and documents (tables/)
    Entry::of::<tables::TableList>(),
    Entry::of::<tables::TableGet>(),
    Entry::of::<tables::TableQuery>(),
    Entry::of::<tables::TablePut>(),
    // -- end of tables
    // accounts and secrets (secrets/)
    Entry::of::<secrets::CloudAccounts>(),
    Entry::of::<secrets::AwsIdentity>(),
    Entry::of::<secrets::SsmParameter>(),
    Entry::of::<secrets::CloudSecretToVault>(),
    // -- end of secrets
    // AWS services (aws/)
    Entry::of::<aws::Ec2Instances>(),
    Entry::of::<aws::Ec2StartStop>(),
    Entry::of::<aws::IamList>(),
    Entry::of::<aws::LogsGroups>(),
    Entry::of::<aws::LogsEvents>(),
    Entry::of::<aws::CloudwatchMetrics>(),
    Entry::of::<aws::LambdaFunctions>(),
    Entry::of::<aws::LambdaInvoke>(),
    Entry::of::<aws::CloudformationStacks>(),
    Entry::of::<aws::CloudformationEvents>(),
    Entry::of::<aws::Route53Records>(),
    Entry::of::<aws::EcsServices>(),
    // -- end of aws
];

/// The cloud tools over `host`.
pub fn cloud_tools(host: Cloud) -> ToolSet<Cloud> {
    ToolSet::new(host, CLOUD_TOOLS)
}
