//! The Snyk tool against Prism serving Snyk's published v1 API description (`--errors`: a
//! request the description does not allow is refused), behind a recording relay so each test
//! sees what was sent and what Prism answered; and against a loopback server for answers Prism
//! cannot give (401: the description has no security scheme; 404; issues of every severity).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::api_support;
use crate::relay;

use api_support::{Server, json_answer};
use cairn_test_support::tools::call;
use cairn_webtools::api::{ApiAuth, AuthScheme};
use relay::{Recorder, query_has, services};
use serde_json::json;

/// Snyk wants `Authorization: token KEY`: the vault secret holds the whole value.
const TOKEN: &str = "token 5a1f0c9e-cairn-test-snyk";
const ORG: &str = "4a18d42f-0706-4ad0-b127-24078731fbed";
const PROJECT: &str = "6d5813be-7e6d-4ab8-80c2-1e3e2a454545";

/// Prism's base as the script printed it, or `None` (skipped).
fn prism() -> Option<String> {
    relay::prism("CAIRN_SNYK_TEST_API")
}

fn auth() -> Option<ApiAuth> {
    Some(ApiAuth {
        secret: "snyk-token".into(),
        scheme: AuthScheme::Header,
        name: Some("Authorization".into()),
    })
}

#[tokio::test]
async fn snyk_issues_of_a_project_are_asked_by_severity_and_shown_with_their_fix() {
    let Some(api) = prism() else { return };
    let relay = Recorder::relaying(&api).await;
    let t = services("snyk", Some(&relay.url), auth(), TOKEN);

    let seen = call(
        &t,
        "snyk_issues",
        json!({"org": ORG, "project": PROJECT, "min_severity": "medium"}),
    )
    .await;
    assert!(!seen.is_error, "{}", seen.text);
    assert!(
        seen.text.starts_with(&format!(
            "Snyk issues of project {PROJECT} (critical, high, medium)"
        )),
        "{}",
        seen.text
    );
    // The description's example issue (Prism answers it whatever the filter): ms 1.0.0, ReDoS,
    // fixed in 2.0.0.
    assert!(
        seen.text.contains(
            "| low | Regular Expression Denial of Service (ReDoS) | ms | 1.0.0 | npm:ms:20170412 CWE-400 | 3.7 | no-known-exploit | upgrade to 2.0.0 |"
        ),
        "{}",
        seen.text
    );
    let sent = relay.to("/aggregated-issues");
    assert_eq!(sent.len(), 1);
    let r = &sent[0];
    assert_eq!(
        (r.method.as_str(), r.status),
        ("POST", 200),
        "Prism refused"
    );
    assert_eq!(
        r.path(),
        format!("/org/{ORG}/project/{PROJECT}/aggregated-issues")
    );
    assert_eq!(
        r.json(),
        json!({"includeDescription": false,
               "filters": {"severities": ["critical", "high", "medium"], "ignored": false}})
    );
    assert_eq!(r.header("authorization"), Some(TOKEN));
    assert!(!seen.text.contains(TOKEN));
}

#[tokio::test]
async fn snyk_issues_of_an_organization_come_from_the_latest_report_a_page_at_a_time() {
    let Some(api) = prism() else { return };
    let relay = Recorder::relaying(&api).await;
    let t = services("snyk", Some(&relay.url), auth(), TOKEN);

    let seen = call(
        &t,
        "snyk_issues",
        json!({"org": ORG, "include_ignored": true, "page": 3}),
    )
    .await;
    assert!(!seen.is_error, "{}", seen.text);
    assert!(
        seen.text.starts_with(&format!(
            "Snyk issues of organization {ORG} (critical, high, medium, low, ignored ones too), page 3 of 0 issues"
        )),
        "{}",
        seen.text
    );
    // The example result: every field empty, a CVSS of 0, no fix.
    assert!(
        seen.text.contains("|  |  |  |  |  | 0.0 |  | no fix |  |"),
        "{}",
        seen.text
    );
    let sent = relay.to("/reporting/issues/latest");
    assert_eq!(sent.len(), 1);
    let r = &sent[0];
    assert_eq!(
        (r.method.as_str(), r.status),
        ("POST", 200),
        "Prism refused"
    );
    for (k, v) in [
        ("page", "3"),
        ("perPage", "50"),
        ("sortBy", "severity"),
        ("order", "desc"),
        ("groupBy", "issue"),
    ] {
        assert!(query_has(r, k, v), "{k}: {}", r.target);
    }
    assert_eq!(
        r.json(),
        json!({"filters": {"orgs": [ORG], "severity": ["critical", "high", "medium", "low"],
                           "isFixed": false}})
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn snyk_without_a_token_answers_401_with_how_to_sign_in() {
    let peer = Recorder::answering(401, r#"{"code":401,"error":"Not authorised"}"#).await;
    let t = services("snyk", Some(&peer.url), None, TOKEN);
    let seen = call(&t, "snyk_issues", json!({"org": ORG})).await;
    assert!(seen.is_error);
    assert_eq!(
        seen.text,
        "snyk answered 401: not signed in; set `[api.services.snyk] auth = { secret = \"NAME\" }` and `cairn vault set NAME --host HOST`"
    );
    assert_eq!(peer.requests()[0].header("authorization"), None);
}

#[tokio::test(flavor = "multi_thread")]
async fn snyk_project_not_found_answers_404_naming_it_and_bad_ids_are_refused() {
    let peer = Recorder::answering(404, r#"{"code":404,"message":"Project not found"}"#).await;
    let t = services("snyk", Some(&peer.url), auth(), TOKEN);
    let seen = call(&t, "snyk_issues", json!({"org": ORG, "project": PROJECT})).await;
    assert!(seen.is_error);
    assert_eq!(
        seen.text,
        format!(
            "snyk answered 404: project {PROJECT} of organization {ORG} was not found (or is not visible with this credential)"
        )
    );
    let before = peer.requests().len();
    for args in [
        json!({"org": "../orgs"}),
        json!({"org": ""}),
        json!({"org": ORG, "project": "a/b"}),
    ] {
        let seen = call(&t, "snyk_issues", args).await;
        assert!(
            seen.is_error && seen.text.contains("is not a Snyk id"),
            "{}",
            seen.text
        );
    }
    assert_eq!(peer.requests().len(), before);
}

#[tokio::test(flavor = "multi_thread")]
async fn snyk_project_issues_are_listed_worst_first() {
    // Sorted by hand: critical 9.8, then the two highs by CVSS (8.1 before 7.5), then medium.
    let issue = |id: &str, sev: &str, cvss: f64, cve: &[&str], ignored: bool, fix: Option<&str>| {
        json!({"id": id, "pkgName": "lib", "pkgVersions": ["1.2.3"], "isIgnored": ignored,
               "issueData": {"title": format!("{sev} bug"), "severity": sev, "cvssScore": cvss,
                             "identifiers": {"CVE": cve, "CWE": ["CWE-20"]},
                             "exploitMaturity": "mature"},
               "fixInfo": {"nearestFixedInVersion": fix}})
    };
    let body = json!({"issues": [
        issue("SNYK-1", "medium", 5.3, &[], false, None),
        issue("SNYK-2", "high", 7.5, &["CVE-2024-0002"], false, Some("1.2.4")),
        issue("SNYK-3", "critical", 9.8, &["CVE-2024-0003", "CVE-2024-0033"], false, Some("2.0.0")),
        issue("SNYK-4", "high", 8.1, &["CVE-2024-0004"], true, None),
    ]})
    .to_string();
    let server = Server::start(move |_, _| json_answer(&body)).await;
    let t = services("snyk", Some(&server.url("")), auth(), TOKEN);
    let seen = call(
        &t,
        "snyk_issues",
        json!({"org": ORG, "project": PROJECT, "include_ignored": true}),
    )
    .await;
    assert!(!seen.is_error, "{}", seen.text);
    let rows: Vec<&str> = seen
        .text
        .lines()
        .filter(|l| l.starts_with("| ") && !l.starts_with("| severity") && !l.starts_with("| ---"))
        .collect();
    assert_eq!(
        rows,
        [
            "| critical | critical bug | lib | 1.2.3 | SNYK-3 CVE-2024-0003, CVE-2024-0033 | 9.8 | mature | upgrade to 2.0.0 |",
            "| high (ignored) | high bug | lib | 1.2.3 | SNYK-4 CVE-2024-0004 | 8.1 | mature | no fix |",
            "| high | high bug | lib | 1.2.3 | SNYK-2 CVE-2024-0002 | 7.5 | mature | upgrade to 1.2.4 |",
            "| medium | medium bug | lib | 1.2.3 | SNYK-1 CWE-20 | 5.3 | mature | no fix |",
        ]
    );
    // Ignored ones asked for: no `ignored` filter sent.
    let sent: serde_json::Value = serde_json::from_str(&server.requests()[0].body).unwrap();
    assert_eq!(
        sent["filters"],
        json!({"severities": ["critical", "high", "medium", "low"]})
    );
}
