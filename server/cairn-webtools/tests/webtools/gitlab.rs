//! The GitLab tools against Prism serving GitLab's published API description (`--errors`: a
//! request the description does not allow, or one without the token, is refused), behind a
//! recording relay so each test sees what was sent and what Prism answered; and against a
//! loopback server for answers Prism cannot give (a 404, real diffs, failed jobs).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::api_support;
use crate::relay;

use api_support::{Server, json_answer};
use cairn_test_support::tools::call;
use cairn_webtools::api::{ApiAuth, AuthScheme};
use relay::{Recorder, query_has, services};
use serde_json::{Value, json};

const TOKEN: &str = "glpat-cairn-test-3b9e";

/// Prism's base (`http://127.0.0.1:P/v3`) as the script printed it, or `None` (skipped).
fn prism() -> Option<String> {
    relay::prism("CAIRN_GITLAB_TEST_API")
}

fn auth() -> Option<ApiAuth> {
    Some(ApiAuth {
        secret: "gitlab-token".into(),
        scheme: AuthScheme::Header,
        name: Some("PRIVATE-TOKEN".into()),
    })
}

/// The relay in front of Prism, and the tools calling it as `[api.services.gitlab]`.
async fn through_prism(
    api: &str,
) -> (
    Recorder,
    cairn_toolkit::ToolSet<cairn_webtools::api::services::Services>,
) {
    let (host, path) = api
        .strip_prefix("http://")
        .and_then(|r| r.split_once('/'))
        .expect("http://HOST:PORT/v3");
    let relay = Recorder::relaying(&format!("http://{host}")).await;
    let base = format!("{}/{path}", relay.url);
    let tools = services("gitlab", Some(&base), auth(), TOKEN);
    (relay, tools)
}

#[tokio::test]
async fn gitlab_issues_lists_with_filters_and_shows_one_with_comments() {
    let Some(api) = prism() else { return };
    let (relay, t) = through_prism(&api).await;

    let seen = call(
        &t,
        "gitlab_issues",
        json!({"project": "group/project", "state": "closed", "labels": "bug,backend", "search": "crash"}),
    )
    .await;
    assert!(!seen.is_error, "{}", seen.text);
    assert!(
        seen.text.starts_with(
            "closed issues of group/project (page 1, labels bug,backend, matching \"crash\")"
        ),
        "{}",
        seen.text
    );
    // Prism's answer (every field "string") as one row.
    assert!(
        seen.text.contains("| #string | string | string | string |"),
        "{}",
        seen.text
    );
    assert!(seen.text.contains("(1 row)"), "{}", seen.text);
    let sent = relay.to("/issues");
    assert_eq!(sent.len(), 1);
    let r = &sent[0];
    assert_eq!(r.method, "GET");
    assert_eq!(r.status, 200, "Prism refused: {}", r.target);
    assert_eq!(r.path(), "/v3/projects/group%2Fproject/issues");
    assert!(query_has(r, "state", "closed") && query_has(r, "labels", "bug,backend"));
    assert!(query_has(r, "search", "crash") && query_has(r, "per_page", "50"));
    assert_eq!(r.header("private-token"), Some(TOKEN));

    let seen = call(&t, "gitlab_issues", json!({"project": "42", "iid": 7})).await;
    assert!(!seen.is_error, "{}", seen.text);
    assert!(
        seen.text
            .starts_with("#string string (string)\nauthor: string;"),
        "{}",
        seen.text
    );
    assert!(
        seen.text
            .contains("Comments, newest first (1):\n- string at string: string"),
        "{}",
        seen.text
    );
    let one = relay.to("/v3/projects/42/issues/7");
    let notes = relay.to("/v3/projects/42/issues/7/notes");
    assert_eq!((one.len(), notes.len()), (1, 1));
    assert_eq!((one[0].status, notes[0].status), (200, 200));
    assert!(query_has(&notes[0], "sort", "desc"));
    assert!(!seen.text.contains(TOKEN));
}

#[tokio::test]
async fn gitlab_merge_requests_lists_and_shows_one_with_changes_and_pipeline() {
    let Some(api) = prism() else { return };
    let (relay, t) = through_prism(&api).await;

    let seen = call(
        &t,
        "gitlab_merge_requests",
        json!({"project": "group/project", "state": "merged", "page": 2}),
    )
    .await;
    assert!(!seen.is_error, "{}", seen.text);
    assert!(
        seen.text
            .starts_with("merged merge requests of group/project (page 2)"),
        "{}",
        seen.text
    );
    assert!(
        seen.text
            .contains("| !string | string | string | string | string → string |"),
        "{}",
        seen.text
    );
    let sent = relay.to("/merge_requests");
    assert_eq!(sent.len(), 1);
    assert_eq!(sent[0].status, 200);
    assert!(query_has(&sent[0], "state", "merged") && query_has(&sent[0], "page", "2"));

    let seen = call(
        &t,
        "gitlab_merge_requests",
        json!({"project": "group/project", "iid": 3}),
    )
    .await;
    assert!(!seen.is_error, "{}", seen.text);
    assert!(
        seen.text
            .starts_with("!string string (string)\nstring → string;"),
        "{}",
        seen.text
    );
    // GitLab v3's description has no pipeline on a merge request; the one change is listed.
    assert!(
        seen.text.contains("pipeline: none reported"),
        "{}",
        seen.text
    );
    assert!(
        seen.text
            .contains("Changes: 1 file, +0 -0\n- string: +0 -0"),
        "{}",
        seen.text
    );
    let sent = relay.to("/merge_requests/3/changes");
    assert_eq!(sent.len(), 1);
    assert_eq!(sent[0].status, 200);
}

#[tokio::test]
async fn gitlab_pipelines_lists_by_ref_and_shows_one_with_jobs() {
    let Some(api) = prism() else { return };
    let (relay, t) = through_prism(&api).await;

    let seen = call(
        &t,
        "gitlab_pipelines",
        json!({"project": "group/project", "ref": "main"}),
    )
    .await;
    assert!(!seen.is_error, "{}", seen.text);
    assert!(
        seen.text
            .starts_with("pipelines of group/project on main (page 1)"),
        "{}",
        seen.text
    );
    assert!(
        seen.text
            .contains("| string | string | string | string | string |"),
        "{}",
        seen.text
    );
    let sent = relay.to("/pipelines");
    assert_eq!(sent.len(), 1);
    assert_eq!(sent[0].status, 200);
    assert!(query_has(&sent[0], "ref", "main"));

    let seen = call(
        &t,
        "gitlab_pipelines",
        json!({"project": "group/project", "pipeline_id": 5}),
    )
    .await;
    assert!(!seen.is_error, "{}", seen.text);
    assert!(
        seen.text
            .starts_with("pipeline string of group/project: string"),
        "{}",
        seen.text
    );
    assert!(seen.text.contains("1 jobs, 0 failed:"), "{}", seen.text);
    let (p, jobs) = (relay.to("/pipelines/5"), relay.to("/pipelines/5/jobs"));
    assert_eq!((p.len(), jobs.len()), (1, 1));
    assert_eq!((p[0].status, jobs[0].status), (200, 200));
}

#[tokio::test]
async fn gitlab_create_issue_posts_json_prism_accepts_and_refuses_bad_titles() {
    let Some(api) = prism() else { return };
    let (relay, t) = through_prism(&api).await;

    let seen = call(
        &t,
        "gitlab_create_issue",
        json!({"project": "group/project", "title": "Crash on start", "description": "Steps:\n1. run", "labels": "bug"}),
    )
    .await;
    assert!(!seen.is_error, "{}", seen.text);
    assert_eq!(
        seen.text,
        "created issue #string in group/project: string\nstring"
    );
    let sent = relay.to("/issues");
    assert_eq!(sent.len(), 1);
    let r = &sent[0];
    assert_eq!((r.method.as_str(), r.status), ("POST", 201));
    assert_eq!(r.header("content-type"), Some("application/json"));
    let body: Value = serde_json::from_slice(&r.body).unwrap();
    assert_eq!(
        body,
        json!({"title": "Crash on start", "description": "Steps:\n1. run", "labels": "bug"})
    );

    for (title, why) in [
        ("  ", "`title` is empty"),
        (&"x".repeat(256)[..], "256 characters"),
    ] {
        let seen = call(
            &t,
            "gitlab_create_issue",
            json!({"project": "g/p", "title": title}),
        )
        .await;
        assert!(seen.is_error && seen.text.contains(why), "{}", seen.text);
        assert!(seen.text.contains("nothing was created"), "{}", seen.text);
    }
    assert_eq!(relay.requests().len(), 1);
}

#[tokio::test]
async fn gitlab_without_a_token_is_told_how_to_sign_in() {
    let Some(api) = prism() else { return };
    let (host, path) = api
        .strip_prefix("http://")
        .unwrap()
        .split_once('/')
        .unwrap();
    let relay = Recorder::relaying(&format!("http://{host}")).await;
    let t = services(
        "gitlab",
        Some(&format!("{}/{path}", relay.url)),
        None,
        TOKEN,
    );
    let seen = call(&t, "gitlab_issues", json!({"project": "g/p"})).await;
    assert!(seen.is_error);
    assert!(
        seen.text
            .starts_with("gitlab answered 401: not signed in; set `[api.services.gitlab] auth"),
        "{}",
        seen.text
    );
    assert_eq!(relay.requests()[0].status, 401);
}

#[tokio::test(flavor = "multi_thread")]
async fn gitlab_names_what_was_not_found() {
    let server = Server::start(|_, _| {
        (
            404,
            vec![("Content-Type".into(), "application/json".into())],
            r#"{"message":"404 Project Not Found"}"#.into(),
        )
    })
    .await;
    let t = services("gitlab", Some(&server.url("/api/v4")), auth(), TOKEN);
    let seen = call(
        &t,
        "gitlab_issues",
        json!({"project": "group/nope", "iid": 99}),
    )
    .await;
    assert!(seen.is_error);
    assert_eq!(
        seen.text,
        "gitlab answered 404: issue #99 of group/nope was not found (or is not visible with this credential)"
    );
    assert_eq!(
        server.requests()[0].target,
        "/api/v4/projects/group%2Fnope/issues/99"
    );
    let seen = call(
        &t,
        "gitlab_pipelines",
        json!({"project": "group/nope", "pipeline_id": 8}),
    )
    .await;
    assert!(
        seen.text
            .contains("404: pipeline 8 of group/nope was not found"),
        "{}",
        seen.text
    );
    // Paths that would resolve elsewhere are refused before anything is sent.
    let before = server.requests().len();
    for project in ["..", "group/../other", "group//x", " / "] {
        let seen = call(&t, "gitlab_issues", json!({"project": project})).await;
        assert!(seen.is_error, "{project}: {}", seen.text);
        assert!(
            seen.text
                .contains("give a numeric id or a path like `group/name`"),
            "{}",
            seen.text
        );
    }
    assert_eq!(server.requests().len(), before);
}

#[tokio::test(flavor = "multi_thread")]
async fn gitlab_merge_request_counts_diff_lines_and_lists_failed_jobs_first() {
    // A rename with 2 lines added and 1 removed, a new file of 3 lines: counted by hand.
    let mr = json!({
        "iid": 12, "title": "Faster start", "state": "opened",
        "source_branch": "fast", "target_branch": "main", "author": {"username": "ana"},
        "head_pipeline": {"id": 77, "status": "failed", "ref": "fast", "sha": "0123456789abcdef"},
        "changes": [
            {"old_path": "a.rs", "new_path": "b.rs", "renamed_file": true,
             "diff": "--- a/a.rs\n+++ b/b.rs\n@@ -1,2 +1,3 @@\n fn a() {}\n-fn b() {}\n+fn c() {}\n+fn d() {}\n"},
            {"old_path": "n.txt", "new_path": "n.txt", "new_file": true,
             "diff": "@@ -0,0 +1,3 @@\n+one\n+two\n+-three\n"}
        ]
    })
    .to_string();
    let jobs = json!([
        {"id": 1, "name": "build", "stage": "build", "status": "success", "duration": 61.4},
        {"id": 2, "name": "test", "stage": "test", "status": "failed", "duration": 12.0,
         "failure_reason": "script_failure"},
        {"id": 3, "name": "lint", "stage": "test", "status": "failed", "failure_reason": "script_failure"}
    ])
    .to_string();
    let pipeline =
        json!({"id": 77, "status": "failed", "ref": "fast", "sha": "0123456789abcdef"}).to_string();
    let server = Server::start(move |r, _| match r.path() {
        "/api/v4/projects/7/merge_requests/12/changes" => json_answer(&mr),
        "/api/v4/projects/7/pipelines/77" => json_answer(&pipeline),
        "/api/v4/projects/7/pipelines/77/jobs" => json_answer(&jobs),
        _ => (500, vec![], String::new()),
    })
    .await;
    let t = services("gitlab", Some(&server.url("/api/v4")), auth(), TOKEN);

    let seen = call(
        &t,
        "gitlab_merge_requests",
        json!({"project": "7", "iid": 12}),
    )
    .await;
    assert!(!seen.is_error, "{}", seen.text);
    assert!(
        seen.text
            .contains("pipeline 77: failed (ref fast, sha 0123456789ab)"),
        "{}",
        seen.text
    );
    assert!(
        seen.text.contains(
            "Changes: 2 files, +5 -1\n- b.rs (renamed from a.rs): +2 -1\n- n.txt (new): +3 -0\n"
        ),
        "{}",
        seen.text
    );

    let seen = call(
        &t,
        "gitlab_pipelines",
        json!({"project": "7", "pipeline_id": 77}),
    )
    .await;
    assert!(!seen.is_error, "{}", seen.text);
    assert!(seen.text.contains("3 jobs, 2 failed:"), "{}", seen.text);
    let rows: Vec<&str> = seen
        .text
        .lines()
        .filter(|l| l.starts_with("| ") && !l.starts_with("| job") && !l.starts_with("| ---"))
        .collect();
    assert_eq!(
        rows,
        [
            "| 2 | test | test | failed | 12 | script_failure |",
            "| 3 | lint | test | failed |  | script_failure |",
            "| 1 | build | build | success | 61 |  |",
        ]
    );
    assert_eq!(server.requests()[1].header("private-token"), Some(TOKEN));
}

#[test]
fn the_tracker_tools_schemas_describe_every_field_and_refuse_unknown_ones() {
    let ours: Vec<_> = cairn_webtools::api::services::SERVICE_TOOLS
        .iter()
        .filter(|e| e.name().starts_with("gitlab_") || e.name().starts_with("jira_"))
        .map(|e| e.info())
        .collect();
    assert_eq!(ours.len(), 8);
    for info in ours {
        let name = info.tool.name.to_string();
        let schema = Value::Object((*info.tool.input_schema).clone());
        assert_eq!(schema["additionalProperties"], false, "{name}");
        for (field, p) in schema["properties"].as_object().unwrap() {
            assert!(
                p["description"].as_str().is_some_and(|d| !d.is_empty()),
                "{name}.{field} has no description"
            );
            // Enums are plain strings, their values listed in the field.
            if let Some(values) = p.get("enum") {
                assert!(
                    values.as_array().unwrap().iter().all(Value::is_string),
                    "{name}.{field}"
                );
            }
            assert!(p.get("oneOf").is_none(), "{name}.{field}: {p}");
        }
        if name == "gitlab_issues" {
            assert_eq!(
                schema["properties"]["state"]["enum"],
                json!(["opened", "closed", "all"]),
                "{schema}"
            );
        }
        let writes = name.contains("create") || name == "jira_transition";
        assert_eq!(info.agent_only, writes, "{name}");
        assert_eq!(info.category, "api", "{name}");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_gitlab_call_to_a_server_that_never_answers_ends_when_cancelled() {
    let peer = std::sync::Arc::new(Recorder::hanging().await);
    let t = services(
        "gitlab",
        Some(&format!("{}/api/v4", peer.url)),
        auth(),
        TOKEN,
    );
    let cancel = tokio_util::sync::CancellationToken::new();
    let (fire, watched) = (cancel.clone(), peer.clone());
    // Cancel once the request has arrived, while the tool waits for an answer.
    tokio::spawn(async move {
        while watched.requests().is_empty() {
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        }
        fire.cancel();
    });
    let seen = cairn_test_support::tools::call_with(
        &t,
        "gitlab_pipelines",
        json!({"project": "g/p"}),
        cancel,
    )
    .await;
    assert!(seen.is_error);
    assert_eq!(seen.text, "cancelled");
    assert_eq!(peer.requests().len(), 1);
}
