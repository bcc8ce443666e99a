//! `db_connections`: the databases the user configured, without secrets.

use cairn_toolkit::reply::text;
use cairn_toolkit::{CallContext, Category, Effect, JsonSchema, Paths, Tool};
use rmcp::model::CallToolResult;
use serde::Deserialize;

use crate::db::Db;

/// The `db_connections` tool.
pub struct DbConnections;

/// Arguments of `db_connections`: none.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {}

impl Tool for DbConnections {
    type Host = Db;
    type Args = Args;
    const NAME: &'static str = "db_connections";
    const TITLE: &'static str = "Database connections";
    const DESCRIPTION: &'static str = "List the databases the user configured (name, engine, host and database, statement timeout); use a name with the other db_ tools.";
    const CATEGORY: Category = Category::Database;
    const EFFECT: Effect = Effect::Read;
    const AGENT_ONLY: bool = false;

    fn paths(_: &Args) -> Paths {
        Paths::none()
    }

    async fn call(db: &Db, _: Args, _: CallContext) -> CallToolResult {
        if db.connections().is_empty() {
            return text(
                "No databases are configured. The user adds one in their own config: [db.NAME] url = \"postgres://user@host:5432/db\" (also mysql://, mariadb:// and redis://HOST:PORT/DB; password = \"secret:NAME\" from the vault), or url = \"sqlite:path/in/workspace.db\".",
            );
        }
        let lines: Vec<String> = db
            .connections()
            .iter()
            .map(|c| {
                format!(
                    "- {}: {} at {} (statements time out after {} s)",
                    c.name,
                    c.engine(),
                    c.shown(),
                    c.timeout.as_secs()
                )
            })
            .collect();
        text(lines.join("\n"))
    }
}
