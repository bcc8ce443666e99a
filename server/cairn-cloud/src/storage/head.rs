//! `storage_head`: an object's size, type, modification time, ETag and user metadata.

use std::fmt::Write as _;

use cairn_toolkit::reply::{error, text};
use cairn_toolkit::{CallContext, Category, Effect, JsonSchema, Paths, Tool};
use rmcp::model::CallToolResult;
use serde::Deserialize;

use super::names::{check_bucket, check_key, cut, shown, size_text};
use crate::cloud::Cloud;

/// The `storage_head` tool.
pub struct StorageHead;

/// Arguments of `storage_head`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// The `[cloud.NAME]` account; needed only when several fit.
    #[serde(default)]
    account: Option<String>,
    /// The bucket (Azure: container).
    bucket: String,
    /// The object's key.
    key: String,
}

/// At most this many metadata entries are shown.
const MAX_META: usize = 50;

impl Tool for StorageHead {
    type Host = Cloud;
    type Args = Args;
    const NAME: &'static str = "storage_head";
    const TITLE: &'static str = "Show an object's metadata";
    const DESCRIPTION: &'static str = "Show an object's size, content type, last modification, ETag and user metadata (S3, Azure Blob, Google Cloud Storage) without downloading it.";
    const CATEGORY: Category = Category::Cloud;
    const EFFECT: Effect = Effect::Network;
    const READ_ONLY: bool = true;
    const AGENT_ONLY: bool = false;

    fn paths(_: &Args) -> Paths {
        Paths::none()
    }

    async fn call(cloud: &Cloud, args: Args, cx: CallContext) -> CallToolResult {
        let run = async {
            let store = super::open::store(cloud, args.account.as_deref(), &cx)?;
            let bucket = check_bucket(&args.bucket)?;
            let key = check_key(&args.key)?;
            let head = store.head(bucket, key).await.map_err(|e| {
                if e.is_not_found() {
                    crate::CloudError::Invalid(format!(
                        "no object {} (or no such {})",
                        shown(&store.account.name, bucket, key),
                        store.bucket_word()
                    ))
                } else {
                    e
                }
            })?;
            let mut out = format!("{}\n", shown(&store.account.name, bucket, key));
            let line = |out: &mut String, name: &str, value: Option<String>| {
                if let Some(v) = value {
                    let _ = writeln!(out, "{name}: {}", cut(&v, 300));
                }
            };
            line(&mut out, "size", head.size.map(size_text));
            line(&mut out, "type", head.content_type);
            line(&mut out, "modified", head.modified);
            line(&mut out, "etag", head.etag);
            if !head.metadata.is_empty() {
                out.push_str("metadata:\n");
                for (k, v) in head.metadata.iter().take(MAX_META) {
                    let _ = writeln!(out, "  {}: {}", cut(k, 100), cut(v, 300));
                }
                if head.metadata.len() > MAX_META {
                    let _ = writeln!(out, "  ({} more left out)", head.metadata.len() - MAX_META);
                }
            }
            Ok::<_, crate::CloudError>(text(out))
        };
        run.await.unwrap_or_else(|e| error(e.to_string()))
    }
}
