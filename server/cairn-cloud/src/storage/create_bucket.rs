//! `storage_create_bucket`: a new bucket (Azure: container), private, in the account's region.

use cairn_toolkit::reply::{error, text};
use cairn_toolkit::{CallContext, Category, Effect, JsonSchema, Paths, Tool};
use rmcp::model::CallToolResult;
use serde::Deserialize;

use super::names::check_bucket;
use crate::cloud::Cloud;

/// The `storage_create_bucket` tool.
pub struct StorageCreateBucket;

/// Arguments of `storage_create_bucket`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// The `[cloud.NAME]` account; needed only when several fit.
    #[serde(default)]
    account: Option<String>,
    /// The new bucket's name (S3 and Azure: 3 to 63 lower-case letters, digits and `-`).
    bucket: String,
}

impl Tool for StorageCreateBucket {
    type Host = Cloud;
    type Args = Args;
    const NAME: &'static str = "storage_create_bucket";
    const TITLE: &'static str = "Create a storage bucket";
    const DESCRIPTION: &'static str = "Create a private bucket (S3 in the account's region, Google Cloud Storage in the account's project) or an Azure container. Fails if the name is taken.";
    const CATEGORY: Category = Category::Cloud;
    const EFFECT: Effect = Effect::Write;
    const AGENT_ONLY: bool = true;

    fn paths(_: &Args) -> Paths {
        Paths::none()
    }

    async fn call(cloud: &Cloud, args: Args, cx: CallContext) -> CallToolResult {
        let run = async {
            let store = super::open::store(cloud, args.account.as_deref(), &cx)?;
            let name = check_bucket(&args.bucket)?;
            store.create_bucket(name).await?;
            Ok::<_, crate::CloudError>(text(format!(
                "created {} {name} in account {}",
                store.bucket_word(),
                store.account.name
            )))
        };
        run.await
            .unwrap_or_else(|e| error(format!("nothing was created: {e}")))
    }
}
