//! `storage_buckets`: the buckets (Azure: containers) of an account.

use cairn_toolkit::reply::error;
use cairn_toolkit::table::{Cell, Limits, Table};
use cairn_toolkit::{CallContext, Category, Effect, JsonSchema, Paths, Tool};
use rmcp::model::CallToolResult;
use serde::Deserialize;

use crate::cloud::Cloud;

/// The `storage_buckets` tool.
pub struct StorageBuckets;

/// Arguments of `storage_buckets`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// The `[cloud.NAME]` account; needed only when several fit.
    #[serde(default)]
    account: Option<String>,
    /// Only buckets whose names start with this; default all.
    #[serde(default)]
    prefix: String,
}

/// At most this many buckets are shown.
const MAX: usize = 200;

impl Tool for StorageBuckets {
    type Host = Cloud;
    type Args = Args;
    const NAME: &'static str = "storage_buckets";
    const TITLE: &'static str = "List storage buckets";
    const DESCRIPTION: &'static str = "List the buckets of an object storage account (S3, Google Cloud Storage) or the containers of an Azure storage account, with when each was created, optionally by name prefix; at most 200.";
    const CATEGORY: Category = Category::Cloud;
    const EFFECT: Effect = Effect::Network;
    const READ_ONLY: bool = true;
    const AGENT_ONLY: bool = false;

    fn paths(_: &Args) -> Paths {
        Paths::none()
    }

    async fn call(cloud: &Cloud, args: Args, cx: CallContext) -> CallToolResult {
        let store = match super::open::store(cloud, args.account.as_deref(), &cx) {
            Ok(s) => s,
            Err(e) => return error(e.to_string()),
        };
        let (buckets, more) = match store.buckets(&args.prefix, MAX).await {
            Ok(b) => b,
            Err(e) => return error(e.to_string()),
        };
        let word = store.bucket_word();
        let date = store.backend.bucket_date();
        let table = Table {
            columns: vec![word.to_owned(), date.to_owned()],
            rows: buckets
                .into_iter()
                .map(|b| vec![Cell::Text(b.name), b.created.map_or(Cell::Null, Cell::Text)])
                .collect(),
            more,
        };
        table.result_hinting(
            &format!("{word}s of account {}", store.account.name),
            &Limits::default(),
            "narrow them with `prefix`",
        )
    }
}
