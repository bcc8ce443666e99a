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
mod cloud;
mod error;
mod queues;
mod request;
mod secrets;
mod storage;
mod tables;

pub use account::{Account, AccountError};
pub use cloud::{Cloud, SecretStore};
pub use error::CloudError;

use cairn_toolkit::{Entry, ToolSet};

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
