//! The database tools (category `database`): the databases the user declared in `[db.NAME]`,
//! served in-process as the [`ToolSet`] [`db_tools`] builds from [`DB_TOOLS`].
//!
//! Read-only is the engine's job, never a parse of the SQL: a read runs as one statement (the
//! engine refuses several) in a read-only transaction (PostgreSQL), a read-only XA transaction
//! (MariaDB/MySQL) or on a read-only open with `query_only` (SQLite). A write goes through
//! `db_execute`, whose effect makes the agent ask, with the statement in the question; it runs
//! in a transaction and reports the affected rows. Redis has its own tools (`redis_keys`,
//! `redis_get`, and the writes `redis_set` and `redis_delete`), bounded by SCAN and caps.
//! Every statement has a timeout enforced by the engine and is cancelled there when the run is.
//! Connection strings hold no password (a `secret:NAME` vault handle, bound to the database's
//! host, is resolved at connect time), so what the model and the log see names no secret.

mod conn;
mod db;
mod error;
mod import;
mod mysql;
mod pg;
mod plan;
mod redis;
mod sql_words;
mod sqlite;
mod table;
mod tools;

use cairn_toolkit::{Entry, ToolSet};

pub use conn::{Connection, DbSpec, PasswordSource};
pub use db::Db;
pub use error::DbError;
pub use table::Limits;

/// The database tools, in the order listed.
pub const DB_TOOLS: &[Entry<Db>] = &[
    Entry::of::<tools::db_connections::DbConnections>(),
    Entry::of::<tools::db_tables::DbTables>(),
    Entry::of::<tools::db_describe::DbDescribe>(),
    Entry::of::<tools::db_query::DbQuery>(),
    Entry::of::<tools::db_explain::DbExplain>(),
    Entry::of::<tools::db_execute::DbExecute>(),
    Entry::of::<tools::db_export::DbExport>(),
    Entry::of::<tools::db_import::DbImport>(),
    Entry::of::<tools::redis_keys::RedisKeys>(),
    Entry::of::<tools::redis_get::RedisGet>(),
    Entry::of::<tools::redis_set::RedisSet>(),
    Entry::of::<tools::redis_delete::RedisDelete>(),
];

/// The database tools over `db`.
pub fn db_tools(db: Db) -> ToolSet<Db> {
    ToolSet::new(db, DB_TOOLS)
}
