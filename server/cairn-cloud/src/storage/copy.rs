//! `storage_copy`: an object copied server-side within one account (nothing passes through
//! this machine).

use cairn_toolkit::reply::{error, text};
use cairn_toolkit::{CallContext, Category, Effect, JsonSchema, Paths, Tool};
use rmcp::model::CallToolResult;
use serde::Deserialize;

use super::names::{check_bucket, check_key, shown, size_text};
use crate::cloud::Cloud;

/// The `storage_copy` tool.
pub struct StorageCopy;

/// Arguments of `storage_copy`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// The `[cloud.NAME]` account; needed only when several fit.
    #[serde(default)]
    account: Option<String>,
    /// The source bucket (Azure: container).
    bucket: String,
    /// The source object's key.
    key: String,
    /// The destination bucket; default the source bucket.
    #[serde(default)]
    to_bucket: Option<String>,
    /// The destination key.
    to_key: String,
    /// Replace the destination if it exists (default false).
    #[serde(default)]
    overwrite: bool,
}

impl Tool for StorageCopy {
    type Host = Cloud;
    type Args = Args;
    const NAME: &'static str = "storage_copy";
    const TITLE: &'static str = "Copy an object";
    const DESCRIPTION: &'static str = "Copy an object to another key or bucket of the same account, server-side (S3, Azure Blob, Google Cloud Storage). An existing destination is replaced only with overwrite: true.";
    const CATEGORY: Category = Category::Cloud;
    const EFFECT: Effect = Effect::Write;
    const AGENT_ONLY: bool = true;

    fn paths(_: &Args) -> Paths {
        Paths::none()
    }

    async fn call(cloud: &Cloud, args: Args, cx: CallContext) -> CallToolResult {
        copy(cloud, args, &cx).await.unwrap_or_else(error)
    }
}

async fn copy(cloud: &Cloud, a: Args, cx: &CallContext) -> Result<CallToolResult, String> {
    let e = |e: crate::CloudError| format!("nothing was copied: {e}");
    let store = super::open::store(cloud, a.account.as_deref(), cx).map_err(e)?;
    let bucket = check_bucket(&a.bucket).map_err(e)?;
    let key = check_key(&a.key).map_err(e)?;
    let to_bucket = check_bucket(a.to_bucket.as_deref().unwrap_or(bucket)).map_err(e)?;
    let to_key = check_key(&a.to_key).map_err(e)?;
    let account = store.account.name.clone();
    let from = shown(&account, bucket, key);
    let to = shown(&account, to_bucket, to_key);
    if (bucket, key) == (to_bucket, to_key) {
        return Err(format!("nothing was copied: {from} is its own destination"));
    }
    let head = store.head(bucket, key).await.map_err(|err| {
        if err.is_not_found() {
            format!("nothing was copied: no object {from}")
        } else {
            e(err)
        }
    })?;
    if !a.overwrite {
        match store.head(to_bucket, to_key).await {
            Ok(_) => {
                return Err(format!(
                    "nothing was copied: {to} exists; pass overwrite: true to replace it"
                ));
            }
            Err(err) if err.is_not_found() => {}
            Err(err) => return Err(e(err)),
        }
    }
    let note = store
        .copy((bucket, key), (to_bucket, to_key))
        .await
        .map_err(e)?;
    let mut message = format!("copied {bucket}/{key} to {to_bucket}/{to_key} (account {account}");
    if let Some(size) = head.size {
        message.push_str(&format!(", {}", size_text(size)));
    }
    message.push(')');
    if let Some(note) = note {
        message.push_str(&format!("; {note}"));
    }
    Ok(text(message))
}
