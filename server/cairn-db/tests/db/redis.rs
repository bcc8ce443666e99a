//! The Redis tools on a real Redis server (`scripts/test-databases` starts one; `.ci/run` sets
//! `CAIRN_DB_TESTS=1` and the server's URL and password).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

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

/// `CONFIG GET dir`, the replication role and whether `key` exists: the state an injected
/// command would change.
async fn state(s: &mut Server, key: &str) -> (Vec<String>, bool, i64) {
    let dir: Vec<String> = redis::cmd("CONFIG")
        .arg("GET")
        .arg("dir")
        .query_async(&mut s.admin)
        .await
        .unwrap();
    let info: String = redis::cmd("INFO")
        .arg("replication")
        .query_async(&mut s.admin)
        .await
        .unwrap();
    let exists: i64 = redis::cmd("EXISTS")
        .arg(key)
        .query_async(&mut s.admin)
        .await
        .unwrap();
    (dir, info.contains("role:master"), exists)
}

/// The Redis tools send only fixed commands, each argument as one RESP bulk string: a key,
/// value or pattern holding CR/LF and a whole command (or a RESP frame) is data, never a
/// command. After every tool has been given each of them, the server's `dir`, its role, a
/// sentinel key (no FLUSHALL) and the keyspace are as they were, and the odd key round-trips.
#[tokio::test]
async fn crlf_and_commands_in_keys_values_and_patterns_are_one_argument() {
    let Some(mut s) = server("inject").await else {
        return;
    };
    let t = s.tools();
    let p = s.prefix.clone();
    let injected = format!("{p}:injected");
    let before = state(&mut s, &injected).await;
    assert_eq!(before.2, 0);
    let scan = |s: &mut Server| {
        let pattern = format!("{p}:*");
        let mut admin = s.admin.clone();
        async move {
            let mut keys: Vec<Vec<u8>> = redis::cmd("KEYS")
                .arg(pattern)
                .query_async(&mut admin)
                .await
                .unwrap();
            keys.sort();
            keys
        }
    };
    let keyspace = scan(&mut s).await;
    let commands = [
        "CONFIG SET dir /".to_owned(),
        format!("SET {injected} 1"),
        "FLUSHALL".to_owned(),
        format!("EVAL \"return redis.call('set', '{injected}', 1)\" 0"),
        "EVALSHA 0000000000000000000000000000000000000000 0".to_owned(),
        "SCRIPT FLUSH".to_owned(),
        "FUNCTION FLUSH".to_owned(),
        "MONITOR".to_owned(),
        "SUBSCRIBE c".to_owned(),
        "PSUBSCRIBE *".to_owned(),
        "DEBUG SLEEP 5".to_owned(),
        "SHUTDOWN NOSAVE".to_owned(),
        "MODULE LOAD /tmp/nope.so".to_owned(),
        "SLAVEOF 127.0.0.1 1".to_owned(),
        "REPLICAOF 127.0.0.1 1".to_owned(),
        format!("MIGRATE 127.0.0.1 1 {p}:s 0 1000"),
        // A whole RESP frame, as a client would send SET.
        format!(
            "*3\r\n$3\r\nSET\r\n${}\r\n{injected}\r\n$1\r\n1",
            injected.len()
        ),
    ];
    for command in &commands {
        let key = format!("{p}:a\r\n{command}\r\n");
        let value = format!("v\r\n{command}\r\n");
        let g = call(&t, "redis_get", json!({"connection": "r", "key": key})).await;
        assert!(!g.is_error && g.text.starts_with("no key"), "{}", g.text);
        let w = call(
            &t,
            "redis_set",
            json!({"connection": "r", "key": key, "value": value}),
        )
        .await;
        assert!(!w.is_error, "{command}: {}", w.text);
        let stored: String = redis::cmd("GET")
            .arg(&key)
            .query_async(&mut s.admin)
            .await
            .unwrap();
        assert_eq!(stored, value, "one key, one value");
        let k = call(
            &t,
            "redis_keys",
            json!({"connection": "r", "pattern": format!("{p}:a\r\n{command}*")}),
        )
        .await;
        assert!(!k.is_error, "{command}: {}", k.text);
        assert!(k.text.contains("(1 row)"), "{command}: {}", k.text);
        let d = call(
            &t,
            "redis_delete",
            json!({"connection": "r", "keys": [key]}),
        )
        .await;
        assert_eq!(d.text, "deleted 1 of 1 key on `r`", "{command}");
        // A tool takes no command: an argument naming one is refused before anything is sent.
        let c = call(
            &t,
            "redis_keys",
            json!({"connection": "r", "command": command}),
        )
        .await;
        assert!(c.is_error, "{}", c.text);
    }
    let after = state(&mut s, &injected).await;
    assert_eq!(after, before, "CONFIG GET dir, role, the injected key");
    assert_eq!(scan(&mut s).await, keyspace, "no key added or removed");
    let pong: String = redis::cmd("PING").query_async(&mut s.admin).await.unwrap();
    assert_eq!(pong, "PONG");
}

/// The server's count of bytes it has sent to clients.
async fn sent(s: &mut Server) -> u64 {
    let info: String = redis::cmd("INFO")
        .arg("stats")
        .query_async(&mut s.admin)
        .await
        .unwrap();
    info.lines()
        .find_map(|l| l.strip_prefix("total_net_output_bytes:"))
        .unwrap()
        .trim()
        .parse()
        .unwrap()
}

/// A 50 MB string is read by its head (STRLEN, then GETRANGE up to the result cap): the
/// server sends a few kilobytes, not the value, and the answer states the full size.
#[tokio::test]
async fn a_huge_value_is_read_only_up_to_the_cap() {
    let Some(mut s) = server("huge").await else {
        return;
    };
    let t = s.tools();
    let key = format!("{}:huge", s.prefix);
    let size = 50 * 1024 * 1024;
    let mut pipe = redis::pipe();
    let chunk = "y".repeat(1024 * 1024);
    for _ in 0..50 {
        pipe.cmd("APPEND").arg(&key).arg(&chunk).ignore();
    }
    let () = pipe.query_async(&mut s.admin).await.unwrap();
    let start = sent(&mut s).await;
    let g = call(&t, "redis_get", json!({"connection": "r", "key": key})).await;
    let used = sent(&mut s).await - start;
    assert!(!g.is_error, "{}", g.text);
    assert!(
        g.text.contains(&format!("string, {size} bytes")),
        "{}",
        &g.text[..200.min(g.text.len())]
    );
    assert!(g.text.contains("yyy… ("), "{}", &g.text[..200]);
    assert!(g.text.len() < 2000, "{}", g.text.len());
    // 64 KiB of head and the small answers; other tests' traffic is far below 50 MB.
    assert!(used < 4 * 1024 * 1024, "the server sent {used} bytes");
    let () = redis::cmd("DEL")
        .arg(&key)
        .query_async(&mut s.admin)
        .await
        .unwrap();
}

/// Redis cannot read part of a list or hash element, so a key of huge elements is read by
/// fewer of them (the server's MEMORY USAGE estimate against a 16 MB budget): four 10 MB list
/// elements come back as one; of 64 hash fields of 1 MB, at most 16 (the estimate counts the
/// allocator's overhead; HSCAN may send a few more than asked, never all).
#[tokio::test]
async fn huge_elements_are_read_fewer_at_a_time() {
    let Some(mut s) = server("elements").await else {
        return;
    };
    let t = s.tools();
    let (list, hash) = (
        format!("{}:biglist", s.prefix),
        format!("{}:bighash", s.prefix),
    );
    let mb = 1024 * 1024;
    let mut pipe = redis::pipe();
    let element = "e".repeat(10 * mb);
    for _ in 0..4 {
        pipe.cmd("RPUSH").arg(&list).arg(&element).ignore();
    }
    let field = "f".repeat(mb);
    for i in 0..64 {
        pipe.cmd("HSET")
            .arg(&hash)
            .arg(format!("f{i:02}"))
            .arg(&field)
            .ignore();
    }
    let () = pipe.query_async(&mut s.admin).await.unwrap();
    for (key, heading, rows, most) in [
        (&list, "list, 4 elements", 1, 16 * mb),
        (&hash, "hash, 64 fields", 16, 48 * mb),
    ] {
        let start = sent(&mut s).await;
        let g = call(&t, "redis_get", json!({"connection": "r", "key": key})).await;
        let used = sent(&mut s).await - start;
        assert!(!g.is_error, "{}", &g.text[..200.min(g.text.len())]);
        assert!(g.text.contains(heading), "{}", &g.text[..200]);
        let out = g.structured.unwrap();
        let shown = out["rows"].as_array().unwrap().len();
        assert!((1..=rows).contains(&shown), "{key}: {shown} rows");
        assert_eq!(out["truncated"], true);
        assert!(used < most as u64, "{key}: the server sent {used} bytes");
    }
    let () = redis::cmd("DEL")
        .arg(&[&list, &hash])
        .query_async(&mut s.admin)
        .await
        .unwrap();
}
