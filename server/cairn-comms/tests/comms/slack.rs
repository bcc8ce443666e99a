//! The Slack tools against Prism serving Slack's published Web API description (`--errors`, so a
//! request the description does not allow fails), behind a recording relay on loopback so each
//! test sees what was sent, what Prism answered, and that a refusal sent nothing.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::recorder;

use cairn_config::{CommsConfig, SlackConfig};
use cairn_test_support::tools::call;
use recorder::{Recorder, Vault, approved, tools};
use serde_json::json;

const TOKEN: &str = "xoxb-cairn-test-8f2d1c7e";

/// Whether the peers are up (`CAIRN_COMMS_TESTS`); a test that needs them skips, and says so.
fn gate() -> bool {
    cairn_test_support::gate(
        "CAIRN_COMMS_TESTS",
        "with the mail, chat and API peers (scripts/api-mocks)",
    )
}

/// The Prism base the script printed, or `None` (the test is skipped, and says so).
fn prism() -> Option<String> {
    if !gate() {
        return None;
    }
    Some(std::env::var("CAIRN_SLACK_TEST_API").expect("CAIRN_SLACK_TEST_API (scripts/api-mocks)"))
}

fn settings(api: &str, allow: &[&str]) -> CommsConfig {
    CommsConfig {
        sends_per_minute: 100,
        slack: Some(SlackConfig {
            api: api.to_owned(),
            token_secret: "slack-bot".into(),
            allow_channels: allow.iter().map(|s| (*s).to_owned()).collect(),
        }),
        ..CommsConfig::default()
    }
}

fn vault(bound: &str) -> Vault {
    Vault(vec![("slack-bot", TOKEN.to_owned(), bound.to_owned())])
}

#[tokio::test]
async fn slack_post_posts_to_an_allowed_channel_as_prism_validated_it() {
    let Some(api) = prism() else { return };
    let relay = Recorder::relaying(&api).await;
    let (t, approvals) = tools(
        settings(&relay.url, &["#general"]),
        vault("127.0.0.1"),
        true,
    );

    let args = json!({"channel": "#general", "text": "Deploy 1.4.2 finished: all green"});
    let (question, shown, done) = approved(&t, &approvals, "slack_post", args).await;
    assert!(question.contains("slack to #general"), "{question}");
    assert_eq!(shown, "slack to #general: Deploy 1.4.2 finished: all green");
    assert!(!done.is_error, "{}", done.text);
    assert_eq!(
        done.text,
        "posted to #general (C012AB3CD) at 2017-08-22 21:05:56 UTC (ts 1503435956.000247)"
    );

    // Exactly one post, after the approval, to the id the name resolved to, with the bot token
    // the guard attached; Prism accepted it (200: the description allowed the request).
    let posts = relay.to("/chat.postMessage");
    assert_eq!(posts.len(), 1, "{posts:?}");
    let post = &posts[0];
    assert_eq!(post.method, "POST");
    assert_eq!(post.status, 200);
    assert_eq!(
        post.header("authorization"),
        Some(format!("Bearer {TOKEN}").as_str())
    );
    assert_eq!(
        post.form(),
        vec![
            ("channel".to_owned(), "C012AB3CD".to_owned()),
            (
                "text".to_owned(),
                "Deploy 1.4.2 finished: all green".to_owned()
            ),
        ]
    );
    // The name was looked up, as a read.
    assert!(!relay.to("/conversations.list").is_empty());
    assert!(!question.contains(TOKEN) && !done.text.contains(TOKEN));

    // By id, and in a thread: the id is allowed because its name is.
    let args =
        json!({"channel": "C012AB3CD", "text": "and the notes", "thread_ts": "1503435956.000247"});
    let (_, shown, done) = approved(&t, &approvals, "slack_post", args).await;
    assert!(
        shown.contains("(in the thread of 1503435956.000247) and the notes"),
        "{shown}"
    );
    assert!(!done.is_error, "{}", done.text);
    assert!(
        done.text.contains(", in the thread of 1503435956.000247"),
        "{}",
        done.text
    );
    let posts = relay.to("/chat.postMessage");
    assert_eq!(posts.len(), 2);
    assert_eq!(posts[1].status, 200);
    assert!(
        posts[1]
            .form()
            .contains(&("thread_ts".to_owned(), "1503435956.000247".to_owned()))
    );
}

#[tokio::test]
async fn slack_post_refuses_channels_not_allowed_and_sends_nothing() {
    let Some(api) = prism() else { return };
    let relay = Recorder::relaying(&api).await;
    let (t, _) = tools(
        settings(&relay.url, &["#general"]),
        vault("127.0.0.1"),
        true,
    );

    for channel in [
        "#random",
        "random",
        "C061EG9T2",
        "C0NOSUCH1",
        "general, #random",
    ] {
        let seen = call(&t, "slack_post", json!({"channel": channel, "text": "hi"})).await;
        assert!(seen.is_error, "{channel}: {}", seen.text);
        assert!(
            seen.text.contains("is not an allowed recipient")
                && seen.text.contains("comms.slack.allow_channels")
                && seen.text.contains("allowed now: #general"),
            "{channel}: {}",
            seen.text
        );
        // No question to approve: a channel not allowed is refused outright.
        assert!(cairn_agent::tools::protected_of(&seen.result).is_empty());
    }
    // The id of #random was refused by its name, found by a read.
    let seen = call(
        &t,
        "slack_post",
        json!({"channel": "C061EG9T2", "text": "hi"}),
    )
    .await;
    assert!(seen.text.contains("#random (C061EG9T2)"), "{}", seen.text);
    assert!(relay.to("/chat.postMessage").is_empty());

    // With nothing allowed, nothing is even looked up.
    let quiet = Recorder::relaying(&api).await;
    let (t, _) = tools(settings(&quiet.url, &[]), vault("127.0.0.1"), true);
    let seen = call(
        &t,
        "slack_post",
        json!({"channel": "#general", "text": "hi"}),
    )
    .await;
    assert!(seen.text.contains("allowed now: none"), "{}", seen.text);
    assert!(quiet.requests().is_empty(), "{:?}", quiet.requests());
}

#[tokio::test]
async fn slack_post_refuses_bad_messages_before_sending() {
    let Some(api) = prism() else { return };
    let relay = Recorder::relaying(&api).await;
    let (t, _) = tools(
        settings(&relay.url, &["C012AB3CD"]),
        vault("127.0.0.1"),
        true,
    );

    let empty = call(
        &t,
        "slack_post",
        json!({"channel": "C012AB3CD", "text": "  \n"}),
    )
    .await;
    assert!(
        empty.is_error && empty.text.contains("empty"),
        "{}",
        empty.text
    );
    let long = call(
        &t,
        "slack_post",
        json!({"channel": "C012AB3CD", "text": "x".repeat(40_001)}),
    )
    .await;
    assert!(
        long.is_error && long.text.contains("40001 characters, more than the 40000"),
        "{}",
        long.text
    );
    let thread = call(
        &t,
        "slack_post",
        json!({"channel": "C012AB3CD", "text": "hi", "thread_ts": "x&channel=C061EG9T2"}),
    )
    .await;
    assert!(
        thread.is_error && thread.text.contains("not a message time"),
        "{}",
        thread.text
    );
    let unknown = call(
        &t,
        "slack_post",
        json!({"channel": "C012AB3CD", "text": "hi", "as_user": true}),
    )
    .await;
    assert!(
        unknown.is_error && unknown.text.contains("as_user"),
        "{}",
        unknown.text
    );
    assert!(relay.requests().is_empty(), "{:?}", relay.requests());
}

#[tokio::test]
async fn a_token_bound_to_another_host_is_never_sent() {
    let Some(api) = prism() else { return };
    let relay = Recorder::relaying(&api).await;
    let (t, _) = tools(
        settings(&relay.url, &["C012AB3CD"]),
        vault("slack.com"),
        true,
    );

    let seen = call(&t, "slack_channels", json!({})).await;
    assert!(seen.is_error, "{}", seen.text);
    assert!(
        seen.text
            .contains("secret `slack-bot` may not be sent to 127.0.0.1"),
        "{}",
        seen.text
    );
    let seen = call(&t, "slack_history", json!({"channel": "C012AB3CD"})).await;
    assert!(seen.is_error, "{}", seen.text);
    assert!(relay.requests().is_empty(), "{:?}", relay.requests());
}

#[tokio::test]
async fn slack_channels_lists_pages_until_the_cursor_repeats() {
    let Some(api) = prism() else { return };
    let relay = Recorder::relaying(&api).await;
    let (t, _) = tools(
        settings(&relay.url, &["#general"]),
        vault("127.0.0.1"),
        true,
    );

    let seen = call(&t, "slack_channels", json!({})).await;
    assert!(!seen.is_error, "{}", seen.text);
    assert!(
        seen.text
            .contains("| C012AB3CD | #general | 4 | public | yes |"),
        "{}",
        seen.text
    );
    assert!(
        seen.text
            .contains("| C061EG9T2 | #random | 4 | public | no |"),
        "{}",
        seen.text
    );
    // Prism answers every page with the same cursor: the second page repeats the first, so
    // the rows are not repeated and the listing stops, saying it may go on.
    assert_eq!(seen.text.matches("C012AB3CD").count(), 1, "{}", seen.text);
    assert!(seen.text.contains("more were left out"), "{}", seen.text);
    let pages = relay.to("/conversations.list");
    assert_eq!(pages.len(), 2, "{pages:?}");
    assert!(pages.iter().all(|p| p.status == 200));
    assert!(
        pages[0]
            .query()
            .contains(&("limit".to_owned(), "200".to_owned()))
    );
    assert!(
        pages[1]
            .query()
            .contains(&("cursor".to_owned(), "dGVhbTpDMDYxRkE1UEI=".to_owned()))
    );

    let one = call(&t, "slack_channels", json!({"limit": 1})).await;
    assert!(
        one.text.contains("#general") && !one.text.contains("#random"),
        "{}",
        one.text
    );
    assert!(
        one.text.contains("(1 rows shown; more were left out"),
        "{}",
        one.text
    );
    let filtered = call(&t, "slack_channels", json!({"filter": "RAND"})).await;
    assert!(
        filtered.text.contains("#random") && !filtered.text.contains("#general"),
        "{}",
        filtered.text
    );
    let bad = call(&t, "slack_channels", json!({"limit": "all"})).await;
    assert!(bad.is_error && bad.text.contains("limit"), "{}", bad.text);
}

#[tokio::test]
async fn slack_history_reads_only_allowed_channels() {
    let Some(api) = prism() else { return };
    let relay = Recorder::relaying(&api).await;
    let (t, _) = tools(
        settings(&relay.url, &["#general"]),
        vault("127.0.0.1"),
        true,
    );

    let seen = call(
        &t,
        "slack_history",
        json!({"channel": "#general", "limit": 5}),
    )
    .await;
    assert!(!seen.is_error, "{}", seen.text);
    assert!(
        seen.text
            .starts_with("Messages in #general (C012AB3CD), newest first"),
        "{}",
        seen.text
    );
    assert!(
        seen.text.contains(
            "| 2017-11-30 23:52:30 UTC | U012AB3CDE | I find you punny and would like to smell your nose letter | 1512085950.000216 |"
        ),
        "{}",
        seen.text
    );
    assert!(
        seen.text
            .contains("What, you want to smell my shoes better?"),
        "{}",
        seen.text
    );
    // Slack said there is more: the note says how to page back.
    assert!(
        seen.text
            .contains("call again with `before: \"1512104434.000490\"`"),
        "{}",
        seen.text
    );
    let reads = relay.to("/conversations.history");
    assert_eq!(reads.len(), 1);
    assert_eq!(reads[0].status, 200);
    let q = reads[0].query();
    assert!(
        q.contains(&("channel".to_owned(), "C012AB3CD".to_owned())),
        "{q:?}"
    );
    assert!(q.contains(&("limit".to_owned(), "5".to_owned())), "{q:?}");

    let older = call(
        &t,
        "slack_history",
        json!({"channel": "C012AB3CD", "before": "1512085950.000216"}),
    )
    .await;
    assert!(!older.is_error, "{}", older.text);
    assert!(
        relay.to("/conversations.history")[1]
            .query()
            .contains(&("latest".to_owned(), "1512085950.000216".to_owned()))
    );

    let refused = call(&t, "slack_history", json!({"channel": "#random"})).await;
    assert!(
        refused.is_error && refused.text.contains("not an allowed recipient"),
        "{}",
        refused.text
    );
    let bad = call(
        &t,
        "slack_history",
        json!({"channel": "#general", "before": "yesterday"}),
    )
    .await;
    assert!(
        bad.is_error && bad.text.contains("not a message time"),
        "{}",
        bad.text
    );
    assert_eq!(relay.to("/conversations.history").len(), 2);
}

#[tokio::test]
async fn without_slack_configured_the_tools_say_what_to_set() {
    // No peer needed: nothing is sent.
    let (t, _) = tools(CommsConfig::default(), Vault(vec![]), true);
    for (name, args) in [
        ("slack_post", json!({"channel": "#general", "text": "hi"})),
        ("slack_channels", json!({})),
        ("slack_history", json!({"channel": "#general"})),
    ] {
        let seen = call(&t, name, args).await;
        assert!(
            seen.is_error && seen.text.contains("add `[comms.slack]`"),
            "{name}: {}",
            seen.text
        );
    }
}

#[tokio::test]
async fn slack_errors_say_what_to_do_without_the_token() {
    if !gate() {
        return;
    }
    for (status, answer, expected) in [
        (
            200,
            r#"{"ok": false, "error": "invalid_auth"}"#,
            "Slack refused conversations.list (200, `invalid_auth`): the bot token was refused: check the vault secret `slack-bot` (`cairn vault set slack-bot`)",
        ),
        (
            200,
            r#"{"ok": false, "error": "missing_scope", "needed": "channels:read"}"#,
            "the bot token lacks a scope (needed: channels:read)",
        ),
        (
            200,
            "<html><body>Welcome to nginx</body></html>",
            "Slack's conversations.list answered 200 with something that is not JSON",
        ),
        (
            429,
            "",
            "Slack rate-limited conversations.list: try again in a few seconds",
        ),
    ] {
        let peer = Recorder::answering(status, answer).await;
        let (t, _) = tools(settings(&peer.url, &["#general"]), vault("127.0.0.1"), true);
        let seen = call(&t, "slack_channels", json!({})).await;
        assert!(seen.is_error, "{}", seen.text);
        assert!(seen.text.contains(expected), "{}", seen.text);
        assert!(!seen.text.contains(TOKEN), "{}", seen.text);
        assert_eq!(peer.requests().len(), 1);
    }
}

#[tokio::test]
async fn a_slack_that_never_answers_is_left_when_the_run_is_cancelled() {
    if !gate() {
        return;
    }
    let peer = Recorder::hanging().await;
    let (t, _) = tools(
        settings(&peer.url, &["C012AB3CD"]),
        vault("127.0.0.1"),
        true,
    );
    let cancel = tokio_util::sync::CancellationToken::new();
    peer.cancel_when_received(cancel.clone());
    let seen = cairn_test_support::tools::call_with(
        &t,
        "slack_history",
        json!({"channel": "C012AB3CD"}),
        cancel,
    )
    .await;
    assert!(seen.is_error, "{}", seen.text);
    assert!(seen.text.contains("cancelled"), "{}", seen.text);
    assert_eq!(peer.to("/conversations.history").len(), 1);
}
