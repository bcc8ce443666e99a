//! `db_query`: one read-only statement, its rows as a table.

use cairn_toolkit::{CallContext, Category, Effect, JsonSchema, Paths, Tool};
use rmcp::model::CallToolResult;
use serde::Deserialize;

use crate::db::Db;
use crate::tools::failed;

/// The `db_query` tool.
pub struct DbQuery;

/// Arguments of `db_query`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// The connection's name, as db_connections lists it.
    connection: String,
    /// One SQL statement (SELECT, WITH, SHOW, EXPLAIN ...); it runs read-only.
    sql: String,
}

impl Tool for DbQuery {
    type Host = Db;
    type Args = Args;
    const NAME: &'static str = "db_query";
    const TITLE: &'static str = "Query a database (read-only)";
    const DESCRIPTION: &'static str = "Run one read-only SQL statement on a configured database and show its rows as a table (capped; add LIMIT or aggregate for large tables). The database itself refuses writes here; use db_execute to change data.";
    const CATEGORY: Category = Category::Database;
    const EFFECT: Effect = Effect::Read;
    const AGENT_ONLY: bool = false;

    fn paths(_: &Args) -> Paths {
        Paths::none()
    }

    async fn call(db: &Db, args: Args, cx: CallContext) -> CallToolResult {
        match db.read(&args.connection, &args.sql, &cx.cancel).await {
            Ok(t) => t.result(&format!("Result on `{}`:", args.connection), &db.limits),
            Err(e) => failed(&e),
        }
    }
}
