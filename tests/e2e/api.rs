//! The API tools through the real binary: a scripted chat calls `api_request` with
//! `auth: {"secret": ...}` against a loopback API. The vault's value reaches the API as the
//! bearer token because the secret is bound to `localhost`; a second call to the same server
//! named `127.0.0.1` (not bound) is refused before it connects; and no request the model
//! server received carries the value, while the API's answer does reach the model (with the
//! value it echoed replaced by the redactor).

use cairn_test_support::{Format, Reply};
use serde_json::json;

use crate::support::{HttpStub, Sandbox, StubReply, text, vault_set};

const VALUE: &str = "ghp_e2e_api_value_5d81c0";

/// A loopback JSON API that records the head of every request and, like many debugging
/// endpoints, echoes the `Authorization` header it received in its answer.
fn recording_api() -> HttpStub {
    HttpStub::start(|head| {
        let echoed = head
            .lines()
            .find_map(|l| l.strip_prefix("authorization: "))
            .unwrap_or("");
        let body = json!({"login": "octo-e2e", "id": 42, "you_sent": echoed}).to_string();
        StubReply::Status(200, vec!["content-type: application/json".into()], body)
    })
}

#[test]
fn api_request_auth_reaches_the_bound_api_and_never_the_model() {
    let api = recording_api();
    let port = api.port;
    let auth = json!({"secret": "gh", "scheme": "bearer"});
    let sb = Sandbox::new(
        Format::OpenAi,
        vec![
            Reply::tool_call(
                "api_request",
                json!({"url": format!("http://localhost:{port}/user"), "auth": auth}),
            ),
            Reply::tool_call(
                "api_request",
                json!({"url": format!("http://127.0.0.1:{port}/user"), "auth": auth}),
            ),
            Reply::text("You are octo-e2e."),
        ],
    );
    vault_set(&sb, "gh", "localhost", VALUE);
    let ws = sb.ws();
    let out = sb.run(
        &[
            "chat",
            "-w",
            ws.to_str().unwrap(),
            "--yes",
            "who am I on the API?",
        ],
        &[("CAIRN_WEB__ALLOW_LOOPBACK", "true")],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout).trim(), "You are octo-e2e.");

    // Exactly one request arrived (the unbound one was refused before connecting), and it
    // carried the vault's value as the bearer token.
    let heads = api.heads();
    assert_eq!(heads.len(), 1, "{heads:?}");
    assert!(heads[0].starts_with("GET /user "), "{}", heads[0]);
    assert!(
        heads[0]
            .to_ascii_lowercase()
            .contains(&format!("authorization: bearer {VALUE}")),
        "{}",
        heads[0]
    );

    // The model saw the API's answer and the refusal, never the value.
    let requests = sb.model.requests();
    assert_eq!(requests.len(), 3);
    for r in &requests {
        let body = r.body.to_string();
        assert!(
            !body.contains(VALUE),
            "the secret reached the model: {body}"
        );
        assert!(
            !body.contains("5d81c0"),
            "part of the secret reached the model"
        );
    }
    let second = requests[1].body.to_string();
    assert!(second.contains("octo-e2e"), "{second}");
    assert!(
        second.contains("[REDACTED"),
        "the echoed value was not redacted: {second}"
    );
    let third = requests[2].body.to_string();
    assert!(
        third.contains("gh") && third.contains("127.0.0.1"),
        "{third}"
    );
    for shown in [text(&out.stdout), text(&out.stderr)] {
        assert!(!shown.contains(VALUE), "{shown}");
    }
}

/// A configured OpenAPI spec that cannot be loaded is reported by `cairn mcp status`, naming
/// the entry and why; the API tools themselves are still there.
#[test]
fn an_openapi_spec_that_does_not_load_is_reported() {
    let sb = Sandbox::new(Format::OpenAi, vec![]);
    sb.user_config("[[api.openapi]]\nname = \"petstore\"\nspec = \"specs/missing.yaml\"\n");
    let ws = sb.ws();
    let out = sb.run(&["mcp", "status", "-w", ws.to_str().unwrap()], &[]);
    let shown = text(&out.stdout);
    assert!(
        !out.status.success(),
        "a problem makes the status unhealthy: {shown}"
    );
    assert!(
        shown.contains("cairn-openapi") && shown.contains("api.openapi `petstore`"),
        "{shown}"
    );
    assert!(shown.contains("its operations are left out"), "{shown}");
    assert!(shown.contains("cairn-api"), "{shown}");
}
