//! The Jira tools against Prism serving the Jira Cloud platform REST API's published
//! description (`--errors`: a request the description does not allow, or one without
//! credentials, is refused; its documented examples are the answers), behind a recording relay
//! so each test sees what was sent and what Prism answered; and against a loopback server for a
//! 404 and a richer description. Without a site configured, nothing is sent.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::api_support;
use crate::relay;

use api_support::{Server, json_answer};
use cairn_test_support::tools::call;
use cairn_webtools::api::{ApiAuth, AuthScheme};
use relay::{Recorder, query_has, services};
use serde_json::{Value, json};

const TOKEN: &str = "atl-cairn-test-5c1d";
/// `dev@example.com:atl-cairn-test-5c1d` in Base64, computed outside (Python's base64).
const BASIC: &str = "Basic ZGV2QGV4YW1wbGUuY29tOmF0bC1jYWlybi10ZXN0LTVjMWQ=";

fn prism() -> Option<String> {
    relay::prism("CAIRN_JIRA_TEST_API")
}

fn auth() -> Option<ApiAuth> {
    Some(ApiAuth {
        secret: "jira-token".into(),
        scheme: AuthScheme::Basic,
        name: Some("dev@example.com".into()),
    })
}

async fn through_prism(
    api: &str,
) -> (
    Recorder,
    cairn_toolkit::ToolSet<cairn_webtools::api::services::Services>,
) {
    let relay = Recorder::relaying(api).await;
    let tools = services("jira", Some(&relay.url), auth(), TOKEN);
    (relay, tools)
}

#[tokio::test]
async fn jira_search_sends_jql_and_shows_the_page_with_warnings() {
    let Some(api) = prism() else { return };
    let (relay, t) = through_prism(&api).await;
    let jql = "project = ED AND status != Done ORDER BY updated DESC";
    let seen = call(&t, "jira_search", json!({"jql": jql, "max_results": 20})).await;
    assert!(!seen.is_error, "{}", seen.text);
    // The description's example: one issue (ED-1, with none of the asked fields but
    // `updated`, 1 there) and a warning.
    assert!(
        seen.text.starts_with(&format!(
            "Jira issues matching `{jql}`: 1 in all, from 1\nJira warns: The value 'bar' does not exist for the field 'foo'."
        )),
        "{}",
        seen.text
    );
    assert!(
        seen.text.contains("| ED-1 |  | - | - | - | 1 |"),
        "{}",
        seen.text
    );
    assert!(seen.text.contains("(1 row)"), "{}", seen.text);
    // Jira Cloud's `search/jql` first; this description predates it (Prism: 404), so the
    // older `search`, from the first issue.
    let sent = relay.requests();
    assert_eq!(sent.len(), 2);
    assert_eq!(
        (sent[0].path(), sent[0].status),
        ("/rest/api/3/search/jql", 404)
    );
    let r = &sent[1];
    assert_eq!(r.path(), "/rest/api/3/search");
    assert_eq!((r.method.as_str(), r.status), ("GET", 200));
    assert!(query_has(r, "jql", jql) && query_has(r, "maxResults", "20"));
    assert!(query_has(r, "startAt", "0"));
    assert!(query_has(
        r,
        "fields",
        "summary,status,assignee,priority,updated"
    ));
    assert_eq!(r.header("authorization"), Some(BASIC));

    let seen = call(&t, "jira_search", json!({"jql": "  "})).await;
    assert!(
        seen.is_error && seen.text.contains("`jql` is empty"),
        "{}",
        seen.text
    );
    assert_eq!(relay.requests().len(), 2);
}

#[tokio::test]
async fn jira_issue_shows_the_description_as_text_and_recent_comments() {
    let Some(api) = prism() else { return };
    let (relay, t) = through_prism(&api).await;
    let seen = call(&t, "jira_issue", json!({"issue": "ed-1"})).await;
    assert!(!seen.is_error, "{}", seen.text);
    assert!(seen.text.starts_with("ED-1: -\n"), "{}", seen.text);
    assert!(
        seen.text.contains(&format!("{}/browse/ED-1\n", relay.url)),
        "{}",
        seen.text
    );
    assert!(
        seen.text.contains("\nMain order flow broken\n"),
        "{}",
        seen.text
    );
    assert!(
        seen.text.contains(
            "Comments (1 of 1, newest first):\n- Mia Krystof at 2021-01-17T12:34:00.000+0000: Lorem ipsum dolor sit amet,"
        ),
        "{}",
        seen.text
    );
    let (issue, comments) = (relay.to("/issue/ED-1"), relay.to("/issue/ED-1/comment"));
    assert_eq!((issue.len(), comments.len()), (1, 1));
    assert_eq!((issue[0].status, comments[0].status), (200, 200));
    assert!(query_has(&comments[0], "orderBy", "-created"));
    assert!(!seen.text.contains(TOKEN));

    let seen = call(&t, "jira_issue", json!({"issue": "ED-1/../../x"})).await;
    assert!(
        seen.is_error && seen.text.contains("is not a Jira issue key"),
        "{}",
        seen.text
    );
    assert_eq!(relay.requests().len(), 2);
}

#[tokio::test]
async fn jira_create_issue_sends_the_description_as_a_document() {
    let Some(api) = prism() else { return };
    let (relay, t) = through_prism(&api).await;
    let seen = call(
        &t,
        "jira_create_issue",
        json!({"project": "proj", "issue_type": "Bug", "summary": "Checkout fails",
               "description": "Steps:\nopen the cart\n\nExpected: it works"}),
    )
    .await;
    assert!(!seen.is_error, "{}", seen.text);
    assert_eq!(
        seen.text,
        format!(
            "created ED-24 in PROJ (Bug): Checkout fails\n{}/browse/ED-24",
            relay.url
        )
    );
    let sent = relay.to("/rest/api/3/issue");
    assert_eq!(sent.len(), 1);
    assert_eq!((sent[0].method.as_str(), sent[0].status), ("POST", 201));
    let body: Value = serde_json::from_slice(&sent[0].body).unwrap();
    assert_eq!(
        body,
        json!({"fields": {
            "project": {"key": "PROJ"},
            "issuetype": {"name": "Bug"},
            "summary": "Checkout fails",
            "description": {"type": "doc", "version": 1, "content": [
                {"type": "paragraph", "content": [
                    {"type": "text", "text": "Steps:"},
                    {"type": "hardBreak"},
                    {"type": "text", "text": "open the cart"}]},
                {"type": "paragraph", "content": [
                    {"type": "text", "text": "Expected: it works"}]}
            ]}
        }})
    );

    let seen = call(
        &t,
        "jira_create_issue",
        json!({"project": "PROJ", "issue_type": "Task", "summary": "two\nlines"}),
    )
    .await;
    assert!(
        seen.is_error && seen.text.contains("nothing was created"),
        "{}",
        seen.text
    );
    assert_eq!(relay.requests().len(), 1);
}

#[tokio::test]
async fn jira_transition_lists_then_applies_by_name_and_refuses_unknown_ones() {
    let Some(api) = prism() else { return };
    let (relay, t) = through_prism(&api).await;
    let seen = call(&t, "jira_transition", json!({"issue": "ED-1"})).await;
    assert!(!seen.is_error, "{}", seen.text);
    assert_eq!(
        seen.text,
        "transitions available for ED-1 now:\n- Close Issue (id 2) → In Progress\n- QA Review (id 711) → Closed\n"
    );

    let seen = call(
        &t,
        "jira_transition",
        json!({"issue": "ED-1", "transition": "qa review"}),
    )
    .await;
    assert!(!seen.is_error, "{}", seen.text);
    assert_eq!(
        seen.text,
        "ED-1: applied \"QA Review\" (id 711); its status is now Closed"
    );
    let posts: Vec<_> = relay
        .to("/issue/ED-1/transitions")
        .into_iter()
        .filter(|r| r.method == "POST")
        .collect();
    assert_eq!(posts.len(), 1);
    assert_eq!(posts[0].status, 204);
    assert_eq!(
        serde_json::from_slice::<Value>(&posts[0].body).unwrap(),
        json!({"transition": {"id": "711"}})
    );

    let seen = call(
        &t,
        "jira_transition",
        json!({"issue": "ED-1", "transition": "Done"}),
    )
    .await;
    assert!(seen.is_error);
    assert!(
        seen.text.starts_with("ED-1 has no transition \"Done\" now; nothing was changed. Available:\n- Close Issue (id 2)"),
        "{}",
        seen.text
    );
    assert_eq!(
        relay
            .requests()
            .iter()
            .filter(|r| r.method == "POST")
            .count(),
        1
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn jira_without_a_site_says_how_to_set_it_and_sends_nothing() {
    let server = Server::start(|_, _| json_answer("{}")).await;
    let t = services("jira", None, auth(), TOKEN);
    for (tool, args) in [
        ("jira_search", json!({"jql": "project = X"})),
        ("jira_issue", json!({"issue": "X-1"})),
        (
            "jira_create_issue",
            json!({"project": "X", "issue_type": "Task", "summary": "s"}),
        ),
        ("jira_transition", json!({"issue": "X-1"})),
    ] {
        let seen = call(&t, tool, args).await;
        assert!(seen.is_error, "{tool}: {}", seen.text);
        assert!(
            seen.text.starts_with("Jira has no public address: set your site in the configuration, `[api.services.jira] base_url = \"https://YOUR-SITE.atlassian.net\"`"),
            "{tool}: {}",
            seen.text
        );
    }
    assert!(server.requests().is_empty());
}

#[tokio::test(flavor = "multi_thread")]
async fn jira_names_a_missing_issue_and_reads_rich_descriptions() {
    let doc = json!({"key": "PROJ-7", "fields": {
        "summary": "Login loop", "status": {"name": "In Progress"},
        "assignee": {"displayName": "Ana Diaz"}, "priority": {"name": "High"},
        "issuetype": {"name": "Bug"}, "labels": ["auth"],
        "description": {"type": "doc", "version": 1, "content": [
            {"type": "heading", "attrs": {"level": 2}, "content": [{"type": "text", "text": "Steps"}]},
            {"type": "bulletList", "content": [
                {"type": "listItem", "content": [{"type": "paragraph", "content": [{"type": "text", "text": "sign in"}]}]},
                {"type": "listItem", "content": [{"type": "paragraph", "content": [
                    {"type": "text", "text": "ask "}, {"type": "mention", "attrs": {"text": "@Bo"}}]}]}]},
            {"type": "codeBlock", "content": [{"type": "text", "text": "302 /login"}]}
        ]}
    }})
    .to_string();
    let server = Server::start(move |r, _| match r.path() {
        "/rest/api/3/issue/PROJ-7" => json_answer(&doc),
        "/rest/api/3/issue/PROJ-7/comment" => json_answer(r#"{"total":0,"comments":[]}"#),
        _ => (
            404,
            vec![("Content-Type".into(), "application/json".into())],
            r#"{"errorMessages":["Issue does not exist or you do not have permission to see it."],"errors":{}}"#.into(),
        ),
    })
    .await;
    let t = services("jira", Some(&server.url("")), auth(), TOKEN);

    let seen = call(&t, "jira_issue", json!({"issue": "PROJ-404"})).await;
    assert!(seen.is_error);
    assert_eq!(
        seen.text,
        "jira answered 404: issue PROJ-404 was not found (or is not visible with this credential)"
    );
    let seen = call(
        &t,
        "jira_transition",
        json!({"issue": "PROJ-404", "transition": "Done"}),
    )
    .await;
    assert!(
        seen.text
            .starts_with("jira answered 404: issue PROJ-404 was not found"),
        "{}",
        seen.text
    );

    let seen = call(&t, "jira_issue", json!({"issue": "PROJ-7"})).await;
    assert!(!seen.is_error, "{}", seen.text);
    assert!(
        seen.text.starts_with(
            "PROJ-7: Login loop\ntype: Bug; status: In Progress; priority: High\nassignee: Ana Diaz; reporter: -\n"
        ),
        "{}",
        seen.text
    );
    assert!(seen.text.contains("labels: auth\n"), "{}", seen.text);
    assert!(
        seen.text
            .contains("\nSteps\n- sign in\n- ask @Bo\n```\n302 /login\n```\n"),
        "{}",
        seen.text
    );
    assert!(seen.text.ends_with("\nNo comments.\n"), "{}", seen.text);
    assert_eq!(server.requests()[0].header("authorization"), Some(BASIC));
}

#[tokio::test(flavor = "multi_thread")]
async fn jira_search_pages_by_token_on_jira_cloud() {
    // Jira Cloud's `search/jql` answer: issues, `nextPageToken` while `isLast` is false.
    let server = Server::start(|r, _| {
        let token = r
            .target
            .split_once('?')
            .map(|(_, q)| q.contains("nextPageToken=tok%2B2"))
            .unwrap_or(false);
        if r.path() != "/rest/api/3/search/jql" {
            return (500, vec![], String::new());
        }
        let body = if token {
            json!({"issues": [{"key": "PROJ-1", "fields": {"summary": "Third"}}], "isLast": true})
        } else {
            json!({"issues": [
                {"key": "PROJ-3", "fields": {"summary": "First | one", "status": {"name": "To Do"},
                 "assignee": {"displayName": "Ana Diaz"}, "priority": {"name": "High"},
                 "updated": "2026-11-30T10:00:00.000+0000"}},
                {"key": "PROJ-2", "fields": {"summary": "Second", "assignee": null}}
            ], "nextPageToken": "tok+2", "isLast": false})
        };
        json_answer(&body.to_string())
    })
    .await;
    let t = services("jira", Some(&server.url("")), auth(), TOKEN);

    let seen = call(
        &t,
        "jira_search",
        json!({"jql": "project = PROJ", "max_results": 2}),
    )
    .await;
    assert!(!seen.is_error, "{}", seen.text);
    assert_eq!(
        seen.text,
        "Jira issues matching `project = PROJ`\n\n\
         | key | summary | status | assignee | priority | updated |\n\
         | --- | --- | --- | --- | --- | --- |\n\
         | PROJ-3 | First \\| one | To Do | Ana Diaz | High | 2026-11-30T10:00:00.000+0000 |\n\
         | PROJ-2 | Second | - | - | - |  |\n\n\
         (2 rows shown; more were left out: call again with page_token=\"tok+2\")"
    );
    let seen = call(
        &t,
        "jira_search",
        json!({"jql": "project = PROJ", "max_results": 2, "page_token": "tok+2"}),
    )
    .await;
    assert!(seen.text.contains("| PROJ-1 | Third |"), "{}", seen.text);
    assert!(seen.text.ends_with("(1 row)"), "{}", seen.text);
    let sent = server.requests();
    assert_eq!(sent.len(), 2);
    assert!(!sent[0].target.contains("nextPageToken") && !sent[0].target.contains("startAt"));
}
