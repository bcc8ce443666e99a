//! `storage_presign`: a time-limited link to GET or PUT one object, signed by the web guard
//! with the account's secret (AWS SigV4 query signature, Azure SAS). The link carries a
//! signature for this object and time, never the key; the guard refuses to sign for a host
//! the secret is not bound to. Google links need a service-account key: refused.

use std::time::Duration;

use cairn_toolkit::reply::{error, text};
use cairn_toolkit::{CallContext, Category, Effect, JsonSchema, Paths, Tool};
use cairn_web::Method;
use rmcp::model::CallToolResult;
use serde::Deserialize;

use super::names::{check_bucket, check_key, shown};
use crate::cloud::Cloud;

/// The `storage_presign` tool.
pub struct StoragePresign;

/// What the link allows.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Access {
    /// Download the object (the default).
    #[default]
    Get,
    /// Upload (replace) the object.
    Put,
}

/// Arguments of `storage_presign`.
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
    /// `get` (default) or `put`.
    #[serde(default)]
    method: Access,
    /// How long the link works, in seconds (default 3600, at most 604800 = 7 days).
    #[serde(default)]
    #[schemars(range(min = 1, max = 604800))]
    expires_seconds: Option<u64>,
}

const DEFAULT_EXPIRY: u64 = 3600;
const MAX_EXPIRY: u64 = 7 * 24 * 3600;

impl Tool for StoragePresign {
    type Host = Cloud;
    type Args = Args;
    const NAME: &'static str = "storage_presign";
    const TITLE: &'static str = "Make a presigned object link";
    const DESCRIPTION: &'static str = "Make a link that lets anyone holding it GET (download) or PUT (upload) one object for a limited time (default 1 hour, at most 7 days), on S3 or Azure Blob. Google Cloud Storage links need a service-account key and are refused.";
    const CATEGORY: Category = Category::Cloud;
    // A link hands out access to the account's data: asked like a change.
    const EFFECT: Effect = Effect::Write;
    const AGENT_ONLY: bool = true;

    fn paths(_: &Args) -> Paths {
        Paths::none()
    }

    async fn call(cloud: &Cloud, args: Args, cx: CallContext) -> CallToolResult {
        let run = || {
            let store = super::open::store(cloud, args.account.as_deref(), &cx)?;
            let bucket = check_bucket(&args.bucket)?;
            let key = check_key(&args.key)?;
            let seconds = args.expires_seconds.unwrap_or(DEFAULT_EXPIRY);
            if seconds == 0 || seconds > MAX_EXPIRY {
                return Err(crate::CloudError::Invalid(format!(
                    "expires_seconds must be 1 to {MAX_EXPIRY} (7 days); got {seconds}"
                )));
            }
            let method = match args.method {
                Access::Get => Method::GET,
                Access::Put => Method::PUT,
            };
            let url = store.presign(&method, bucket, key, Duration::from_secs(seconds))?;
            let until = chrono::Utc::now() + chrono::Duration::seconds(seconds as i64);
            let verb = if method == Method::PUT {
                "upload to"
            } else {
                "download"
            };
            Ok(text(format!(
                "anyone with this link can {verb} {} until {} ({seconds} s):\n{url}",
                shown(&store.account.name, bucket, key),
                until.format("%Y-%m-%d %H:%M:%S UTC")
            )))
        };
        run().unwrap_or_else(|e: crate::CloudError| error(format!("no link was made: {e}")))
    }
}
