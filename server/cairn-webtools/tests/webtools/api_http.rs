//! The API tools against real loopback HTTP servers: what each tool sends (method, target,
//! headers, body, as the server recorded them) and what the model reads back, vault secrets
//! attached only for the hosts they are bound to, and text that looks like a secret reference
//! sent verbatim.

use crate::api_support;

use std::time::Duration;

use api_support::{Server, TestVault, call, fails, json_answer, ok, tools};
use serde_json::json;

fn vault() -> TestVault {
    TestVault::default().with("github", "ghp_SECRET_VALUE", &["localhost"])
}

#[tokio::test(flavor = "multi_thread")]
async fn api_request_sends_method_query_headers_and_json_and_pretty_prints() {
    let server = Server::start(|_, _| json_answer(r#"{"id":7,"name":"Rex"}"#)).await;
    let t = tools(TestVault::default());
    let out = ok(
        &t,
        "api_request",
        json!({
            "method": "post",
            "base_url": server.url("/v1/"),
            "path": "/pets",
            "query": {"tag": ["a", "b"], "limit": 2},
            "headers": {"X-Trace": "t1"},
            "json": {"name": "Rex"}
        }),
    )
    .await;
    let seen = server.requests();
    assert_eq!(seen.len(), 1);
    let r = &seen[0];
    assert_eq!(r.method, "POST");
    // The pairs come in key order.
    assert_eq!(r.target, "/v1/pets?limit=2&tag=a&tag=b");
    assert_eq!(r.header("x-trace"), Some("t1"));
    assert_eq!(r.header("content-type"), Some("application/json"));
    assert_eq!(r.body, r#"{"name":"Rex"}"#);
    assert!(out.contains("Status: 200 OK"), "{out}");
    assert!(out.contains("content-type: application/json"), "{out}");
    assert!(out.contains("\"name\": \"Rex\""), "{out}");
}

#[tokio::test(flavor = "multi_thread")]
async fn api_request_pages_long_bodies_and_shows_error_statuses() {
    let long = "x".repeat(50);
    let server = Server::start(move |r, _| match r.path() {
        "/long" => (200, vec![], long.clone()),
        _ => (
            404,
            vec![("Content-Type".into(), "application/json".into())],
            r#"{"message":"Not Found"}"#.into(),
        ),
    })
    .await;
    let t = tools(TestVault::default());
    let first = ok(
        &t,
        "api_request",
        json!({"url": server.url("/long"), "max_length": 20}),
    )
    .await;
    assert!(first.contains("call again with start_index=20"), "{first}");
    let last = ok(
        &t,
        "api_request",
        json!({"url": server.url("/long"), "start_index": 40, "max_length": 20}),
    )
    .await;
    assert!(last.ends_with(&"x".repeat(10)), "{last}");
    let missing = ok(&t, "api_request", json!({"url": server.url("/nope")})).await;
    assert!(missing.contains("Status: 404 Not Found"), "{missing}");
    assert!(missing.contains("\"message\": \"Not Found\""), "{missing}");
}

#[tokio::test(flavor = "multi_thread")]
async fn api_request_argument_errors_are_error_results() {
    let t = tools(TestVault::default());
    let both = fails(
        &t,
        "api_request",
        json!({"url": "http://127.0.0.1:9/", "json": {}, "body": "x"}),
    )
    .await;
    assert!(both.contains("either json or body"), "{both}");
    let unknown = fails(
        &t,
        "api_request",
        json!({"url": "http://127.0.0.1:9/", "verb": "GET"}),
    )
    .await;
    assert!(unknown.contains("unknown field"), "{unknown}");
    let method = fails(
        &t,
        "api_request",
        json!({"url": "http://127.0.0.1:9/", "method": "TRACE"}),
    )
    .await;
    assert!(method.contains("not supported"), "{method}");
    let host = fails(
        &t,
        "api_request",
        json!({"url": "http://127.0.0.1:9/", "headers": {"Host": "internal"}}),
    )
    .await;
    assert!(host.contains("set by the HTTP layer"), "{host}");
}

#[tokio::test(flavor = "multi_thread")]
async fn arguments_that_do_not_match_the_schema_are_refused_naming_the_field_before_sending() {
    let server = Server::start(|_, _| json_answer("{}")).await;
    let t = tools(TestVault::default());
    let url = server.url("/x");
    for (tool, args, names) in [
        ("api_health", json!({}), "url"),
        ("api_health", json!({"url": url, "timeout": 3}), "timeout"),
        (
            "api_request",
            json!({"url": url, "headers": {"X-Count": 5}}),
            "headers.X-Count",
        ),
        (
            "api_request",
            json!({"url": url, "max_length": "ten"}),
            "max_length",
        ),
        (
            "graphql_query",
            json!({"endpoint": url, "query": "{ a }", "variables": [1]}),
            "variables",
        ),
        ("api_webhook", json!({"url": url}), "payload"),
        ("api_jwt_decode", json!({"token": 7}), "token"),
        (
            "api_request",
            json!({"url": url, "auth": {"secret": "s", "scheme": "digest"}}),
            "auth.scheme",
        ),
    ] {
        let refused = fails(&t, tool, args).await;
        assert!(refused.contains(names), "{tool}: {refused}");
        assert!(refused.contains(tool), "{tool}: {refused}");
    }
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert!(server.requests().is_empty(), "{:?}", server.requests());
}

#[tokio::test(flavor = "multi_thread")]
async fn a_secret_reaches_only_a_host_it_is_bound_to() {
    let bound = Server::start(|_, _| json_answer("{}")).await;
    let t = tools(vault());
    // Bound to `localhost`: the guard attaches it.
    ok(
        &t,
        "api_request",
        json!({"url": bound.localhost_url("/user"), "auth": {"secret": "github"}}),
    )
    .await;
    let seen = bound.requests();
    assert_eq!(seen.len(), 1);
    assert_eq!(
        seen[0].header("authorization"),
        Some("Bearer ghp_SECRET_VALUE")
    );
    // The same server under another name (127.0.0.1) is not a host the secret is bound to:
    // refused before connecting, so nothing arrives.
    let unbound = Server::start(|_, _| json_answer("{}")).await;
    let refused = fails(
        &t,
        "api_request",
        json!({"url": unbound.url("/user"), "auth": {"secret": "github"}}),
    )
    .await;
    assert!(refused.contains("github"), "{refused}");
    assert!(!refused.contains("ghp_SECRET_VALUE"), "{refused}");
    tokio::time::sleep(Duration::from_millis(150)).await;
    assert!(
        unbound.requests().is_empty(),
        "the unbound host was reached"
    );
    // The result the model reads never holds the value, even where it was sent.
    let shown = ok(
        &t,
        "api_request",
        json!({"url": bound.localhost_url("/again"), "auth": {"secret": "github"}}),
    )
    .await;
    assert!(!shown.contains("ghp_SECRET_VALUE"), "{shown}");
}

#[tokio::test(flavor = "multi_thread")]
async fn auth_schemes_place_the_secret_where_asked() {
    let server = Server::start(|_, _| json_answer("{}")).await;
    let t = tools(vault());
    ok(
        &t,
        "api_request",
        json!({"url": server.localhost_url("/h"), "auth": {"secret": "github", "scheme": "header", "name": "X-Api-Key"}}),
    )
    .await;
    ok(
        &t,
        "api_request",
        json!({"url": server.localhost_url("/q?a=1"), "auth": {"secret": "github", "scheme": "query", "name": "api_key"}}),
    )
    .await;
    ok(
        &t,
        "api_request",
        json!({"url": server.localhost_url("/b"), "auth": {"secret": "github", "scheme": "basic", "name": "me"}}),
    )
    .await;
    let seen = server.requests();
    assert_eq!(seen[0].header("x-api-key"), Some("ghp_SECRET_VALUE"));
    assert_eq!(seen[1].target, "/q?a=1&api_key=ghp_SECRET_VALUE");
    // base64("me:ghp_SECRET_VALUE")
    assert_eq!(
        seen[2].header("authorization"),
        Some("Basic bWU6Z2hwX1NFQ1JFVF9WQUxVRQ==")
    );
    let missing_name = fails(
        &t,
        "api_request",
        json!({"url": server.localhost_url("/h"), "auth": {"secret": "github", "scheme": "header"}}),
    )
    .await;
    assert!(missing_name.contains("needs auth.name"), "{missing_name}");
    let unknown = fails(
        &t,
        "api_request",
        json!({"url": server.localhost_url("/h"), "auth": {"secret": "nope"}}),
    )
    .await;
    assert!(unknown.contains("nope"), "{unknown}");
}

#[tokio::test(flavor = "multi_thread")]
async fn secret_references_written_by_the_model_are_sent_verbatim() {
    let server = Server::start(|_, _| json_answer("{}")).await;
    let t = tools(vault());
    ok(
        &t,
        "api_request",
        json!({
            "method": "POST",
            "url": server.localhost_url("/x?token={{vault.github}}"),
            "headers": {"Authorization": "Bearer {{vault.github}}", "X-Other": "secret:github"},
            "body": "key=secret:github&t={{vault.github}}"
        }),
    )
    .await;
    let seen = server.requests();
    let r = &seen[0];
    assert_eq!(r.header("authorization"), Some("Bearer {{vault.github}}"));
    assert_eq!(r.header("x-other"), Some("secret:github"));
    assert_eq!(r.body, "key=secret:github&t={{vault.github}}");
    assert_eq!(r.target, "/x?token={{vault.github}}");
    let all = format!("{r:?}");
    assert!(!all.contains("ghp_SECRET_VALUE"), "{all}");
}

#[tokio::test(flavor = "multi_thread")]
async fn api_get_json_selects_by_pointer() {
    let server = Server::start(|_, _| json_answer(r#"{"data":[{"name":"a"},{"name":"b"}]}"#)).await;
    let t = tools(TestVault::default());
    let out = ok(
        &t,
        "api_get_json",
        json!({"url": server.url("/items"), "pointer": "/data/1/name"}),
    )
    .await;
    assert!(out.trim_end().ends_with("\"b\""), "{out}");
    assert_eq!(
        server.requests()[0].header("accept"),
        Some("application/json")
    );
    let missing = fails(
        &t,
        "api_get_json",
        json!({"url": server.url("/items"), "pointer": "/nope"}),
    )
    .await;
    assert!(missing.contains("top-level keys are data"), "{missing}");
    let html = Server::start(|_, _| (200, vec![], "<html></html>".into())).await;
    let not_json = fails(&t, "api_get_json", json!({"url": html.url("/")})).await;
    assert!(not_json.contains("not JSON"), "{not_json}");
}

#[tokio::test(flavor = "multi_thread")]
async fn api_paginate_follows_link_headers_across_three_pages() {
    let server = Server::start(|r, base| {
        let page: u32 = r
            .target
            .split("page=")
            .nth(1)
            .and_then(|p| p.parse().ok())
            .unwrap_or(1);
        let items = json!([{"n": page * 10 + 1}, {"n": page * 10 + 2}]).to_string();
        let mut headers = vec![("Content-Type".to_string(), "application/json".to_string())];
        if page < 3 {
            headers.push((
                "Link".into(),
                format!(
                    "<{base}/items?page={}>; rel=\"next\", <{base}/items?page=3>; rel=\"last\"",
                    page + 1
                ),
            ));
        }
        (200, headers, items)
    })
    .await;
    let t = tools(TestVault::default());
    let out = ok(&t, "api_paginate", json!({"url": server.url("/items")})).await;
    assert!(out.contains("Pages fetched: 3"), "{out}");
    assert!(out.contains("Items: 6"), "{out}");
    for n in [11, 12, 21, 22, 31, 32] {
        assert!(out.contains(&format!("\"n\": {n}")), "{n}: {out}");
    }
    assert_eq!(server.requests().len(), 3);
    // max_pages stops early and says where the rest is.
    let capped = ok(
        &t,
        "api_paginate",
        json!({"url": server.url("/items"), "max_pages": 2}),
    )
    .await;
    assert!(capped.contains("Items: 4"), "{capped}");
    assert!(capped.contains("max_pages (2) reached"), "{capped}");
}

#[tokio::test(flavor = "multi_thread")]
async fn api_paginate_follows_a_cursor_in_the_body() {
    let server = Server::start(|r, _| {
        let cursor = r.target.split("after=").nth(1).unwrap_or("");
        let (items, next) = match cursor {
            "" => ("[1,2]", json!("c2")),
            "c2" => ("[3]", json!("c3")),
            _ => ("[4]", json!(null)),
        };
        json_answer(&format!(
            r#"{{"results":{items},"meta":{{"next":{next}}}}}"#
        ))
    })
    .await;
    let t = tools(TestVault::default());
    let out = ok(
        &t,
        "api_paginate",
        json!({
            "url": server.url("/list"),
            "query": {"size": 2},
            "items_pointer": "/results",
            "next_pointer": "/meta/next",
            "cursor_param": "after"
        }),
    )
    .await;
    assert!(out.contains("Pages fetched: 3"), "{out}");
    assert!(out.contains("Items: 4"), "{out}");
    let targets: Vec<String> = server.requests().iter().map(|r| r.target.clone()).collect();
    assert_eq!(
        targets,
        [
            "/list?size=2",
            "/list?size=2&after=c2",
            "/list?size=2&after=c3"
        ]
    );
    let wrong = fails(
        &t,
        "api_paginate",
        json!({"url": server.url("/list"), "items_pointer": "/meta"}),
    )
    .await;
    assert!(wrong.contains("not an array"), "{wrong}");
}

#[tokio::test(flavor = "multi_thread")]
async fn graphql_query_returns_data_and_surfaces_errors() {
    let server = Server::start(|r, _| {
        if r.body.contains("broken") {
            json_answer(
                r#"{"errors":[{"message":"Cannot query field \"broken\" on type \"Query\".","extensions":{"code":"GRAPHQL_VALIDATION_FAILED"}}]}"#,
            )
        } else if r.body.contains("partial") {
            json_answer(
                r#"{"data":{"a":1,"b":null},"errors":[{"message":"b failed","path":["b"]}]}"#,
            )
        } else {
            json_answer(r#"{"data":{"viewer":{"login":"octo"}}}"#)
        }
    })
    .await;
    let t = tools(TestVault::default());
    let out = ok(
        &t,
        "graphql_query",
        json!({
            "endpoint": server.url("/graphql"),
            "query": "query Me($n: Int) { viewer { login } }",
            "variables": {"n": 1},
            "operation_name": "Me"
        }),
    )
    .await;
    assert!(out.contains("\"login\": \"octo\""), "{out}");
    let sent: serde_json::Value =
        serde_json::from_str(&server.requests()[0].body).unwrap_or_default();
    assert_eq!(sent["variables"]["n"], 1);
    assert_eq!(sent["operationName"], "Me");
    let failed = fails(
        &t,
        "graphql_query",
        json!({"endpoint": server.url("/graphql"), "query": "{ broken }"}),
    )
    .await;
    assert!(failed.contains("GraphQL errors (1)"), "{failed}");
    assert!(failed.contains("Cannot query field"), "{failed}");
    assert!(failed.contains("[GRAPHQL_VALIDATION_FAILED]"), "{failed}");
    let partial = ok(
        &t,
        "graphql_query",
        json!({"endpoint": server.url("/graphql"), "query": "{ partial }"}),
    )
    .await;
    assert!(partial.contains("b failed (at b)"), "{partial}");
    assert!(partial.contains("\"a\": 1"), "{partial}");
}

#[tokio::test(flavor = "multi_thread")]
async fn graphql_schema_summarises_introspection() {
    let schema = json!({"data": {"__schema": {
        "queryType": {"name": "Query"},
        "mutationType": {"name": "Mutation"},
        "subscriptionType": null,
        "types": [
            {"kind": "OBJECT", "name": "Query", "fields": [
                {"name": "user", "description": "Find a user.", "args": [
                    {"name": "id", "type": {"kind": "NON_NULL", "name": null, "ofType": {"kind": "SCALAR", "name": "ID"}}}
                ], "type": {"kind": "OBJECT", "name": "User"}}
            ]},
            {"kind": "OBJECT", "name": "Mutation", "fields": [
                {"name": "deleteUser", "args": [], "type": {"kind": "SCALAR", "name": "Boolean"}}
            ]},
            {"kind": "OBJECT", "name": "User", "fields": [
                {"name": "tags", "args": [], "type": {"kind": "LIST", "name": null, "ofType": {"kind": "SCALAR", "name": "String"}}}
            ]},
            {"kind": "ENUM", "name": "Role", "enumValues": [{"name": "ADMIN"}, {"name": "USER"}]},
            {"kind": "OBJECT", "name": "__Type", "fields": []}
        ]
    }}});
    let body = schema.to_string();
    let server = Server::start(move |_, _| json_answer(&body)).await;
    let t = tools(TestVault::default());
    let out = ok(
        &t,
        "graphql_schema",
        json!({"endpoint": server.url("/graphql")}),
    )
    .await;
    assert!(out.contains("Query type Query:"), "{out}");
    assert!(
        out.contains("- user(id: ID!): User — Find a user."),
        "{out}"
    );
    assert!(out.contains("Mutation type Mutation:"), "{out}");
    assert!(out.contains("- deleteUser: Boolean"), "{out}");
    assert!(out.contains("- OBJECT User { tags: [String] }"), "{out}");
    assert!(out.contains("- ENUM Role { ADMIN | USER }"), "{out}");
    assert!(!out.contains("__Type"), "{out}");
    assert!(server.requests()[0].body.contains("__schema"));
    let off = Server::start(|_, _| {
        json_answer(r#"{"errors":[{"message":"introspection is disabled"}]}"#)
    })
    .await;
    let refused = fails(&t, "graphql_schema", json!({"endpoint": off.url("/")})).await;
    assert!(refused.contains("introspection is disabled"), "{refused}");
}

#[tokio::test(flavor = "multi_thread")]
async fn webhook_form_and_json_rpc_send_what_they_say() {
    let server = Server::start(|r, _| match r.path() {
        "/hook" => (200, vec![], "ok".into()),
        "/bad-hook" => (400, vec![], "invalid_payload".into()),
        "/form" => json_answer(r#"{"saved":true}"#),
        _ => {
            if r.body.contains("\"fail\"") {
                json_answer(
                    r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"Method not found"}}"#,
                )
            } else {
                json_answer(r#"{"jsonrpc":"2.0","id":1,"result":{"sum":3}}"#)
            }
        }
    })
    .await;
    let t = tools(TestVault::default());
    let hook = ok(
        &t,
        "api_webhook",
        json!({"url": server.url("/hook"), "payload": {"text": "deployed"}}),
    )
    .await;
    assert!(hook.starts_with("Delivered."), "{hook}");
    let bad = fails(
        &t,
        "api_webhook",
        json!({"url": server.url("/bad-hook"), "payload": {}}),
    )
    .await;
    assert!(
        bad.contains("400") && bad.contains("invalid_payload"),
        "{bad}"
    );
    let form = ok(
        &t,
        "api_form_post",
        json!({"url": server.url("/form"), "fields": {"name": "a b&c", "tag": ["x", "y"]}}),
    )
    .await;
    assert!(form.contains("\"saved\": true"), "{form}");
    let rpc = ok(
        &t,
        "api_json_rpc",
        json!({"url": server.url("/rpc"), "method": "add", "params": [1, 2]}),
    )
    .await;
    assert!(rpc.contains("\"sum\": 3"), "{rpc}");
    let rpc_error = fails(
        &t,
        "api_json_rpc",
        json!({"url": server.url("/rpc"), "method": "fail", "id": "x1"}),
    )
    .await;
    assert!(
        rpc_error.contains("-32601") && rpc_error.contains("Method not found"),
        "{rpc_error}"
    );
    let seen = server.requests();
    assert_eq!(seen[0].body, r#"{"text":"deployed"}"#);
    assert_eq!(seen[0].header("content-type"), Some("application/json"));
    assert_eq!(seen[2].body, "name=a%20b%26c&tag=x&tag=y");
    assert_eq!(
        seen[2].header("content-type"),
        Some("application/x-www-form-urlencoded")
    );
    let rpc_sent: serde_json::Value = serde_json::from_str(&seen[3].body).unwrap_or_default();
    assert_eq!(
        rpc_sent,
        json!({"jsonrpc": "2.0", "method": "add", "params": [1, 2], "id": 1})
    );
    let rpc_sent: serde_json::Value = serde_json::from_str(&seen[4].body).unwrap_or_default();
    assert_eq!(rpc_sent["id"], "x1");
    let scalar = fails(
        &t,
        "api_json_rpc",
        json!({"url": server.url("/rpc"), "method": "add", "params": 3}),
    )
    .await;
    assert!(scalar.contains("array or an object"), "{scalar}");
}

#[tokio::test(flavor = "multi_thread")]
async fn health_and_options_report_without_the_body() {
    let server = Server::start(|r, _| match r.method.as_str() {
        "OPTIONS" => (
            204,
            vec![
                ("Allow".into(), "GET, POST".into()),
                ("Access-Control-Allow-Origin".into(), "*".into()),
            ],
            String::new(),
        ),
        _ if r.path() == "/down" => (503, vec![], "maintenance".into()),
        _ => (
            200,
            vec![("Content-Type".into(), "text/plain".into())],
            "secret body text".into(),
        ),
    })
    .await;
    let t = tools(TestVault::default());
    let health = ok(&t, "api_health", json!({"url": server.url("/up")})).await;
    assert!(health.starts_with("200 (healthy"), "{health}");
    assert!(health.contains("Latency: "), "{health}");
    assert!(health.contains("Content-Type: text/plain"), "{health}");
    assert!(health.contains("Size: 16 bytes"), "{health}");
    assert!(!health.contains("secret body text"), "{health}");
    let down = ok(&t, "api_health", json!({"url": server.url("/down")})).await;
    assert!(down.starts_with("503 (unhealthy"), "{down}");
    let options = ok(&t, "api_options", json!({"url": server.url("/x")})).await;
    assert!(options.contains("allow: GET, POST"), "{options}");
    assert!(
        options.contains("access-control-allow-origin: *"),
        "{options}"
    );
    assert_eq!(server.requests()[2].method, "OPTIONS");
}

#[tokio::test(flavor = "multi_thread")]
async fn api_soap_posts_an_envelope_and_reports_faults() {
    let server = Server::start(|r, _| {
        if r.body.contains("Bad") {
            (
                500,
                vec![("Content-Type".into(), "text/xml".into())],
                r#"<soap:Envelope xmlns:soap="http://schemas.xmlsoap.org/soap/envelope/"><soap:Body><soap:Fault><faultcode>soap:Client</faultcode><faultstring>Unknown operation</faultstring></soap:Fault></soap:Body></soap:Envelope>"#.into(),
            )
        } else {
            (
                200,
                vec![("Content-Type".into(), "text/xml".into())],
                r#"<soap:Envelope xmlns:soap="http://schemas.xmlsoap.org/soap/envelope/"><soap:Body><AddResponse><Result>5</Result></AddResponse></soap:Body></soap:Envelope>"#.into(),
            )
        }
    })
    .await;
    let t = tools(TestVault::default());
    let out = ok(
        &t,
        "api_soap",
        json!({"url": server.url("/calc"), "body": "<Add><a>2</a><b>3</b></Add>", "soap_action": "urn:Add"}),
    )
    .await;
    assert!(out.contains("<Result>5</Result>"), "{out}");
    let seen = server.requests();
    assert_eq!(seen[0].header("soapaction"), Some("\"urn:Add\""));
    assert_eq!(
        seen[0].header("content-type"),
        Some("text/xml; charset=utf-8")
    );
    assert!(
        seen[0].body.contains("<soap:Body><Add><a>2</a>"),
        "{}",
        seen[0].body
    );
    let fault = fails(
        &t,
        "api_soap",
        json!({"url": server.url("/calc"), "body": "<Bad/>", "version": "1.2", "soap_action": "urn:Bad"}),
    )
    .await;
    assert!(
        fault.contains("SOAP Fault: soap:Client: Unknown operation"),
        "{fault}"
    );
    let seen = server.requests();
    assert_eq!(
        seen[1].header("content-type"),
        Some("application/soap+xml; charset=utf-8; action=\"urn:Bad\"")
    );
    let malformed = fails(
        &t,
        "api_soap",
        json!({"url": server.url("/calc"), "envelope": "<soap:Envelope>"}),
    )
    .await;
    assert!(malformed.contains("not well-formed"), "{malformed}");
    assert_eq!(server.requests().len(), 2);
}

#[tokio::test(flavor = "multi_thread")]
async fn api_jwt_decode_shows_claims_and_dates_unverified() {
    // {"alg":"HS256","typ":"JWT"} . {"sub":"42","exp":1700000000,"iat":1699990000}
    let token = "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiI0MiIsImV4cCI6MTcwMDAwMDAwMCwiaWF0IjoxNjk5OTkwMDAwfQ.c2ln";
    let t = tools(TestVault::default());
    let out = ok(
        &t,
        "api_jwt_decode",
        json!({"token": format!("Bearer {token}")}),
    )
    .await;
    assert!(out.starts_with("NOT VERIFIED"), "{out}");
    assert!(out.contains("\"alg\": \"HS256\""), "{out}");
    assert!(out.contains("\"sub\": \"42\""), "{out}");
    assert!(out.contains("exp (expires): 2023-11-14T22:13:20Z"), "{out}");
    assert!(out.contains("iat (issued): 2023-11-14T19:26:40Z"), "{out}");
    assert!(out.contains("EXPIRED"), "{out}");
    let bad = fails(&t, "api_jwt_decode", json!({"token": "abc.def"})).await;
    assert!(bad.contains("2 dot-separated parts"), "{bad}");
    let garbage = fails(&t, "api_jwt_decode", json!({"token": "a.b.c"})).await;
    assert!(garbage.contains("header"), "{garbage}");
}

#[tokio::test(flavor = "multi_thread")]
async fn api_from_curl_parses_and_runs_the_command() {
    let server = Server::start(|_, _| json_answer(r#"{"created":true}"#)).await;
    let t = tools(vault());
    let command = format!(
        "curl -sS -X POST '{}' \\\n  -H 'Accept: application/json' -H \"X-Note: it's \\\"quoted\\\"\" \\\n  --json '{{\"name\": \"Rex\"}}'",
        server.localhost_url("/pets")
    );
    let out = ok(
        &t,
        "api_from_curl",
        json!({"command": command, "auth": {"secret": "github"}}),
    )
    .await;
    assert!(
        out.starts_with("Parsed request:\nPOST http://localhost:"),
        "{out}"
    );
    assert!(out.contains("\"created\": true"), "{out}");
    assert!(!out.contains("ghp_SECRET_VALUE"), "{out}");
    let seen = server.requests();
    assert_eq!(seen[0].method, "POST");
    assert_eq!(seen[0].body, r#"{"name": "Rex"}"#);
    assert_eq!(seen[0].header("x-note"), Some("it's \"quoted\""));
    assert_eq!(seen[0].header("content-type"), Some("application/json"));
    assert_eq!(
        seen[0].header("authorization"),
        Some("Bearer ghp_SECRET_VALUE")
    );
    let dry = ok(
        &t,
        "api_from_curl",
        json!({"command": format!("curl -G {} -d q=1 --data-urlencode 'name=a b'", server.url("/s")), "dry_run": true}),
    )
    .await;
    assert!(dry.contains("GET http://127.0.0.1"), "{dry}");
    assert!(dry.contains("/s?q=1&name=a%20b"), "{dry}");
    assert_eq!(server.requests().len(), 1, "dry_run sent a request");
    let user = fails(
        &t,
        "api_from_curl",
        json!({"command": "curl -u me:pw https://api.example.com/"}),
    )
    .await;
    assert!(user.contains("vault"), "{user}");
    let file = fails(
        &t,
        "api_from_curl",
        json!({"command": "curl -d @/etc/passwd https://api.example.com/"}),
    )
    .await;
    assert!(file.contains("reading a file"), "{file}");
}

#[test]
fn curl_command_lines_parse() {
    use cairn_webtools::api::parse_curl;
    let p = parse_curl("curl https://a.test/x").unwrap_or_default();
    assert_eq!(
        (p.method.as_str(), p.url.as_str()),
        ("GET", "https://a.test/x")
    );
    let p = parse_curl("curl -XPUT -H'A: 1' -d 'a=1' -d b=2 https://a.test/").unwrap_or_default();
    assert_eq!(p.method, "PUT");
    assert_eq!(p.headers[0], ("A".to_owned(), "1".to_owned()));
    assert_eq!(p.body.as_deref(), Some("a=1&b=2"));
    assert!(
        p.headers
            .iter()
            .any(|(k, v)| k == "Content-Type" && v == "application/x-www-form-urlencoded")
    );
    let p = parse_curl("curl -I --url https://a.test/").unwrap_or_default();
    assert_eq!(p.method, "HEAD");
    let p = parse_curl("curl -L --compressed https://a.test/ -H 'Authorization: Bearer $TOKEN'")
        .unwrap_or_default();
    assert_eq!(p.ignored.len(), 2);
    assert_eq!(p.headers[0].1, "Bearer $TOKEN", "nothing is expanded");
    let p = parse_curl("curl --data-raw '@not-a-file' https://a.test/").unwrap_or_default();
    assert_eq!(p.body.as_deref(), Some("@not-a-file"));
    for (bad, says) in [
        ("wget https://a.test/", "start with curl"),
        ("curl", "no URL"),
        ("curl https://a.test/ https://b.test/", "more than one URL"),
        ("curl -k https://a.test/", "verified"),
        ("curl 'https://a.test/", "unterminated"),
        ("curl --frobnicate https://a.test/", "--frobnicate"),
        ("curl -H NoColon https://a.test/", "no colon"),
        ("curl -o out.txt https://a.test/", "files"),
    ] {
        match parse_curl(bad) {
            Ok(p) => panic!("{bad} parsed: {p:?}"),
            Err(e) => assert!(e.contains(says), "{bad}: {e}"),
        }
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn loopback_is_refused_without_the_switch_and_unknown_tools_are_errors() {
    let server = Server::start(|_, _| json_answer("{}")).await;
    let guard = match cairn_web::WebGuard::new(cairn_web::GuardConfig::default()) {
        Ok(g) => std::sync::Arc::new(g),
        Err(e) => panic!("{e}"),
    };
    let t = cairn_webtools::api::api_tools(cairn_webtools::api::Api::new(guard, "me"));
    let refused = fails(&t, "api_health", json!({"url": server.url("/")})).await;
    assert!(refused.contains("loopback"), "{refused}");
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert!(server.requests().is_empty());
    let (is_error, text) = call(&t, "api_nonexistent", json!({})).await;
    assert!(is_error && text.contains("unknown tool"), "{text}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_failed_exchange_never_shows_a_secret_placed_in_the_query() {
    // A server that reads the request and hangs up without answering.
    let listener = match tokio::net::TcpListener::bind("127.0.0.1:0").await {
        Ok(l) => l,
        Err(e) => panic!("bind: {e}"),
    };
    let port = match listener.local_addr() {
        Ok(a) => a.port(),
        Err(e) => panic!("local_addr: {e}"),
    };
    tokio::spawn(async move {
        while let Ok((mut stream, _)) = listener.accept().await {
            let mut buf = [0u8; 4096];
            let _ = tokio::io::AsyncReadExt::read(&mut stream, &mut buf).await;
            drop(stream);
        }
    });
    let t = tools(vault());
    let failed = fails(
        &t,
        "api_request",
        json!({"url": format!("http://localhost:{port}/q"), "auth": {"secret": "github", "scheme": "query", "name": "api_key"}}),
    )
    .await;
    assert!(failed.contains("failed"), "{failed}");
    assert!(!failed.contains("ghp_SECRET_VALUE"), "{failed}");
}
