//! `redis_delete`: deletes Redis keys, once approved.

use cairn_toolkit::reply::text;
use cairn_toolkit::{CallContext, Category, Effect, JsonSchema, Paths, Tool};
use rmcp::model::CallToolResult;
use serde::Deserialize;

use crate::db::Db;
use crate::redis;
use crate::tools::failed;

/// The `redis_delete` tool.
pub struct RedisDelete;

/// Keys one call may delete: a pattern-wide delete is not this tool's job.
const MAX_KEYS: usize = 100;

/// Arguments of `redis_delete`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// The connection's name, as db_connections lists it.
    connection: String,
    /// The keys to delete, exactly (no patterns; at most 100).
    keys: Vec<String>,
}

impl Tool for RedisDelete {
    type Host = Db;
    type Args = Args;
    const NAME: &'static str = "redis_delete";
    const TITLE: &'static str = "Delete Redis keys";
    const DESCRIPTION: &'static str = "Delete keys of a configured Redis database (exact names, at most 100), after the user approves; reports how many existed.";
    const CATEGORY: Category = Category::Database;
    const EFFECT: Effect = Effect::Write;
    const AGENT_ONLY: bool = false;
    const DESTRUCTIVE: bool = true;

    fn paths(_: &Args) -> Paths {
        Paths::none()
    }

    async fn call(db: &Db, args: Args, cx: CallContext) -> CallToolResult {
        if args.keys.is_empty() || args.keys.len() > MAX_KEYS {
            return cairn_toolkit::reply::error(format!(
                "give between 1 and {MAX_KEYS} keys (redis_keys lists them by pattern)"
            ));
        }
        let done = match db.redis(&args.connection) {
            Ok((c, password)) => redis::delete(c, password, &args.keys, &cx.cancel).await,
            Err(e) => Err(e),
        };
        match done {
            Ok(n) => text(format!(
                "deleted {n} of {} key{} on `{}`",
                args.keys.len(),
                if args.keys.len() == 1 { "" } else { "s" },
                args.connection
            )),
            Err(e) => failed(&e),
        }
    }
}
