//! The database tools on a real PostgreSQL server (`scripts/test-databases` starts one; `.ci/run`
//! sets `CAIRN_DB_TESTS=1` and the server's URL and password).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use std::time::{Duration, Instant};

use cairn_test_support::gate::gate;
use common::{call, call_with, spec, tools};
use serde_json::json;
use tokio_postgres::NoTls;
use tokio_util::sync::CancellationToken;

struct Server {
    url: String,
    password: String,
    /// A schema of this test's own, dropped at the end.
    schema: String,
    admin: tokio_postgres::Client,
}

/// The server, with a fresh schema holding customers and orders; `None` when the gate is off.
async fn server(test: &str) -> Option<Server> {
    if !gate(
        "CAIRN_DB_TESTS",
        "and CAIRN_PG_TEST_URL / CAIRN_PG_TEST_PASSWORD (eval \"$(scripts/test-databases)\")",
    ) {
        return None;
    }
    let url = std::env::var("CAIRN_PG_TEST_URL").expect("CAIRN_PG_TEST_URL");
    let password = std::env::var("CAIRN_PG_TEST_PASSWORD").expect("CAIRN_PG_TEST_PASSWORD");
    let mut config: tokio_postgres::Config = url.parse().unwrap();
    config.password(&password);
    let (admin, connection) = config.connect(NoTls).await.unwrap();
    tokio::spawn(connection);
    let schema = format!("t_{test}");
    admin
        .batch_execute(&format!(
            "DROP SCHEMA IF EXISTS {schema} CASCADE; CREATE SCHEMA {schema};
             CREATE TABLE {schema}.customers (id int PRIMARY KEY, name text NOT NULL, note text DEFAULT 'new');
             CREATE TABLE {schema}.orders (id serial PRIMARY KEY, customer_id int NOT NULL REFERENCES {schema}.customers(id), total numeric(10,2));
             CREATE INDEX orders_by_customer ON {schema}.orders(customer_id);
             INSERT INTO {schema}.customers VALUES (1, 'Ada'), (2, 'Grace');
             INSERT INTO {schema}.orders (customer_id, total) SELECT 1 + i % 2, i * 1.5 FROM generate_series(1, 1000) i;
             ANALYZE {schema}.orders;"
        ))
        .await
        .unwrap();
    Some(Server {
        url,
        password,
        schema,
        admin,
    })
}

impl Server {
    fn tools(&self, timeout: u64) -> cairn_toolkit::ToolSet<cairn_db::Db> {
        tools(
            &[spec("pg", &self.url, Some("secret:pg"), timeout)],
            None,
            &self.password,
        )
    }

    async fn count(&self, sql: &str) -> i64 {
        self.admin.query_one(sql, &[]).await.unwrap().get(0)
    }

    /// Statements of this test's schema still running in the server, other than ours.
    async fn running(&self, like: &str) -> i64 {
        self.count(&format!(
            "SELECT count(*) FROM pg_stat_activity WHERE state = 'active' AND query LIKE '%{like}%' AND pid <> pg_backend_pid()"
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
    let listed = call(&t, "db_connections", json!({})).await;
    assert!(
        listed
            .text
            .starts_with("- pg: PostgreSQL at postgres://cairn@127.0.0.1:"),
        "{}",
        listed.text
    );
    assert!(!listed.text.contains(&s.password));

    let tables = call(&t, "db_tables", json!({"connection": "pg"})).await;
    assert!(!tables.is_error, "{}", tables.text);
    assert!(
        tables
            .text
            .contains(&format!("| {} | orders | BASE TABLE |", s.schema)),
        "{}",
        tables.text
    );

    let table = format!("{}.orders", s.schema);
    let d = call(
        &t,
        "db_describe",
        json!({"connection": "pg", "table": table}),
    )
    .await;
    assert!(!d.is_error, "{}", d.text);
    assert!(
        d.text
            .starts_with(&format!("Table `{table}` (PostgreSQL), about 1000 rows")),
        "{}",
        d.text
    );
    assert!(
        d.text.contains("| id | integer | no | nextval("),
        "{}",
        d.text
    );
    assert!(
        d.text.contains("| customer_id | integer | no |  |  |"),
        "{}",
        d.text
    );
    assert!(
        d.text.contains("| total | numeric | yes |  |  |"),
        "{}",
        d.text
    );
    assert!(
        d.text.contains("orders_by_customer: CREATE INDEX"),
        "{}",
        d.text
    );
    assert!(
        d.text.contains("FOREIGN KEY (customer_id) REFERENCES"),
        "{}",
        d.text
    );

    let missing = call(
        &t,
        "db_describe",
        json!({"connection": "pg", "table": "nope"}),
    )
    .await;
    assert!(
        missing.is_error && missing.text.contains("no table or view `public.nope`"),
        "{}",
        missing.text
    );

    let q = call(
        &t,
        "db_query",
        json!({"connection": "pg", "sql": format!("SELECT c.name, count(*) AS n, sum(o.total) AS total FROM {0}.orders o JOIN {0}.customers c ON c.id = o.customer_id GROUP BY c.name ORDER BY c.name", s.schema)}),
    )
    .await;
    assert!(!q.is_error, "{}", q.text);
    assert!(q.text.contains("| name | n | total |"), "{}", q.text);
    assert!(q.text.contains("| Ada | 500 | 375750.00 |"), "{}", q.text);
    assert_eq!(
        q.structured.unwrap()["rows"][1],
        json!(["Grace", "500", "375000.00"])
    );
}

/// Reads are read-only by the server: direct writes, a write inside a CTE, several statements
/// and turning the transaction read-write are all refused, and the data is as it was.
#[tokio::test]
async fn db_query_cannot_change_the_database() {
    let Some(s) = server("readonly").await else {
        return;
    };
    let t = s.tools(30);
    let sc = &s.schema;
    for sql in [
        format!("DELETE FROM {sc}.orders"),
        format!("WITH d AS (DELETE FROM {sc}.orders RETURNING *) SELECT count(*) FROM d"),
        format!("SELECT 1; DELETE FROM {sc}.orders"),
        "SET transaction_read_only = off".to_owned(),
        format!("DROP TABLE {sc}.orders"),
        format!("CREATE TABLE {sc}.x (a int)"),
    ] {
        let q = call(&t, "db_query", json!({"connection": "pg", "sql": sql})).await;
        assert!(q.is_error, "{sql}: {}", q.text);
    }
    assert_eq!(
        s.count(&format!("SELECT count(*) FROM {sc}.orders")).await,
        1000
    );
    assert_eq!(
        s.count(&format!(
            "SELECT count(*) FROM information_schema.tables WHERE table_schema = '{sc}'"
        ))
        .await,
        2
    );
}

#[tokio::test]
async fn db_execute_commits_and_a_failure_leaves_nothing() {
    let Some(s) = server("execute").await else {
        return;
    };
    let t = s.tools(30);
    let sc = &s.schema;
    let w = call(
        &t,
        "db_execute",
        json!({"connection": "pg", "sql": format!("UPDATE {sc}.orders SET total = 0 WHERE customer_id = 2")}),
    )
    .await;
    assert_eq!(w.text, "committed on `pg`: 500 rows changed");
    assert_eq!(
        s.count(&format!("SELECT count(*) FROM {sc}.orders WHERE total = 0"))
            .await,
        500
    );

    // The third row breaks the primary key: none of the three stays.
    let w = call(
        &t,
        "db_execute",
        json!({"connection": "pg", "sql": format!("INSERT INTO {sc}.customers VALUES (10, 'a'), (11, 'b'), (1, 'dup')")}),
    )
    .await;
    assert!(w.is_error && w.text.contains("duplicate key"), "{}", w.text);
    assert_eq!(
        s.count(&format!("SELECT count(*) FROM {sc}.customers"))
            .await,
        2
    );
}

#[tokio::test]
async fn a_huge_result_is_capped_and_stopped_in_the_server() {
    let Some(s) = server("huge").await else {
        return;
    };
    let t = s.tools(60);
    let started = Instant::now();
    let q = call(
        &t,
        "db_query",
        json!({"connection": "pg", "sql": "SELECT i, md5(i::text) FROM generate_series(1, 50000000) i"}),
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
        s.running("generate_series(1, 50000000)").await,
        0,
        "the server stopped"
    );
}

#[tokio::test]
async fn a_statement_over_the_timeout_or_cancelled_is_stopped_in_the_server() {
    let Some(s) = server("timeout").await else {
        return;
    };
    let t = s.tools(1);
    let q = call(
        &t,
        "db_query",
        json!({"connection": "pg", "sql": "SELECT pg_sleep(30)"}),
    )
    .await;
    assert_eq!(
        q.text,
        "the statement ran longer than 1 s and was cancelled in the database"
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
        json!({"connection": "pg", "sql": "SELECT pg_sleep(31)"}),
        cancel,
    )
    .await;
    assert!(q.text.starts_with("cancelled"), "{}", q.text);
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(
        s.running("pg_sleep(31)").await,
        0,
        "the statement was cancelled in the server"
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
        &[spec("pg", &s.url, Some("secret:pg"), 30)],
        None,
        "not-the-password",
    );
    let q = call(&wrong, "db_tables", json!({"connection": "pg"})).await;
    assert!(
        q.is_error && q.text.contains("password authentication failed"),
        "{}",
        q.text
    );
    assert!(!q.text.contains("not-the-password"));

    let elsewhere = s.url.replace("127.0.0.1", "localhost");
    let t = tools(
        &[spec("pg", &elsewhere, Some("secret:pg"), 30)],
        None,
        &s.password,
    );
    let q = call(&t, "db_tables", json!({"connection": "pg"})).await;
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
            &format!("postgres://cairn@127.0.0.1:{port}/x"),
            Some("secret:pg"),
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
async fn sample_explain_and_export() {
    let Some(s) = server("plan").await else {
        return;
    };
    let t = s.tools(30);
    let sc = &s.schema;
    let sample = call(
        &t,
        "db_describe",
        json!({"connection": "pg", "table": format!("{sc}.customers"), "sample": 5}),
    )
    .await;
    assert!(!sample.is_error, "{}", sample.text);
    assert!(
        sample.text.contains("| 2 | Grace | new |"),
        "{}",
        sample.text
    );
    assert!(sample.text.ends_with("(2 rows)"), "{}", sample.text);

    let plan = call(
        &t,
        "db_explain",
        json!({"connection": "pg", "sql": format!("SELECT * FROM {sc}.orders WHERE total > 100"), "analyze": true}),
    )
    .await;
    assert!(!plan.is_error, "{}", plan.text);
    assert!(
        plan.text.contains("- Seq Scan on orders (cost"),
        "{}",
        plan.text
    );
    assert!(plan.text.contains("actual"), "{}", plan.text);
    assert!(plan.text.contains("Execution time:"), "{}", plan.text);
    assert!(
        plan.text
            .contains("an index on the filtered columns may help"),
        "{}",
        plan.text
    );
    let indexed = call(
        &t,
        "db_explain",
        json!({"connection": "pg", "sql": format!("SELECT * FROM {sc}.orders WHERE id = 7")}),
    )
    .await;
    assert!(
        indexed
            .text
            .contains("- Index Scan on orders using orders_pkey"),
        "{}",
        indexed.text
    );
    // EXPLAIN ANALYZE runs the statement: inside the read-only transaction a write is refused.
    let write = call(
        &t,
        "db_explain",
        json!({"connection": "pg", "sql": format!("DELETE FROM {sc}.orders"), "analyze": true}),
    )
    .await;
    assert!(write.is_error, "{}", write.text);
    assert_eq!(
        s.count(&format!("SELECT count(*) FROM {sc}.orders")).await,
        1000
    );

    let dir = tempfile::tempdir().unwrap();
    let t = tools(
        &[spec("pg", &s.url, Some("secret:pg"), 30)],
        Some(dir.path()),
        &s.password,
    );
    let e = call(
        &t,
        "db_export",
        json!({"connection": "pg", "sql": format!("SELECT id, name FROM {sc}.customers ORDER BY id"), "path": "c.json", "format": "json"}),
    )
    .await;
    assert!(!e.is_error, "{}", e.text);
    let written: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("c.json")).unwrap()).unwrap();
    assert_eq!(
        written,
        json!([{"id": "1", "name": "Ada"}, {"id": "2", "name": "Grace"}])
    );
}

#[tokio::test]
async fn db_import_copies_all_rows_or_none() {
    let Some(s) = server("import").await else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let t = tools(
        &[spec("pg", &s.url, Some("secret:pg"), 30)],
        Some(dir.path()),
        &s.password,
    );
    let sc = &s.schema;
    std::fs::write(
        dir.path().join("new.csv"),
        "id,name\n3,\"Linus, T.\"\n4,Ken\n",
    )
    .unwrap();
    let i = call(
        &t,
        "db_import",
        json!({"connection": "pg", "path": "new.csv", "table": format!("{sc}.customers")}),
    )
    .await;
    assert_eq!(
        i.text,
        format!("imported 2 rows from new.csv into `{sc}.customers` on `pg`")
    );
    std::fs::write(dir.path().join("bad.csv"), "id,name\n5,Ok\nx,Bad\n").unwrap();
    let i = call(
        &t,
        "db_import",
        json!({"connection": "pg", "path": "bad.csv", "table": format!("{sc}.customers")}),
    )
    .await;
    assert!(i.is_error && i.text.contains("line 3"), "{}", i.text);
    assert_eq!(
        s.count(&format!("SELECT count(*) FROM {sc}.customers"))
            .await,
        4
    );
    let i = call(
        &t,
        "db_import",
        json!({"connection": "pg", "path": "new.csv", "table": format!("{sc}.people"), "create": true}),
    )
    .await;
    assert!(!i.is_error, "{}", i.text);
    assert_eq!(
        s.count(&format!("SELECT count(*) FROM {sc}.people")).await,
        2
    );
}

/// The server ends the connection mid-statement: the call says so, promptly, and nothing hangs.
#[tokio::test]
async fn a_connection_dropped_mid_query_is_a_clear_error() {
    let Some(s) = server("dropped").await else {
        return;
    };
    let t = s.tools(60);
    let killer = {
        let url = s.url.clone();
        let password = s.password.clone();
        tokio::spawn(async move {
            let mut config: tokio_postgres::Config = url.parse().unwrap();
            config.password(&password);
            let (admin, connection) = config.connect(NoTls).await.unwrap();
            tokio::spawn(connection);
            for _ in 0..100 {
                tokio::time::sleep(Duration::from_millis(100)).await;
                let killed: i64 = admin
                    .query_one(
                        "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity \
                         WHERE query LIKE '%pg_sleep(33)%' AND pid <> pg_backend_pid()",
                        &[],
                    )
                    .await
                    .unwrap()
                    .get(0);
                if killed > 0 {
                    return;
                }
            }
        })
    };
    let started = Instant::now();
    let q = call(
        &t,
        "db_query",
        json!({"connection": "pg", "sql": "SELECT pg_sleep(33)"}),
    )
    .await;
    killer.await.unwrap();
    assert!(q.is_error, "{}", q.text);
    assert!(q.text.contains("terminat"), "{}", q.text);
    assert!(
        started.elapsed() < Duration::from_secs(20),
        "{:?}",
        started.elapsed()
    );
}

/// A superuser with the test password (`cairn_super`), made once through the cluster's socket
/// (`scripts/test-databases` trusts `postgres` there); its URL.
async fn superuser(s: &Server) -> String {
    let dir = std::env::var("CAIRN_TEST_DB_DIR").unwrap_or_else(|_| "/tmp/cairn-test-db".into());
    let url: tokio_postgres::Config = s.url.parse().unwrap();
    let port = url.get_ports()[0];
    let mut config = tokio_postgres::Config::new();
    config
        .host_path(format!("{dir}/postgres"))
        .port(port)
        .user("postgres")
        .dbname("cairn_test");
    let (root, connection) = config
        .connect(NoTls)
        .await
        .expect("the cluster's socket (scripts/test-databases) as postgres");
    tokio::spawn(connection);
    // Tests run in parallel: the lock makes a second one wait for the first's role.
    root.batch_execute(&format!(
        "BEGIN; SELECT pg_advisory_xact_lock(7370);
         DO $$ BEGIN
           IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'cairn_super') THEN
             CREATE ROLE cairn_super SUPERUSER LOGIN PASSWORD '{}';
           END IF;
         EXCEPTION WHEN duplicate_object OR unique_violation THEN NULL;
         END $$;
         COMMIT",
        s.password
    ))
    .await
    .unwrap();
    s.url
        .replacen("postgres://cairn@", "postgres://cairn_super@", 1)
}

/// The unprivileged and the superuser connection, each as `pg`.
async fn both(s: &Server) -> [(&'static str, String); 2] {
    [
        ("unprivileged", s.url.clone()),
        ("superuser", superuser(s).await),
    ]
}

/// Every read-only tool refuses what a read-only transaction still lets through: files on the
/// server, programs, other sessions, remote servers, settings, sequences and advisory locks; as
/// a superuser as well as unprivileged. Afterwards no file was made, none was read, the other
/// session answers, the sequence, the lock and the rows are as they were.
#[tokio::test]
async fn read_only_tools_refuse_server_side_effects_even_as_superuser() {
    let Some(s) = server("guard").await else {
        return;
    };
    let sc = &s.schema;
    // A directory the server (another OS user) could write to, and a file it could read: a
    // missed refusal would leave a file here or show the marker.
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
        // The content of `secret.txt`, and the name of a file that only a listing shows.
        for (name, content) in [
            ("secret.txt".to_owned(), format!("{marker}\n")),
            (format!("{marker}.listed"), String::new()),
        ] {
            let f = outside.path().join(name);
            std::fs::write(&f, content).unwrap();
            std::fs::set_permissions(&f, std::fs::Permissions::from_mode(0o644)).unwrap();
        }
    }
    let f = format!("{d}/secret.txt");
    let made = |name: &str| outside.path().join(name);
    let last_value = format!("SELECT last_value FROM {sc}.orders_id_seq");
    let seq_before = s.count(&last_value).await;

    // Another session of the unprivileged role, which that role may signal.
    let mut victim_config: tokio_postgres::Config = s.url.parse().unwrap();
    victim_config.password(&s.password);
    let (victim, connection) = victim_config.connect(NoTls).await.unwrap();
    tokio::spawn(connection);
    let pid: i32 = victim
        .query_one("SELECT pg_backend_pid()", &[])
        .await
        .unwrap()
        .get(0);

    // (statement, a SELECT whose refusal is cairn's also under db_explain's EXPLAIN)
    let attacks: Vec<(String, bool)> = vec![
        (format!("COPY (SELECT 1) TO '{d}/copy-out'"), false),
        (
            format!("COPY {sc}.customers TO PROGRAM 'touch {d}/copy-program'"),
            false,
        ),
        (
            format!("copy {sc}.customers from program 'touch {d}/copy-from-program'"),
            false,
        ),
        (
            format!("SELECT lo_export(lo_from_bytea(0, 'x'), '{d}/lo-out')"),
            true,
        ),
        (format!("SELECT lo_import('{f}')"), true),
        (format!("SELECT pg_read_file('{f}')"), true),
        (format!("select PG_CATALOG.PG_READ_FILE('{f}')"), true),
        (
            format!("SELECT pg_catalog . /* c */ \"pg_read_binary_file\"('{f}')"),
            true,
        ),
        (
            format!("SELECT 'it''s', E'\\'', $q$ x $q$, pg_read_file('{f}', 0, 100)"),
            true,
        ),
        (format!("SELECT * FROM pg_ls_dir('{d}')"), true),
        (format!("SELECT pg_stat_file('{f}')"), true),
        (
            format!("SELECT query_to_xml('select pg_read_file(''{f}'')', true, true, '')"),
            true,
        ),
        (
            format!("DO $$ BEGIN RAISE EXCEPTION '%', pg_read_file('{f}'); END $$"),
            false,
        ),
        (
            format!("SELECT pg_file_write('{d}/adminpack', 'x', false)"),
            true,
        ),
        (format!("SELECT pg_terminate_backend({pid})"), true),
        (format!("SELECT pg_cancel_backend({pid})"), true),
        (
            "SELECT * FROM dblink('host=127.0.0.1', 'select 1') AS t(a int)".to_owned(),
            true,
        ),
        ("SELECT postgres_fdw_disconnect_all()".to_owned(), true),
        (
            "SELECT set_config('statement_timeout', '0', false)".to_owned(),
            true,
        ),
        ("SET statement_timeout = 0".to_owned(), false),
        (format!("SELECT nextval('{sc}.orders_id_seq')"), true),
        (format!("SELECT setval('{sc}.orders_id_seq', 1)"), true),
        ("SELECT pg_advisory_lock(4242)".to_owned(), true),
        ("SELECT pg_try_advisory_xact_lock(4242)".to_owned(), true),
    ];

    for (role, url) in both(&s).await {
        let workspace = tempfile::tempdir().unwrap();
        let t = tools(
            &[spec("pg", &url, Some("secret:pg"), 30)],
            Some(workspace.path()),
            &s.password,
        );
        // The connection works: only the attacks are refused.
        let fine = call(
            &t,
            "db_query",
            json!({"connection": "pg", "sql": format!("SELECT count(*) FROM {sc}.orders")}),
        )
        .await;
        assert!(
            !fine.is_error && fine.text.contains("1000"),
            "{role}: {}",
            fine.text
        );
        for (tool, args) in [
            ("db_tables", json!({"connection": "pg"})),
            (
                "db_describe",
                json!({"connection": "pg", "table": format!("{sc}.orders")}),
            ),
        ] {
            let r = call(&t, tool, args).await;
            assert!(!r.is_error, "{role} {tool}: {}", r.text);
        }

        for (i, (sql, select)) in attacks.iter().enumerate() {
            let path = format!("out-{i}.csv");
            let calls = [
                ("db_query", json!({"connection": "pg", "sql": sql}), true),
                (
                    "db_explain",
                    json!({"connection": "pg", "sql": sql, "analyze": true}),
                    *select,
                ),
                (
                    "db_export",
                    json!({"connection": "pg", "sql": sql, "path": path, "format": "csv"}),
                    true,
                ),
                // A "table" that is a call: described first, so refused as no table.
                (
                    "db_describe",
                    json!({"connection": "pg", "table": sql, "sample": 5}),
                    false,
                ),
            ];
            for (tool, args, ours) in calls {
                let r = call(&t, tool, args).await;
                assert!(r.is_error, "{role} {tool} {sql}: {}", r.text);
                if ours {
                    assert!(
                        r.text.starts_with("refused in a read-only call: "),
                        "{role} {tool} {sql}: {}",
                        r.text
                    );
                }
                assert!(!r.text.contains(&marker), "{role} {tool} {sql}: {}", r.text);
            }
            assert!(!workspace.path().join(&path).exists(), "{role} {sql}");
        }
        for name in [
            "copy-out",
            "copy-program",
            "copy-from-program",
            "lo-out",
            "adminpack",
        ] {
            assert!(!made(name).exists(), "{role}: {name} was made");
        }
        assert_eq!(
            std::fs::read_dir(outside.path()).unwrap().count(),
            2,
            "{role}: only the two files of the test"
        );
        // The other session is still there.
        victim
            .simple_query("SELECT 1")
            .await
            .expect("the other session still answers");
        assert_eq!(s.count(&last_value).await, seq_before, "{role}: sequence");
        assert!(
            s.admin
                .query_one("SELECT pg_try_advisory_lock(4242)", &[])
                .await
                .unwrap()
                .get::<_, bool>(0),
            "{role}: nobody holds the lock"
        );
        s.admin
            .batch_execute("SELECT pg_advisory_unlock(4242)")
            .await
            .unwrap();
        assert_eq!(
            s.count(&format!("SELECT count(*) FROM {sc}.orders")).await,
            1000
        );
        assert_eq!(
            s.count(&format!("SELECT count(*) FROM {sc}.customers"))
                .await,
            2
        );
        assert_eq!(
            s.count(&format!(
                "SELECT count(*) FROM {sc}.customers WHERE name LIKE '{marker}%'"
            ))
            .await,
            0
        );
    }
}

/// `pg_sleep` is not refused, but the statement timeout stops it, as a superuser too (a read
/// cannot lift the timeout: `SET` and `set_config` are refused above).
#[tokio::test]
async fn the_statement_timeout_fires_for_every_role() {
    let Some(s) = server("guardtimeout").await else {
        return;
    };
    let sc = &s.schema;
    for (role, url) in both(&s).await {
        let workspace = tempfile::tempdir().unwrap();
        let t = tools(
            &[spec("pg", &url, Some("secret:pg"), 1)],
            Some(workspace.path()),
            &s.password,
        );
        let sleep = format!("SELECT pg_sleep(30) FROM {sc}.customers");
        for (tool, args) in [
            ("db_query", json!({"connection": "pg", "sql": sleep})),
            (
                "db_explain",
                json!({"connection": "pg", "sql": sleep, "analyze": true}),
            ),
            (
                "db_export",
                json!({"connection": "pg", "sql": sleep, "path": "slept.csv", "format": "csv"}),
            ),
        ] {
            let r = call(&t, tool, args).await;
            assert_eq!(
                r.text, "the statement ran longer than 1 s and was cancelled in the database",
                "{role} {tool}"
            );
        }
        assert!(!workspace.path().join("slept.csv").exists(), "{role}");
    }
}
