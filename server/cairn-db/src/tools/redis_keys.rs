//! `redis_keys`: the keys of a Redis connection matching a pattern, with type and expiry.

use cairn_toolkit::{CallContext, Category, Effect, JsonSchema, Paths, Tool};
use rmcp::model::CallToolResult;
use serde::Deserialize;

use crate::db::Db;
use crate::redis;
use crate::tools::failed;

/// The `redis_keys` tool.
pub struct RedisKeys;

/// Keys listed when the model names no limit, and the most it may ask for.
const DEFAULT_LIMIT: usize = 100;
const MAX_LIMIT: usize = 1000;

/// Arguments of `redis_keys`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// The connection's name, as db_connections lists it.
    connection: String,
    /// A glob pattern (`user:*`, `session:??:*`); `*` when omitted.
    #[serde(default)]
    pattern: Option<String>,
    /// Keys to list at most (default 100, at most 1000).
    #[serde(default)]
    limit: Option<usize>,
}

impl Tool for RedisKeys {
    type Host = Db;
    type Args = Args;
    const NAME: &'static str = "redis_keys";
    const TITLE: &'static str = "List Redis keys";
    const DESCRIPTION: &'static str = "List the keys of a configured Redis database that match a glob pattern (scanned incrementally, never blocking the server), with each key's type and time to live; capped (default 100 keys).";
    const CATEGORY: Category = Category::Database;
    const EFFECT: Effect = Effect::Read;
    const AGENT_ONLY: bool = false;

    fn paths(_: &Args) -> Paths {
        Paths::none()
    }

    async fn call(db: &Db, args: Args, cx: CallContext) -> CallToolResult {
        let pattern = args.pattern.as_deref().unwrap_or("*");
        let limit = args.limit.unwrap_or(DEFAULT_LIMIT).clamp(1, MAX_LIMIT);
        let listed = match db.redis(&args.connection) {
            Ok((c, password)) => redis::keys(c, password, pattern, limit, &cx.cancel).await,
            Err(e) => Err(e),
        };
        match listed {
            Ok(t) => t.result_hinting(
                &format!("Keys of `{}` matching `{pattern}`:", args.connection),
                &db.limits,
                "narrow the pattern, or raise the limit (at most 1000)",
            ),
            Err(e) => failed(&e),
        }
    }
}
