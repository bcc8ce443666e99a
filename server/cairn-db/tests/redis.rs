//! The Redis tools on a real Redis server (`scripts/test-databases` starts one; `.ci/run` sets
//! `CAIRN_DB_TESTS=1` and the server's URL and password).

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::time::{Duration, Instant};

use cairn_test_support::gate::gate;
use common::{call, spec, tools};
use serde_json::json;

struct Server {
    url: String,
    password: String,
    /// This test's keys all start with `{prefix}:`.
    prefix: String,
    admin: redis::aio::MultiplexedConnection,
}

/// The server, with this test's keys of every type; `None` when the gate is off.
async fn server(test: &str) -> Option<Server> {
    if !gate(
        "CAIRN_DB_TESTS",
        "and CAIRN_REDIS_TEST_URL / CAIRN_REDIS_TEST_PASSWORD (eval \"$(scripts/test-databases)\")",
    ) {
        return None;
    }
    let url = std::env::var("CAIRN_REDIS_TEST_URL").expect("CAIRN_REDIS_TEST_URL");
    let password = std::env::var("CAIRN_REDIS_TEST_PASSWORD").expect("CAIRN_REDIS_TEST_PASSWORD");
    let authed = url.replace("redis://", &format!("redis://:{password}@"));
    let client = redis::Client::open(authed).unwrap();
    let mut admin = client.get_multiplexed_async_connection().await.unwrap();
    let p = format!("t_{test}");
    let old: Vec<String> = redis::cmd("KEYS")
        .arg(format!("{p}:*"))
        .query_async(&mut admin)
        .await
        .unwrap();
    if !old.is_empty() {
        let () = redis::cmd("DEL")
            .arg(&old)
            .query_async(&mut admin)
            .await
            .unwrap();
    }
    let mut pipe = redis::pipe();
    pipe.cmd("SET").arg(format!("{p}:s")).arg("hello").ignore();
    pipe.cmd("SET")
        .arg(format!("{p}:bin"))
        .arg(&[0xff_u8, 0xfe, 0x00, 0x01][..])
        .ignore();
    pipe.cmd("SET")
        .arg(format!("{p}:big"))
        .arg("x".repeat(1_000_000))
        .ignore();
    pipe.cmd("SET")
        .arg(format!("{p}:session"))
        .arg("1")
        .arg("EX")
        .arg(600)
        .ignore();
    pipe.cmd("HSET")
        .arg(format!("{p}:h"))
        .arg("b")
        .arg("2")
        .arg("a")
        .arg("1")
        .ignore();
    pipe.cmd("RPUSH")
        .arg(format!("{p}:l"))
        .arg(&["x", "y", "z"][..])
        .ignore();
    pipe.cmd("RPUSH")
        .arg(format!("{p}:long"))
        .arg((0..1000).collect::<Vec<i32>>())
        .ignore();
    pipe.cmd("SADD")
        .arg(format!("{p}:set"))
        .arg(&["m2", "m1"][..])
        .ignore();
    pipe.cmd("ZADD")
        .arg(format!("{p}:z"))
        .arg(2.5)
        .arg("b")
        .arg(1)
        .arg("a")
        .ignore();
    pipe.cmd("XADD")
        .arg(format!("{p}:x"))
        .arg("1-1")
        .arg("f")
        .arg("v")
        .arg("g")
        .arg("w")
        .ignore();
    for i in 0..300 {
        pipe.cmd("SET").arg(format!("{p}:many:{i}")).arg(i).ignore();
    }
    let () = pipe.query_async(&mut admin).await.unwrap();
    Some(Server {
        url,
        password,
        prefix: p,
        admin,
    })
}

impl Server {
    fn tools(&self) -> cairn_toolkit::ToolSet<cairn_db::Db> {
        tools(
            &[
                spec("r", &self.url, Some("secret:redis"), 30),
                spec("lite", "sqlite:app.db", None, 30),
            ],
            None,
            &self.password,
        )
    }
}

#[tokio::test]
async fn keys_are_scanned_by_pattern_with_type_and_ttl_and_capped() {
    let Some(s) = server("keys").await else {
        return;
    };
    let t = s.tools();
    let p = &s.prefix;
    let listed = call(&t, "db_connections", json!({})).await;
    assert!(
        listed.text.starts_with("- r: Redis at redis://127.0.0.1:"),
        "{}",
        listed.text
    );
    assert!(!listed.text.contains(&s.password));

    let k = call(
        &t,
        "redis_keys",
        json!({"connection": "r", "pattern": format!("{p}:s*")}),
    )
    .await;
    assert!(!k.is_error, "{}", k.text);
    assert!(
        k.text.contains(&format!("| {p}:s | string | none |")),
        "{}",
        k.text
    );
    assert!(
        k.text.contains(&format!("| {p}:set | set | none |")),
        "{}",
        k.text
    );
    assert!(
        k.text
            .contains(&format!("| {p}:session | string | 600 s |"))
            || k.text
                .contains(&format!("| {p}:session | string | 599 s |")),
        "{}",
        k.text
    );
    assert!(k.text.contains("(3 rows)"), "{}", k.text);
    assert!(!k.text.contains(":many:"), "{}", k.text);

    let k = call(
        &t,
        "redis_keys",
        json!({"connection": "r", "pattern": format!("{p}:many:*"), "limit": 50}),
    )
    .await;
    assert!(!k.is_error, "{}", k.text);
    let out = k.structured.unwrap();
    assert_eq!(out["rows"].as_array().unwrap().len(), 50);
    assert_eq!(out["truncated"], true);
    assert!(
        k.text
            .contains("50 rows shown; more were left out: narrow the pattern"),
        "{}",
        k.text
    );
}

#[tokio::test]
async fn get_reads_every_type_capped() {
    let Some(s) = server("get").await else {
        return;
    };
    let t = s.tools();
    let p = &s.prefix;
    let get = |key: &str| {
        let t = &t;
        let key = format!("{p}:{key}");
        async move { call(t, "redis_get", json!({"connection": "r", "key": key})).await }
    };
    let g = get("s").await;
    assert!(
        g.text
            .starts_with(&format!("`{p}:s`: string, 5 bytes, expires: none")),
        "{}",
        g.text
    );
    assert!(g.text.contains("| hello |"), "{}", g.text);
    let g = get("bin").await;
    assert!(g.text.contains("| <4 bytes> |"), "{}", g.text);
    let g = get("big").await;
    assert!(g.text.contains("1000000 bytes"), "{}", g.text);
    assert!(g.text.contains("xxx… ("), "{}", g.text);
    assert!(g.text.len() < 2000, "{}", g.text.len());
    let g = get("h").await;
    assert!(g.text.contains("hash, 2 fields"), "{}", g.text);
    assert!(
        g.text
            .contains("| field | value |\n| --- | --- |\n| a | 1 |\n| b | 2 |"),
        "{}",
        g.text
    );
    let g = get("l").await;
    assert!(
        g.text.contains("| 0 | x |\n| 1 | y |\n| 2 | z |"),
        "{}",
        g.text
    );
    let g = get("set").await;
    assert!(g.text.contains("| m1 |\n| m2 |"), "{}", g.text);
    let g = get("z").await;
    assert!(g.text.contains("| a | 1 |\n| b | 2.5 |"), "{}", g.text);
    let g = get("x").await;
    assert!(g.text.contains("stream, 1 entries"), "{}", g.text);
    assert!(g.text.contains("| 1-1 | f=v, g=w |"), "{}", g.text);
    let g = get("long").await;
    assert!(g.text.contains("list, 1000 elements"), "{}", g.text);
    let out = g.structured.unwrap();
    assert_eq!(out["rows"].as_array().unwrap().len(), 200);
    assert_eq!(out["truncated"], true);
    let g = get("nothing").await;
    assert!(!g.is_error, "{}", g.text);
    assert_eq!(g.text, format!("no key `{p}:nothing` on `r`"));
}

#[tokio::test]
async fn set_with_a_ttl_and_delete_change_the_server() {
    let Some(mut s) = server("write").await else {
        return;
    };
    let t = s.tools();
    let p = s.prefix.clone();
    let w = call(
        &t,
        "redis_set",
        json!({"connection": "r", "key": format!("{p}:new"), "value": "fresh", "ttl_seconds": 100}),
    )
    .await;
    assert_eq!(
        w.text,
        format!("set `{p}:new` on `r` (5 bytes), expires in 100 s")
    );
    let (value, ttl): (String, i64) = redis::pipe()
        .cmd("GET")
        .arg(format!("{p}:new"))
        .cmd("TTL")
        .arg(format!("{p}:new"))
        .query_async(&mut s.admin)
        .await
        .unwrap();
    assert_eq!(value, "fresh");
    assert!((90..=100).contains(&ttl), "{ttl}");

    let w = call(
        &t,
        "redis_set",
        json!({"connection": "r", "key": format!("{p}:h"), "value": "now a string"}),
    )
    .await;
    assert!(w.text.ends_with("no expiry"), "{}", w.text);
    let g = call(
        &t,
        "redis_get",
        json!({"connection": "r", "key": format!("{p}:h")}),
    )
    .await;
    assert!(g.text.contains("| now a string |"), "{}", g.text);

    let d = call(
        &t,
        "redis_delete",
        json!({"connection": "r", "keys": [format!("{p}:new"), format!("{p}:missing")]}),
    )
    .await;
    assert_eq!(d.text, "deleted 1 of 2 keys on `r`");
    let exists: i64 = redis::cmd("EXISTS")
        .arg(format!("{p}:new"))
        .query_async(&mut s.admin)
        .await
        .unwrap();
    assert_eq!(exists, 0);
    let d = call(&t, "redis_delete", json!({"connection": "r", "keys": []})).await;
    assert!(d.is_error, "{}", d.text);
}

/// The SQL tools refuse a Redis connection and the Redis tools a SQL one, naming the right
/// tools; a wrong password and an unreachable server say what went wrong without the password.
#[tokio::test]
async fn wrong_tools_wrong_password_and_no_server_are_clear() {
    let Some(s) = server("errors").await else {
        return;
    };
    let t = s.tools();
    for (tool, args) in [
        ("db_tables", json!({"connection": "r"})),
        ("db_query", json!({"connection": "r", "sql": "SELECT 1"})),
        ("db_describe", json!({"connection": "r", "table": "x"})),
        ("db_execute", json!({"connection": "r", "sql": "SELECT 1"})),
    ] {
        let q = call(&t, tool, args).await;
        assert!(
            q.is_error && q.text.contains("is Redis, not SQL; use redis_keys"),
            "{tool}: {}",
            q.text
        );
    }
    let q = call(&t, "redis_keys", json!({"connection": "lite"})).await;
    assert!(
        q.is_error && q.text.contains("is SQLite, not Redis"),
        "{}",
        q.text
    );

    let wrong = tools(
        &[spec("r", &s.url, Some("secret:redis"), 30)],
        None,
        "not-the-password",
    );
    let q = call(&wrong, "redis_keys", json!({"connection": "r"})).await;
    assert!(
        q.is_error
            && q.text
                .contains("could not connect: Password authentication failed"),
        "{}",
        q.text
    );
    assert!(!q.text.contains("not-the-password"));

    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = closed.local_addr().unwrap().port();
    drop(closed);
    let t = tools(
        &[spec(
            "down",
            &format!("redis://127.0.0.1:{port}/0"),
            Some("secret:redis"),
            30,
        )],
        None,
        &s.password,
    );
    let started = Instant::now();
    let q = call(&t, "redis_get", json!({"connection": "down", "key": "k"})).await;
    assert!(
        q.is_error && q.text.contains("could not connect"),
        "{}",
        q.text
    );
    assert!(!q.text.contains(&s.password));
    assert!(started.elapsed() < Duration::from_secs(20));
}
