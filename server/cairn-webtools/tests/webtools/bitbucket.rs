//! The Bitbucket tools against Prism serving Bitbucket Cloud's published API description
//! (`--errors`: a request the description does not allow, or one without a token, is
//! refused), behind a recording relay so each test sees what was sent and what Prism
//! answered; and against a loopback server for answers Prism cannot give (a 404, reviewers,
//! inline comments, renamed files, failed steps).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::api_support;
use crate::relay;

use api_support::{Server, json_answer};
use cairn_test_support::tools::call;
use cairn_webtools::api::{ApiAuth, AuthScheme};
use relay::{Recorder, query_has, services};
use serde_json::json;

const TOKEN: &str = "ATCTT3xFfGN0-cairn-test-bb";
const RUN: &str = "{3f9c1a2e-0000-4000-8000-000000000001}";
const RUN_PATH: &str = "%7B3f9c1a2e-0000-4000-8000-000000000001%7D";

/// Prism's base as the script printed it, or `None` (skipped).
fn prism() -> Option<String> {
    relay::prism("CAIRN_BITBUCKET_TEST_API")
}

fn auth() -> Option<ApiAuth> {
    Some(ApiAuth {
        secret: "bitbucket-token".into(),
        scheme: AuthScheme::Bearer,
        name: None,
    })
}

/// The relay in front of Prism, and the tools calling it as `[api.services.bitbucket]`.
async fn through_prism(
    api: &str,
) -> (
    Recorder,
    cairn_toolkit::ToolSet<cairn_webtools::api::services::Services>,
) {
    let relay = Recorder::relaying(api).await;
    let tools = services("bitbucket", Some(&relay.url), auth(), TOKEN);
    (relay, tools)
}

#[tokio::test]
async fn bitbucket_pull_requests_lists_by_state_and_shows_one_with_diffstat_and_comments() {
    let Some(api) = prism() else { return };
    let (relay, t) = through_prism(&api).await;

    let seen = call(
        &t,
        "bitbucket_pull_requests",
        json!({"repo": "acme/Widgets", "state": "merged", "page": 2}),
    )
    .await;
    assert!(!seen.is_error, "{}", seen.text);
    assert!(
        seen.text
            .starts_with("merged pull requests of acme/Widgets (page 2)"),
        "{}",
        seen.text
    );
    // The description's example pull request (every text "string"), and its `next` page.
    assert!(
        seen.text
            .contains("| #0 | string | string | string → string | 0 | 2019-08-24T14:15:22Z |"),
        "{}",
        seen.text
    );
    assert!(
        seen.text.contains("call again with page=3"),
        "{}",
        seen.text
    );
    let sent = relay.to("/pullrequests");
    assert_eq!(sent.len(), 1);
    let r = &sent[0];
    assert_eq!((r.method.as_str(), r.status), ("GET", 200), "Prism refused");
    // Slugs are lower case in Bitbucket's paths.
    assert_eq!(r.path(), "/repositories/acme/widgets/pullrequests");
    assert!(query_has(r, "state", "MERGED") && query_has(r, "page", "2"));
    assert!(query_has(r, "pagelen", "50"));
    assert_eq!(r.header("authorization"), Some(&*format!("Bearer {TOKEN}")));

    let seen = call(
        &t,
        "bitbucket_pull_requests",
        json!({"repo": "acme/widgets", "id": 3}),
    )
    .await;
    assert!(!seen.is_error, "{}", seen.text);
    // The example's one comment is marked deleted: left out.
    assert_eq!(
        seen.text,
        "#0 string (OPEN)\n\
         string → string; author: string; created 2019-08-24T14:15:22Z, updated 2019-08-24T14:15:22Z\n\
         http://example.com\n\
         \n\
         string\n\
         \n\
         Changes: 1 file, +0 -0 (the first 100 files; there are more)\n\
         - string (added): +0 -0\n\
         \n\
         Comments, newest first (0):\n\
         (only the newest 30 comments shown: see the rest on Bitbucket)\n"
    );
    let base = "/repositories/acme/widgets/pullrequests/3";
    let (pr, stat, comments) = (
        relay.to(base),
        relay.to(&format!("{base}/diffstat")),
        relay.to(&format!("{base}/comments")),
    );
    assert_eq!((pr.len(), stat.len(), comments.len()), (1, 1, 1));
    assert_eq!(
        (pr[0].status, stat[0].status, comments[0].status),
        (200, 200, 200)
    );
    assert!(query_has(&comments[0], "sort", "-created_on"));
    assert!(!seen.text.contains(TOKEN));
}

#[tokio::test]
async fn bitbucket_pipelines_lists_runs_and_shows_one_with_steps() {
    let Some(api) = prism() else { return };
    let (relay, t) = through_prism(&api).await;

    let seen = call(&t, "bitbucket_pipelines", json!({"repo": "acme/widgets"})).await;
    assert!(!seen.is_error, "{}", seen.text);
    assert!(
        seen.text
            .starts_with("pipelines of acme/widgets (page 1, newest first)"),
        "{}",
        seen.text
    );
    // The example run: its state and trigger have only a `type`, its target no ref.
    assert!(
        seen.text
            .contains("| 0 | string | string |  | string | 2019-08-24T14:15:22Z | 0 |"),
        "{}",
        seen.text
    );
    let sent = relay.to("/pipelines");
    assert_eq!(sent.len(), 1);
    assert_eq!(sent[0].status, 200);
    assert!(query_has(&sent[0], "sort", "-created_on"));

    // Given without its braces, as people copy it.
    let seen = call(
        &t,
        "bitbucket_pipelines",
        json!({"repo": "acme/widgets", "pipeline": RUN.trim_matches(['{', '}'])}),
    )
    .await;
    assert!(!seen.is_error, "{}", seen.text);
    assert!(
        seen.text.starts_with(
            "pipeline #0 string of acme/widgets: string (ref -, trigger string); by string; \
             created 2019-08-24T14:15:22Z, completed 2019-08-24T14:15:22Z; 0 build seconds\n\
             \n1 steps, 0 failed:\n"
        ),
        "{}",
        seen.text
    );
    assert!(
        seen.text.contains(
            "| string |  | string | 2019-08-24T14:15:22Z | 2019-08-24T14:15:22Z | string |"
        ),
        "{}",
        seen.text
    );
    let (run, steps) = (
        relay.to(&format!("/pipelines/{RUN_PATH}")),
        relay.to(&format!("/pipelines/{RUN_PATH}/steps")),
    );
    assert_eq!((run.len(), steps.len()), (1, 1));
    assert_eq!((run[0].status, steps[0].status), (200, 200));
}

#[tokio::test]
async fn bitbucket_without_a_token_answers_401_with_how_to_sign_in() {
    let Some(api) = prism() else { return };
    let relay = Recorder::relaying(&api).await;
    let t = services("bitbucket", Some(&relay.url), None, TOKEN);
    // (The description requires credentials on pull requests, not on pipelines.)
    let seen = call(
        &t,
        "bitbucket_pull_requests",
        json!({"repo": "acme/widgets"}),
    )
    .await;
    assert!(seen.is_error);
    assert!(
        seen.text.starts_with(
            "bitbucket answered 401: not signed in; set `[api.services.bitbucket] auth"
        ),
        "{}",
        seen.text
    );
    assert_eq!(relay.requests()[0].status, 401);
}

#[tokio::test(flavor = "multi_thread")]
async fn bitbucket_not_found_answers_404_naming_what_and_bad_names_are_refused() {
    let peer = Recorder::answering(
        404,
        r#"{"type":"error","error":{"message":"Repository not found"}}"#,
    )
    .await;
    let t = services("bitbucket", Some(&peer.url), auth(), TOKEN);
    let seen = call(
        &t,
        "bitbucket_pull_requests",
        json!({"repo": "acme/nope", "id": 9}),
    )
    .await;
    assert!(seen.is_error);
    assert_eq!(
        seen.text,
        "bitbucket answered 404: pull request #9 of acme/nope was not found (or is not visible with this credential)"
    );
    let seen = call(
        &t,
        "bitbucket_pipelines",
        json!({"repo": "acme/nope", "pipeline": RUN}),
    )
    .await;
    assert_eq!(
        seen.text,
        format!(
            "bitbucket answered 404: pipeline {RUN} of acme/nope was not found (or is not visible with this credential)"
        )
    );
    // Names that would reach another path are refused before anything is sent.
    let before = peer.requests().len();
    for repo in ["acme", "../x", "acme/../y", "acme/w?x", "a/b/c"] {
        let seen = call(&t, "bitbucket_pull_requests", json!({"repo": repo})).await;
        assert!(seen.is_error, "{repo}: {}", seen.text);
        assert!(
            seen.text.contains("is not `workspace/repo-slug`"),
            "{}",
            seen.text
        );
    }
    for run in ["../steps", "{abc}/x", "zz"] {
        let seen = call(
            &t,
            "bitbucket_pipelines",
            json!({"repo": "acme/w", "pipeline": run}),
        )
        .await;
        assert!(seen.text.contains("is not a run's UUID"), "{}", seen.text);
    }
    assert_eq!(peer.requests().len(), before);
}

#[tokio::test(flavor = "multi_thread")]
async fn bitbucket_pull_request_sums_the_diffstat_and_pipeline_lists_failed_steps_first() {
    // Counted by hand: +12 -3 and +0 -40 make +12 -43.
    let pr = json!({
        "id": 14, "title": "Faster start", "state": "OPEN",
        "source": {"branch": {"name": "fast"}}, "destination": {"branch": {"name": "main"}},
        "author": {"display_name": "Ana Lima"},
        "created_on": "2025-02-01T10:00:00Z", "updated_on": "2025-02-02T10:00:00Z",
        "participants": [
            {"role": "REVIEWER", "approved": true, "user": {"display_name": "Bo"}},
            {"role": "REVIEWER", "approved": false, "state": "changes_requested",
             "user": {"display_name": "Cy"}},
            {"role": "PARTICIPANT", "approved": false, "user": {"display_name": "Di"}}
        ],
        "summary": {"raw": "Starts in half the time."},
        "links": {"html": {"href": "https://bitbucket.org/acme/widgets/pull-requests/14"}}
    })
    .to_string();
    let diffstat = json!({"values": [
        {"status": "renamed", "lines_added": 12, "lines_removed": 3,
         "old": {"path": "src/a.rs"}, "new": {"path": "src/b.rs"}},
        {"status": "removed", "lines_added": 0, "lines_removed": 40,
         "old": {"path": "old.txt"}, "new": null}
    ]})
    .to_string();
    let comments = json!({"values": [
        {"content": {"raw": "Why 3?"}, "user": {"display_name": "Cy"},
         "created_on": "2025-02-02T09:00:00Z", "inline": {"path": "src/b.rs", "to": 7}},
        {"content": {"raw": "gone"}, "deleted": true, "user": {"display_name": "Bo"}},
        {"content": {"raw": "Looks good"}, "user": {"display_name": "Bo"},
         "created_on": "2025-02-01T12:00:00Z"}
    ]})
    .to_string();
    let run = json!({"uuid": RUN, "build_number": 88,
        "state": {"name": "COMPLETED", "result": {"name": "FAILED"}},
        "target": {"ref_name": "fast"}, "trigger": {"name": "PUSH"},
        "creator": {"display_name": "Ana Lima"}, "created_on": "2025-02-02T10:00:00Z",
        "completed_on": "2025-02-02T10:05:00Z", "build_seconds_used": 301})
    .to_string();
    let steps = json!({"values": [
        {"uuid": "{s1}", "name": "Build", "state": {"name": "COMPLETED", "result": {"name": "SUCCESSFUL"}}},
        {"uuid": "{s2}", "name": "Test", "state": {"name": "COMPLETED", "result": {"name": "FAILED"}},
         "script_commands": [{"command": "cargo build"}, {"command": "cargo test"}]},
        {"uuid": "{s3}", "name": "Deploy", "state": {"name": "COMPLETED", "result": {"name": "NOT_RUN"}}},
        {"uuid": "{s4}", "name": "Lint", "state": {"name": "COMPLETED", "result": {"name": "ERROR"}}}
    ]})
    .to_string();
    let server = Server::start(move |r, own| {
        let base = "/repositories/acme/widgets";
        match r.path().strip_prefix(base).unwrap_or("") {
            "/pullrequests/14" => json_answer(&pr),
            // As Bitbucket does: a redirect to the repository's diffstat of the two commits.
            "/pullrequests/14/diffstat" => (
                302,
                vec![(
                    "Location".into(),
                    format!(
                        "{own}{base}/diffstat/acme/widgets:0a1b2c3%0D9f8e7d6?from_pullrequest_id=14"
                    ),
                )],
                String::new(),
            ),
            "/diffstat/acme/widgets:0a1b2c3%0D9f8e7d6" => json_answer(&diffstat),
            "/pullrequests/14/comments" => json_answer(&comments),
            p if p == format!("/pipelines/{RUN_PATH}") => json_answer(&run),
            p if p == format!("/pipelines/{RUN_PATH}/steps") => json_answer(&steps),
            _ => (500, vec![], String::new()),
        }
    })
    .await;
    let t = services("bitbucket", Some(&server.url("")), auth(), TOKEN);

    let seen = call(
        &t,
        "bitbucket_pull_requests",
        json!({"repo": "acme/widgets", "id": 14}),
    )
    .await;
    assert_eq!(
        seen.text,
        "#14 Faster start (OPEN)\n\
         fast → main; author: Ana Lima; created 2025-02-01T10:00:00Z, updated 2025-02-02T10:00:00Z\n\
         reviewers: Bo (approved), Cy (changes requested)\n\
         https://bitbucket.org/acme/widgets/pull-requests/14\n\
         \n\
         Starts in half the time.\n\
         \n\
         Changes: 2 files, +12 -43\n\
         - src/b.rs (renamed from src/a.rs): +12 -3\n\
         - old.txt (removed): +0 -40\n\
         \n\
         Comments, newest first (2):\n\
         - Cy at 2025-02-02T09:00:00Z on src/b.rs:7: Why 3?\n\
         - Bo at 2025-02-01T12:00:00Z: Looks good\n"
    );

    let seen = call(
        &t,
        "bitbucket_pipelines",
        json!({"repo": "acme/widgets", "pipeline": RUN}),
    )
    .await;
    assert!(!seen.is_error, "{}", seen.text);
    assert!(
        seen.text.starts_with(&format!(
            "pipeline #88 {RUN} of acme/widgets: COMPLETED/FAILED (ref fast, trigger PUSH); by Ana Lima; \
             created 2025-02-02T10:00:00Z, completed 2025-02-02T10:05:00Z; 301 build seconds\n\
             \n4 steps, 2 failed:\n"
        )),
        "{}",
        seen.text
    );
    let rows: Vec<&str> = seen.text.lines().filter(|l| l.starts_with("| {")).collect();
    assert_eq!(
        rows,
        [
            "| {s2} | Test | COMPLETED/FAILED |  |  | cargo test |",
            "| {s4} | Lint | COMPLETED/ERROR |  |  |  |",
            "| {s1} | Build | COMPLETED/SUCCESSFUL |  |  |  |",
            "| {s3} | Deploy | COMPLETED/NOT_RUN |  |  |  |",
        ]
    );
    assert!(!seen.text.contains("steps shown"), "{}", seen.text);
    let followed = server
        .requests()
        .into_iter()
        .find(|r| r.path().contains("/diffstat/"))
        .expect("the redirect was followed");
    assert_eq!(
        followed.header("authorization"),
        Some(&*format!("Bearer {TOKEN}"))
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_bitbucket_call_to_a_server_that_never_answers_ends_when_cancelled() {
    let peer = Recorder::hanging().await;
    let t = services("bitbucket", Some(&peer.url), auth(), TOKEN);
    let cancel = tokio_util::sync::CancellationToken::new();
    peer.cancel_when_received(cancel.clone());
    let seen = cairn_test_support::tools::call_with(
        &t,
        "bitbucket_pull_requests",
        json!({"repo": "acme/widgets"}),
        cancel,
    )
    .await;
    assert!(seen.is_error);
    assert_eq!(seen.text, "cancelled");
}

#[tokio::test(flavor = "multi_thread")]
async fn bitbucket_lists_on_the_last_possible_page_do_not_overflow() {
    let server = Server::start(|_, _| {
        json_answer(r#"{"values": [{"id": 1, "title": "t", "build_number": 1}], "next": "n"}"#)
    })
    .await;
    let t = services("bitbucket", Some(&server.url("")), auth(), TOKEN);
    for tool in ["bitbucket_pull_requests", "bitbucket_pipelines"] {
        let seen = call(&t, tool, json!({"repo": "acme/widgets", "page": u32::MAX})).await;
        assert!(!seen.is_error, "{tool}: {}", seen.text);
        assert!(
            seen.text.contains("call again with page=4294967295"),
            "{tool}: {}",
            seen.text
        );
    }
}
