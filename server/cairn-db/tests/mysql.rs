//! The database tools on a real MariaDB server (`scripts/test-databases` starts one; `.ci/run`
//! sets `CAIRN_DB_TESTS=1` and the server's URL and password).

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::time::{Duration, Instant};

use cairn_test_support::gate::gate;
use common::{call, call_with, spec, tools};
use mysql_async::prelude::Queryable;
use serde_json::json;
use tokio_util::sync::CancellationToken;

struct Server {
    url: String,
    password: String,
    /// This test's own tables are `{prefix}_customers` and `{prefix}_orders`.
    prefix: String,
    admin: mysql_async::Conn,
}

/// The server, with this test's customers and orders; `None` when the gate is off.
async fn server(test: &str) -> Option<Server> {
    if !gate(
        "CAIRN_DB_TESTS",
        "and CAIRN_MYSQL_TEST_URL / CAIRN_MYSQL_TEST_PASSWORD (eval \"$(scripts/test-databases)\")",
    ) {
        return None;
    }
    let url = std::env::var("CAIRN_MYSQL_TEST_URL").expect("CAIRN_MYSQL_TEST_URL");
    let password = std::env::var("CAIRN_MYSQL_TEST_PASSWORD").expect("CAIRN_MYSQL_TEST_PASSWORD");
    let opts = mysql_async::Opts::from_url(&url).unwrap();
    let opts = mysql_async::OptsBuilder::from_opts(opts)
        .pass(Some(password.clone()))
        .prefer_socket(false);
    let mut admin = mysql_async::Conn::new(opts).await.unwrap();
    let p = format!("t_{test}");
    admin
        .query_drop(format!(
            "DROP VIEW IF EXISTS {p}_totals; DROP TABLE IF EXISTS {p}_orders, {p}_customers;
             CREATE TABLE {p}_customers (id int PRIMARY KEY, name varchar(50) NOT NULL, note varchar(50) DEFAULT 'new');
             CREATE TABLE {p}_orders (id int AUTO_INCREMENT PRIMARY KEY, customer_id int NOT NULL, total decimal(10,2),
                 CONSTRAINT {p}_fk FOREIGN KEY (customer_id) REFERENCES {p}_customers(id));
             CREATE INDEX {p}_by_customer ON {p}_orders(customer_id);
             INSERT INTO {p}_customers VALUES (1, 'Ada', DEFAULT), (2, 'Grace', DEFAULT);
             INSERT INTO {p}_orders (customer_id, total) SELECT 1 + seq % 2, seq * 1.5 FROM seq_1_to_1000;
             ANALYZE TABLE {p}_orders;
             CREATE VIEW {p}_totals AS SELECT customer_id, sum(total) AS total FROM {p}_orders GROUP BY customer_id;"
        ))
        .await
        .unwrap();
    Some(Server {
        url,
        password,
        prefix: p,
        admin,
    })
}

impl Server {
    fn tools(&self, timeout: u64) -> cairn_toolkit::ToolSet<cairn_db::Db> {
        tools(
            &[spec("my", &self.url, Some("secret:my"), timeout)],
            None,
            &self.password,
        )
    }

    async fn count(&mut self, sql: &str) -> i64 {
        self.admin.query_first(sql).await.unwrap().unwrap()
    }

    /// Statements still running in the server like `like`, other than ours.
    async fn running(&mut self, like: &str) -> i64 {
        self.count(&format!(
            "SELECT count(*) FROM information_schema.processlist WHERE command = 'Query' AND info LIKE '%{like}%' AND id <> connection_id()"
        ))
        .await
    }
}

#[tokio::test]
async fn tables_describe_and_a_query_show_what_is_there() {
    let Some(s) = server("show").await else {
        return;
    };
    let t = s.tools(30);
    let p = &s.prefix;
    let listed = call(&t, "db_connections", json!({})).await;
    assert!(
        listed
            .text
            .starts_with("- my: MySQL at mysql://cairn@127.0.0.1:"),
        "{}",
        listed.text
    );
    assert!(!listed.text.contains(&s.password));

    let tables = call(&t, "db_tables", json!({"connection": "my"})).await;
    assert!(!tables.is_error, "{}", tables.text);
    assert!(
        tables
            .text
            .contains(&format!("| cairn_test | {p}_orders | BASE TABLE |")),
        "{}",
        tables.text
    );

    let d = call(
        &t,
        "db_describe",
        json!({"connection": "my", "table": format!("{p}_orders")}),
    )
    .await;
    assert!(!d.is_error, "{}", d.text);
    assert!(
        d.text
            .starts_with(&format!("Table `cairn_test.{p}_orders` (MySQL), about ")),
        "{}",
        d.text
    );
    for line in [
        "| id | int(11) | no | auto_increment | yes |",
        "| customer_id | int(11) | no |  |  |",
        "| total | decimal(10,2) | yes |  |  |",
        "- PRIMARY (unique): id",
        &format!("- {p}_by_customer: customer_id"),
        &format!("- {p}_fk: FOREIGN KEY (customer_id) REFERENCES cairn_test.{p}_customers(id)"),
    ] {
        assert!(d.text.contains(line), "{line}\n{}", d.text);
    }
    let c = call(
        &t,
        "db_describe",
        json!({"connection": "my", "table": format!("cairn_test.{p}_customers")}),
    )
    .await;
    assert!(
        c.text.contains("| note | varchar(50) | yes | 'new' |  |"),
        "{}",
        c.text
    );

    let v = call(
        &t,
        "db_describe",
        json!({"connection": "my", "table": format!("{p}_totals")}),
    )
    .await;
    assert!(
        v.text.starts_with(&format!(
            "Table `cairn_test.{p}_totals` (MySQL), row count unknown (a view"
        )),
        "{}",
        v.text
    );

    let missing = call(
        &t,
        "db_describe",
        json!({"connection": "my", "table": "nope"}),
    )
    .await;
    assert!(
        missing.is_error && missing.text.contains("no table or view `cairn_test.nope`"),
        "{}",
        missing.text
    );

    let q = call(
        &t,
        "db_query",
        json!({"connection": "my", "sql": format!("SELECT c.name, count(*) AS n, sum(o.total) AS total, NULL AS nothing FROM {p}_orders o JOIN {p}_customers c ON c.id = o.customer_id GROUP BY c.name ORDER BY c.name")}),
    )
    .await;
    assert!(!q.is_error, "{}", q.text);
    assert!(
        q.text.contains("| name | n | total | nothing |"),
        "{}",
        q.text
    );
    assert!(
        q.text.contains("| Ada | 500 | 375750.00 | NULL |"),
        "{}",
        q.text
    );
    assert_eq!(
        q.structured.unwrap()["rows"][1],
        json!(["Grace", "500", "375000.00", null])
    );
}

/// Reads are read-only by the server: direct writes, DDL (which commits implicitly), several
/// statements, a compound statement and turning the session read-write are all refused or
/// harmless, and the data is as it was.
#[tokio::test]
async fn db_query_cannot_change_the_database() {
    let Some(mut s) = server("readonly").await else {
        return;
    };
    let t = s.tools(30);
    let p = s.prefix.clone();
    for sql in [
        format!("DELETE FROM {p}_orders"),
        format!("SELECT 1; DELETE FROM {p}_orders"),
        format!("DROP TABLE {p}_orders"),
        format!("CREATE TABLE {p}_x (a int)"),
        format!("INSERT INTO {p}_customers VALUES (3, 'Linus', NULL)"),
        format!("CREATE TEMPORARY TABLE {p}_tmp AS SELECT * FROM {p}_orders"),
        format!(
            "BEGIN NOT ATOMIC SET SESSION TRANSACTION READ WRITE; COMMIT; DELETE FROM {p}_orders; END"
        ),
    ] {
        let q = call(&t, "db_query", json!({"connection": "my", "sql": sql})).await;
        assert!(q.is_error, "{sql}: {}", q.text);
    }
    // Accepted by the server, but it changes only the next transaction of a connection that
    // ends with this call.
    let q = call(
        &t,
        "db_query",
        json!({"connection": "my", "sql": "SET SESSION TRANSACTION READ WRITE"}),
    )
    .await;
    assert!(!q.text.contains("committed"), "{}", q.text);
    assert_eq!(
        s.count(&format!("SELECT count(*) FROM {p}_orders")).await,
        1000
    );
    assert_eq!(
        s.count(&format!(
            "SELECT count(*) FROM information_schema.tables WHERE table_schema = 'cairn_test' AND table_name LIKE '{p}\\_%'"
        ))
        .await,
        3
    );
}

#[tokio::test]
async fn db_execute_commits_and_a_failure_leaves_nothing() {
    let Some(mut s) = server("execute").await else {
        return;
    };
    let t = s.tools(30);
    let p = s.prefix.clone();
    let w = call(
        &t,
        "db_execute",
        json!({"connection": "my", "sql": format!("UPDATE {p}_orders SET total = 0 WHERE customer_id = 2")}),
    )
    .await;
    assert_eq!(w.text, "committed on `my`: 500 rows changed");
    assert_eq!(
        s.count(&format!("SELECT count(*) FROM {p}_orders WHERE total = 0"))
            .await,
        500
    );

    // The third row breaks the primary key: none of the three stays.
    let w = call(
        &t,
        "db_execute",
        json!({"connection": "my", "sql": format!("INSERT INTO {p}_customers (id, name) VALUES (10, 'a'), (11, 'b'), (1, 'dup')")}),
    )
    .await;
    assert!(
        w.is_error && w.text.contains("Duplicate entry"),
        "{}",
        w.text
    );
    assert_eq!(
        s.count(&format!("SELECT count(*) FROM {p}_customers"))
            .await,
        2
    );

    let w = call(
        &t,
        "db_execute",
        json!({"connection": "my", "sql": format!("DELETE FROM {p}_orders; DELETE FROM {p}_customers")}),
    )
    .await;
    assert!(w.is_error, "{}", w.text);
    assert_eq!(
        s.count(&format!("SELECT count(*) FROM {p}_orders")).await,
        1000
    );
}

#[tokio::test]
async fn a_huge_result_is_capped_and_stopped_in_the_server() {
    let Some(mut s) = server("huge").await else {
        return;
    };
    let t = s.tools(60);
    let started = Instant::now();
    let q = call(
        &t,
        "db_query",
        json!({"connection": "my", "sql": "SELECT seq, md5(seq) FROM seq_1_to_50000000"}),
    )
    .await;
    assert!(!q.is_error, "{}", q.text);
    let out = q.structured.unwrap();
    assert_eq!(out["rows"].as_array().unwrap().len(), 200);
    assert_eq!(out["truncated"], true);
    assert!(
        started.elapsed() < Duration::from_secs(30),
        "{:?}",
        started.elapsed()
    );
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(
        s.running("seq_1_to_50000000").await,
        0,
        "the server stopped"
    );
}

#[tokio::test]
async fn a_statement_over_the_timeout_or_cancelled_is_stopped_in_the_server() {
    let Some(mut s) = server("timeout").await else {
        return;
    };
    let t = s.tools(1);
    let started = Instant::now();
    let q = call(
        &t,
        "db_query",
        json!({"connection": "my", "sql": "SELECT sleep(30)"}),
    )
    .await;
    assert_eq!(
        q.text,
        "the statement ran longer than 1 s and was cancelled in the database"
    );
    assert!(started.elapsed() < Duration::from_secs(10));
    let w = call(
        &t,
        "db_execute",
        json!({"connection": "my", "sql": format!("UPDATE {}_customers SET name = 'x' WHERE sleep(30) = 0", s.prefix)}),
    )
    .await;
    assert!(
        w.is_error && w.text.contains("longer than 1 s"),
        "{}",
        w.text
    );

    let t = s.tools(60);
    let cancel = CancellationToken::new();
    let trigger = cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(500)).await;
        trigger.cancel();
    });
    let q = call_with(
        &t,
        "db_query",
        json!({"connection": "my", "sql": "SELECT sleep(31)"}),
        cancel,
    )
    .await;
    assert!(q.text.starts_with("cancelled"), "{}", q.text);
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(
        s.running("sleep(31)").await,
        0,
        "the statement was killed in the server"
    );
    assert_eq!(
        s.count(&format!(
            "SELECT count(*) FROM {}_customers WHERE name = 'x'",
            s.prefix
        ))
        .await,
        0
    );
}

/// A wrong password, a secret bound to another host and an unreachable server each say what
/// went wrong, quickly, and never show a password.
#[tokio::test]
async fn connection_failures_are_clear_and_secret_free() {
    let Some(s) = server("connect").await else {
        return;
    };
    let wrong = tools(
        &[spec("my", &s.url, Some("secret:my"), 30)],
        None,
        "not-the-password",
    );
    let q = call(&wrong, "db_tables", json!({"connection": "my"})).await;
    assert!(
        q.is_error && q.text.contains("Access denied for user 'cairn'"),
        "{}",
        q.text
    );
    assert!(!q.text.contains("not-the-password"));

    let elsewhere = s.url.replace("127.0.0.1", "localhost");
    let t = tools(
        &[spec("my", &elsewhere, Some("secret:my"), 30)],
        None,
        &s.password,
    );
    let q = call(&t, "db_tables", json!({"connection": "my"})).await;
    assert!(
        q.is_error && q.text.contains("not bound to localhost"),
        "{}",
        q.text
    );

    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = closed.local_addr().unwrap().port();
    drop(closed);
    let t = tools(
        &[spec(
            "down",
            &format!("mariadb://cairn@127.0.0.1:{port}/x"),
            Some("secret:my"),
            30,
        )],
        None,
        &s.password,
    );
    let started = Instant::now();
    let q = call(&t, "db_tables", json!({"connection": "down"})).await;
    assert!(
        q.is_error && q.text.contains("could not connect"),
        "{}",
        q.text
    );
    assert!(!q.text.contains(&s.password));
    assert!(started.elapsed() < Duration::from_secs(20));
}

#[tokio::test]
async fn describe_with_rows_explain_export_and_import() {
    let Some(mut s) = server("plan").await else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let t = tools(
        &[spec("my", &s.url, Some("secret:my"), 30)],
        Some(dir.path()),
        &s.password,
    );
    let p = s.prefix.clone();
    let d = call(
        &t,
        "db_describe",
        json!({"connection": "my", "table": format!("{p}_customers"), "sample": 1}),
    )
    .await;
    assert!(!d.is_error, "{}", d.text);
    assert!(d.text.contains("| 1 | Ada | new |"), "{}", d.text);
    assert!(d.text.contains("more were left out"), "{}", d.text);

    let plan = call(
        &t,
        "db_explain",
        json!({"connection": "my", "sql": format!("SELECT * FROM {p}_orders WHERE total > 100")}),
    )
    .await;
    assert!(!plan.is_error, "{}", plan.text);
    assert!(plan.text.contains("a full table scan"), "{}", plan.text);

    let e = call(
        &t,
        "db_export",
        json!({"connection": "my", "sql": format!("SELECT id, name FROM {p}_customers ORDER BY id"), "path": "c.csv", "format": "csv"}),
    )
    .await;
    assert!(!e.is_error, "{}", e.text);
    assert_eq!(
        std::fs::read_to_string(dir.path().join("c.csv")).unwrap(),
        "id,name\r\n1,Ada\r\n2,Grace\r\n"
    );

    std::fs::write(
        dir.path().join("new.csv"),
        "id,name\n3,\"Linus, T.\"\n4,Ken\n",
    )
    .unwrap();
    let i = call(
        &t,
        "db_import",
        json!({"connection": "my", "path": "new.csv", "table": format!("{p}_customers")}),
    )
    .await;
    assert!(!i.is_error, "{}", i.text);
    std::fs::write(dir.path().join("dup.csv"), "id,name\n5,New\n1,Dup\n").unwrap();
    let i = call(
        &t,
        "db_import",
        json!({"connection": "my", "path": "dup.csv", "table": format!("{p}_customers")}),
    )
    .await;
    assert!(
        i.is_error && i.text.contains("line 3") && i.text.contains("Duplicate"),
        "{}",
        i.text
    );
    assert_eq!(
        s.count(&format!("SELECT count(*) FROM {p}_customers"))
            .await,
        4
    );
}
