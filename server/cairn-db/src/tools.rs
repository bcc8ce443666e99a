//! The database tools (category `database`), one type per file, and the one path every call
//! takes to its engine: the connection by name, its password from the vault, the engine.

pub(crate) mod db_connections;
pub(crate) mod db_describe;
pub(crate) mod db_execute;
pub(crate) mod db_explain;
pub(crate) mod db_export;
pub(crate) mod db_import;
pub(crate) mod db_query;
pub(crate) mod db_tables;
pub(crate) mod redis_delete;
pub(crate) mod redis_get;
pub(crate) mod redis_keys;
pub(crate) mod redis_set;

use rmcp::model::CallToolResult;
use tokio_util::sync::CancellationToken;

use crate::conn::{Connection, Target};
use crate::db::Db;
use crate::error::DbError;
use crate::table::{Description, Table};
use crate::{mysql, pg, sqlite};

impl Db {
    /// The connection's password, read from the vault for its host, when it has one.
    fn password(&self, c: &Connection) -> Result<Option<String>, DbError> {
        match (&c.password, c.host()) {
            (Some(handle), Some(host)) => {
                let name = handle.trim_start_matches("secret:");
                (self.passwords)(name, host)
                    .map(Some)
                    .map_err(|reason| DbError::Password {
                        name: c.name.clone(),
                        reason,
                    })
            }
            _ => Ok(None),
        }
    }

    /// A Redis connection by name, and its password.
    pub(crate) fn redis(&self, connection: &str) -> Result<(&Connection, Option<String>), DbError> {
        let c = self.connection(connection)?;
        if !matches!(c.target, Target::Redis { .. }) {
            return Err(DbError::Refused {
                name: c.name.clone(),
                reason: format!(
                    "is {}, not Redis; use db_tables, db_describe, db_query and db_execute",
                    c.engine()
                ),
            });
        }
        Ok((c, self.password(c)?))
    }

    /// Runs `f` on connection `c`'s SQLite file at `path` (opened for writing when `write`).
    async fn on_sqlite<T: Send + 'static>(
        &self,
        c: &Connection,
        path: &str,
        write: bool,
        cancel: &CancellationToken,
        f: impl FnOnce(&mut rusqlite::Connection) -> Result<T, DbError> + Send + 'static,
    ) -> Result<T, DbError> {
        sqlite::run(
            &c.name,
            self.workspace.clone(),
            path,
            write,
            c.timeout,
            cancel,
            f,
        )
        .await
    }

    /// One statement's rows, read-only by the engine.
    pub(crate) async fn read(
        &self,
        connection: &str,
        sql: &str,
        cancel: &CancellationToken,
    ) -> Result<Table, DbError> {
        self.read_limited(connection, sql, self.limits, cancel)
            .await
    }

    /// [`Db::read`] under other caps (a sample's row count, an export's size).
    pub(crate) async fn read_limited(
        &self,
        connection: &str,
        sql: &str,
        limits: crate::table::Limits,
        cancel: &CancellationToken,
    ) -> Result<Table, DbError> {
        let c = self.connection(connection)?;
        match &c.target {
            Target::Postgres { .. } => pg::read(c, self.password(c)?, sql, &limits, cancel).await,
            Target::Mysql { .. } => mysql::read(c, self.password(c)?, sql, &limits, cancel).await,
            Target::Redis { .. } => Err(not_sql(c)),
            Target::Sqlite { path } => {
                let sql = sql.to_owned();
                self.on_sqlite(c, path, false, cancel, move |conn| {
                    sqlite::read(conn, &sql, &[], &limits)
                })
                .await
            }
        }
    }

    /// One statement in a transaction; the rows it changed.
    pub(crate) async fn write(
        &self,
        connection: &str,
        sql: &str,
        cancel: &CancellationToken,
    ) -> Result<u64, DbError> {
        let c = self.connection(connection)?;
        match &c.target {
            Target::Postgres { .. } => pg::write(c, self.password(c)?, sql, cancel).await,
            Target::Mysql { .. } => mysql::write(c, self.password(c)?, sql, cancel).await,
            Target::Redis { .. } => Err(not_sql(c)),
            Target::Sqlite { path } => {
                let sql = sql.to_owned();
                self.on_sqlite(c, path, true, cancel, move |conn| {
                    sqlite::write(conn, &sql).map(|n| n as u64)
                })
                .await
            }
        }
    }

    /// The tables and views of a connection.
    pub(crate) async fn tables(
        &self,
        connection: &str,
        cancel: &CancellationToken,
    ) -> Result<Table, DbError> {
        let sql = match &self.connection(connection)?.target {
            Target::Postgres { .. } => pg::TABLES,
            Target::Sqlite { .. } => sqlite::TABLES,
            Target::Mysql { .. } => mysql::TABLES,
            Target::Redis { .. } => return Err(not_sql(self.connection(connection)?)),
        };
        self.read(connection, sql, cancel).await
    }

    pub(crate) async fn describe(
        &self,
        connection: &str,
        table: &str,
        cancel: &CancellationToken,
    ) -> Result<(Description, &'static str), DbError> {
        let c = self.connection(connection)?;
        let described = match &c.target {
            Target::Postgres { .. } => pg::describe(c, self.password(c)?, table, cancel).await,
            Target::Mysql { .. } => mysql::describe(c, self.password(c)?, table, cancel).await,
            Target::Redis { .. } => Err(not_sql(c)),
            Target::Sqlite { path } => {
                let table = table.to_owned();
                self.on_sqlite(c, path, false, cancel, move |conn| {
                    sqlite::describe(conn, &table)
                })
                .await
            }
        };
        described.map(|d| (d, c.engine()))
    }
}

/// Samples, plans and exports: built on the reads above, engine by engine.
impl Db {
    /// The engine's name of `table` in a statement: quoted, with its schema when given.
    pub(crate) fn table_ref(&self, connection: &str, table: &str) -> Result<String, DbError> {
        let quote = |name: &str| format!("\"{}\"", name.replace('"', "\"\""));
        let tick = |name: &str| format!("`{}`", name.replace('`', "``"));
        let c = self.connection(connection)?;
        Ok(match &c.target {
            Target::Postgres { .. } => match table.split_once('.') {
                Some((schema, name)) => format!("{}.{}", quote(schema), quote(name)),
                None => quote(table),
            },
            Target::Mysql { .. } => match table.split_once('.') {
                Some((schema, name)) => format!("{}.{}", tick(schema), tick(name)),
                None => tick(table),
            },
            Target::Sqlite { .. } => quote(table),
            Target::Redis { .. } => return Err(not_sql(c)),
        })
    }

    /// The plan of `sql` (run with `analyze`, in PostgreSQL, inside the read-only transaction),
    /// as a tree with the costly parts pointed out.
    pub(crate) async fn explain(
        &self,
        connection: &str,
        sql: &str,
        analyze: bool,
        cancel: &CancellationToken,
    ) -> Result<String, DbError> {
        let c = self.connection(connection)?;
        match &c.target {
            Target::Redis { .. } => Err(not_sql(c)),
            Target::Mysql { .. } => {
                if analyze {
                    return Err(DbError::Engine(
                        "analyze is for PostgreSQL; MariaDB/MySQL plans are estimates here"
                            .to_owned(),
                    ));
                }
                let t = self
                    .read(connection, &format!("EXPLAIN {sql}"), cancel)
                    .await?;
                Ok(crate::plan::mysql(&t, &self.limits))
            }
            Target::Postgres { .. } => {
                let options = if analyze {
                    "ANALYZE, BUFFERS, FORMAT JSON"
                } else {
                    "FORMAT JSON"
                };
                let t = self
                    .read(connection, &format!("EXPLAIN ({options}) {sql}"), cancel)
                    .await?;
                let json = match t.rows.first().and_then(|r| r.first()) {
                    Some(crate::table::Cell::Text(j)) => j.clone(),
                    _ => return Err(DbError::Engine("EXPLAIN returned no plan".to_owned())),
                };
                crate::plan::postgres(&json)
            }
            Target::Sqlite { .. } => {
                if analyze {
                    return Err(DbError::Engine(
                        "SQLite has no EXPLAIN ANALYZE; leave analyze off".to_owned(),
                    ));
                }
                let t = self
                    .read(connection, &format!("EXPLAIN QUERY PLAN {sql}"), cancel)
                    .await?;
                Ok(crate::plan::sqlite(&t))
            }
        }
    }
}

impl Db {
    /// Adds the records of `text` (CSV with a header) to `table` in one transaction (creating it
    /// with text columns when `create`); the rows added. A fault anywhere adds none.
    pub(crate) async fn import(
        &self,
        connection: &str,
        table: &str,
        text: String,
        create: bool,
        cancel: &CancellationToken,
    ) -> Result<u64, DbError> {
        let csv = crate::import::parse(&text)?;
        let target = self.table_ref(connection, table)?;
        let c = self.connection(connection)?;
        match &c.target {
            Target::Postgres { .. } => {
                pg::import(
                    c,
                    self.password(c)?,
                    &target,
                    &csv.columns,
                    text,
                    create,
                    cancel,
                )
                .await
            }
            Target::Mysql { .. } => {
                crate::mysql::import(c, self.password(c)?, &target, &csv, create, cancel).await
            }
            Target::Redis { .. } => Err(not_sql(c)),
            Target::Sqlite { path } => {
                self.on_sqlite(c, path, true, cancel, move |conn| {
                    sqlite::import(conn, &target, &csv, create)
                })
                .await
            }
        }
    }
}

/// What the SQL tools say about a Redis connection.
fn not_sql(c: &Connection) -> DbError {
    DbError::Refused {
        name: c.name.clone(),
        reason: "is Redis, not SQL; use redis_keys, redis_get, redis_set and redis_delete"
            .to_owned(),
    }
}

/// A failed call as the model's error result.
pub(crate) fn failed(e: &DbError) -> CallToolResult {
    cairn_toolkit::reply::error(e.to_string())
}
