//! The Asana tools (in place of Notion's, whose published description has no search or page
//! creation) against Prism serving Asana's published API description (`--errors`: a request
//! the description does not allow, or one without the token, is refused), behind a recording
//! relay so each test sees what was sent and what Prism answered; and against a loopback
//! server for answers Prism cannot give (a 404, long notes, a page of comments).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::api_support;
use crate::relay;

use api_support::{Server, json_answer};
use cairn_test_support::tools::call;
use cairn_webtools::api::{ApiAuth, AuthScheme};
use relay::{Recorder, query_has, services};
use serde_json::{Value, json};

const TOKEN: &str = "2/1200/asana-cairn-test-71c4";

/// Prism's base as the script printed it, or `None` (skipped).
fn prism() -> Option<String> {
    relay::prism("CAIRN_ASANA_TEST_API")
}

fn auth() -> Option<ApiAuth> {
    Some(ApiAuth {
        secret: "asana-token".into(),
        scheme: AuthScheme::Bearer,
        name: None,
    })
}

/// The relay in front of Prism, and the tools calling it as `[api.services.asana]`.
async fn through_prism(
    api: &str,
) -> (
    Recorder,
    cairn_toolkit::ToolSet<cairn_webtools::api::services::Services>,
) {
    let relay = Recorder::relaying(api).await;
    let tools = services("asana", Some(&relay.url), auth(), TOKEN);
    (relay, tools)
}

#[tokio::test]
async fn asana_search_finds_tasks_by_name_through_typeahead() {
    let Some(api) = prism() else { return };
    let (relay, t) = through_prism(&api).await;

    let seen = call(
        &t,
        "asana_search",
        json!({"workspace": "1200", "query": "catnip"}),
    )
    .await;
    assert!(!seen.is_error, "{}", seen.text);
    // The description's example: one task with its gid and name (no other fields).
    assert!(
        seen.text
            .starts_with("tasks in workspace 1200 matching \"catnip\""),
        "{}",
        seen.text
    );
    assert!(
        seen.text.contains("| 12345 | Bug Task |  |  |  |"),
        "{}",
        seen.text
    );
    let sent = relay.to("/workspaces/1200/typeahead");
    assert_eq!(sent.len(), 1);
    let r = &sent[0];
    assert_eq!((r.method.as_str(), r.status), ("GET", 200), "Prism refused");
    assert!(query_has(r, "resource_type", "task") && query_has(r, "query", "catnip"));
    assert!(query_has(r, "count", "20"));
    assert_eq!(r.header("authorization"), Some(&*format!("Bearer {TOKEN}")));

    let seen = call(
        &t,
        "asana_search",
        json!({"workspace": "1200", "query": "roadmap", "kind": "project", "count": 500}),
    )
    .await;
    assert!(!seen.is_error, "{}", seen.text);
    assert!(
        seen.text
            .starts_with("projects in workspace 1200 matching \"roadmap\""),
        "{}",
        seen.text
    );
    let r = &relay.to("/typeahead")[1];
    assert_eq!(r.status, 200);
    // The count is held to Asana's largest.
    assert!(query_has(r, "resource_type", "project") && query_has(r, "count", "100"));

    // Ids that are not digits never reach the path; an empty query is refused.
    for (args, why) in [
        (
            json!({"workspace": "../tasks", "query": "x"}),
            "is not an Asana id",
        ),
        (
            json!({"workspace": "1200", "query": "  "}),
            "`query` is empty",
        ),
    ] {
        let seen = call(&t, "asana_search", args).await;
        assert!(seen.is_error && seen.text.contains(why), "{}", seen.text);
    }
    assert_eq!(relay.requests().len(), 2);
}

#[tokio::test]
async fn asana_task_shows_fields_notes_and_comments() {
    let Some(api) = prism() else { return };
    let (relay, t) = through_prism(&api).await;

    let seen = call(&t, "asana_task", json!({"task": "12345"})).await;
    assert!(!seen.is_error, "{}", seen.text);
    // The description's example task and story, as the model reads them.
    assert_eq!(
        seen.text,
        "task 12345: Buy catnip (open)\n\
         assignee: Greg Sanchez; due: 2025-10-15; created 2025-10-15T13:51:00.926Z, modified 2025-10-15T13:51:00.926Z\n\
         in: Stuff to buy / Next Actions\n\
         tags: Grade A\n\
         subtask of 12345 (Bug Task)\n\
         Status: blue\n\
         https://app.asana.com/0/resource/123456789/list\n\
         \n\
         Notes:\n\
         Mittens really likes the stuff from Humboldt.\n\
         \n\
         Comments (1 of 1 stories; the rest are changes):\n\
         - Greg Sanchez at 2025-10-15T13:51:00.926Z: marked today\n"
    );
    let (task, stories) = (relay.to("/tasks/12345"), relay.to("/tasks/12345/stories"));
    assert_eq!((task.len(), stories.len()), (1, 1));
    assert_eq!((task[0].status, stories[0].status), (200, 200));
    assert!(query_has(&stories[0], "limit", "100"));
}

#[tokio::test]
async fn asana_create_task_posts_what_prism_accepts_and_refuses_bad_input() {
    let Some(api) = prism() else { return };
    let (relay, t) = through_prism(&api).await;

    let seen = call(
        &t,
        "asana_create_task",
        json!({"project": "1331", "name": "Restock catnip", "notes": "Two bags.\n\nThe Humboldt kind.",
               "due_on": "2025-11-03", "assignee": "me"}),
    )
    .await;
    assert!(!seen.is_error, "{}", seen.text);
    assert_eq!(
        seen.text,
        "created task 12345 in project 1331: Buy catnip\nhttps://app.asana.com/0/resource/123456789/list"
    );
    let sent = relay.to("/tasks");
    assert_eq!(sent.len(), 1);
    let r = &sent[0];
    assert_eq!(
        (r.method.as_str(), r.status),
        ("POST", 201),
        "Prism refused"
    );
    assert_eq!(r.header("content-type"), Some("application/json"));
    assert_eq!(
        r.json(),
        json!({"data": {"name": "Restock catnip", "projects": ["1331"],
               "notes": "Two bags.\n\nThe Humboldt kind.", "due_on": "2025-11-03", "assignee": "me"}})
    );

    // Refused before anything is sent, each saying why and that nothing was created.
    for (args, why) in [
        (json!({"project": "1331", "name": " "}), "`name` is empty"),
        (
            json!({"project": "1331", "name": "a\nb"}),
            "more than one line",
        ),
        (
            json!({"project": "1331", "name": "x".repeat(1025)}),
            "1025 characters",
        ),
        (
            json!({"project": "1331", "name": "x", "due_on": "3 Nov"}),
            "is not a date",
        ),
        (
            json!({"project": "1331", "name": "x", "due_on": "2025-13-01"}),
            "is not a date",
        ),
        (json!({"project": "p-1", "name": "x"}), "is not an Asana id"),
    ] {
        let seen = call(&t, "asana_create_task", args).await;
        assert!(seen.is_error && seen.text.contains(why), "{}", seen.text);
        assert!(seen.text.contains("nothing was created"), "{}", seen.text);
    }
    // An argument the schema does not have is refused, not ignored.
    let seen = call(
        &t,
        "asana_create_task",
        json!({"project": "1331", "name": "x", "parent": "9"}),
    )
    .await;
    assert!(seen.is_error, "{}", seen.text);
    assert_eq!(relay.requests().len(), 1);
}

#[tokio::test]
async fn asana_without_a_token_answers_401_with_how_to_sign_in() {
    let Some(api) = prism() else { return };
    let relay = Recorder::relaying(&api).await;
    let t = services("asana", Some(&relay.url), None, TOKEN);
    let seen = call(&t, "asana_task", json!({"task": "12345"})).await;
    assert!(seen.is_error);
    assert!(
        seen.text
            .starts_with("asana answered 401: not signed in; set `[api.services.asana] auth"),
        "{}",
        seen.text
    );
    assert_eq!(relay.requests()[0].status, 401);
    assert_eq!(relay.requests().len(), 1);
}

#[tokio::test(flavor = "multi_thread")]
async fn asana_task_not_found_answers_404_naming_the_task() {
    let peer = Recorder::answering(
        404,
        r#"{"errors":[{"message":"task: Unknown object: 99"}]}"#,
    )
    .await;
    let t = services("asana", Some(&peer.url), auth(), TOKEN);
    let seen = call(&t, "asana_task", json!({"task": "99"})).await;
    assert!(seen.is_error);
    assert_eq!(
        seen.text,
        "asana answered 404: task 99 was not found (or is not visible with this credential)"
    );
    let seen = call(
        &t,
        "asana_create_task",
        json!({"project": "77", "name": "x"}),
    )
    .await;
    assert_eq!(
        seen.text,
        "asana answered 404: project 77 was not found (or is not visible with this credential); the task was not created"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn asana_task_pages_long_notes_and_leaves_changes_out_of_comments() {
    // 4,000 `a` then 500 `b`: the first answer ends after the last `a`, the second is the `b`s.
    let notes = format!("{}{}", "a".repeat(4000), "b".repeat(500));
    let task = json!({"data": {"gid": "5", "name": "Long", "completed": true,
                               "completed_at": "2025-01-02T03:04:05Z", "notes": notes}})
    .to_string();
    let stories = json!({"data": [
        {"resource_subtype": "assigned", "text": "assigned to you", "created_by": {"name": "Ana"}},
        {"resource_subtype": "comment_added", "text": "done?", "created_by": {"name": "Bo"},
         "created_at": "2025-01-01T00:00:00Z"}
    ], "next_page": {"offset": "eyJvIjoxfQ", "path": "/tasks/5/stories?offset=eyJvIjoxfQ"}})
    .to_string();
    let server = Server::start(move |r, _| match r.path() {
        "/tasks/5" => json_answer(&task),
        "/tasks/5/stories" => json_answer(&stories),
        _ => (500, vec![], String::new()),
    })
    .await;
    let t = services("asana", Some(&server.url("")), auth(), TOKEN);

    let seen = call(&t, "asana_task", json!({"task": "5"})).await;
    assert!(!seen.is_error, "{}", seen.text);
    assert!(
        seen.text
            .starts_with("task 5: Long (done 2025-01-02T03:04:05Z)\nassignee: -; due: -;"),
        "{}",
        seen.text
    );
    let shown = format!(
        "\nNotes:\n{}\n(notes cut at character 4000 of 4500: call again with notes_from=4000)\n",
        "a".repeat(4000)
    );
    assert!(seen.text.contains(&shown), "{}", seen.text);
    assert!(!seen.text.contains('b'.to_string().repeat(2).as_str()));
    assert!(
        seen.text.ends_with(
            "Comments (1 of 2 stories; the rest are changes):\n\
             - Bo at 2025-01-01T00:00:00Z: done?\n\
             (more stories: call again with comments_offset=\"eyJvIjoxfQ\")\n"
        ),
        "{}",
        seen.text
    );

    let seen = call(
        &t,
        "asana_task",
        json!({"task": "5", "notes_from": 4000, "comments_offset": "eyJvIjoxfQ"}),
    )
    .await;
    let shown = format!(
        "\nNotes (from character 4000):\n{}\n\nComments",
        "b".repeat(500)
    );
    assert!(seen.text.contains(&shown), "{}", seen.text);
    let last = server.requests().last().cloned().unwrap();
    assert_eq!(last.target, "/tasks/5/stories?limit=100&offset=eyJvIjoxfQ");
}

#[tokio::test(flavor = "multi_thread")]
async fn an_asana_call_to_a_server_that_never_answers_ends_when_cancelled() {
    let peer = Recorder::hanging().await;
    let t = services("asana", Some(&peer.url), auth(), TOKEN);
    let cancel = tokio_util::sync::CancellationToken::new();
    peer.cancel_when_received(cancel.clone());
    let seen = cairn_test_support::tools::call_with(
        &t,
        "asana_search",
        json!({"workspace": "1", "query": "x"}),
        cancel,
    )
    .await;
    assert!(seen.is_error);
    assert_eq!(seen.text, "cancelled");
}

#[test]
fn the_asana_bitbucket_snyk_schemas_describe_every_field_and_refuse_unknown_ones() {
    let ours: Vec<_> = cairn_webtools::api::services::SERVICE_TOOLS
        .iter()
        .filter(|e| {
            ["asana_", "bitbucket_", "snyk_"]
                .iter()
                .any(|p| e.name().starts_with(p))
        })
        .map(|e| e.info())
        .collect();
    assert_eq!(ours.len(), 6);
    for info in ours {
        let name = info.tool.name.to_string();
        let schema = Value::Object((*info.tool.input_schema).clone());
        assert_eq!(schema["additionalProperties"], false, "{name}");
        for (field, p) in schema["properties"].as_object().unwrap() {
            assert!(
                p["description"].as_str().is_some_and(|d| !d.is_empty()),
                "{name}.{field} has no description"
            );
            if let Some(values) = p.get("enum") {
                assert!(
                    values.as_array().unwrap().iter().all(Value::is_string),
                    "{name}.{field}"
                );
            }
            assert!(p.get("oneOf").is_none(), "{name}.{field}: {p}");
        }
        let writes = name == "asana_create_task";
        assert_eq!(info.agent_only, writes, "{name}");
        assert_eq!(info.category, "api", "{name}");
    }
}
