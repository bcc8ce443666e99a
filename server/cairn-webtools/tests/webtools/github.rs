//! The GitHub tools against Prism serving GitHub's own REST description (`@octokit/openapi`,
//! `--errors`: a request the description does not allow is refused, not answered), behind a
//! recording relay on loopback so each test sees what was sent and that Prism accepted it. The
//! statuses Prism will not produce on demand (401, 404, 429) and a failed job's log download
//! come from a tiny loopback server of the test's own.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::api_support;
use crate::relay;

use std::collections::BTreeMap;

use api_support::{Server, TestVault, guard};
use cairn_agent::tools::{Effect, ToolHost};
use cairn_test_support::tools::call;
use cairn_toolkit::ToolSet;
use cairn_webtools::api::services::{ServiceSettings, Services, service_tools};
use cairn_webtools::api::{ApiAuth, AuthScheme};
use relay::{Recorder, Request};
use serde_json::{Value, json};

const TOKEN: &str = "ghp_cairnTEST0123456789abcdef";

/// Prism's base (`CAIRN_GITHUB_TEST_API`), or `None` when the peers are not up (the test is
/// skipped, and says so).
fn prism() -> Option<String> {
    relay::prism("CAIRN_GITHUB_TEST_API")
}

/// The GitHub tools with `[api.services.github] base_url = base` and the token, bound to
/// 127.0.0.1, as its `auth`.
fn tools(base: &str) -> ToolSet<Services> {
    let vault = TestVault::default().with("github-token", TOKEN, &["127.0.0.1"]);
    let settings = BTreeMap::from([(
        "github".to_owned(),
        ServiceSettings {
            base_url: Some(base.to_owned()),
            auth: Some(ApiAuth {
                secret: "github-token".into(),
                scheme: AuthScheme::Bearer,
                name: None,
            }),
        },
    )]);
    service_tools(Services::new(guard(vault), "tester", settings))
}

/// Asserts Prism accepted every request (a 2xx, or the 302 GitHub's log endpoint answers) and
/// that each carried the token the guard attached.
fn all_accepted(exchanges: &[Request]) {
    assert!(!exchanges.is_empty());
    for e in exchanges {
        assert!(
            (200..300).contains(&e.status) || e.status == 302,
            "Prism refused {} {}: {}",
            e.method,
            e.target,
            e.status
        );
        assert_eq!(
            e.header("authorization"),
            Some(format!("Bearer {TOKEN}").as_str())
        );
    }
}

fn targets(exchanges: &[Request]) -> Vec<String> {
    exchanges
        .iter()
        .map(|e| format!("{} {}", e.method, e.target))
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn the_github_tools_are_in_the_catalog_reads_open_to_all_and_writes_agent_only() {
    let t = tools("http://127.0.0.1:9/");
    let list = t.list();
    let info = |name: &str| {
        list.iter()
            .find(|i| i.tool.name == name)
            .unwrap_or_else(|| panic!("{name} is not listed"))
    };
    for name in [
        "github_search",
        "github_issue",
        "github_workflow_runs",
        "github_failed_jobs",
        "github_releases",
        "github_pull_files",
    ] {
        let i = info(name);
        assert_eq!(i.effect, Effect::Network, "{name}");
        assert!(!i.agent_only, "{name}");
        assert_eq!(i.category, "api", "{name}");
        let read_only = i.tool.annotations.as_ref().and_then(|a| a.read_only_hint);
        assert_eq!(read_only, Some(true), "{name}");
    }
    for name in ["github_create_issue", "github_comment"] {
        let i = info(name);
        assert_eq!(i.effect, Effect::Write, "{name}");
        assert!(i.agent_only, "{name}");
    }
    // The choices are plain string enums the model reads in the field's description.
    let property =
        |tool: &str, field: &str| info(tool).tool.input_schema["properties"][field].clone();
    let state = property("github_search", "state");
    assert_eq!(state["type"], "string", "{state}");
    assert_eq!(state["enum"], json!(["open", "closed", "all"]), "{state}");
    assert!(
        state["description"].as_str().unwrap().contains("`open`"),
        "{state}"
    );
    assert_eq!(
        property("github_search", "kind")["enum"],
        json!(["issue", "pr", "any"])
    );
    let status = property("github_workflow_runs", "status");
    assert_eq!(status["type"], "string", "{status}");
    assert_eq!(status["enum"].as_array().unwrap().len(), 9, "{status}");
    assert!(
        status["enum"]
            .as_array()
            .unwrap()
            .contains(&json!("in_progress"))
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn github_search_sends_the_qualifiers_and_lists_what_prism_answered() {
    let Some(api) = prism() else { return };
    let relay = Recorder::relaying(&api).await;
    let t = tools(&relay.url);
    let seen = call(
        &t,
        "github_search",
        json!({"query": "crash", "repo": "octocat/Hello-World", "state": "open",
               "labels": ["bug"], "kind": "issue", "max_results": 5}),
    )
    .await;
    assert!(!seen.is_error, "{}", seen.text);
    let ex = relay.requests();
    all_accepted(&ex);
    assert_eq!(
        targets(&ex),
        vec![
            "GET /search/issues?q=crash+repo%3Aoctocat%2FHello-World+state%3Aopen+label%3A%22bug%22+is%3Aissue&sort=updated&order=desc&per_page=5"
        ]
    );
    assert!(
        seen.text.starts_with(
            "GitHub search `crash repo:octocat/Hello-World state:open label:\"bug\" is:issue`: 280 found"
        ),
        "{}",
        seen.text
    );
    assert!(
        seen.text.contains(
            "| batterseapower/pinyin-toolkit#132 | PR | open | Line Number Indexes Beyond 20 Not Displayed | Nick3C | bug | 2009-07-19 09:23 UTC |"
        ),
        "{}",
        seen.text
    );
    // 280 found, one answered: the rest is said to be left out.
    assert!(seen.text.contains("more were left out"), "{}", seen.text);

    // Nothing to search for: refused before sending.
    let none = call(&t, "github_search", json!({"state": "open"})).await;
    assert!(
        none.is_error && none.text.contains("give a query, a repo, or both"),
        "{}",
        none.text
    );
    assert_eq!(relay.requests().len(), 1);
}

#[tokio::test(flavor = "multi_thread")]
async fn github_issue_reads_a_pull_request_with_its_branches_checks_and_comments() {
    let Some(api) = prism() else { return };
    let relay = Recorder::relaying(&api).await;
    let t = tools(&relay.url);
    let seen = call(
        &t,
        "github_issue",
        json!({"repo": "octocat/Hello-World", "number": 1347}),
    )
    .await;
    assert!(!seen.is_error, "{}", seen.text);
    let ex = relay.requests();
    all_accepted(&ex);
    assert_eq!(
        targets(&ex),
        vec![
            "GET /repos/octocat/Hello-World/issues/1347",
            "GET /repos/octocat/Hello-World/pulls/1347",
            "GET /repos/octocat/Hello-World/commits/6dcb09b5b57875f334f61aebed695e2e4193db5e/check-runs?per_page=100",
            "GET /repos/octocat/Hello-World/issues/1347/comments?per_page=20",
        ]
    );
    for part in [
        "octocat/Hello-World#1347 (pull request) Found a bug\nstate: open, by octocat, created 2011-04-22 13:33 UTC",
        "labels: bug",
        "assignees: octocat",
        "https://github.com/octocat/Hello-World/issues/1347",
        "pull request: open, mergeable; octocat:new-topic into octocat:master; 3 commit(s), +100 -3 in 5 file(s)",
        "checks on 6dcb09b: 1 (1 neutral)",
        "I'm having a problem with this.",
        "1 comment(s):\n\n--- octocat at 2011-04-14 16:00 UTC:\nMe too",
    ] {
        assert!(seen.text.contains(part), "{part:?} not in:\n{}", seen.text);
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn github_create_issue_posts_title_body_labels_and_assignees() {
    let Some(api) = prism() else { return };
    let relay = Recorder::relaying(&api).await;
    let t = tools(&relay.url);
    let seen = call(
        &t,
        "github_create_issue",
        json!({"repo": "octocat/Hello-World", "title": "Found a bug",
               "body": "I'm having a problem with this.", "labels": ["bug"],
               "assignees": ["@octocat"]}),
    )
    .await;
    assert!(!seen.is_error, "{}", seen.text);
    let ex = relay.requests();
    all_accepted(&ex);
    assert_eq!(targets(&ex), vec!["POST /repos/octocat/Hello-World/issues"]);
    assert_eq!(ex[0].status, 201);
    assert_eq!(
        ex[0].json(),
        json!({"title": "Found a bug", "body": "I'm having a problem with this.",
               "labels": ["bug"], "assignees": ["octocat"]})
    );
    assert_eq!(
        seen.text,
        "created issue octocat/Hello-World#1347: Found a bug\nhttps://github.com/octocat/Hello-World/issues/1347"
    );

    // An empty or over-long title is refused before anything is sent.
    let empty = call(
        &t,
        "github_create_issue",
        json!({"repo": "octocat/Hello-World", "title": "  "}),
    )
    .await;
    assert!(
        empty.is_error && empty.text.contains("title is empty"),
        "{}",
        empty.text
    );
    let long = call(
        &t,
        "github_create_issue",
        json!({"repo": "octocat/Hello-World", "title": "x".repeat(257)}),
    )
    .await;
    assert!(
        long.is_error && long.text.contains("257 characters, more than GitHub's 256"),
        "{}",
        long.text
    );
    assert_eq!(relay.requests().len(), 1);
}

#[tokio::test(flavor = "multi_thread")]
async fn github_comment_posts_on_an_issue_and_answers_its_address() {
    let Some(api) = prism() else { return };
    let relay = Recorder::relaying(&api).await;
    let t = tools(&relay.url);
    let seen = call(
        &t,
        "github_comment",
        json!({"repo": "octocat/Hello-World", "number": 1347, "body": "Me too"}),
    )
    .await;
    assert!(!seen.is_error, "{}", seen.text);
    let ex = relay.requests();
    all_accepted(&ex);
    assert_eq!(
        targets(&ex),
        vec!["POST /repos/octocat/Hello-World/issues/1347/comments"]
    );
    assert_eq!(ex[0].status, 201);
    assert_eq!(ex[0].json(), json!({"body": "Me too"}));
    assert_eq!(
        seen.text,
        "commented on octocat/Hello-World#1347: https://github.com/octocat/Hello-World/issues/1347#issuecomment-1"
    );
    let empty = call(
        &t,
        "github_comment",
        json!({"repo": "octocat/Hello-World", "number": 1347, "body": "\n "}),
    )
    .await;
    assert!(
        empty.is_error && empty.text.contains("comment is empty"),
        "{}",
        empty.text
    );
    assert_eq!(relay.requests().len(), 1);
}

#[tokio::test(flavor = "multi_thread")]
async fn github_workflow_runs_filters_by_workflow_branch_and_status() {
    let Some(api) = prism() else { return };
    let relay = Recorder::relaying(&api).await;
    let t = tools(&relay.url);
    let seen = call(
        &t,
        "github_workflow_runs",
        json!({"repo": "octocat/Hello-World", "workflow": "build.yml", "branch": "master",
               "status": "failure", "max_results": 10}),
    )
    .await;
    assert!(!seen.is_error, "{}", seen.text);
    let all = call(
        &t,
        "github_workflow_runs",
        json!({"repo": "octocat/Hello-World"}),
    )
    .await;
    assert!(!all.is_error, "{}", all.text);
    let ex = relay.requests();
    all_accepted(&ex);
    assert_eq!(
        targets(&ex),
        vec![
            "GET /repos/octocat/Hello-World/actions/workflows/build.yml/runs?per_page=10&branch=master&status=failure",
            "GET /repos/octocat/Hello-World/actions/runs?per_page=20",
        ]
    );
    for text in [&seen.text, &all.text] {
        assert!(
            text.starts_with("Actions runs of octocat/Hello-World: 1 matching"),
            "{text}"
        );
        assert!(
            text.contains(
                "| 30433642 | Build | master | push | queued | - | acb5820 | 2020-01-22 19:33 UTC |"
            ),
            "{text}"
        );
        assert!(text.contains("(1 row)"), "{text}");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn github_failed_jobs_says_when_no_job_failed() {
    let Some(api) = prism() else { return };
    let relay = Recorder::relaying(&api).await;
    let t = tools(&relay.url);
    let seen = call(
        &t,
        "github_failed_jobs",
        json!({"repo": "octo-org/octo-repo", "run_id": 29679449}),
    )
    .await;
    assert!(!seen.is_error, "{}", seen.text);
    let ex = relay.requests();
    all_accepted(&ex);
    // Prism's one job succeeded: no log is asked for.
    assert_eq!(
        targets(&ex),
        vec!["GET /repos/octo-org/octo-repo/actions/runs/29679449/jobs?filter=latest&per_page=100"]
    );
    assert_eq!(
        seen.text,
        "run 29679449 in octo-org/octo-repo: 1 job(s), 0 failed"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn github_releases_lists_and_reads_one_by_tag_with_notes_and_assets() {
    let Some(api) = prism() else { return };
    let relay = Recorder::relaying(&api).await;
    let t = tools(&relay.url);
    let list = call(
        &t,
        "github_releases",
        json!({"repo": "octocat/Hello-World"}),
    )
    .await;
    assert!(!list.is_error, "{}", list.text);
    assert!(
        list.text
            .contains("| v1.0.0 | v1.0.0 | 2013-02-27 19:35 UTC |  | 1 |"),
        "{}",
        list.text
    );
    let one = call(
        &t,
        "github_releases",
        json!({"repo": "octocat/Hello-World", "tag": "v1.0.0"}),
    )
    .await;
    assert!(!one.is_error, "{}", one.text);
    let ex = relay.requests();
    all_accepted(&ex);
    assert_eq!(
        targets(&ex),
        vec![
            "GET /repos/octocat/Hello-World/releases?per_page=10",
            "GET /repos/octocat/Hello-World/releases/tags/v1.0.0",
        ]
    );
    for part in [
        "octocat/Hello-World release v1.0.0: v1.0.0\npublished 2013-02-27 19:35 UTC by octocat, from master",
        "https://github.com/octocat/Hello-World/releases/v1.0.0",
        "Description of the release",
        "1 asset(s):\n- example.zip (1024 bytes, 42 downloads) https://github.com/octocat/Hello-World/releases/download/v1.0.0/example.zip",
    ] {
        assert!(one.text.contains(part), "{part:?} not in:\n{}", one.text);
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn github_pull_files_lists_changes_with_the_patch() {
    let Some(api) = prism() else { return };
    let relay = Recorder::relaying(&api).await;
    let t = tools(&relay.url);
    let seen = call(
        &t,
        "github_pull_files",
        json!({"repo": "octocat/Hello-World", "number": 1347}),
    )
    .await;
    assert!(!seen.is_error, "{}", seen.text);
    let ex = relay.requests();
    all_accepted(&ex);
    assert_eq!(
        targets(&ex),
        vec!["GET /repos/octocat/Hello-World/pulls/1347/files?per_page=100&page=1"]
    );
    assert_eq!(
        seen.text,
        "pull request octocat/Hello-World#1347: 1 file(s), +103 -21\n\n\
         added file1.txt (+103 -21)\n```diff\n@@ -132,7 +132,7 @@ module Test @@ -1000,7 +1000,7 @@ module Test\n```"
    );
}

/// A loopback GitHub whose run 7 has one failed and one passing job, the failed job's log
/// redirected to a download on another host name (`localhost`), as GitHub does.
#[tokio::test(flavor = "multi_thread")]
async fn github_failed_jobs_follows_the_log_redirect_and_shows_the_tail_of_each_failed_job() {
    // 100 lines, timestamped as Actions writes them.
    let log: String = (1..=100)
        .map(|i| format!("2024-05-01T10:00:{:02}.1234567Z line {i}\n", i % 60))
        .collect();
    let download = Server::start(move |_, _| (200, vec![], log.clone())).await;
    let location = download.localhost_url("/signedlogcontent/11?sig=abc");
    let api = Server::start(move |r, _| match r.path() {
        "/repos/o/r/actions/runs/7/jobs" => api_support::json_answer(
            &json!({"total_count": 2, "jobs": [
                {"id": 11, "name": "test (ubuntu)", "status": "completed", "conclusion": "failure",
                 "steps": [{"number": 1, "name": "Set up job", "conclusion": "success"},
                           {"number": 4, "name": "cargo test", "conclusion": "failure"}]},
                {"id": 12, "name": "lint", "status": "completed", "conclusion": "success", "steps": []}
            ]})
            .to_string(),
        ),
        "/repos/o/r/actions/jobs/11/logs" => (302, vec![("Location".into(), location.clone())], String::new()),
        _ => (404, vec![], "{\"message\":\"Not Found\"}".into()),
    })
    .await;
    let t = tools(&api.url("/"));
    let seen = call(
        &t,
        "github_failed_jobs",
        json!({"repo": "o/r", "run_id": 7, "tail_lines": 3}),
    )
    .await;
    assert!(!seen.is_error, "{}", seen.text);
    assert_eq!(
        seen.text,
        "run 7 in o/r: 2 job(s), 1 failed\n\n## test (ubuntu) (job 11): failure\n\
         failed step(s): 4. cargo test\nlast 3 of 100 log line(s):\n```\nline 98\nline 99\nline 100\n```"
    );
    let asked: Vec<String> = api.requests().iter().map(|r| r.target.clone()).collect();
    assert_eq!(
        asked,
        vec![
            "/repos/o/r/actions/runs/7/jobs?filter=latest&per_page=100",
            "/repos/o/r/actions/jobs/11/logs"
        ]
    );
    // The token went to GitHub, not to the download's host.
    assert!(
        api.requests()
            .iter()
            .all(|r| r.header("authorization") == Some(&*format!("Bearer {TOKEN}")))
    );
    let got = download.requests();
    assert_eq!(got.len(), 1);
    assert_eq!(got[0].target, "/signedlogcontent/11?sig=abc");
    assert_eq!(got[0].header("authorization"), None);
}

#[tokio::test(flavor = "multi_thread")]
async fn github_404_names_what_was_not_found() {
    let api = Server::start(|_, _| {
        (
            404,
            vec![("Content-Type".into(), "application/json".into())],
            r#"{"message":"Not Found"}"#.into(),
        )
    })
    .await;
    let t = tools(&api.url("/"));
    let seen = call(
        &t,
        "github_issue",
        json!({"repo": "octocat/nope", "number": 7}),
    )
    .await;
    assert!(seen.is_error);
    assert_eq!(
        seen.text,
        "github answered 404: octocat/nope#7 was not found (or is not visible with this credential)"
    );
    let tag = call(
        &t,
        "github_releases",
        json!({"repo": "octocat/nope", "tag": "v9"}),
    )
    .await;
    assert_eq!(
        tag.text,
        "github answered 404: a release tagged v9 in octocat/nope was not found (or is not visible with this credential)"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn github_401_says_which_vault_secret_to_check() {
    let api = Server::start(|_, _| {
        (
            401,
            vec![("Content-Type".into(), "application/json".into())],
            r#"{"message":"Bad credentials"}"#.into(),
        )
    })
    .await;
    let t = tools(&api.url("/"));
    let seen = call(&t, "github_search", json!({"query": "bug"})).await;
    assert!(seen.is_error);
    assert_eq!(
        seen.text,
        "github answered 401: not signed in; check the vault secret `github-token` (Bad credentials)"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn github_429_is_waited_once_then_reported() {
    let api = Server::start(|_, _| {
        (
            429,
            vec![("Retry-After".into(), "1".into())],
            r#"{"message":"API rate limit exceeded"}"#.into(),
        )
    })
    .await;
    let t = tools(&api.url("/"));
    let seen = call(&t, "github_workflow_runs", json!({"repo": "o/r"})).await;
    assert!(seen.is_error);
    assert_eq!(
        seen.text,
        "github answered 429: rate limited; try again in 1 s"
    );
    // Asked, waited as Retry-After said, asked once more, then gave up.
    assert_eq!(api.requests().len(), 2);
}

#[tokio::test(flavor = "multi_thread")]
async fn repositories_that_are_not_owner_slash_name_are_refused_before_sending() {
    let api = Server::start(|_, _| api_support::json_answer("{}")).await;
    let t = tools(&api.url("/"));
    for repo in [
        "../../etc",
        "octocat",
        "octocat/Hello World",
        "a/b/c",
        "o/r?x=1",
        "/r",
        "o/..",
    ] {
        for (tool, args) in [
            ("github_issue", json!({"repo": repo, "number": 1})),
            ("github_releases", json!({"repo": repo})),
            (
                "github_comment",
                json!({"repo": repo, "number": 1, "body": "x"}),
            ),
        ] {
            let seen = call(&t, tool, args).await;
            assert!(
                seen.is_error && seen.text.contains("is not `owner/name`"),
                "{tool} {repo}: {}",
                seen.text
            );
        }
    }
    // Unknown fields and bad enum values are named by the schema check.
    let bad = call(
        &t,
        "github_workflow_runs",
        json!({"repo": "o/r", "status": "red"}),
    )
    .await;
    assert!(bad.is_error && bad.text.contains("status"), "{}", bad.text);
    let unknown = call(&t, "github_search", json!({"q": "x"})).await;
    assert!(
        unknown.is_error && unknown.text.contains("q"),
        "{}",
        unknown.text
    );
    assert!(api.requests().is_empty(), "{:?}", api.requests());
}

#[tokio::test(flavor = "multi_thread")]
async fn github_pull_files_pages_through_many_files_and_cuts_long_patches() {
    // 150 files: a full first page of 100, then 50; each patch 5 lines.
    let api = Server::start(|r, _| {
        let page: usize = r
            .target
            .split("page=")
            .last()
            .and_then(|p| p.parse().ok())
            .unwrap_or(1);
        let count = if page == 1 { 100 } else { 50 };
        let files: Vec<Value> = (0..count)
            .map(|i| {
                let n = (page - 1) * 100 + i + 1;
                json!({"filename": format!("src/f{n}.rs"), "status": "modified",
                       "additions": 2, "deletions": 1,
                       "patch": "@@ -1,3 +1,4 @@\n a\n-b\n+c\n+d"})
            })
            .collect();
        api_support::json_answer(&Value::Array(files).to_string())
    })
    .await;
    let t = tools(&api.url("/"));
    let all = call(
        &t,
        "github_pull_files",
        json!({"repo": "o/r", "number": 5, "max_files": 300, "max_patch_lines": 2}),
    )
    .await;
    assert!(!all.is_error, "{}", all.text);
    // 150 files, 2 + 1 lines each: +300 -150.
    assert!(
        all.text
            .starts_with("pull request o/r#5: 150 file(s), +300 -150"),
        "{}",
        all.text
    );
    assert!(
        all.text.contains(
            "modified src/f150.rs (+2 -1)\n```diff\n@@ -1,3 +1,4 @@\n a\n```\n(3 more patch line(s): raise max_patch_lines)"
        ),
        "{}",
        all.text
    );
    let targets: Vec<String> = api.requests().iter().map(|r| r.target.clone()).collect();
    assert_eq!(
        targets,
        vec![
            "/repos/o/r/pulls/5/files?per_page=100&page=1",
            "/repos/o/r/pulls/5/files?per_page=100&page=2"
        ]
    );

    // At the default cap of 100 the second page is not asked for, and that is said.
    let capped = call(
        &t,
        "github_pull_files",
        json!({"repo": "o/r", "number": 5, "patch": false}),
    )
    .await;
    assert!(
        capped.text.starts_with(
            "pull request o/r#5: 100 file(s) shown (more not listed: raise max_files, at most 300), +200 -100"
        ),
        "{}",
        capped.text
    );
    assert!(!capped.text.contains("```"), "{}", capped.text);
    assert_eq!(api.requests().len(), 3);
}

#[tokio::test(flavor = "multi_thread")]
async fn github_issue_shows_a_plain_issue_and_says_how_many_comments_were_left_out() {
    let api = Server::start(|r, _| match r.path() {
        "/repos/o/r/issues/3" => api_support::json_answer(
            &json!({"number": 3, "title": "Crash on start", "state": "closed",
                    "user": {"login": "ana"}, "labels": [{"name": "bug"}, {"name": "p1"}],
                    "comments": 3, "body": "It crashes.", "created_at": "2024-02-03T04:05:06Z",
                    "updated_at": "2024-02-04T00:00:00Z",
                    "html_url": "https://github.com/o/r/issues/3"})
            .to_string(),
        ),
        "/repos/o/r/issues/3/comments" => api_support::json_answer(
            &json!([{"user": {"login": "bo"}, "body": "Same here", "created_at": "2024-02-03T05:00:00Z"},
                    {"user": {"login": "ana"}, "body": "Fixed in #4", "created_at": "2024-02-03T06:00:00Z"}])
            .to_string(),
        ),
        _ => (404, vec![], String::new()),
    })
    .await;
    let t = tools(&api.url("/"));
    let seen = call(
        &t,
        "github_issue",
        json!({"repo": "o/r", "number": 3, "max_comments": 2}),
    )
    .await;
    assert_eq!(
        seen.text,
        "o/r#3 (issue) Crash on start\nstate: closed, by ana, created 2024-02-03 04:05 UTC, updated 2024-02-04 00:00 UTC\n\
         labels: bug, p1\nhttps://github.com/o/r/issues/3\n\nIt crashes.\n\n\
         3 comment(s), the first 2 shown (raise max_comments, at most 100):\n\n\
         --- bo at 2024-02-03 05:00 UTC:\nSame here\n\n--- ana at 2024-02-03 06:00 UTC:\nFixed in #4"
    );
    // No pull request lookups for an issue.
    let targets: Vec<String> = api.requests().iter().map(|r| r.target.clone()).collect();
    assert_eq!(
        targets,
        vec![
            "/repos/o/r/issues/3",
            "/repos/o/r/issues/3/comments?per_page=2"
        ]
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_github_call_that_gets_no_answer_ends_when_the_run_is_cancelled() {
    // Takes the request and never answers; the run is cancelled once it arrived.
    let peer = Recorder::hanging().await;
    let t = tools(&format!("{}/", peer.url));
    let cancel = tokio_util::sync::CancellationToken::new();
    peer.cancel_when_received(cancel.clone());
    let seen =
        cairn_test_support::tools::call_with(&t, "github_search", json!({"repo": "o/r"}), cancel)
            .await;
    assert!(seen.is_error);
    assert!(seen.text.contains("cancel"), "{}", seen.text);
}

#[tokio::test(flavor = "multi_thread")]
async fn github_issue_bounds_an_answer_with_many_long_comments() {
    let api = Server::start(|r, _| match r.path() {
        "/repos/o/r/issues/9" => api_support::json_answer(
            &json!({"number": 9, "title": "Long thread", "state": "open", "comments": 100,
                    "body": "y".repeat(10_000)})
            .to_string(),
        ),
        _ => {
            let comments: Vec<Value> = (0..100)
                .map(|_| json!({"user": {"login": "u"}, "body": "x".repeat(3000)}))
                .collect();
            api_support::json_answer(&Value::Array(comments).to_string())
        }
    })
    .await;
    let t = tools(&api.url("/"));
    let seen = call(
        &t,
        "github_issue",
        json!({"repo": "o/r", "number": 9, "max_comments": 100}),
    )
    .await;
    assert!(!seen.is_error, "{}", seen.text);
    // The description cut at 4000 characters, each comment at 1500, the whole near 48 KB.
    assert!(
        seen.text.contains("… (10000 characters)"),
        "{}",
        &seen.text[..300]
    );
    assert!(seen.text.contains("… (3000 characters)"));
    assert!(
        seen.text
            .contains("more comment(s) not shown: the answer reached 48 KB")
    );
    assert!(seen.text.len() < 52 * 1024, "{}", seen.text.len());
}

#[tokio::test(flavor = "multi_thread")]
async fn github_429_waited_once_then_answered_and_403_rate_limit_said() {
    let calls = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let c = calls.clone();
    let api = Server::start(move |_, _| {
        if c.fetch_add(1, std::sync::atomic::Ordering::SeqCst) == 0 {
            (429, vec![("Retry-After".into(), "1".into())], String::new())
        } else {
            api_support::json_answer(r#"{"total_count": 0, "workflow_runs": []}"#)
        }
    })
    .await;
    let t = tools(&api.url("/"));
    let seen = call(&t, "github_workflow_runs", json!({"repo": "o/r"})).await;
    assert!(!seen.is_error, "{}", seen.text);
    assert!(
        seen.text.starts_with("Actions runs of o/r: 0 matching"),
        "{}",
        seen.text
    );
    assert_eq!(api.requests().len(), 2);

    // GitHub's primary rate limit is a 403 with its message: the model reads it.
    let limited = Server::start(|_, _| {
        (
            403,
            vec![("Content-Type".into(), "application/json".into())],
            r#"{"message":"API rate limit exceeded for user ID 1."}"#.into(),
        )
    })
    .await;
    let t = tools(&limited.url("/"));
    let seen = call(&t, "github_releases", json!({"repo": "o/r"})).await;
    assert!(seen.is_error);
    assert_eq!(
        seen.text,
        "github answered 403: not allowed: API rate limit exceeded for user ID 1."
    );
}
