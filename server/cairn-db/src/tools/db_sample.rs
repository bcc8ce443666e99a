//! `db_sample`: the first rows of a table, to see what its data looks like.

use cairn_toolkit::{CallContext, Category, Effect, JsonSchema, Paths, Tool};
use rmcp::model::CallToolResult;
use serde::Deserialize;

use crate::tools::failed;
use crate::{Db, Limits};

/// The `db_sample` tool.
pub struct DbSample;

/// Most rows a sample shows.
const MAX_SAMPLE: usize = 100;

/// Arguments of `db_sample`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// The connection's name, as db_connections lists it.
    connection: String,
    /// The table or view: `name`, or `schema.name` in PostgreSQL.
    table: String,
    /// How many rows (default 10, at most 100).
    rows: Option<usize>,
}

impl Tool for DbSample {
    type Host = Db;
    type Args = Args;
    const NAME: &'static str = "db_sample";
    const TITLE: &'static str = "Sample table rows";
    const DESCRIPTION: &'static str = "Show the first rows of a table or view of a configured database (default 10), to see what its values look like before writing a query.";
    const CATEGORY: Category = Category::Database;
    const EFFECT: Effect = Effect::Read;
    const AGENT_ONLY: bool = false;

    fn paths(_: &Args) -> Paths {
        Paths::none()
    }

    async fn call(db: &Db, args: Args, cx: CallContext) -> CallToolResult {
        let n = args.rows.unwrap_or(10).clamp(1, MAX_SAMPLE);
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
        match db
            .read_limited(&args.connection, &sql, limits, &cx.cancel)
            .await
        {
            Ok(t) => t.result(&format!("First rows of `{}`:", args.table), &db.limits),
            Err(e) => failed(&e),
        }
    }
}
