//! The Matrix tools against a real Synapse homeserver on loopback (`scripts/chat-servers`):
//! a message posted is read back by another user through the client-server API and by
//! `matrix_read`; rooms not allowed are refused with nothing posted; a wrong token is a clear
//! error that does not show it.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::chat_support;

use cairn_config::{CommsConfig, MatrixConfig};
use cairn_web::Method;
use chat_support::{Setup, Vault, env, host_of, setup, unique};
use percent_encoding::{NON_ALPHANUMERIC, utf8_percent_encode};
use serde_json::{Value, json};

const ALIAS: &str = "#cairn-test:localhost";

fn enabled() -> bool {
    cairn_test_support::gate(
        "CAIRN_COMMS_TESTS",
        "with the mail, chat and API peers (scripts/chat-servers)",
    )
}

fn enc(s: &str) -> String {
    utf8_percent_encode(s, NON_ALPHANUMERIC).to_string()
}

/// The tools as @cairn, allowed `rooms`, with `token` as the vault secret `matrix`.
fn matrix(rooms: &[&str], token: &str) -> Setup {
    let url = env("CAIRN_MATRIX_TEST_URL");
    let settings = CommsConfig {
        sends_per_minute: 100,
        matrix: Some(MatrixConfig {
            homeserver: url.clone(),
            token_secret: "matrix".into(),
            allow_rooms: rooms.iter().map(|r| (*r).to_owned()).collect(),
        }),
        ..CommsConfig::default()
    };
    setup(settings, Vault::of(&[("matrix", token, &host_of(&url))]))
}

/// The client-server API as the user of `token`, through the test's own guard.
async fn api(s: &Setup, method: Method, path: &str, token: &str, body: Option<Value>) -> Value {
    let url = format!("{}{path}", env("CAIRN_MATRIX_TEST_URL"));
    let body = body.map(|b| b.to_string());
    let (status, text) = s
        .raw(
            method,
            &url,
            &format!("Bearer {token}"),
            body.as_deref().map(|b| (b, "application/json")),
        )
        .await;
    assert!((200..300).contains(&status), "{path}: {status} {text}");
    serde_json::from_str(&text).unwrap()
}

/// The newest messages of `room` as the user of `token` reads them.
async fn messages(s: &Setup, room: &str, token: &str) -> Vec<Value> {
    let page = api(
        s,
        Method::GET,
        &format!(
            "/_matrix/client/v3/rooms/{}/messages?dir=b&limit=50",
            enc(room)
        ),
        token,
        None,
    )
    .await;
    page["chunk"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["type"] == "m.room.message")
        .cloned()
        .collect()
}

async fn post_as(s: &Setup, room: &str, token: &str, text: &str) {
    api(
        s,
        Method::PUT,
        &format!(
            "/_matrix/client/v3/rooms/{}/send/m.room.message/{}",
            enc(room),
            uuid::Uuid::new_v4().simple()
        ),
        token,
        Some(json!({"msgtype": "m.text", "body": text})),
    )
    .await;
}

#[tokio::test]
async fn a_message_posted_is_read_back_by_the_other_user_and_by_matrix_read() {
    if !enabled() {
        return;
    }
    let (room, token, token2) = (
        env("CAIRN_MATRIX_TEST_ROOM"),
        env("CAIRN_MATRIX_TEST_TOKEN"),
        env("CAIRN_MATRIX_TEST_TOKEN2"),
    );
    let s = matrix(&[ALIAS], &token);
    let said = unique("**Deploy** of `v1.2` done <b>");
    let args = json!({"room": ALIAS, "text": said, "markdown": true});

    // First the exact message is asked about, and nothing reaches the room.
    let (key, shown) = s.asks("matrix_send", args.clone()).await;
    assert!(shown.contains(ALIAS) && shown.contains(&said), "{shown}");
    let seen = messages(&s, &room, &token2).await;
    assert!(!seen.iter().any(|e| e["content"]["body"] == said.as_str()));

    // Approved once: posted, through the alias to the room's id.
    let out = s.approved(&key, "matrix_send", args.clone()).await;
    assert!(!out.is_error, "{}", out.text);
    assert!(
        out.text.contains(&format!("posted to {ALIAS} ({room})")),
        "{}",
        out.text
    );
    assert!(out.text.contains("event $"), "{}", out.text);

    // The other user reads it from the room: the text, the sender, the formatting.
    let seen = messages(&s, &room, &token2).await;
    let ours = seen
        .iter()
        .find(|e| e["content"]["body"] == said.as_str())
        .expect("the message is in the room");
    assert_eq!(ours["sender"], "@cairn:localhost");
    assert_eq!(ours["content"]["format"], "org.matrix.custom.html");
    let html = ours["content"]["formatted_body"].as_str().unwrap();
    assert!(
        html.starts_with("<strong>Deploy</strong> of <code>v1.2</code> done &lt;b&gt;"),
        "{html}"
    );

    // The approval was for one message: the same call again asks again.
    s.asks("matrix_send", args).await;
    let count = messages(&s, &room, &token2)
        .await
        .iter()
        .filter(|e| e["content"]["body"] == said.as_str())
        .count();
    assert_eq!(count, 1);

    // matrix_read shows it with its sender (by alias, as allowed).
    let out = s
        .ok("matrix_read", json!({"room": ALIAS, "limit": 5}))
        .await;
    assert!(out.contains(&format!("@cairn:localhost: {said}")), "{out}");
    assert!(out.contains(" UTC  "), "{out}");
}

#[tokio::test]
async fn matrix_read_pages_back_with_the_token_it_gave() {
    if !enabled() {
        return;
    }
    let (room, token, token2) = (
        env("CAIRN_MATRIX_TEST_ROOM"),
        env("CAIRN_MATRIX_TEST_TOKEN"),
        env("CAIRN_MATRIX_TEST_TOKEN2"),
    );
    let s = matrix(&[room.as_str()], &token);
    let base = unique("page");
    for i in 1..=3 {
        post_as(&s, &room, &token2, &format!("{base} #{i}")).await;
    }
    let first = s.ok("matrix_read", json!({"room": room, "limit": 2})).await;
    assert!(first.contains("2 messages (oldest first"), "{first}");
    assert!(
        first.contains(&format!("@friend:localhost: {base} #3")),
        "{first}"
    );
    assert!(first.contains(&format!("{base} #2")), "{first}");
    assert!(!first.contains(&format!("{base} #1")), "{first}");
    // #2 comes before #3: oldest first.
    assert!(
        first.find("#2").unwrap() < first.find("#3").unwrap(),
        "{first}"
    );
    let from = first
        .split("`from`: \"")
        .nth(1)
        .and_then(|r| r.split('"').next())
        .expect("a paging token");
    let older = s
        .ok(
            "matrix_read",
            json!({"room": room, "limit": 2, "from": from}),
        )
        .await;
    assert!(older.contains(&format!("{base} #1")), "{older}");
    assert!(!older.contains(&format!("{base} #3")), "{older}");

    let bad = s
        .err("matrix_read", json!({"room": room, "limit": 1000}))
        .await;
    assert!(bad.contains("`limit` must be 1 to 100"), "{bad}");
}

#[tokio::test]
async fn a_room_not_allowed_is_refused_and_nothing_is_posted() {
    if !enabled() {
        return;
    }
    let (room, token, token2) = (
        env("CAIRN_MATRIX_TEST_ROOM"),
        env("CAIRN_MATRIX_TEST_TOKEN"),
        env("CAIRN_MATRIX_TEST_TOKEN2"),
    );
    let s = matrix(&[room.as_str()], &token);
    // Another room both users are in, not allowed.
    let other = api(
        &s,
        Method::POST,
        "/_matrix/client/v3/createRoom",
        &token2,
        Some(json!({"name": unique("side room"), "preset": "private_chat", "invite": ["@cairn:localhost"]})),
    )
    .await["room_id"]
        .as_str()
        .unwrap()
        .to_owned();
    api(
        &s,
        Method::POST,
        &format!("/_matrix/client/v3/join/{}", enc(&other)),
        &token,
        Some(json!({})),
    )
    .await;

    let said = unique("should not arrive");
    let seen = s
        .call("matrix_send", json!({"room": other, "text": said}))
        .await;
    assert!(seen.is_error);
    assert!(
        seen.text
            .contains(&format!("{other} is not an allowed recipient"))
            && seen.text.contains("comms.matrix.allow_rooms")
            && seen.text.contains(&room),
        "{}",
        seen.text
    );
    // A refusal, not a question: there is nothing to approve.
    assert!(cairn_agent::tools::protected_of(&seen.result).is_empty());
    assert!(
        !messages(&s, &other, &token2)
            .await
            .iter()
            .any(|e| e["content"]["body"] == said.as_str())
    );
    // The alias of an allowed room is not the same entry: refused as written.
    let r = s
        .err("matrix_send", json!({"room": ALIAS, "text": said}))
        .await;
    assert!(r.contains("not an allowed recipient"), "{r}");

    // Too long or empty: said before anything is asked.
    let r = s
        .err(
            "matrix_send",
            json!({"room": room, "text": "x".repeat(20_000)}),
        )
        .await;
    assert!(r.contains("20000 bytes, more than the 16384"), "{r}");
    let r = s
        .err("matrix_send", json!({"room": room, "text": " \n"}))
        .await;
    assert!(r.contains("`text` is empty"), "{r}");

    let r = s.err("matrix_read", json!({"room": other})).await;
    assert!(
        r.contains("is not an allowed room") && r.contains("matrix_rooms"),
        "{r}"
    );
    let r = s
        .err("matrix_send", json!({"room": "general", "text": "hi"}))
        .await;
    assert!(r.contains("is not a Matrix room id"), "{r}");

    // matrix_rooms lists both, marking only the allowed one.
    let out = s.ok("matrix_rooms", json!({})).await;
    let line = |id: &str| {
        out.lines()
            .find(|l| l.contains(id))
            .unwrap_or_else(|| panic!("{id} not listed: {out}"))
            .to_owned()
    };
    let main = line(&room);
    assert!(
        main.starts_with("| yes | cairn test | #cairn-test:localhost |"),
        "{main}"
    );
    assert!(main.ends_with("| 2 |"), "{main}");
    assert!(line(&other).starts_with("| no |"), "{out}");
    let filtered = s.ok("matrix_rooms", json!({"filter": "CAIRN-TEST"})).await;
    assert!(
        filtered.contains(&room) && !filtered.contains(&other),
        "{filtered}"
    );
}

#[tokio::test]
async fn a_wrong_or_misbound_token_is_a_clear_error_that_does_not_show_it() {
    if !enabled() {
        return;
    }
    let room = env("CAIRN_MATRIX_TEST_ROOM");
    let wrong = "syt_d3Jvbmc_NotARealTokenAtAll_123456";
    let s = matrix(&[room.as_str()], wrong);
    for (tool, args) in [
        ("matrix_rooms", json!({})),
        ("matrix_read", json!({"room": room})),
    ] {
        let r = s.err(tool, args).await;
        assert!(
            r.contains("refused the access token in vault secret `matrix`")
                && r.contains("M_UNKNOWN_TOKEN"),
            "{r}"
        );
        assert!(!r.contains(wrong), "{r}");
    }

    // A token bound to another host is never sent.
    let url = env("CAIRN_MATRIX_TEST_URL");
    let settings = CommsConfig {
        matrix: Some(MatrixConfig {
            homeserver: url,
            token_secret: "matrix".into(),
            allow_rooms: vec![room.clone()],
        }),
        ..CommsConfig::default()
    };
    let s = setup(
        settings,
        Vault::of(&[(
            "matrix",
            &env("CAIRN_MATRIX_TEST_TOKEN"),
            "matrix.example.org",
        )]),
    );
    let r = s.err("matrix_read", json!({"room": room})).await;
    assert!(
        r.contains("refused before sending") && r.contains("not bound to 127.0.0.1"),
        "{r}"
    );

    // An allowed alias that does not exist: said, with the homeserver's words.
    let s = matrix(
        &["#no-such-room:localhost"],
        &env("CAIRN_MATRIX_TEST_TOKEN"),
    );
    let r = s
        .err("matrix_read", json!({"room": "#no-such-room:localhost"}))
        .await;
    assert!(
        r.contains("could not resolve the alias #no-such-room:localhost")
            && r.contains("404 (M_NOT_FOUND"),
        "{r}"
    );

    // A homeserver that does not answer: said, without a hang.
    let closed = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let settings = CommsConfig {
        matrix: Some(MatrixConfig {
            homeserver: format!("http://127.0.0.1:{closed}"),
            token_secret: "matrix".into(),
            allow_rooms: vec![room.clone()],
        }),
        ..CommsConfig::default()
    };
    let s = setup(settings, Vault::of(&[("matrix", wrong, "127.0.0.1")]));
    let r = s.err("matrix_rooms", json!({})).await;
    assert!(
        r.contains(&format!(
            "the homeserver http://127.0.0.1:{closed} did not answer"
        )),
        "{r}"
    );

    // No [comms.matrix]: said, with what to add.
    let s = setup(CommsConfig::default(), Vault::of(&[]));
    let r = s.err("matrix_rooms", json!({})).await;
    assert!(r.contains("add `[comms.matrix]`"), "{r}");
}
