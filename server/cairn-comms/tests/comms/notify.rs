//! The webhook and SMS tools against real peers on loopback: a receiver in the test that records
//! what arrives (the peer of a webhook), and Prism serving Twilio's published API description
//! (`--errors`) behind a recording relay, so each test sees what was sent, what Prism answered,
//! and that a refusal sent nothing.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::recorder;

use std::collections::BTreeMap;

use cairn_config::{CommsConfig, TwilioConfig, WebhookConfig, WebhookKind};
use cairn_test_support::tools::call;
use recorder::{Recorder, Vault, approved, tools};
use serde_json::json;

const HOOK_TOKEN: &str = "Xq9vT2bLr7KpW4mZs8NcYd3F";
const TWILIO_TOKEN: &str = "twilio-auth-5b1e9c0d7a";
const SID: &str = "AC0123456789abcdef0123456789abcdef";

fn gate() -> bool {
    cairn_test_support::gate(
        "CAIRN_COMMS_TESTS",
        "with the mail, chat and API peers (scripts/api-mocks)",
    )
}

fn webhooks(hooks: &[(&str, WebhookKind, String)]) -> CommsConfig {
    CommsConfig {
        sends_per_minute: 100,
        webhooks: hooks
            .iter()
            .map(|(name, kind, url)| {
                (
                    (*name).to_owned(),
                    WebhookConfig {
                        kind: *kind,
                        url: url.clone(),
                    },
                )
            })
            .collect::<BTreeMap<_, _>>(),
        ..CommsConfig::default()
    }
}

/// A webhook address on `peer` carrying the token, as Discord's do.
fn hook_url(peer: &Recorder) -> String {
    format!("{}/api/webhooks/1187342001/{HOOK_TOKEN}", peer.url)
}

/// Neither the token nor the address appear in `text`.
fn assert_hidden(text: &str, url: &str) {
    assert!(!text.contains(HOOK_TOKEN), "the token leaked: {text}");
    assert!(!text.contains(url), "the URL leaked: {text}");
    assert!(
        !text.contains("1187342001"),
        "the webhook id leaked: {text}"
    );
}

#[tokio::test]
async fn webhook_post_sends_each_kind_its_format() {
    if !gate() {
        return;
    }
    let peer = Recorder::answering(204, "").await;
    let url = hook_url(&peer);
    let settings = webhooks(&[
        ("builds", WebhookKind::Discord, url.clone()),
        ("ops", WebhookKind::Generic, url.clone()),
        ("team", WebhookKind::Teams, url.clone()),
        ("alerts", WebhookKind::Slack, url.clone()),
    ]);
    let (t, approvals) = tools(settings, Vault(vec![]), true);

    let args = json!({"webhook": "builds", "text": "Build 812 passed @everyone", "title": "CI"});
    let (question, shown, done) = approved(&t, &approvals, "webhook_post", args).await;
    assert!(question.contains("webhook to builds"), "{question}");
    assert_eq!(shown, "webhook to builds: CI\nBuild 812 passed @everyone");
    assert!(!done.is_error, "{}", done.text);
    assert_eq!(
        done.text,
        "posted to webhook builds (discord): 204 No Content"
    );
    for text in [&question, &shown, &done.text] {
        assert_hidden(text, &url);
    }
    let got = peer.requests();
    assert_eq!(got.len(), 1, "{got:?}");
    assert_eq!(got[0].method, "POST");
    assert_eq!(
        got[0].target,
        format!("/api/webhooks/1187342001/{HOOK_TOKEN}")
    );
    assert_eq!(got[0].header("content-type"), Some("application/json"));
    assert_eq!(
        got[0].json(),
        json!({"content": "**CI**\nBuild 812 passed @everyone", "allowed_mentions": {"parse": []}})
    );

    let (_, _, done) = approved(
        &t,
        &approvals,
        "webhook_post",
        json!({"webhook": "ops", "text": "disk at 91%", "title": "db-1"}),
    )
    .await;
    assert_eq!(done.text, "posted to webhook ops (generic): 204 No Content");
    assert_eq!(
        peer.requests()[1].json(),
        json!({"text": "disk at 91%", "title": "db-1"})
    );

    let (_, _, done) = approved(
        &t,
        &approvals,
        "webhook_post",
        json!({"webhook": "team", "text": "release is out"}),
    )
    .await;
    assert!(!done.is_error, "{}", done.text);
    let card = peer.requests()[2].json();
    assert_eq!(card["type"], "message");
    assert_eq!(
        card["attachments"][0]["contentType"],
        "application/vnd.microsoft.card.adaptive"
    );
    assert_eq!(
        card["attachments"][0]["content"]["body"][0]["text"],
        "release is out"
    );

    let (_, _, done) = approved(
        &t,
        &approvals,
        "webhook_post",
        json!({"webhook": "alerts", "text": "p1 resolved"}),
    )
    .await;
    assert!(!done.is_error, "{}", done.text);
    assert_eq!(peer.requests()[3].json(), json!({"text": "p1 resolved"}));
    assert_eq!(peer.requests().len(), 4);
}

#[tokio::test]
async fn webhook_post_refuses_what_is_not_configured_or_does_not_fit() {
    if !gate() {
        return;
    }
    let peer = Recorder::answering(204, "").await;
    let url = hook_url(&peer);
    let (t, _) = tools(
        webhooks(&[("builds", WebhookKind::Discord, url.clone())]),
        Vault(vec![]),
        true,
    );

    // A name not configured: refused, the configured names said, never a URL.
    let seen = call(
        &t,
        "webhook_post",
        json!({"webhook": "deploys", "text": "hi"}),
    )
    .await;
    assert!(seen.is_error, "{}", seen.text);
    assert!(
        seen.text
            .contains("webhook: deploys is not an allowed recipient")
            && seen.text.contains("allowed now: builds"),
        "{}",
        seen.text
    );
    assert!(cairn_agent::tools::protected_of(&seen.result).is_empty());
    assert_hidden(&seen.text, &url);
    // Nor may the model give an address instead of a name.
    let seen = call(&t, "webhook_post", json!({"webhook": url, "text": "hi"})).await;
    assert!(
        seen.is_error && seen.text.contains("not an allowed recipient"),
        "{}",
        seen.text
    );
    let seen = call(
        &t,
        "webhook_post",
        json!({"webhook": "builds", "text": "hi", "url": "http://127.0.0.1:1/"}),
    )
    .await;
    assert!(seen.is_error && seen.text.contains("url"), "{}", seen.text);

    // Discord's 2000 characters, and an empty message.
    let long = call(
        &t,
        "webhook_post",
        json!({"webhook": "builds", "text": "y".repeat(2001)}),
    )
    .await;
    assert!(long.is_error, "{}", long.text);
    assert!(
        long.text
            .contains("2001 characters, more than the 2000 a discord webhook takes"),
        "{}",
        long.text
    );
    let empty = call(
        &t,
        "webhook_post",
        json!({"webhook": "builds", "text": " "}),
    )
    .await;
    assert!(
        empty.is_error && empty.text.contains("empty"),
        "{}",
        empty.text
    );

    // The receiver got nothing at all.
    assert!(peer.requests().is_empty(), "{:?}", peer.requests());
}

#[tokio::test]
async fn a_webhook_at_a_private_address_is_refused_by_the_guard() {
    if !gate() {
        return;
    }
    let peer = Recorder::answering(204, "").await;
    let url = hook_url(&peer);
    let private = format!("http://10.20.30.40/hooks/{HOOK_TOKEN}");
    let (t, approvals) = tools(
        webhooks(&[
            ("local", WebhookKind::Generic, url.clone()),
            ("lan", WebhookKind::Slack, private.clone()),
        ]),
        Vault(vec![]),
        // Loopback not allowed, as by default.
        false,
    );

    let (question, _, done) = approved(
        &t,
        &approvals,
        "webhook_post",
        json!({"webhook": "local", "text": "hello"}),
    )
    .await;
    assert!(done.is_error, "{}", done.text);
    assert!(
        done.text.starts_with(
            "webhook local: not posted, refused: its URL points at 127.0.0.1, a loopback address"
        ),
        "{}",
        done.text
    );
    assert_hidden(&question, &url);
    assert_hidden(&done.text, &url);
    assert!(peer.requests().is_empty(), "{:?}", peer.requests());

    let (_, _, done) = approved(
        &t,
        &approvals,
        "webhook_post",
        json!({"webhook": "lan", "text": "hello"}),
    )
    .await;
    assert!(done.is_error, "{}", done.text);
    assert!(
        done.text.contains("10.20.30.40, a private network address"),
        "{}",
        done.text
    );
    assert!(!done.text.contains(HOOK_TOKEN), "{}", done.text);
}

#[tokio::test]
async fn a_failed_webhook_says_why_without_its_url() {
    if !gate() {
        return;
    }
    // A server that echoes the address it was called on in its error.
    let echo = format!(
        "{{\"message\": \"Unknown Webhook /api/webhooks/1187342001/{HOOK_TOKEN}\", \"code\": 10015}}"
    );
    let peer = Recorder::answering(404, &echo).await;
    let url = hook_url(&peer);
    let (t, approvals) = tools(
        webhooks(&[("builds", WebhookKind::Discord, url.clone())]),
        Vault(vec![]),
        true,
    );
    let (_, _, done) = approved(
        &t,
        &approvals,
        "webhook_post",
        json!({"webhook": "builds", "text": "hello"}),
    )
    .await;
    assert!(done.is_error, "{}", done.text);
    assert!(
        done.text.contains("webhook builds (discord) answered 404")
            && done.text.contains("may have been deleted")
            && done.text.contains("Unknown Webhook"),
        "{}",
        done.text
    );
    assert_hidden(&done.text, &url);
    assert_eq!(peer.requests().len(), 1);

    // Nothing listening: a connection failure, still without the address.
    let closed = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let gone = format!("http://127.0.0.1:{closed}/api/webhooks/1187342001/{HOOK_TOKEN}");
    let (t, approvals) = tools(
        webhooks(&[("gone", WebhookKind::Generic, gone.clone())]),
        Vault(vec![]),
        true,
    );
    let (_, _, done) = approved(
        &t,
        &approvals,
        "webhook_post",
        json!({"webhook": "gone", "text": "hello"}),
    )
    .await;
    assert!(done.is_error, "{}", done.text);
    assert!(
        done.text
            .contains("webhook gone: failed, could not connect"),
        "{}",
        done.text
    );
    assert_hidden(&done.text, &gone);
}

fn twilio(api: &str, allow: &[&str], per_minute: u32) -> CommsConfig {
    CommsConfig {
        sends_per_minute: per_minute,
        twilio: Some(TwilioConfig {
            api: api.to_owned(),
            account_sid: SID.into(),
            token_secret: "twilio".into(),
            from: "+15550001111".into(),
            allow_to: allow.iter().map(|s| (*s).to_owned()).collect(),
        }),
        ..CommsConfig::default()
    }
}

fn twilio_prism() -> Option<String> {
    if !gate() {
        return None;
    }
    Some(std::env::var("CAIRN_TWILIO_TEST_API").expect("CAIRN_TWILIO_TEST_API (scripts/api-mocks)"))
}

#[tokio::test]
async fn sms_send_texts_an_allowed_number_as_prism_validated_it() {
    let Some(api) = twilio_prism() else { return };
    let relay = Recorder::relaying(&api).await;
    let vault = Vault(vec![("twilio", TWILIO_TOKEN.into(), "127.0.0.1".into())]);
    let (t, approvals) = tools(twilio(&relay.url, &["+1 555 000 2222"], 100), vault, true);

    let args = json!({"to": "+1 (555) 000-2222", "body": "Your build is ready"});
    let (question, shown, done) = approved(&t, &approvals, "sms_send", args).await;
    assert!(question.contains("sms to +15550002222"), "{question}");
    assert_eq!(shown, "sms to +15550002222: Your build is ready");
    assert!(!done.is_error, "{}", done.text);
    assert!(
        done.text
            .starts_with("sent SMS to +15550002222 from +15550001111: message SM"),
        "{}",
        done.text
    );
    assert!(done.text.contains(", status "), "{}", done.text);
    assert!(!done.text.contains(TWILIO_TOKEN) && !question.contains(TWILIO_TOKEN));

    let sent = relay.requests();
    assert_eq!(sent.len(), 1, "{sent:?}");
    let r = &sent[0];
    assert_eq!(r.method, "POST");
    assert_eq!(
        r.target,
        format!("/2010-04-01/Accounts/{SID}/Messages.json")
    );
    // Prism accepted it: 201 Created, the description's answer to a valid request.
    assert_eq!(r.status, 201);
    use base64::Engine;
    let basic = base64::engine::general_purpose::STANDARD.encode(format!("{SID}:{TWILIO_TOKEN}"));
    assert_eq!(
        r.header("authorization"),
        Some(format!("Basic {basic}").as_str())
    );
    assert_eq!(
        r.form(),
        vec![
            ("To".to_owned(), "+15550002222".to_owned()),
            ("From".to_owned(), "+15550001111".to_owned()),
            ("Body".to_owned(), "Your build is ready".to_owned()),
        ]
    );
}

#[tokio::test]
async fn sms_send_refuses_numbers_not_allowed_and_sends_nothing() {
    let Some(api) = twilio_prism() else { return };
    let relay = Recorder::relaying(&api).await;
    let vault = Vault(vec![("twilio", TWILIO_TOKEN.into(), "127.0.0.1".into())]);
    let (t, _) = tools(twilio(&relay.url, &["+15550002222"], 100), vault, true);

    let seen = call(&t, "sms_send", json!({"to": "+15559999999", "body": "hi"})).await;
    assert!(seen.is_error, "{}", seen.text);
    assert!(
        seen.text
            .contains("sms: +15559999999 is not an allowed recipient")
            && seen.text.contains("comms.twilio.allow_to"),
        "{}",
        seen.text
    );
    assert!(cairn_agent::tools::protected_of(&seen.result).is_empty());
    for bad in [
        "5550002222",
        "+1555000222x",
        "+15550002222\r\nBcc: +15559999999",
        "",
    ] {
        let seen = call(&t, "sms_send", json!({"to": bad, "body": "hi"})).await;
        assert!(
            seen.is_error && seen.text.contains("E.164"),
            "{bad:?}: {}",
            seen.text
        );
    }
    let long = call(
        &t,
        "sms_send",
        json!({"to": "+15550002222", "body": "z".repeat(1601)}),
    )
    .await;
    assert!(
        long.is_error && long.text.contains("1601 characters, more than the 1600"),
        "{}",
        long.text
    );
    let empty = call(&t, "sms_send", json!({"to": "+15550002222", "body": ""})).await;
    assert!(
        empty.is_error && empty.text.contains("empty"),
        "{}",
        empty.text
    );
    assert!(relay.requests().is_empty(), "{:?}", relay.requests());
}

#[tokio::test]
async fn sms_send_keeps_to_the_rate_and_to_the_token_binding() {
    let Some(api) = twilio_prism() else { return };
    let relay = Recorder::relaying(&api).await;
    let vault = Vault(vec![("twilio", TWILIO_TOKEN.into(), "127.0.0.1".into())]);
    let (t, approvals) = tools(twilio(&relay.url, &["+15550002222"], 1), vault, true);

    let (_, _, first) = approved(
        &t,
        &approvals,
        "sms_send",
        json!({"to": "+15550002222", "body": "one"}),
    )
    .await;
    assert!(!first.is_error, "{}", first.text);
    let (_, _, second) = approved(
        &t,
        &approvals,
        "sms_send",
        json!({"to": "+15550002222", "body": "two"}),
    )
    .await;
    assert!(second.is_error, "{}", second.text);
    assert!(
        second
            .text
            .contains("over the limit of 1 messages a minute"),
        "{}",
        second.text
    );
    assert_eq!(relay.requests().len(), 1);

    // The auth token is bound to Twilio's host only: nothing goes to this one.
    let elsewhere = Recorder::relaying(&api).await;
    let vault = Vault(vec![(
        "twilio",
        TWILIO_TOKEN.into(),
        "api.twilio.com".into(),
    )]);
    let (t, approvals) = tools(twilio(&elsewhere.url, &["+15550002222"], 100), vault, true);
    let (_, _, done) = approved(
        &t,
        &approvals,
        "sms_send",
        json!({"to": "+15550002222", "body": "three"}),
    )
    .await;
    assert!(done.is_error, "{}", done.text);
    assert!(
        done.text.contains("sms: not sent")
            && done
                .text
                .contains("secret `twilio` may not be sent to 127.0.0.1"),
        "{}",
        done.text
    );
    assert!(
        elsewhere.requests().is_empty(),
        "{:?}",
        elsewhere.requests()
    );
}

#[tokio::test]
async fn a_webhook_with_a_bad_address_is_refused_without_showing_it() {
    if !gate() {
        return;
    }
    let (t, approvals) = tools(
        webhooks(&[
            (
                "ftp",
                WebhookKind::Generic,
                format!("ftp://files.example.com/in/{HOOK_TOKEN}"),
            ),
            (
                "typo",
                WebhookKind::Generic,
                format!("htp:/discord.com/api/webhooks/1187342001/{HOOK_TOKEN}"),
            ),
            (
                "userinfo",
                WebhookKind::Generic,
                format!("https://bot:{HOOK_TOKEN}@example.com/hook"),
            ),
        ]),
        Vault(vec![]),
        true,
    );
    for (name, expected) in [
        (
            "ftp",
            "refused: its URL is ftp:, and only http and https are allowed",
        ),
        (
            "typo",
            "refused: its URL is htp:, and only http and https are allowed",
        ),
        (
            "userinfo",
            "refused: its URL has a user name or password in it",
        ),
    ] {
        let (_, _, done) = approved(
            &t,
            &approvals,
            "webhook_post",
            json!({"webhook": name, "text": "hello"}),
        )
        .await;
        assert!(done.is_error, "{}", done.text);
        assert!(done.text.contains(expected), "{name}: {}", done.text);
        assert!(!done.text.contains(HOOK_TOKEN), "{}", done.text);
    }
}

#[tokio::test]
async fn a_webhook_that_never_answers_is_left_when_the_run_is_cancelled() {
    if !gate() {
        return;
    }
    let peer = Recorder::hanging().await;
    let url = hook_url(&peer);
    let (t, approvals) = tools(
        webhooks(&[("slow", WebhookKind::Generic, url.clone())]),
        Vault(vec![]),
        true,
    );
    let args = json!({"webhook": "slow", "text": "hello"});
    let asked = call(&t, "webhook_post", args.clone()).await;
    let key = std::path::PathBuf::from(&cairn_agent::tools::protected_of(&asked.result)[0].key);
    approvals.hold(&key, cairn_workspace::Operation::Write);
    let cancel = tokio_util::sync::CancellationToken::new();
    peer.cancel_when_received(cancel.clone());
    let seen = cairn_test_support::tools::call_with(&t, "webhook_post", args, cancel).await;
    assert!(seen.is_error, "{}", seen.text);
    assert_eq!(seen.text, "webhook slow: cancelled");
    assert_eq!(peer.requests().len(), 1);
}

#[tokio::test]
async fn a_refused_sms_says_why_without_the_token() {
    if !gate() {
        return;
    }
    // Twilio's answer to a wrong or expired auth token, as its API documents it.
    let peer = Recorder::answering(
        401,
        r#"{"code": 20003, "message": "Authenticate", "more_info": "https://www.twilio.com/docs/errors/20003", "status": 401}"#,
    )
    .await;
    let vault = Vault(vec![("twilio", TWILIO_TOKEN.into(), "127.0.0.1".into())]);
    let (t, approvals) = tools(twilio(&peer.url, &["+15550002222"], 100), vault, true);
    let (_, _, done) = approved(
        &t,
        &approvals,
        "sms_send",
        json!({"to": "+15550002222", "body": "hi"}),
    )
    .await;
    assert!(done.is_error, "{}", done.text);
    assert_eq!(
        done.text,
        "sms: Twilio refused the message, 401 Unauthorized (Twilio error 20003): the account SID or the auth token was refused; check `[comms.twilio] account_sid` and the vault secret `twilio`: Authenticate"
    );
    assert_eq!(peer.requests().len(), 1);
}
