//! `db_describe`: one table's columns, keys, indexes and size, and its first rows.

use cairn_toolkit::reply::text;
use cairn_toolkit::{CallContext, Category, Effect, JsonSchema, Paths, Tool};
use rmcp::model::CallToolResult;
use serde::Deserialize;

use crate::db::Db;
use crate::table::Limits;
use crate::tools::failed;

/// The `db_describe` tool.
pub struct DbDescribe;

/// Most rows a description shows.
const MAX_SAMPLE: usize = 100;

/// Arguments of `db_describe`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// The connection's name, as db_connections lists it.
    connection: String,
    /// The table or view: `name`, or `schema.name` in PostgreSQL (default schema `public`) and
    /// `database.name` in MariaDB/MySQL (default the connection's database).
    table: String,
    /// How many of its first rows to show too (default 5, 0 for none, at most 100).
    sample: Option<usize>,
}

impl Tool for DbDescribe {
    type Host = Db;
    type Args = Args;
    const NAME: &'static str = "db_describe";
    const TITLE: &'static str = "Describe a database table";
    const DESCRIPTION: &'static str = "Describe a table or view of a configured database: columns with types, nullability, defaults and primary key, indexes, foreign keys, the row count (an estimate in PostgreSQL and MariaDB/MySQL), and its first rows (5 by default) to show what the values look like.";
    const CATEGORY: Category = Category::Database;
    const EFFECT: Effect = Effect::Read;
    const AGENT_ONLY: bool = false;

    fn paths(_: &Args) -> Paths {
        Paths::none()
    }

    async fn call(db: &Db, args: Args, cx: CallContext) -> CallToolResult {
        let described = match db.describe(&args.connection, &args.table, &cx.cancel).await {
            Ok((d, engine)) => d.render(engine),
            Err(e) => return failed(&e),
        };
        let n = args.sample.unwrap_or(5).min(MAX_SAMPLE);
        if n == 0 {
            return text(described);
        }
        let table = match db.table_ref(&args.connection, &args.table) {
            Ok(t) => t,
            Err(e) => return failed(&e),
        };
        let limits = Limits {
            max_rows: n,
            ..db.limits
        };
        // LIMIT n + 1 tells whether there are more rows without reading them all.
        let sql = format!("SELECT * FROM {table} LIMIT {}", n + 1);
        let mut result = match db
            .read_limited(&args.connection, &sql, limits, &cx.cancel)
            .await
        {
            Ok(t) => t.result(&format!("{described}\nFirst rows:"), &db.limits),
            Err(e) => return failed(&e),
        };
        // The rows are the structured part; the description leads the text.
        result.is_error = Some(false);
        result
    }
}
