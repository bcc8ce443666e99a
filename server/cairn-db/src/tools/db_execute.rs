//! `db_execute`: one statement that changes data or schema, in a transaction, once approved.

use cairn_toolkit::reply::text;
use cairn_toolkit::{CallContext, Category, Effect, JsonSchema, Paths, Tool};
use rmcp::model::CallToolResult;
use serde::Deserialize;

use crate::db::Db;
use crate::tools::failed;

/// The `db_execute` tool.
pub struct DbExecute;

/// Arguments of `db_execute`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// The connection's name, as db_connections lists it.
    connection: String,
    /// One SQL statement (INSERT, UPDATE, DELETE, CREATE, ALTER ...); the user sees it before it runs.
    sql: String,
}

impl Tool for DbExecute {
    type Host = Db;
    type Args = Args;
    const NAME: &'static str = "db_execute";
    const TITLE: &'static str = "Change a database";
    const DESCRIPTION: &'static str = "Run one SQL statement that changes a configured database (insert, update, delete, schema changes) in a transaction, after the user approves the exact statement; reports the rows changed. A failure rolls back.";
    const CATEGORY: Category = Category::Database;
    const EFFECT: Effect = Effect::Write;
    const AGENT_ONLY: bool = false;
    const DESTRUCTIVE: bool = true;

    fn paths(_: &Args) -> Paths {
        Paths::none()
    }

    async fn call(db: &Db, args: Args, cx: CallContext) -> CallToolResult {
        match db.write(&args.connection, &args.sql, &cx.cancel).await {
            Ok(n) => text(format!(
                "committed on `{}`: {n} row{} changed",
                args.connection,
                if n == 1 { "" } else { "s" }
            )),
            Err(e) => failed(&e),
        }
    }
}
