//! `db_describe`: one table's columns, keys, indexes and size.

use cairn_toolkit::reply::text;
use cairn_toolkit::{CallContext, Category, Effect, JsonSchema, Paths, Tool};
use rmcp::model::CallToolResult;
use serde::Deserialize;

use crate::Db;
use crate::tools::failed;

/// The `db_describe` tool.
pub struct DbDescribe;

/// Arguments of `db_describe`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// The connection's name, as db_connections lists it.
    connection: String,
    /// The table or view: `name`, or `schema.name` in PostgreSQL (default schema `public`) and
    /// `database.name` in MariaDB/MySQL (default the connection's database).
    table: String,
}

impl Tool for DbDescribe {
    type Host = Db;
    type Args = Args;
    const NAME: &'static str = "db_describe";
    const TITLE: &'static str = "Describe a database table";
    const DESCRIPTION: &'static str = "Describe a table or view of a configured database: columns with types, nullability, defaults and primary key, indexes, foreign keys, and the row count (an estimate in PostgreSQL).";
    const CATEGORY: Category = Category::Database;
    const EFFECT: Effect = Effect::Read;
    const AGENT_ONLY: bool = false;

    fn paths(_: &Args) -> Paths {
        Paths::none()
    }

    async fn call(db: &Db, args: Args, cx: CallContext) -> CallToolResult {
        match db.describe(&args.connection, &args.table, &cx.cancel).await {
            Ok((d, engine)) => text(d.render(engine)),
            Err(e) => failed(&e),
        }
    }
}
