//! `redis_set`: sets a Redis string key, optionally expiring, once approved.

use cairn_toolkit::reply::text;
use cairn_toolkit::{CallContext, Category, Effect, JsonSchema, Paths, Tool};
use rmcp::model::CallToolResult;
use serde::Deserialize;

use crate::db::Db;
use crate::redis;
use crate::tools::failed;

/// The `redis_set` tool.
pub struct RedisSet;

/// Arguments of `redis_set`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// The connection's name, as db_connections lists it.
    connection: String,
    /// The key; an existing value of any type is replaced.
    key: String,
    /// The string value.
    value: String,
    /// Seconds until the key expires; no expiry when omitted.
    #[serde(default)]
    ttl_seconds: Option<u64>,
}

impl Tool for RedisSet {
    type Host = Db;
    type Args = Args;
    const NAME: &'static str = "redis_set";
    const TITLE: &'static str = "Set a Redis key";
    const DESCRIPTION: &'static str = "Set one key of a configured Redis database to a string value, optionally expiring after some seconds, after the user approves; an existing value is replaced.";
    const CATEGORY: Category = Category::Database;
    const EFFECT: Effect = Effect::Write;
    const AGENT_ONLY: bool = false;

    fn paths(_: &Args) -> Paths {
        Paths::none()
    }

    async fn call(db: &Db, args: Args, cx: CallContext) -> CallToolResult {
        if args.ttl_seconds == Some(0) {
            return cairn_toolkit::reply::error(
                "ttl_seconds must be at least 1 (omit it for no expiry; redis_delete removes a key)",
            );
        }
        let done = match db.redis(&args.connection) {
            Ok((c, password)) => {
                redis::set(
                    c,
                    password,
                    &args.key,
                    &args.value,
                    args.ttl_seconds,
                    &cx.cancel,
                )
                .await
            }
            Err(e) => Err(e),
        };
        match done {
            Ok(()) => text(format!(
                "set `{}` on `{}` ({} bytes), {}",
                args.key,
                args.connection,
                args.value.len(),
                match args.ttl_seconds {
                    Some(s) => format!("expires in {s} s"),
                    None => "no expiry".to_owned(),
                }
            )),
            Err(e) => failed(&e),
        }
    }
}
