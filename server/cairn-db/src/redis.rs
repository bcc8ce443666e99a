//! Redis: a connection per call, commands that stay bounded whatever the data (SCAN with a
//! cap, never KEYS; ranges and cursors capped per type), a response timeout and the call
//! dropped when the run is cancelled (a Redis command is short; there is no statement to kill).
//!
//! No tool takes a command: each sends only the fixed commands below, and a key, value or
//! pattern goes as one RESP bulk string (length-prefixed), so CR/LF or a whole command in it is
//! data. A string is read by its head (`STRLEN`, `GETRANGE` to the byte cap), never whole;
//! other types by their first elements, fewer when they are huge ([`ELEMENT_BUDGET`]).

use std::time::Duration;

use ::redis::aio::MultiplexedConnection;
use ::redis::{
    AsyncConnectionConfig, Client, ConnectionAddr, IntoConnectionInfo, RedisConnectionInfo, Value,
};
use tokio_util::sync::CancellationToken;

use crate::conn::{Connection, Target};
use crate::error::DbError;
use crate::table::{Cell, Limits, Table};

/// Keys asked of the server per SCAN step.
const SCAN_COUNT: u64 = 500;

/// Bytes of elements one `redis_get` reads, about: Redis has no range read inside a list,
/// hash, set, sorted set or stream element, so a key of huge elements is shown by fewer.
const ELEMENT_BUDGET: u64 = 16 * 1024 * 1024;

/// How many of `key`'s elements fit [`ELEMENT_BUDGET`], at most `cap` and at least one, by the
/// server's estimate (`MEMORY USAGE`, a few sampled elements). Without one (an ACL refusing
/// `MEMORY`, an old server), `cap`.
async fn elements_within_budget(
    conn: &mut MultiplexedConnection,
    key: &str,
    kind: &str,
    cap: usize,
) -> usize {
    let len_cmd = match kind {
        "list" => "LLEN",
        "zset" => "ZCARD",
        "hash" => "HLEN",
        "set" => "SCARD",
        "stream" => "XLEN",
        _ => return cap,
    };
    let Ok(len) = ::redis::cmd(len_cmd)
        .arg(key)
        .query_async::<u64>(conn)
        .await
    else {
        return cap;
    };
    let usage = ::redis::cmd("MEMORY")
        .arg("USAGE")
        .arg(key)
        .query_async::<Option<u64>>(conn)
        .await;
    match usage {
        Ok(Some(bytes)) if len > 0 && bytes > ELEMENT_BUDGET => {
            let each = (bytes / len).max(1);
            usize::try_from(ELEMENT_BUDGET / each)
                .unwrap_or(cap)
                .max(1)
                .min(cap)
        }
        _ => cap,
    }
}

async fn connect(
    c: &Connection,
    password: Option<String>,
) -> Result<MultiplexedConnection, DbError> {
    let Target::Redis {
        host,
        port,
        user,
        db,
    } = &c.target
    else {
        return Err(DbError::Engine("not a Redis connection".to_owned()));
    };
    let fail = |reason: String| DbError::Connect {
        name: c.name.clone(),
        reason,
    };
    let mut settings = RedisConnectionInfo::default().set_db(*db);
    if !user.is_empty() {
        settings = settings.set_username(user);
    }
    if let Some(p) = password {
        settings = settings.set_password(p);
    }
    let info = ConnectionAddr::Tcp(host.clone(), *port)
        .into_connection_info()
        .map_err(|e| fail(e.to_string()))?
        .set_redis_settings(settings);
    let client = Client::open(info).map_err(|e| fail(e.to_string()))?;
    let config = AsyncConnectionConfig::new()
        .set_connection_timeout(Some(Duration::from_secs(10)))
        .set_response_timeout(Some(c.timeout));
    tokio::time::timeout(
        Duration::from_secs(15),
        client.get_multiplexed_async_connection_with_config(&config),
    )
    .await
    .map_err(|_| fail("no answer in 15 s".to_owned()))?
    .map_err(|e| fail(e.to_string()))
}

fn engine(secs: u64) -> impl Fn(::redis::RedisError) -> DbError {
    move |e| {
        if e.is_timeout() {
            DbError::Timeout { secs }
        } else {
            DbError::Engine(e.to_string())
        }
    }
}

/// Connects and runs `work`, giving up when `cancel` fires or the timeout passes.
async fn guarded<T>(
    c: &Connection,
    password: Option<String>,
    cancel: &CancellationToken,
    work: impl AsyncFnOnce(&mut MultiplexedConnection) -> Result<T, ::redis::RedisError>,
) -> Result<T, DbError> {
    let secs = c.timeout.as_secs();
    let mut conn = connect(c, password).await?;
    tokio::select! {
        r = work(&mut conn) => r.map_err(engine(secs)),
        () = cancel.cancelled() => Err(DbError::Cancelled),
        () = tokio::time::sleep(c.timeout) => Err(DbError::Timeout { secs }),
    }
}

/// A value as a table cell: text, a number, or the size of bytes that are not text.
fn cell(v: &Value) -> Cell {
    match v {
        Value::Nil => Cell::Null,
        Value::BulkString(b) => match std::str::from_utf8(b) {
            Ok(t) => Cell::Text(t.to_owned()),
            Err(_) => Cell::Bytes(b.len()),
        },
        Value::SimpleString(s) => Cell::Text(s.clone()),
        Value::Int(i) => Cell::Text(i.to_string()),
        Value::Double(d) => Cell::Text(d.to_string()),
        Value::Okay => Cell::Text("OK".to_owned()),
        Value::Array(items) | Value::Set(items) => Cell::Text(
            items
                .iter()
                .map(|i| text(&cell(i)))
                .collect::<Vec<_>>()
                .join(", "),
        ),
        other => Cell::Text(format!("{other:?}")),
    }
}

fn text(c: &Cell) -> String {
    match c {
        Cell::Null => "nil".to_owned(),
        Cell::Text(t) => t.clone(),
        Cell::Bytes(n) => format!("<{n} bytes>"),
    }
}

/// A key's name as shown: its text, or its bytes escaped.
pub(crate) fn key_name(key: &[u8]) -> String {
    match std::str::from_utf8(key) {
        Ok(t) => t.to_owned(),
        Err(_) => key.escape_ascii().to_string(),
    }
}

/// A PTTL answer in words.
fn ttl(ms: i64) -> String {
    match ms {
        -1 => "none".to_owned(),
        -2 => "gone".to_owned(),
        ms => format!("{} s", (ms + 999) / 1000),
    }
}

/// Keys matching `pattern` (SCAN, so the server never blocks), at most `cap`, with each key's
/// type and time to live; `more` when the scan stopped at the cap.
pub(crate) async fn keys(
    c: &Connection,
    password: Option<String>,
    pattern: &str,
    cap: usize,
    cancel: &CancellationToken,
) -> Result<Table, DbError> {
    guarded(c, password, cancel, async |conn| {
        let mut found: Vec<Vec<u8>> = Vec::new();
        let mut cursor = 0u64;
        let mut more = false;
        loop {
            let (next, batch): (u64, Vec<Vec<u8>>) = ::redis::cmd("SCAN")
                .arg(cursor)
                .arg("MATCH")
                .arg(pattern)
                .arg("COUNT")
                .arg(SCAN_COUNT)
                .query_async(conn)
                .await?;
            for key in batch {
                if found.len() == cap {
                    more = true;
                    break;
                }
                found.push(key);
            }
            cursor = next;
            if more || cursor == 0 {
                break;
            }
        }
        // SCAN may return a key twice; the table shows it once.
        let mut seen = std::collections::HashSet::new();
        found.retain(|k| seen.insert(k.clone()));
        found.sort();
        let mut pipe = ::redis::pipe();
        for key in &found {
            pipe.cmd("TYPE").arg(key).cmd("PTTL").arg(key);
        }
        let answers: Vec<Value> = if found.is_empty() {
            Vec::new()
        } else {
            pipe.query_async(conn).await?
        };
        let rows = found
            .iter()
            .zip(answers.chunks(2))
            .map(|(key, a)| {
                let ms = match a.get(1) {
                    Some(Value::Int(ms)) => *ms,
                    _ => -2,
                };
                vec![
                    Cell::Text(key_name(key)),
                    a.first().map_or(Cell::Null, cell),
                    Cell::Text(ttl(ms)),
                ]
            })
            .collect();
        Ok(Table {
            columns: vec!["key".into(), "type".into(), "ttl".into()],
            rows,
            more,
        })
    })
    .await
}

/// One key's value, whatever its type, at most `limits.max_rows` elements; and a heading naming
/// the key, its type, size and time to live. `None` when there is no such key.
pub(crate) async fn get(
    c: &Connection,
    password: Option<String>,
    key: &str,
    limits: &Limits,
    cancel: &CancellationToken,
) -> Result<Option<(String, Table)>, DbError> {
    let cap = limits.max_rows;
    guarded(c, password, cancel, async |conn| {
        let (kind, ms): (String, i64) = ::redis::pipe()
            .cmd("TYPE")
            .arg(key)
            .cmd("PTTL")
            .arg(key)
            .query_async(conn)
            .await?;
        let column = |names: &[&str]| names.iter().map(|n| (*n).to_owned()).collect();
        let cap = elements_within_budget(conn, key, &kind, cap).await;
        let (size, columns, rows): (i64, Vec<String>, Vec<Vec<Cell>>) = match kind.as_str() {
            "none" => return Ok(None),
            "string" => {
                let len: i64 = ::redis::cmd("STRLEN").arg(key).query_async(conn).await?;
                // Only the head of a huge value travels; the cell cap cuts it further.
                let head: Vec<u8> = ::redis::cmd("GETRANGE")
                    .arg(key)
                    .arg(0)
                    .arg(limits.max_bytes.saturating_sub(1))
                    .query_async(conn)
                    .await?;
                let value = match std::str::from_utf8(&head) {
                    Ok(t) => Cell::Text(t.to_owned()),
                    // Text cut inside a character by the range: keep the whole characters.
                    Err(e) if e.error_len().is_none() && head.len() as i64 == limits.max_bytes as i64 => {
                        Cell::Text(String::from_utf8_lossy(&head[..e.valid_up_to()]).into_owned())
                    }
                    Err(_) => Cell::Bytes(usize::try_from(len).unwrap_or(0)),
                };
                (len, column(&["value"]), vec![vec![value]])
            }
            "list" => {
                let (len, items): (i64, Vec<Value>) = ::redis::pipe()
                    .cmd("LLEN")
                    .arg(key)
                    .cmd("LRANGE")
                    .arg(key)
                    .arg(0)
                    .arg(cap as i64 - 1)
                    .query_async(conn)
                    .await?;
                let rows = items
                    .iter()
                    .enumerate()
                    .map(|(i, v)| vec![Cell::Text(i.to_string()), cell(v)])
                    .collect();
                (len, column(&["index", "value"]), rows)
            }
            "zset" => {
                let (len, items): (i64, Vec<Value>) = ::redis::pipe()
                    .cmd("ZCARD")
                    .arg(key)
                    .cmd("ZRANGE")
                    .arg(key)
                    .arg(0)
                    .arg(cap as i64 - 1)
                    .arg("WITHSCORES")
                    .query_async(conn)
                    .await?;
                let rows = items
                    .chunks(2)
                    .map(|p| p.iter().map(cell).collect())
                    .collect();
                (len, column(&["member", "score"]), rows)
            }
            "hash" | "set" => {
                let (len_cmd, scan_cmd, names): (_, _, &[&str]) = if kind == "hash" {
                    ("HLEN", "HSCAN", &["field", "value"])
                } else {
                    ("SCARD", "SSCAN", &["member"])
                };
                let len: i64 = ::redis::cmd(len_cmd).arg(key).query_async(conn).await?;
                let mut items: Vec<Value> = Vec::new();
                let mut cursor = 0u64;
                let wanted = cap * names.len();
                loop {
                    let (next, batch): (u64, Vec<Value>) = ::redis::cmd(scan_cmd)
                        .arg(key)
                        .arg(cursor)
                        .arg("COUNT")
                        // A hint the server follows for large encodings: no more than wanted.
                        .arg(SCAN_COUNT.min(cap as u64).max(1))
                        .query_async(conn)
                        .await?;
                    items.extend(batch);
                    cursor = next;
                    if cursor == 0 || items.len() >= wanted {
                        break;
                    }
                }
                items.truncate(wanted);
                let mut rows: Vec<Vec<Cell>> = items
                    .chunks(names.len())
                    .map(|p| p.iter().map(cell).collect())
                    .collect();
                rows.sort_by_key(|r| r.first().map(text));
                (len, column(names), rows)
            }
            "stream" => {
                let (len, entries): (i64, Vec<(String, Vec<Value>)>) = ::redis::pipe()
                    .cmd("XLEN")
                    .arg(key)
                    .cmd("XRANGE")
                    .arg(key)
                    .arg("-")
                    .arg("+")
                    .arg("COUNT")
                    .arg(cap)
                    .query_async(conn)
                    .await?;
                let rows = entries
                    .iter()
                    .map(|(id, fields)| {
                        let fields = fields
                            .chunks(2)
                            .map(|p| p.iter().map(|v| text(&cell(v))).collect::<Vec<_>>().join("="))
                            .collect::<Vec<_>>()
                            .join(", ");
                        vec![Cell::Text(id.clone()), Cell::Text(fields)]
                    })
                    .collect();
                (len, column(&["id", "fields"]), rows)
            }
            other => {
                return Ok(Some((
                    format!("`{key}` is a {other} (a module's type); redis_get reads string, hash, list, set, sorted set and stream values"),
                    Table::default(),
                )));
            }
        };
        let unit = match kind.as_str() {
            "string" => "bytes",
            "hash" => "fields",
            "stream" => "entries",
            _ => "elements",
        };
        let heading = format!("`{key}`: {kind}, {size} {unit}, expires: {}", ttl(ms));
        let more = usize::try_from(size).is_ok_and(|n| n > rows.len()) && kind != "string";
        Ok(Some((
            heading,
            Table {
                columns,
                rows,
                more,
            },
        )))
    })
    .await
}

/// Sets `key` to a string `value`, expiring after `ttl_secs` when given.
pub(crate) async fn set(
    c: &Connection,
    password: Option<String>,
    key: &str,
    value: &str,
    ttl_secs: Option<u64>,
    cancel: &CancellationToken,
) -> Result<(), DbError> {
    guarded(c, password, cancel, async |conn| {
        let mut cmd = ::redis::cmd("SET");
        cmd.arg(key).arg(value);
        if let Some(secs) = ttl_secs {
            cmd.arg("EX").arg(secs);
        }
        cmd.query_async::<()>(conn).await
    })
    .await
}

/// Deletes `keys`; how many existed.
pub(crate) async fn delete(
    c: &Connection,
    password: Option<String>,
    keys: &[String],
    cancel: &CancellationToken,
) -> Result<u64, DbError> {
    guarded(c, password, cancel, async |conn| {
        ::redis::cmd("DEL").arg(keys).query_async(conn).await
    })
    .await
}
