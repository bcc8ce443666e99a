//! `db_explain`: how the engine runs a statement, and what costs the most.

use cairn_toolkit::reply::text;
use cairn_toolkit::{CallContext, Category, Effect, JsonSchema, Paths, Tool};
use rmcp::model::CallToolResult;
use serde::Deserialize;

use crate::db::Db;
use crate::tools::failed;

/// The `db_explain` tool.
pub struct DbExplain;

/// Arguments of `db_explain`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// The connection's name, as db_connections lists it.
    connection: String,
    /// The statement to explain (one statement).
    sql: String,
    /// PostgreSQL only: run it (read-only) and report actual times and rows, not estimates.
    analyze: Option<bool>,
}

impl Tool for DbExplain {
    type Host = Db;
    type Args = Args;
    const NAME: &'static str = "db_explain";
    const TITLE: &'static str = "Explain a query plan";
    const DESCRIPTION: &'static str = "Show how a configured database would run a statement: the plan as a tree with costs and row estimates (actual times with analyze, PostgreSQL), the costliest steps, and full scans or disk sorts that an index may avoid. Use it to find why a query is slow.";
    const CATEGORY: Category = Category::Database;
    const EFFECT: Effect = Effect::Read;
    const AGENT_ONLY: bool = false;

    fn paths(_: &Args) -> Paths {
        Paths::none()
    }

    async fn call(db: &Db, args: Args, cx: CallContext) -> CallToolResult {
        let analyze = args.analyze.unwrap_or(false);
        match db
            .explain(&args.connection, &args.sql, analyze, &cx.cancel)
            .await
        {
            Ok(plan) => text(plan),
            Err(e) => failed(&e),
        }
    }
}
