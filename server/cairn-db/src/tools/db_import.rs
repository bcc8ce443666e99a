//! `db_import`: a CSV file of the workspace added to a table, all rows or none.

use cairn_toolkit::reply::{error, text};
use cairn_toolkit::{CallContext, Category, Effect, JsonSchema, Paths, Tool};
use cairn_workspace::off_thread;
use rmcp::model::CallToolResult;
use serde::Deserialize;

use crate::db::Db;
use crate::tools::failed;

/// The `db_import` tool.
pub struct DbImport;

/// Arguments of `db_import`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// The connection's name, as db_connections lists it.
    connection: String,
    /// The CSV file, relative to the workspace root; its first line names the columns.
    path: String,
    /// The table to add the rows to: `name`, or `schema.name` in PostgreSQL.
    table: String,
    /// Create the table first, with a text column for each CSV column (default false).
    create: Option<bool>,
}

impl Tool for DbImport {
    type Host = Db;
    type Args = Args;
    const NAME: &'static str = "db_import";
    const TITLE: &'static str = "Import a CSV file into a table";
    const DESCRIPTION: &'static str = "Add the rows of a CSV file in the workspace (first line: column names) to a table of a configured database in one transaction, after the user approves; a malformed line or a rejected row adds nothing and is named. Can create the table with text columns.";
    const CATEGORY: Category = Category::Database;
    const EFFECT: Effect = Effect::Write;
    const AGENT_ONLY: bool = false;
    const NEEDS_WORKSPACE: bool = true;

    fn paths(args: &Args) -> Paths {
        Paths::read(&args.path)
    }

    async fn call(db: &Db, args: Args, cx: CallContext) -> CallToolResult {
        let Some(ws) = db.workspace.clone() else {
            return error("db_import reads a file of the workspace; open a folder first");
        };
        let requested = args.path.clone();
        let read = off_thread(&ws, move |ws| {
            ws.resolve(&requested)
                .and_then(|p| ws.read_text(&p))
                .map(|(text, _)| text)
        })
        .await;
        let csv = match read {
            Ok(Ok(text)) => text,
            Ok(Err(e)) => return error(e.to_string()),
            Err(e) => return error(e),
        };
        let create = args.create.unwrap_or(false);
        match db
            .import(&args.connection, &args.table, csv, create, &cx.cancel)
            .await
        {
            Ok(n) => text(format!(
                "imported {n} row{} from {} into `{}` on `{}`",
                if n == 1 { "" } else { "s" },
                args.path,
                args.table,
                args.connection
            )),
            Err(e) => failed(&e),
        }
    }
}
