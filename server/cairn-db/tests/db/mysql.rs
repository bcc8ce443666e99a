//! The database tools on a real MariaDB server (`scripts/test-databases` starts one; `.ci/run`
//! sets `CAIRN_DB_TESTS=1` and the server's URL and password).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

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

/// A privileged user (`cairn_super`, every privilege: FILE, SUPER, PROCESS, CONNECTION ADMIN
/// ...) with the test password, made through the server's socket (`scripts/test-databases`
/// lets the OS user in there as root); its URL.
fn superuser(s: &Server) -> String {
    let dir = std::env::var("CAIRN_TEST_DB_DIR").unwrap_or_else(|_| "/tmp/cairn-test-db".into());
    let me = std::process::Command::new("id")
        .arg("-un")
        .output()
        .unwrap();
    let me = String::from_utf8(me.stdout).unwrap();
    let made = std::process::Command::new("mariadb")
        .args([
            "--no-defaults",
            "-S",
            &format!("{dir}/mariadb/sock"),
            "-u",
            me.trim(),
        ])
        .arg("-e")
        .arg(format!(
            "CREATE USER IF NOT EXISTS 'cairn_super'@'127.0.0.1' IDENTIFIED BY '{0}';
             ALTER USER 'cairn_super'@'127.0.0.1' IDENTIFIED BY '{0}';
             GRANT ALL PRIVILEGES ON *.* TO 'cairn_super'@'127.0.0.1' WITH GRANT OPTION;",
            s.password
        ))
        .output()
        .expect("the mariadb client (scripts/test-databases needs it too)");
    assert!(
        made.status.success(),
        "the server's socket as root: {}",
        String::from_utf8_lossy(&made.stderr)
    );
    s.url.replacen("mysql://cairn@", "mysql://cairn_super@", 1)
}

/// The unprivileged and the privileged connection, each as `my`.
fn both(s: &Server) -> [(&'static str, String); 2] {
    [
        ("unprivileged", s.url.clone()),
        ("privileged", superuser(s)),
    ]
}

/// A connection of its own to `url` with the test password.
async fn session(s: &Server, url: &str) -> mysql_async::Conn {
    let opts = mysql_async::OptsBuilder::from_opts(mysql_async::Opts::from_url(url).unwrap())
        .pass(Some(s.password.clone()))
        .prefer_socket(false);
    mysql_async::Conn::new(opts).await.unwrap()
}

/// Every read-only tool refuses what a read-only transaction still lets through: files on the
/// server (INTO OUTFILE / DUMPFILE, also after WITH, LOAD_FILE, LOAD DATA), executable
/// comments, advisory and row locks, settings, other sessions, procedural and dynamic SQL;
/// as a privileged user as well as unprivileged. The privileged user really could do it
/// (checked first, outside the tools); afterwards no file was made, none was read, the other
/// session answers, the lock is free, the settings and the rows are as they were.
#[tokio::test]
async fn read_only_tools_refuse_server_side_effects_even_as_a_privileged_user() {
    let Some(mut s) = server("guard").await else {
        return;
    };
    let p = s.prefix.clone();
    // A directory the server (another OS user) can write to, and a file it can read.
    let outside = tempfile::tempdir().unwrap();
    let d = outside.path().display().to_string();
    let marker = format!(
        "cairnmarker{}x{}",
        std::process::id(),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_nanos()
    );
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(outside.path(), std::fs::Permissions::from_mode(0o777)).unwrap();
        let f = outside.path().join("secret.txt");
        std::fs::write(&f, format!("{marker}\n")).unwrap();
        std::fs::set_permissions(&f, std::fs::Permissions::from_mode(0o644)).unwrap();
    }
    let f = format!("{d}/secret.txt");

    // The privileged user can do it when not refused: the checks below mean something.
    let root_url = superuser(&s);
    let mut root = session(&s, &root_url).await;
    root.query_drop(format!("SELECT 1 INTO OUTFILE '{d}/probe'"))
        .await
        .unwrap();
    assert!(
        outside.path().join("probe").exists(),
        "the server writes in {d}"
    );
    std::fs::remove_file(outside.path().join("probe")).unwrap();
    let read: Option<Option<String>> = root
        .query_first(format!("SELECT load_file('{f}')"))
        .await
        .unwrap();
    assert!(
        read.flatten().is_some_and(|r| r.contains(&marker)),
        "the server reads {f}"
    );
    let global_timeout: f64 = root
        .query_first("SELECT @@GLOBAL.max_statement_time")
        .await
        .unwrap()
        .unwrap();

    // A sequence: the server refuses to advance it in a read-only transaction.
    s.admin
        .query_drop(format!("CREATE OR REPLACE SEQUENCE {p}_seq"))
        .await
        .unwrap();

    // Another session, which the privileged user could kill.
    let mut victim = session(&s, &s.url).await;
    let victim_id = victim.id();

    // (statement, whether the refusal is cairn's also under db_explain's EXPLAIN)
    let attacks: Vec<(String, bool)> = vec![
        (format!("SELECT 1 INTO OUTFILE '{d}/outfile'"), true),
        (format!("SELECT 'x' INTO DUMPFILE '{d}/dumpfile'"), true),
        (
            format!("WITH x AS (SELECT 1 AS a) SELECT a FROM x INTO OUTFILE '{d}/with'"),
            true,
        ),
        (
            format!("SELECT * FROM {p}_customers INTO OUTFILE '{d}/rows'"),
            true,
        ),
        (
            format!("SELECT id INTO @a FROM {p}_customers LIMIT 1 INTO OUTFILE '{d}/var'"),
            true,
        ),
        (format!("SELECT load_file('{f}')"), true),
        (format!("select LOAD_FILE('{f}') AS x"), true),
        (format!("SELECT `load_file`('{f}')"), true),
        (
            format!("SELECT 'it\\'s', \"a\"\"b\", load_file('{f}') -- x"),
            true,
        ),
        (format!("SELECT 1 # x\n, load_file('{f}')"), true),
        (format!("SELECT /*!50000 load_file('{f}') */ AS x"), true),
        (format!("SELECT /*M!100000 load_file('{f}') */ AS x"), true),
        (
            format!("SELECT /*!99999 'x */ load_file('{f}') AS x -- ' */"),
            true,
        ),
        (
            format!("LOAD DATA INFILE '{f}' INTO TABLE {p}_customers (name)"),
            false,
        ),
        (
            format!("LOAD DATA LOCAL INFILE '{f}' INTO TABLE {p}_customers (name)"),
            false,
        ),
        ("SELECT GET_LOCK('cairn-guard', 0)".to_owned(), true),
        ("SELECT IS_USED_LOCK('cairn-guard')".to_owned(), true),
        ("DO GET_LOCK('cairn-guard', 0)".to_owned(), false),
        (
            format!("SELECT * FROM {p}_customers LOCK IN SHARE MODE"),
            true,
        ),
        (format!("SELECT * FROM {p}_customers FOR UPDATE"), true),
        ("SELECT BENCHMARK(100000000, MD5('a'))".to_owned(), true),
        (format!("SELECT sys_exec('touch {d}/sys-exec')"), true),
        (format!("KILL {victim_id}"), false),
        (format!("KILL QUERY {victim_id}"), false),
        ("SET GLOBAL max_statement_time = 1000".to_owned(), false),
        ("SET @@session.max_statement_time = 0".to_owned(), false),
        (
            "SET STATEMENT max_statement_time = 0 FOR SELECT sleep(30)".to_owned(),
            false,
        ),
        (format!("HANDLER {p}_customers OPEN"), false),
        (
            format!("BEGIN NOT ATOMIC SELECT 1 INTO OUTFILE '{d}/compound'; END"),
            true,
        ),
        (
            format!("EXECUTE IMMEDIATE 'SELECT 1 INTO OUTFILE ''{d}/immediate'''"),
            false,
        ),
        (format!("PREPARE s FROM 'SELECT load_file(\"{f}\")'"), false),
        (
            "SELECT 1; SET GLOBAL max_statement_time = 1000".to_owned(),
            true,
        ),
    ];

    for (role, url) in both(&s) {
        let workspace = tempfile::tempdir().unwrap();
        let t = tools(
            &[spec("my", &url, Some("secret:my"), 30)],
            Some(workspace.path()),
            &s.password,
        );
        // The connection works: only the attacks are refused.
        let fine = call(
            &t,
            "db_query",
            json!({"connection": "my", "sql": format!("SELECT count(*) FROM {p}_orders")}),
        )
        .await;
        assert!(
            !fine.is_error && fine.text.contains("1000"),
            "{role}: {}",
            fine.text
        );
        for (tool, args) in [
            ("db_tables", json!({"connection": "my"})),
            (
                "db_describe",
                json!({"connection": "my", "table": format!("{p}_orders"), "sample": 2}),
            ),
            (
                "db_explain",
                json!({"connection": "my", "sql": format!("SELECT * FROM {p}_orders WHERE customer_id = 1")}),
            ),
        ] {
            let r = call(&t, tool, args).await;
            assert!(!r.is_error, "{role} {tool}: {}", r.text);
        }

        for (i, (sql, select)) in attacks.iter().enumerate() {
            let path = format!("out-{i}.csv");
            let calls = [
                ("db_query", json!({"connection": "my", "sql": sql}), true),
                (
                    "db_explain",
                    json!({"connection": "my", "sql": sql}),
                    *select,
                ),
                (
                    "db_export",
                    json!({"connection": "my", "sql": sql, "path": path, "format": "csv"}),
                    true,
                ),
                // A "table" that is a call: described first, so refused as no table.
                (
                    "db_describe",
                    json!({"connection": "my", "table": sql, "sample": 5}),
                    false,
                ),
            ];
            for (tool, args, ours) in calls {
                let r = call(&t, tool, args).await;
                assert!(r.is_error, "{role} {tool} {sql}: {}", r.text);
                if ours {
                    assert!(
                        r.text.starts_with("refused in a read-only call: ")
                            && r.text.ends_with("; nothing was run"),
                        "{role} {tool} {sql}: {}",
                        r.text
                    );
                }
                assert!(!r.text.contains(&marker), "{role} {tool} {sql}: {}", r.text);
            }
            assert!(!workspace.path().join(&path).exists(), "{role} {sql}");
        }
        for sql in [
            format!("SELECT NEXTVAL({p}_seq)"),
            format!("SELECT NEXT VALUE FOR {p}_seq"),
            format!("SELECT SETVAL({p}_seq, 100)"),
        ] {
            let r = call(&t, "db_query", json!({"connection": "my", "sql": sql})).await;
            assert!(
                r.is_error && r.text.contains("READ ONLY transaction"),
                "{role} {sql}: {}",
                r.text
            );
        }
        // What the user sees, for a few.
        for (sql, seen) in [
            (
                format!("SELECT 1 INTO OUTFILE '{d}/outfile'"),
                "refused in a read-only call: `outfile`, because it reads or writes files on the database server, which a read-only transaction does not stop; db_export writes a query's rows to a workspace file; nothing was run",
            ),
            (
                "SELECT GET_LOCK('cairn-guard', 0)".to_owned(),
                "refused in a read-only call: `get_lock`, because it takes, frees or probes an advisory lock that other sessions wait on; nothing was run",
            ),
            (
                format!("KILL {victim_id}"),
                "refused in a read-only call: the KILL statement, because it stops another session's statement or connection; nothing was run",
            ),
            (
                "SET GLOBAL max_statement_time = 1000".to_owned(),
                "refused in a read-only call: the SET statement, because it changes a setting (it could lift the statement timeout; SET STATEMENT ... FOR too); SHOW VARIABLES and SELECT @@name read them; nothing was run",
            ),
            (
                format!("SELECT /*!50000 load_file('{f}') */ AS x"),
                "refused in a read-only call: an executable comment or optimizer hint (`/*!`, `/*M!`, `/*+`), because the server runs its content as SQL (a hint can lift the statement timeout), so cairn cannot check it as a comment; write the SQL without the comment markers; nothing was run",
            ),
        ] {
            let r = call(&t, "db_query", json!({"connection": "my", "sql": sql})).await;
            assert_eq!(r.text, seen, "{role} {sql}");
        }
        assert_eq!(
            std::fs::read_dir(outside.path()).unwrap().count(),
            1,
            "{role}: only the test's own file"
        );
        // The other session is still there, and the lock is free.
        let one: Option<i64> = victim
            .query_first("SELECT 1")
            .await
            .expect("the other session still answers");
        assert_eq!(one, Some(1));
        let got: Option<i64> = root
            .query_first("SELECT GET_LOCK('cairn-guard', 0)")
            .await
            .unwrap();
        assert_eq!(got, Some(1), "{role}: nobody holds the lock");
        root.query_drop("SELECT RELEASE_LOCK('cairn-guard')")
            .await
            .unwrap();
        let now: f64 = root
            .query_first("SELECT @@GLOBAL.max_statement_time")
            .await
            .unwrap()
            .unwrap();
        assert_eq!(now, global_timeout, "{role}: the global timeout");
        assert_eq!(
            s.count(&format!("SELECT NEXTVAL({p}_seq)")).await,
            if role == "unprivileged" { 1 } else { 2 },
            "{role}: the sequence moved only by this check"
        );
        assert_eq!(
            s.count(&format!("SELECT count(*) FROM {p}_orders")).await,
            1000
        );
        assert_eq!(
            s.count(&format!("SELECT count(*) FROM {p}_customers"))
                .await,
            2
        );
    }
}

/// What looks like an attack but is data still runs: the words in strings and comments, a
/// `sleep_count` column, `SLEEP(0)`, `INTO @var`; backslash escapes are on as the guard reads
/// them. A word the guard refuses is refused even as a column name (the documented rule).
#[tokio::test]
async fn ordinary_reads_with_those_words_still_run() {
    let Some(s) = server("guardwords").await else {
        return;
    };
    let t = s.tools(30);
    let q = call(
        &t,
        "db_query",
        json!({"connection": "my", "sql": "SELECT 'into outfile' AS a, \"load_file('/etc/passwd')\" AS b, 'it\\'s GET_LOCK' AS c, 1 AS sleep_count, SLEEP(0) AS s /* KILL 1 */ # SET GLOBAL x = 1\n"}),
    )
    .await;
    assert!(!q.is_error, "{}", q.text);
    for seen in [
        "into outfile",
        "load_file('/etc/passwd')",
        "it's GET_LOCK",
        "sleep_count",
    ] {
        assert!(q.text.contains(seen), "{seen}: {}", q.text);
    }
    let q = call(
        &t,
        "db_query",
        json!({"connection": "my", "sql": format!("SELECT name INTO @n FROM {}_customers WHERE id = 1", s.prefix)}),
    )
    .await;
    assert!(!q.is_error, "{}", q.text);
    let q = call(
        &t,
        "db_query",
        json!({"connection": "my", "sql": "SELECT 1 AS `outfile`"}),
    )
    .await;
    assert!(
        q.text
            .starts_with("refused in a read-only call: `outfile`, because "),
        "{}",
        q.text
    );
}

/// `SLEEP` is not refused, but the statement timeout stops it, for a privileged user too (a
/// read cannot lift the timeout: `SET` and `SET STATEMENT` are refused above).
#[tokio::test]
async fn the_statement_timeout_fires_for_every_role() {
    let Some(s) = server("guardtimeout").await else {
        return;
    };
    let p = &s.prefix;
    for (role, url) in both(&s) {
        let workspace = tempfile::tempdir().unwrap();
        let t = tools(
            &[spec("my", &url, Some("secret:my"), 2)],
            Some(workspace.path()),
            &s.password,
        );
        let sleep = format!("SELECT sleep(30) FROM {p}_customers");
        for (tool, args) in [
            ("db_query", json!({"connection": "my", "sql": sleep})),
            (
                "db_export",
                json!({"connection": "my", "sql": sleep, "path": "slept.csv", "format": "csv"}),
            ),
        ] {
            let r = call(&t, tool, args).await;
            assert_eq!(
                r.text, "the statement ran longer than 2 s and was cancelled in the database",
                "{role} {tool}"
            );
        }
        assert!(!workspace.path().join("slept.csv").exists(), "{role}");
    }
}
