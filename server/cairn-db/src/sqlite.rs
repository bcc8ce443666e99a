//! SQLite files in the workspace: opened through the workspace scope (resolved, so a symlink
//! leading outside is refused and one inside opens its target; permission checked; the final
//! name is opened with `SQLITE_OPEN_NOFOLLOW`), read-only with `query_only` for reads, one statement per
//! call, interrupted in the engine on timeout or cancel. The authorizer in [`guard`] refuses
//! what acts beyond the one file (ATTACH, VACUUM INTO, extension loading, pragmas in a read).

mod guard;

use std::sync::Arc;
use std::time::Duration;

use cairn_workspace::{Operation, Workspace};
use rusqlite::OpenFlags;
use rusqlite::limits::Limit;
use rusqlite::types::ValueRef;
use tokio_util::sync::CancellationToken;

use crate::error::DbError;
use crate::table::{Cell, Column, Description, Limits, Table};

/// Opens `path` in the workspace and runs `f` on a blocking thread, interrupting the engine when
/// `timeout` passes or `cancel` fires.
pub(crate) async fn run<T: Send + 'static>(
    name: &str,
    ws: Option<Arc<Workspace>>,
    path: &str,
    write: bool,
    timeout: Duration,
    cancel: &CancellationToken,
    f: impl FnOnce(&mut rusqlite::Connection) -> Result<T, DbError> + Send + 'static,
) -> Result<T, DbError> {
    let refused = |reason: String| DbError::Refused {
        name: name.to_owned(),
        reason,
    };
    let ws = ws.ok_or_else(|| {
        refused("a SQLite database is a file in the workspace; open a folder first".to_owned())
    })?;
    let (path, name) = (path.to_owned(), name.to_owned());
    let (handle_tx, handle_rx) = tokio::sync::oneshot::channel();
    let mut task = tokio::task::spawn_blocking(move || {
        let (mut conn, denied) = open(&ws, &name, &path, write)?;
        let _ = handle_tx.send(conn.get_interrupt_handle());
        let result = f(&mut conn);
        // A statement the authorizer denied failed with "not authorized": say what and why.
        match (result, guard::take(&denied)) {
            (Err(_), Some(d)) if write => Err(DbError::Refused {
                name,
                reason: format!("{} is refused, because {}; nothing was run", d.what, d.why),
            }),
            (Err(_), Some(d)) => Err(DbError::ReadOnlyRefused {
                what: d.what,
                why: d.why,
            }),
            (result, _) => result,
        }
    });
    let interrupt = handle_rx.await.ok();
    let joined = |r: Result<Result<T, DbError>, tokio::task::JoinError>| {
        r.unwrap_or_else(|e| Err(DbError::Engine(format!("the SQLite call failed: {e}"))))
    };
    tokio::select! {
        r = &mut task => joined(r),
        () = tokio::time::sleep(timeout) => {
            if let Some(h) = &interrupt { h.interrupt(); }
            let _ = task.await;
            Err(DbError::Timeout { secs: timeout.as_secs() })
        }
        () = cancel.cancelled() => {
            if let Some(h) = &interrupt { h.interrupt(); }
            let _ = task.await;
            Err(DbError::Cancelled)
        }
    }
}

/// The largest string or blob a read may make or read (SQLite's own default is 1 GB).
const READ_MAX_VALUE_BYTES: i32 = 64 * 1024 * 1024;

fn open(
    ws: &Workspace,
    name: &str,
    path: &str,
    write: bool,
) -> Result<(rusqlite::Connection, guard::Slot), DbError> {
    let refused = |reason: String| DbError::Refused {
        name: name.to_owned(),
        reason,
    };
    let resolved = ws.resolve(path).map_err(|e| refused(e.to_string()))?;
    let op = if write {
        Operation::Write
    } else {
        Operation::Read
    };
    ws.check(&resolved, op)
        .map_err(|e| refused(e.to_string()))?;
    if !resolved.as_path().is_file() {
        return Err(refused(format!(
            "{} is not a file; cairn does not create databases",
            resolved.display_path()
        )));
    }
    // No URI parsing (a path is a path), no symlink followed, never created.
    let mut flags = OpenFlags::SQLITE_OPEN_NO_MUTEX | OpenFlags::SQLITE_OPEN_NOFOLLOW;
    flags |= if write {
        OpenFlags::SQLITE_OPEN_READ_WRITE
    } else {
        OpenFlags::SQLITE_OPEN_READ_ONLY
    };
    let conn = rusqlite::Connection::open_with_flags(resolved.as_path(), flags)
        .map_err(|e| refused(format!("cannot open {}: {e}", resolved.display_path())))?;
    if !write {
        conn.pragma_update(None, "query_only", true)
            .map_err(engine)?;
        // A read could otherwise make one value of up to 1 GB in cairn's memory
        // (`randomblob`, `zeroblob`, `replace`); no result shows that much of a cell anyway.
        conn.set_limit(Limit::SQLITE_LIMIT_LENGTH, READ_MAX_VALUE_BYTES)
            .map_err(engine)?;
    }
    // No second file, whatever the authorizer lets through (VACUUM INTO attaches its target).
    conn.set_limit(Limit::SQLITE_LIMIT_ATTACHED, 0)
        .map_err(engine)?;
    // After our own pragma: from here on, every statement goes through the authorizer.
    let denied = guard::install(&conn, write);
    // A lock held by another writer is waited for a little, then reported.
    conn.busy_timeout(Duration::from_secs(5)).map_err(engine)?;
    Ok((conn, denied))
}

pub(crate) fn engine(e: rusqlite::Error) -> DbError {
    match e {
        rusqlite::Error::SqliteFailure(f, _)
            if f.code == rusqlite::ErrorCode::OperationInterrupted =>
        {
            DbError::Cancelled
        }
        rusqlite::Error::MultipleStatement => {
            DbError::Engine("one statement per call, please: the SQL holds several".to_owned())
        }
        other => DbError::Engine(other.to_string()),
    }
}

/// One statement's rows, at most `limits.max_rows`.
pub(crate) fn read(
    conn: &rusqlite::Connection,
    sql: &str,
    params: &[&dyn rusqlite::ToSql],
    limits: &Limits,
) -> Result<Table, DbError> {
    let mut stmt = conn.prepare(sql).map_err(engine)?;
    let columns: Vec<String> = stmt.column_names().into_iter().map(str::to_owned).collect();
    let n = columns.len();
    let mut rows = stmt.query(params).map_err(engine)?;
    let mut table = Table {
        columns,
        ..Table::default()
    };
    while let Some(row) = rows.next().map_err(engine)? {
        if table.rows.len() == limits.max_rows {
            table.more = true;
            break;
        }
        let mut cells = Vec::with_capacity(n);
        for i in 0..n {
            cells.push(match row.get_ref(i).map_err(engine)? {
                ValueRef::Null => Cell::Null,
                ValueRef::Integer(v) => Cell::Text(v.to_string()),
                ValueRef::Real(v) => Cell::Text(v.to_string()),
                ValueRef::Text(t) => Cell::Text(String::from_utf8_lossy(t).into_owned()),
                ValueRef::Blob(b) => Cell::Bytes(b.len()),
            });
        }
        table.rows.push(cells);
    }
    Ok(table)
}

/// One statement in a transaction; the rows it changed.
pub(crate) fn write(conn: &mut rusqlite::Connection, sql: &str) -> Result<usize, DbError> {
    let tx = conn.transaction().map_err(engine)?;
    let changed = tx.execute(sql, []).map_err(engine)?;
    tx.commit().map_err(engine)?;
    Ok(changed)
}

pub(crate) const TABLES: &str = "SELECT name, type FROM sqlite_schema \
     WHERE type IN ('table', 'view') AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' ORDER BY name";

/// Columns, indexes, foreign keys and the row count of `table`.
pub(crate) fn describe(conn: &rusqlite::Connection, table: &str) -> Result<Description, DbError> {
    let found: i64 = conn
        .query_row(
            "SELECT count(*) FROM sqlite_schema WHERE type IN ('table', 'view') AND name = ?1",
            [table],
            |r| r.get(0),
        )
        .map_err(engine)?;
    if found == 0 {
        return Err(DbError::Engine(format!(
            "no table or view `{table}`; db_tables lists them"
        )));
    }
    let text = |conn: &rusqlite::Connection, sql: &str| -> Result<Vec<Vec<String>>, DbError> {
        let t = read(
            conn,
            sql,
            &[&table],
            &Limits {
                max_rows: 10_000,
                ..Limits::default()
            },
        )?;
        Ok(t.rows
            .into_iter()
            .map(|r| {
                r.into_iter()
                    .map(|c| match c {
                        Cell::Text(t) => t,
                        Cell::Null | Cell::Bytes(_) => String::new(),
                    })
                    .collect()
            })
            .collect())
    };
    let columns = text(
        conn,
        "SELECT name, type, \"notnull\", coalesce(dflt_value, ''), pk FROM pragma_table_info(?1)",
    )?
    .into_iter()
    .map(|r| Column {
        name: r[0].clone(),
        data_type: r[1].clone(),
        nullable: r[2] == "0",
        default: r[3].clone(),
        primary_key: r[4] != "0",
    })
    .collect();
    let mut indexes = Vec::new();
    for r in text(
        conn,
        "SELECT name, \"unique\" FROM pragma_index_list(?1) ORDER BY name",
    )? {
        let cols: Vec<String> = read(
            conn,
            "SELECT name FROM pragma_index_info(?1) ORDER BY seqno",
            &[&r[0]],
            &Limits::default(),
        )?
        .rows
        .into_iter()
        .filter_map(|c| match c.into_iter().next() {
            Some(Cell::Text(t)) => Some(t),
            _ => None,
        })
        .collect();
        let unique = if r[1] == "1" { " (unique)" } else { "" };
        indexes.push(format!("{}{unique}: {}", r[0], cols.join(", ")));
    }
    let foreign_keys = text(
        conn,
        "SELECT \"from\", \"table\", coalesce(\"to\", '') FROM pragma_foreign_key_list(?1) ORDER BY id, seq",
    )?
    .into_iter()
    .map(|r| format!("{} → {}({})", r[0], r[1], r[2]))
    .collect();
    let quoted = format!("\"{}\"", table.replace('"', "\"\""));
    let rows: i64 = conn
        .query_row(&format!("SELECT count(*) FROM {quoted}"), [], |r| r.get(0))
        .map_err(engine)?;
    Ok(Description {
        table: table.to_owned(),
        rows: format!("{rows} rows"),
        columns,
        indexes,
        foreign_keys,
    })
}

/// Inserts `csv`'s records into `table` (quoted already) in one transaction.
pub(crate) fn import(
    conn: &mut rusqlite::Connection,
    table: &str,
    csv: &crate::import::Csv,
    create: bool,
) -> Result<u64, DbError> {
    let quote = |c: &String| format!("\"{}\"", c.replace('"', "\"\""));
    let columns: Vec<String> = csv.columns.iter().map(quote).collect();
    let tx = conn.transaction().map_err(engine)?;
    if create {
        let defs: Vec<String> = columns.iter().map(|c| format!("{c} TEXT")).collect();
        tx.execute(&format!("CREATE TABLE {table} ({})", defs.join(", ")), [])
            .map_err(engine)?;
    }
    let marks: Vec<String> = (1..=columns.len()).map(|i| format!("?{i}")).collect();
    {
        let mut insert = tx
            .prepare(&format!(
                "INSERT INTO {table} ({}) VALUES ({})",
                columns.join(", "),
                marks.join(", ")
            ))
            .map_err(engine)?;
        for (i, record) in csv.records.iter().enumerate() {
            insert
                .execute(rusqlite::params_from_iter(record.iter()))
                .map_err(|e| DbError::Engine(format!("line {}: {}", i + 2, engine(e))))?;
        }
    }
    tx.commit().map_err(engine)?;
    Ok(csv.records.len() as u64)
}
