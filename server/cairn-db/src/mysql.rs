//! MariaDB and MySQL: a connection per call; reads in a read-only XA transaction with a secret
//! random id (an XA transaction cannot be committed, rolled back or implicitly committed by DDL
//! while active, so even a MariaDB compound statement, `BEGIN NOT ATOMIC ... COMMIT; DELETE ...
//! END`, cannot leave it), one statement per call (checked by preparing it: a prepared statement
//! refuses several, the text protocol would not), `max_statement_time` in the server (`max_execution_time` in MySQL) and `KILL QUERY`
//! from a second connection when the run is cancelled, the client-side deadline passes or a
//! result is cut short. Before any of that a read passes [`guard`], which refuses what the
//! read-only transaction still lets through (server files, locks, settings, `KILL` ...).

use std::time::Duration;

use mysql_async::prelude::Queryable;
use mysql_async::{Conn, Error, Opts, OptsBuilder, Row, Value};
use tokio_util::sync::CancellationToken;

use crate::conn::{Connection, Target};
use crate::error::DbError;
use crate::table::{Cell, Column, Description, Limits, Table};

#[path = "mysql_guard.rs"]
mod guard;

/// Server errors that mean the statement ran out of time: MariaDB's `max_statement_time`
/// exceeded (1969), MySQL's `max_execution_time` (3024).
const TIMED_OUT: [u16; 2] = [1969, 3024];
/// "Unknown system variable": the server is MySQL, which names its timeout differently.
const UNKNOWN_VARIABLE: u16 = 1193;
/// `sql_mode` flags a read runs without: with them the server would read strings as the
/// guard does not (no backslash escapes, `"..."` as an identifier; the composites include
/// `ANSI_QUOTES`, and `ORACLE` switches to another grammar). Their other flags stay.
const LEXER_MODES: &[&str] = &[
    "NO_BACKSLASH_ESCAPES",
    "ANSI_QUOTES",
    "ANSI",
    "ORACLE",
    "MSSQL",
    "DB2",
    "MAXDB",
    "POSTGRESQL",
];

/// Opens a connection to `c` (`password` resolved from the vault by the caller).
async fn connect(c: &Connection, password: Option<String>) -> Result<Conn, DbError> {
    let Target::Mysql {
        host,
        port,
        user,
        dbname,
        ..
    } = &c.target
    else {
        return Err(DbError::Engine("not a MariaDB/MySQL connection".to_owned()));
    };
    let opts = OptsBuilder::default()
        .ip_or_hostname(host.clone())
        .tcp_port(*port)
        .user(Some(user.clone()))
        .pass(password)
        .db_name((!dbname.is_empty()).then(|| dbname.clone()))
        // Stay on the TCP connection the user named, never a local socket the server reports.
        .prefer_socket(false);
    let fail = |reason: String| DbError::Connect {
        name: c.name.clone(),
        reason,
    };
    tokio::time::timeout(Duration::from_secs(15), Conn::new(opts))
        .await
        .map_err(|_| fail("no answer in 15 s".to_owned()))?
        .map_err(|e| fail(describe_error(&e)))
}

/// The server's own message when there is one (`Access denied for user ...`).
fn describe_error(e: &Error) -> String {
    match e {
        Error::Server(s) => format!("ERROR {} ({}): {}", s.code, s.state, s.message),
        other => other.to_string(),
    }
}

fn engine(secs: u64) -> impl Fn(Error) -> DbError {
    move |e| match &e {
        Error::Server(s) if TIMED_OUT.contains(&s.code) => DbError::Timeout { secs },
        _ => DbError::Engine(describe_error(&e)),
    }
}

/// Stops the statement running on one connection, from another: `KILL QUERY` needs only the
/// connection's id and the same user.
struct Killer {
    opts: Opts,
    id: u32,
}

impl Killer {
    fn of(conn: &Conn) -> Killer {
        Killer {
            opts: conn.opts().clone(),
            id: conn.id(),
        }
    }

    async fn kill(&self) {
        let killed = async {
            let mut conn = Conn::new(self.opts.clone()).await?;
            conn.query_drop(format!("KILL QUERY {}", self.id)).await?;
            conn.disconnect().await
        };
        match tokio::time::timeout(Duration::from_secs(10), killed).await {
            Ok(Ok(())) => {}
            Ok(Err(e)) => tracing::debug!("KILL QUERY {} failed: {}", self.id, describe_error(&e)),
            Err(_) => tracing::debug!("KILL QUERY {} had no answer in 10 s", self.id),
        }
    }
}

/// Runs `work`, killing its statement in the server when `cancel` fires or the deadline (a
/// little after the server's own timeout) passes.
async fn guarded<T>(
    killer: &Killer,
    timeout: Duration,
    cancel: &CancellationToken,
    work: impl Future<Output = Result<T, DbError>>,
) -> Result<T, DbError> {
    tokio::select! {
        r = work => r,
        () = cancel.cancelled() => {
            killer.kill().await;
            Err(DbError::Cancelled)
        }
        () = tokio::time::sleep(timeout + Duration::from_secs(2)) => {
            killer.kill().await;
            Err(DbError::Timeout { secs: timeout.as_secs() })
        }
    }
}

/// Sets the statement timeout and starts a transaction: for reads a read-only XA transaction
/// whose id the statement cannot know (so it cannot `XA END` and commit it).
async fn begin(conn: &mut Conn, timeout: Duration, read_only: bool) -> Result<(), DbError> {
    let secs = timeout.as_secs();
    match conn
        .query_drop(format!(
            "SET SESSION max_statement_time = {}",
            timeout.as_secs_f64()
        ))
        .await
    {
        Ok(()) => {}
        Err(Error::Server(s)) if s.code == UNKNOWN_VARIABLE => conn
            .query_drop(format!(
                "SET SESSION max_execution_time = {}",
                timeout.as_millis()
            ))
            .await
            .map_err(engine(secs))?,
        Err(e) => return Err(engine(secs)(e)),
    }
    let start = if read_only {
        // The guard reads strings as this mode makes the server read them (a read cannot SET).
        let mode: Option<String> = conn
            .query_first("SELECT @@SESSION.sql_mode")
            .await
            .map_err(engine(secs))?;
        conn.query_drop(format!(
            "SET SESSION sql_mode = '{}'",
            read_mode(mode.as_deref().unwrap_or_default())
        ))
        .await
        .map_err(engine(secs))?;
        // REPEATABLE READ reads a snapshot without locks (SERIALIZABLE would lock every row
        // read against other sessions' writes).
        conn.query_drop("SET SESSION TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
            .await
            .map_err(engine(secs))?;
        format!("XA START 'cairn-{}'", uuid::Uuid::new_v4().simple())
    } else {
        "START TRANSACTION".to_owned()
    };
    conn.query_drop(start).await.map_err(engine(secs))
}

/// The session's `sql_mode` `current` without [`LEXER_MODES`] (and without anything that is
/// not a mode's name, so that it can be quoted as is).
fn read_mode(current: &str) -> String {
    current
        .split(',')
        .filter(|m| {
            !m.is_empty()
                && !LEXER_MODES.contains(m)
                && m.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
        })
        .collect::<Vec<_>>()
        .join(",")
}

/// One value as fetched: text, or the size of bytes that are not text.
fn cell(value: Option<&Value>) -> Cell {
    match value {
        None | Some(Value::NULL) => Cell::Null,
        Some(Value::Bytes(b)) => match std::str::from_utf8(b) {
            Ok(t) => Cell::Text(t.to_owned()),
            Err(_) => Cell::Bytes(b.len()),
        },
        // The text protocol sends everything as bytes; the binary one is only used below for
        // catalog queries that cast to text.
        Some(other) => Cell::Text(other.as_sql(true).trim_matches('\'').to_owned()),
    }
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
    let mut conn = connect(c, password).await?;
    let killer = Killer::of(&conn);
    let secs = c.timeout.as_secs();
    let work = async {
        begin(&mut conn, c.timeout, true).await?;
        // The server parses it as one prepared statement: several statements are refused.
        let statement = conn.prep(sql).await.map_err(engine(secs))?;
        conn.close(statement).await.map_err(engine(secs))?;
        let mut result = conn.query_iter(sql).await.map_err(engine(secs))?;
        let mut table = Table {
            columns: result
                .columns()
                .map(|cs| cs.iter().map(|c| c.name_str().into_owned()).collect())
                .unwrap_or_default(),
            ..Table::default()
        };
        while let Some(row) = result.next().await.map_err(engine(secs))? {
            if table.rows.len() == limits.max_rows {
                table.more = true;
                break;
            }
            table
                .rows
                .push((0..row.len()).map(|i| cell(row.as_ref(i))).collect());
        }
        Ok(table)
    };
    let table = guarded(&killer, c.timeout, cancel, work).await?;
    if table.more {
        // Stop the server producing the rest of a large result before the connection drains it.
        killer.kill().await;
    }
    Ok(table)
}

/// One statement in a transaction; the rows it changed. Rolled back on any error (a DDL
/// statement commits implicitly in MariaDB and MySQL: that is the engine's rule).
pub(crate) async fn write(
    c: &Connection,
    password: Option<String>,
    sql: &str,
    cancel: &CancellationToken,
) -> Result<u64, DbError> {
    let mut conn = connect(c, password).await?;
    let killer = Killer::of(&conn);
    let secs = c.timeout.as_secs();
    let work = async {
        begin(&mut conn, c.timeout, false).await?;
        let run = async {
            let statement = conn.prep(sql).await.map_err(engine(secs))?;
            conn.exec_drop(&statement, ()).await.map_err(engine(secs))?;
            let changed = conn.affected_rows();
            conn.close(statement).await.map_err(engine(secs))?;
            Ok(changed)
        }
        .await;
        match run {
            Ok(changed) => {
                conn.query_drop("COMMIT").await.map_err(engine(secs))?;
                Ok(changed)
            }
            Err(e) => {
                let _ = conn.query_drop("ROLLBACK").await;
                Err(e)
            }
        }
    };
    // On a timeout or cancel the connection is dropped with the transaction open: the server
    // rolls back.
    guarded(&killer, c.timeout, cancel, work).await
}

pub(crate) const TABLES: &str = "SELECT table_schema AS `schema`, table_name AS name, table_type AS type \
     FROM information_schema.tables \
     WHERE table_schema NOT IN ('mysql', 'information_schema', 'performance_schema', 'sys') \
     ORDER BY 1, 2";

/// Rows of a catalog query as text (NULL as empty).
async fn catalog(
    conn: &mut Conn,
    secs: u64,
    sql: &str,
    schema: &str,
    name: &str,
) -> Result<Vec<Vec<String>>, DbError> {
    let rows: Vec<Row> = conn.exec(sql, (schema, name)).await.map_err(engine(secs))?;
    Ok(rows
        .iter()
        .map(|r| {
            (0..r.len())
                .map(|i| match cell(r.as_ref(i)) {
                    Cell::Text(t) => t,
                    Cell::Null | Cell::Bytes(_) => String::new(),
                })
                .collect()
        })
        .collect())
}

/// Columns, indexes, foreign keys and the row estimate of `table` (`database.table`, or a
/// table of the connection's database).
pub(crate) async fn describe(
    c: &Connection,
    password: Option<String>,
    table: &str,
    cancel: &CancellationToken,
) -> Result<Description, DbError> {
    let mut conn = connect(c, password).await?;
    let killer = Killer::of(&conn);
    let secs = c.timeout.as_secs();
    let work = async {
        begin(&mut conn, c.timeout, true).await?;
        let (schema, name) = match table.split_once('.') {
            Some((s, n)) => (s.to_owned(), n.to_owned()),
            None => {
                let current: Option<Option<String>> = conn
                    .query_first("SELECT DATABASE()")
                    .await
                    .map_err(engine(secs))?;
                let Some(Some(schema)) = current else {
                    return Err(DbError::Engine(format!(
                        "no database chosen; name the table as `database.{table}`"
                    )));
                };
                (schema, table.to_owned())
            }
        };
        let (schema, name) = (schema.as_str(), name.as_str());
        let found = catalog(
            &mut conn,
            secs,
            "SELECT CAST(table_rows AS CHAR), table_type FROM information_schema.tables \
             WHERE table_schema = ? AND table_name = ?",
            schema,
            name,
        )
        .await?;
        let Some(found) = found.first() else {
            return Err(DbError::Engine(format!(
                "no table or view `{schema}.{name}`; db_tables lists them"
            )));
        };
        let rows = match found[0].parse::<u64>() {
            Ok(n) if found[1] != "VIEW" => format!("about {n} rows (the engine's estimate)"),
            _ => "row count unknown (a view; count(*) to know)".to_owned(),
        };
        let columns = catalog(
            &mut conn,
            secs,
            "SELECT column_name, column_type, is_nullable, CAST(column_default AS CHAR), \
             column_key, extra FROM information_schema.columns \
             WHERE table_schema = ? AND table_name = ? ORDER BY ordinal_position",
            schema,
            name,
        )
        .await?
        .into_iter()
        .map(|r| Column {
            name: r[0].clone(),
            data_type: r[1].clone(),
            nullable: r[2] == "YES",
            default: if r[3].is_empty() && r[5].contains("auto_increment") {
                "auto_increment".to_owned()
            } else if r[3] == "NULL" {
                // MariaDB shows "no default" of a nullable column as the word NULL.
                String::new()
            } else {
                r[3].clone()
            },
            primary_key: r[4] == "PRI",
        })
        .collect();
        let indexes = catalog(
            &mut conn,
            secs,
            "SELECT index_name, MIN(non_unique), \
             GROUP_CONCAT(column_name ORDER BY seq_in_index SEPARATOR ', ') \
             FROM information_schema.statistics WHERE table_schema = ? AND table_name = ? \
             GROUP BY index_name ORDER BY index_name",
            schema,
            name,
        )
        .await?
        .into_iter()
        .map(|r| {
            let unique = if r[1] == "0" { " (unique)" } else { "" };
            format!("{}{unique}: {}", r[0], r[2])
        })
        .collect();
        let foreign_keys = catalog(
            &mut conn,
            secs,
            "SELECT constraint_name, \
             GROUP_CONCAT(column_name ORDER BY ordinal_position SEPARATOR ', '), \
             referenced_table_schema, referenced_table_name, \
             GROUP_CONCAT(referenced_column_name ORDER BY ordinal_position SEPARATOR ', ') \
             FROM information_schema.key_column_usage \
             WHERE table_schema = ? AND table_name = ? AND referenced_table_name IS NOT NULL \
             GROUP BY constraint_name, referenced_table_schema, referenced_table_name \
             ORDER BY constraint_name",
            schema,
            name,
        )
        .await?
        .into_iter()
        .map(|r| {
            format!(
                "{}: FOREIGN KEY ({}) REFERENCES {}.{}({})",
                r[0], r[1], r[2], r[3], r[4]
            )
        })
        .collect();
        Ok(Description {
            table: format!("{schema}.{name}"),
            rows,
            columns,
            indexes,
            foreign_keys,
        })
    };
    guarded(&killer, c.timeout, cancel, work).await
}

/// Inserts `csv`'s records into `table` (quoted already) in one transaction, as text the
/// server converts to each column's type; the rows added. Rolled back on any error, which names
/// the CSV line. (`create` commits the new table first: DDL commits in MariaDB and MySQL.)
pub(crate) async fn import(
    c: &Connection,
    password: Option<String>,
    table: &str,
    csv: &crate::import::Csv,
    create: bool,
    cancel: &CancellationToken,
) -> Result<u64, DbError> {
    let mut conn = connect(c, password).await?;
    let killer = Killer::of(&conn);
    let secs = c.timeout.as_secs();
    let quoted: Vec<String> = csv
        .columns
        .iter()
        .map(|c| format!("`{}`", c.replace('`', "``")))
        .collect();
    let work = async {
        if create {
            let defs: Vec<String> = quoted.iter().map(|c| format!("{c} TEXT")).collect();
            conn.query_drop(format!("CREATE TABLE {table} ({})", defs.join(", ")))
                .await
                .map_err(engine(secs))?;
        }
        begin(&mut conn, c.timeout, false).await?;
        let marks = vec!["?"; quoted.len()].join(", ");
        let run = async {
            let statement = conn
                .prep(format!(
                    "INSERT INTO {table} ({}) VALUES ({marks})",
                    quoted.join(", ")
                ))
                .await
                .map_err(engine(secs))?;
            for (i, record) in csv.records.iter().enumerate() {
                let params: Vec<Value> = record.iter().map(|v| Value::from(v.as_str())).collect();
                conn.exec_drop(&statement, params)
                    .await
                    .map_err(|e| DbError::Engine(format!("line {}: {}", i + 2, engine(secs)(e))))?;
            }
            Ok(csv.records.len() as u64)
        }
        .await;
        match run {
            Ok(added) => {
                conn.query_drop("COMMIT").await.map_err(engine(secs))?;
                Ok(added)
            }
            Err(e) => {
                let _ = conn.query_drop("ROLLBACK").await;
                Err(e)
            }
        }
    };
    guarded(&killer, c.timeout, cancel, work).await
}

#[cfg(test)]
mod tests {
    #[test]
    fn reads_drop_the_modes_that_change_how_strings_are_read() {
        assert_eq!(
            super::read_mode(
                "REAL_AS_FLOAT,PIPES_AS_CONCAT,ANSI_QUOTES,IGNORE_SPACE,ANSI,NO_BACKSLASH_ESCAPES"
            ),
            "REAL_AS_FLOAT,PIPES_AS_CONCAT,IGNORE_SPACE"
        );
        assert_eq!(
            super::read_mode("STRICT_TRANS_TABLES,ORACLE,x'y"),
            "STRICT_TRANS_TABLES"
        );
        assert_eq!(super::read_mode(""), "");
    }
}
