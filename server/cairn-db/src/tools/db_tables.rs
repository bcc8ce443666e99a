//! `db_tables`: the tables and views of one database.

use cairn_toolkit::{CallContext, Category, Effect, JsonSchema, Paths, Tool};
use rmcp::model::CallToolResult;
use serde::Deserialize;

use crate::db::Db;
use crate::tools::failed;

/// The `db_tables` tool.
pub struct DbTables;

/// Arguments of `db_tables`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// The connection's name, as db_connections lists it.
    connection: String,
}

impl Tool for DbTables {
    type Host = Db;
    type Args = Args;
    const NAME: &'static str = "db_tables";
    const TITLE: &'static str = "List database tables";
    const DESCRIPTION: &'static str = "List the tables and views of a configured database (schema, name, type), to find what to describe or query.";
    const CATEGORY: Category = Category::Database;
    const EFFECT: Effect = Effect::Read;
    const AGENT_ONLY: bool = false;

    fn paths(_: &Args) -> Paths {
        Paths::none()
    }

    async fn call(db: &Db, args: Args, cx: CallContext) -> CallToolResult {
        match db.tables(&args.connection, &cx.cancel).await {
            Ok(t) => t.result(&format!("Tables of `{}`:", args.connection), &db.limits),
            Err(e) => failed(&e),
        }
    }
}
