//! `storage_delete`: deletes one object, after the user's approval of exactly that object
//! (the strict question: allow once, no session grant covers it).

use cairn_toolkit::reply::{approved_once, error, strict_question, text};
use cairn_toolkit::{CallContext, Category, Effect, JsonSchema, Paths, Tool};
use rmcp::model::CallToolResult;
use serde::Deserialize;

use super::names::{check_bucket, check_key, shown, size_text};
use crate::cloud::Cloud;

/// The `storage_delete` tool.
pub struct StorageDelete;

/// Arguments of `storage_delete`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// The `[cloud.NAME]` account; needed only when several fit.
    #[serde(default)]
    account: Option<String>,
    /// The bucket (Azure: container).
    bucket: String,
    /// The object's key (one object; no prefixes or wildcards).
    key: String,
}

impl Tool for StorageDelete {
    type Host = Cloud;
    type Args = Args;
    const NAME: &'static str = "storage_delete";
    const TITLE: &'static str = "Delete an object";
    const DESCRIPTION: &'static str = "Delete one object from S3, Azure Blob or Google Cloud Storage. It asks the user to approve that exact bucket and key first (once); no prefixes or wildcards.";
    const CATEGORY: Category = Category::Cloud;
    const EFFECT: Effect = Effect::Write;
    const AGENT_ONLY: bool = true;

    fn paths(_: &Args) -> Paths {
        Paths::none()
    }

    async fn call(cloud: &Cloud, args: Args, cx: CallContext) -> CallToolResult {
        delete(cloud, args, &cx).await.unwrap_or_else(error)
    }
}

async fn delete(cloud: &Cloud, a: Args, cx: &CallContext) -> Result<CallToolResult, String> {
    let e = |e: crate::CloudError| format!("nothing was deleted: {e}");
    let store = super::open::store(cloud, a.account.as_deref(), cx).map_err(e)?;
    let bucket = check_bucket(&a.bucket).map_err(e)?;
    let key = check_key(&a.key).map_err(e)?;
    let what = shown(&store.account.name, bucket, key);
    // S3 answers a delete of nothing with success: look first, so the user hears the truth.
    let head = store.head(bucket, key).await.map_err(|err| {
        if err.is_not_found() {
            format!("nothing was deleted: no object {what}")
        } else {
            e(err)
        }
    })?;
    let size = head
        .size
        .map(size_text)
        .unwrap_or_else(|| "size unknown".into());
    let approval = format!("storage:{}:{bucket}/{key}:delete", store.account.name);
    if !approved_once(&cloud.approvals, &approval) {
        return Ok(strict_question(
            format!(
                "refused for now: deleting {what} ({size}) needs the user's approval of this object (asked once, never covered by a session grant)"
            ),
            format!("delete {what}, {size}"),
            approval,
            "deleting an object cannot be undone (unless the bucket keeps versions)",
        ));
    }
    store.delete(bucket, key).await.map_err(e)?;
    Ok(text(format!("deleted {what} ({size})")))
}
