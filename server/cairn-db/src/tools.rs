//! The database tools (category `database`), one type per file, and the one path every call
//! takes to its engine: the connection by name, its password from the vault, the engine.

pub(crate) mod db_connections;
pub(crate) mod db_describe;
pub(crate) mod db_execute;
pub(crate) mod db_query;
pub(crate) mod db_tables;
pub(crate) mod redis_delete;
pub(crate) mod redis_get;
pub(crate) mod redis_keys;
pub(crate) mod redis_set;

use rmcp::model::CallToolResult;
use tokio_util::sync::CancellationToken;

use crate::conn::{Connection, Target};
use crate::table::{Description, Table};
use crate::{Db, DbError, mysql, pg, sqlite};

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

    /// One statement's rows, read-only by the engine.
    pub(crate) async fn read(
        &self,
        connection: &str,
        sql: &str,
        cancel: &CancellationToken,
    ) -> Result<Table, DbError> {
        let c = self.connection(connection)?;
        let limits = self.limits;
        match &c.target {
            Target::Postgres { .. } => pg::read(c, self.password(c)?, sql, &limits, cancel).await,
            Target::Mysql { .. } => mysql::read(c, self.password(c)?, sql, &limits, cancel).await,
            Target::Redis { .. } => Err(not_sql(c)),
            Target::Sqlite { path } => {
                let sql = sql.to_owned();
                sqlite::run(
                    &c.name,
                    self.workspace.clone(),
                    path,
                    false,
                    c.timeout,
                    cancel,
                    move |conn| sqlite::read(conn, &sql, &[], &limits),
                )
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
                sqlite::run(
                    &c.name,
                    self.workspace.clone(),
                    path,
                    true,
                    c.timeout,
                    cancel,
                    move |conn| sqlite::write(conn, &sql).map(|n| n as u64),
                )
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
                sqlite::run(
                    &c.name,
                    self.workspace.clone(),
                    path,
                    false,
                    c.timeout,
                    cancel,
                    move |conn| sqlite::describe(conn, &table),
                )
                .await
            }
        };
        described.map(|d| (d, c.engine()))
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
