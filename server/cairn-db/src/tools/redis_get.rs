//! `redis_get`: one Redis key's value, whatever its type, capped.

use cairn_toolkit::reply::text;
use cairn_toolkit::{CallContext, Category, Effect, JsonSchema, Paths, Tool};
use rmcp::model::CallToolResult;
use serde::Deserialize;

use crate::db::Db;
use crate::redis;
use crate::tools::failed;

/// The `redis_get` tool.
pub struct RedisGet;

/// Arguments of `redis_get`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// The connection's name, as db_connections lists it.
    connection: String,
    /// The key, exactly (redis_keys finds keys by pattern).
    key: String,
}

impl Tool for RedisGet {
    type Host = Db;
    type Args = Args;
    const NAME: &'static str = "redis_get";
    const TITLE: &'static str = "Read a Redis key";
    const DESCRIPTION: &'static str = "Read one key of a configured Redis database, whatever its type (string, hash, list, set, sorted set, stream): its type, size and time to live, and its value or first elements as a table (capped).";
    const CATEGORY: Category = Category::Database;
    const EFFECT: Effect = Effect::Read;
    const AGENT_ONLY: bool = false;

    fn paths(_: &Args) -> Paths {
        Paths::none()
    }

    async fn call(db: &Db, args: Args, cx: CallContext) -> CallToolResult {
        let got = match db.redis(&args.connection) {
            Ok((c, password)) => redis::get(c, password, &args.key, &db.limits, &cx.cancel).await,
            Err(e) => Err(e),
        };
        match got {
            Ok(Some((heading, t))) if t.columns.is_empty() => text(heading),
            Ok(Some((heading, t))) => t.result_hinting(
                &heading,
                &db.limits,
                "the elements past these were left out",
            ),
            Ok(None) => text(format!("no key `{}` on `{}`", args.key, args.connection)),
            Err(e) => failed(&e),
        }
    }
}
