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

use std::sync::Arc;

use cairn_toolkit::{Entry, ToolSet};
use cairn_workspace::Workspace;

pub use conn::{Connection, DbSpec, PasswordSource};
pub use error::DbError;
pub use table::Limits;

/// What the database tools share: the configured connections and, when a folder is open, the
/// workspace (`sqlite:` files are opened through its scope).
pub struct Db {
    connections: Vec<Connection>,
    passwords: PasswordSource,
    workspace: Option<Arc<Workspace>>,
    limits: Limits,
    /// Takes vault values out of what an export writes into the workspace.
    redactor: Option<Arc<dyn cairn_agent::redact::Redact>>,
}

impl std::fmt::Debug for Db {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Db")
            .field("connections", &self.connections)
            .finish_non_exhaustive()
    }
}

impl cairn_toolkit::Host for Db {
    fn workspace(&self) -> Option<&Arc<Workspace>> {
        self.workspace.as_ref()
    }
}

impl Db {
    /// The tools' host over `connections`; passwords come from `passwords` when a connection
    /// is opened. A connection whose spec is invalid is left out, and the reason returned.
    pub fn new(
        specs: &[DbSpec],
        passwords: PasswordSource,
        workspace: Option<Arc<Workspace>>,
    ) -> (Db, Vec<(String, DbError)>) {
        let mut connections = Vec::new();
        let mut problems = Vec::new();
        for spec in specs {
            match Connection::parse(spec) {
                Ok(c) => connections.push(c),
                Err(e) => problems.push((spec.name.clone(), e)),
            }
        }
        let db = Db {
            connections,
            passwords,
            workspace,
            limits: Limits::default(),
            redactor: None,
        };
        (db, problems)
    }

    /// Caps on what a result shows (rows, bytes, cell length).
    pub fn with_limits(mut self, limits: Limits) -> Db {
        self.limits = limits;
        self
    }

    /// The redactor an export passes each value through before it is written (a password a
    /// table holds, in any encoding the redactor knows, becomes a marker in the file).
    pub fn with_redactor(mut self, redactor: Arc<dyn cairn_agent::redact::Redact>) -> Db {
        self.redactor = Some(redactor);
        self
    }

    pub fn connections(&self) -> &[Connection] {
        &self.connections
    }

    fn connection(&self, name: &str) -> Result<&Connection, DbError> {
        self.connections
            .iter()
            .find(|c| c.name == name)
            .ok_or_else(|| DbError::UnknownConnection {
                name: name.to_owned(),
                known: self.connections.iter().map(|c| c.name.clone()).collect(),
            })
    }
}

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
