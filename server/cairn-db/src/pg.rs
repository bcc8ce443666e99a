//! PostgreSQL: a connection per call; reads in a read-only transaction whose snapshot is taken
//! before the model's statement runs (so it cannot turn read-write), one statement per call (the
//! extended protocol refuses several), `statement_timeout` in the server and a cancel request
//! when the run is cancelled or the client-side deadline passes.

use std::time::Duration;

use futures::StreamExt;
use tokio_postgres::error::SqlState;
use tokio_postgres::{Client, NoTls, SimpleQueryMessage};
use tokio_util::sync::CancellationToken;

use crate::conn::{Connection, Target};
use crate::error::DbError;
use crate::table::{Cell, Column, Description, Limits, Table};

/// The checks a read passes before it reaches the server (effects read-only does not stop).
#[path = "pg_guard.rs"]
mod guard;

/// Opens a connection to `c` (`password` resolved from the vault by the caller).
async fn connect(c: &Connection, password: Option<String>) -> Result<Client, DbError> {
    let Target::Postgres {
        host,
        port,
        user,
        dbname,
    } = &c.target
    else {
        return Err(DbError::Engine("not a PostgreSQL connection".to_owned()));
    };
    let mut config = tokio_postgres::Config::new();
    config
        .host(host)
        .port(*port)
        .user(user)
        .dbname(dbname)
        .application_name("cairn")
        .connect_timeout(Duration::from_secs(10));
    if let Some(p) = password {
        config.password(p);
    }
    let fail = |reason: String| DbError::Connect {
        name: c.name.clone(),
        reason,
    };
    let (client, connection) = tokio::time::timeout(Duration::from_secs(15), config.connect(NoTls))
        .await
        .map_err(|_| fail("no answer in 15 s".to_owned()))?
        .map_err(|e| fail(describe_error(&e)))?;
    tokio::spawn(async move {
        if let Err(e) = connection.await {
            tracing::debug!("PostgreSQL connection ended: {e}");
        }
    });
    Ok(client)
}

/// The server's own message when there is one (`password authentication failed ...`).
fn describe_error(e: &tokio_postgres::Error) -> String {
    match e.as_db_error() {
        // `where_` is where it happened (`COPY t, line 3, column id: "x"`).
        Some(db) => match db.where_() {
            Some(at) => format!("{}: {} ({at})", db.severity(), db.message()),
            None => format!("{}: {}", db.severity(), db.message()),
        },
        None => e.to_string(),
    }
}

fn engine(secs: u64) -> impl Fn(tokio_postgres::Error) -> DbError {
    move |e| {
        if e.code() == Some(&SqlState::QUERY_CANCELED) {
            DbError::Timeout { secs }
        } else {
            DbError::Engine(describe_error(&e))
        }
    }
}

/// Runs `work` on `client`, cancelling it in the server when `cancel` fires or the deadline (a
/// little after the server's own `statement_timeout`) passes.
async fn guarded<T>(
    client: &Client,
    timeout: Duration,
    cancel: &CancellationToken,
    work: impl Future<Output = Result<T, DbError>>,
) -> Result<T, DbError> {
    let token = client.cancel_token();
    tokio::select! {
        r = work => r,
        () = cancel.cancelled() => {
            let _ = token.cancel_query(NoTls).await;
            Err(DbError::Cancelled)
        }
        () = tokio::time::sleep(timeout + Duration::from_secs(2)) => {
            let _ = token.cancel_query(NoTls).await;
            Err(DbError::Timeout { secs: timeout.as_secs() })
        }
    }
}

/// Starts a transaction (`begin` is `BEGIN` or `BEGIN READ ONLY`) with the statement timeout.
async fn begin(client: &Client, begin: &str, timeout: Duration) -> Result<(), DbError> {
    client
        .batch_execute(&format!(
            "{begin}; SET LOCAL statement_timeout = {}",
            timeout.as_millis()
        ))
        .await
        .map_err(engine(timeout.as_secs()))
}

/// Starts a read-only transaction with the statement timeout, and takes its snapshot.
async fn begin_read_only(client: &Client, timeout: Duration) -> Result<(), DbError> {
    let secs = timeout.as_secs();
    begin(client, "BEGIN READ ONLY", timeout).await?;
    // The guard reads `'...'` without backslash escapes; so must the server (a read cannot SET).
    client
        .batch_execute("SET LOCAL standard_conforming_strings = on")
        .await
        .map_err(engine(secs))?;
    // After the first query the transaction can no longer be made read-write.
    client
        .simple_query("SELECT 1")
        .await
        .map_err(engine(secs))?;
    Ok(())
}

/// One statement's rows (as the server's text), at most `limits.max_rows`.
pub(crate) async fn read(
    c: &Connection,
    password: Option<String>,
    sql: &str,
    limits: &Limits,
    cancel: &CancellationToken,
) -> Result<Table, DbError> {
    // Before connecting: a refused read never reaches the server.
    guard::check_read(sql)?;
    let client = connect(c, password).await?;
    let secs = c.timeout.as_secs();
    let work = async {
        begin_read_only(&client, c.timeout).await?;
        // Parsed by the server as one prepared statement: several statements are refused.
        let statement = client.prepare(sql).await.map_err(engine(secs))?;
        let mut table = Table {
            columns: statement
                .columns()
                .iter()
                .map(|c| c.name().to_owned())
                .collect(),
            ..Table::default()
        };
        let stream = client.simple_query_raw(sql).await.map_err(engine(secs))?;
        futures::pin_mut!(stream);
        while let Some(message) = stream.next().await {
            if let SimpleQueryMessage::Row(row) = message.map_err(engine(secs))? {
                if table.rows.len() == limits.max_rows {
                    table.more = true;
                    break;
                }
                table.rows.push(
                    (0..row.len())
                        .map(|i| row.get(i).map_or(Cell::Null, |v| Cell::Text(v.to_owned())))
                        .collect(),
                );
            }
        }
        Ok(table)
    };
    let table = guarded(&client, c.timeout, cancel, work).await?;
    if table.more {
        // Stop the server sending the rest of a large result.
        let _ = client.cancel_token().cancel_query(NoTls).await;
    }
    Ok(table)
}

/// One statement in a transaction; the rows it changed. Rolled back on any error.
pub(crate) async fn write(
    c: &Connection,
    password: Option<String>,
    sql: &str,
    cancel: &CancellationToken,
) -> Result<u64, DbError> {
    let client = connect(c, password).await?;
    let secs = c.timeout.as_secs();
    let work = async {
        begin(&client, "BEGIN", c.timeout).await?;
        let statement = client.prepare(sql).await.map_err(engine(secs))?;
        let changed = client
            .execute(&statement, &[])
            .await
            .map_err(engine(secs))?;
        client.batch_execute("COMMIT").await.map_err(engine(secs))?;
        Ok(changed)
    };
    // On an error the connection is dropped with the transaction open: the server rolls back.
    guarded(&client, c.timeout, cancel, work).await
}

pub(crate) const TABLES: &str = "SELECT table_schema AS schema, table_name AS name, table_type AS type \
     FROM information_schema.tables \
     WHERE table_schema NOT IN ('pg_catalog', 'information_schema') ORDER BY 1, 2";

/// Columns, indexes, foreign keys and the planner's row estimate of `table` (`schema.table`, or
/// a table in `public`).
pub(crate) async fn describe(
    c: &Connection,
    password: Option<String>,
    table: &str,
    cancel: &CancellationToken,
) -> Result<Description, DbError> {
    let (schema, name) = table.split_once('.').unwrap_or(("public", table));
    let client = connect(c, password).await?;
    let secs = c.timeout.as_secs();
    let work = async {
        begin_read_only(&client, c.timeout).await?;
        let rows = |sql: &'static str| {
            let client = &client;
            async move {
                let rows = client
                    .query(sql, &[&schema, &name])
                    .await
                    .map_err(engine(secs))?;
                rows.iter()
                    .map(|r| {
                        (0..r.len())
                            .map(|i| {
                                r.try_get::<_, Option<String>>(i)
                                    .map(Option::unwrap_or_default)
                            })
                            .collect::<Result<Vec<String>, _>>()
                    })
                    .collect::<Result<Vec<_>, _>>()
                    .map_err(engine(secs))
            }
        };
        let estimate = rows(
            "SELECT c.reltuples::bigint::text FROM pg_class c \
             JOIN pg_namespace n ON n.oid = c.relnamespace \
             WHERE n.nspname = $1 AND c.relname = $2 AND c.relkind IN ('r', 'p', 'v', 'm', 'f')",
        )
        .await?;
        let Some(estimate) = estimate.first().and_then(|r| r.first()).cloned() else {
            return Err(DbError::Engine(format!(
                "no table or view `{schema}.{name}`; db_tables lists them"
            )));
        };
        let keys = rows(
            "SELECT a.attname::text FROM pg_index i \
             JOIN pg_class t ON t.oid = i.indrelid JOIN pg_namespace n ON n.oid = t.relnamespace \
             JOIN pg_attribute a ON a.attrelid = t.oid AND a.attnum = ANY(i.indkey) \
             WHERE i.indisprimary AND n.nspname = $1 AND t.relname = $2",
        )
        .await?;
        let keys: Vec<&String> = keys.iter().filter_map(|r| r.first()).collect();
        let columns = rows(
            "SELECT column_name::text, data_type::text, is_nullable::text, column_default::text \
             FROM information_schema.columns WHERE table_schema = $1 AND table_name = $2 \
             ORDER BY ordinal_position",
        )
        .await?
        .into_iter()
        .map(|r| Column {
            primary_key: keys.contains(&&r[0]),
            name: r[0].clone(),
            data_type: r[1].clone(),
            nullable: r[2] == "YES",
            default: r[3].clone(),
        })
        .collect();
        let indexes = rows(
            "SELECT indexname::text || ': ' || indexdef FROM pg_indexes \
             WHERE schemaname = $1 AND tablename = $2 ORDER BY indexname",
        )
        .await?
        .into_iter()
        .map(|r| r[0].clone())
        .collect();
        let foreign_keys = rows(
            "SELECT c.conname::text || ': ' || pg_get_constraintdef(c.oid) FROM pg_constraint c \
             JOIN pg_class t ON t.oid = c.conrelid JOIN pg_namespace n ON n.oid = t.relnamespace \
             WHERE c.contype = 'f' AND n.nspname = $1 AND t.relname = $2 ORDER BY c.conname",
        )
        .await?
        .into_iter()
        .map(|r| r[0].clone())
        .collect();
        let rows = match estimate.parse::<i64>() {
            Ok(n) if n >= 0 => format!("about {n} rows (the planner's estimate)"),
            _ => "row count unknown (never analyzed; run ANALYZE, or count(*))".to_owned(),
        };
        Ok(Description {
            table: format!("{schema}.{name}"),
            rows,
            columns,
            indexes,
            foreign_keys,
        })
    };
    guarded(&client, c.timeout, cancel, work).await
}

/// Copies CSV `text` (with its header) into `table` (quoted already) in one transaction, the
/// server parsing it (`COPY ... FROM STDIN (FORMAT csv, HEADER true)`); the rows added.
pub(crate) async fn import(
    c: &Connection,
    password: Option<String>,
    table: &str,
    columns: &[String],
    text: String,
    create: bool,
    cancel: &CancellationToken,
) -> Result<u64, DbError> {
    use futures::SinkExt;
    let client = connect(c, password).await?;
    let secs = c.timeout.as_secs();
    let quoted: Vec<String> = columns
        .iter()
        .map(|c| format!("\"{}\"", c.replace('"', "\"\"")))
        .collect();
    let work = async {
        begin(&client, "BEGIN", c.timeout).await?;
        if create {
            let defs: Vec<String> = quoted.iter().map(|c| format!("{c} text")).collect();
            client
                .batch_execute(&format!("CREATE TABLE {table} ({})", defs.join(", ")))
                .await
                .map_err(engine(secs))?;
        }
        let sink = client
            .copy_in(&format!(
                "COPY {table} ({}) FROM STDIN WITH (FORMAT csv, HEADER true)",
                quoted.join(", ")
            ))
            .await
            .map_err(engine(secs))?;
        futures::pin_mut!(sink);
        sink.send(bytes::Bytes::from(text))
            .await
            .map_err(engine(secs))?;
        let added = sink.finish().await.map_err(engine(secs))?;
        client.batch_execute("COMMIT").await.map_err(engine(secs))?;
        Ok(added)
    };
    guarded(&client, c.timeout, cancel, work).await
}
