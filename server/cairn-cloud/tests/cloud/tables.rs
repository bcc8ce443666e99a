//! The table tools against moto (DynamoDB), Azurite (Azure Table Storage) and the Firestore
//! emulator: what the model reads, and what the service holds afterwards, read back directly.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use cairn_test_support::tools::{Seen, call};
use cairn_web::{CredentialUse, Method, Placement, WebRequest};
use serde_json::{Value, json};

/// A request to an emulator through the tests' guard, signed as the accounts sign: what the
/// service holds, read without the tools.
async fn raw(
    method: Method,
    url: &str,
    headers: &[(&str, &str)],
    body: Option<Value>,
    sign: Option<CredentialUse>,
) -> (u16, Value) {
    let guard = common::guard(common::secrets());
    let mut request = WebRequest::new(method, url);
    for (k, v) in headers {
        request.headers.insert(
            cairn_web::header::HeaderName::from_bytes(k.as_bytes()).unwrap(),
            v.parse().unwrap(),
        );
    }
    if let Some(b) = body {
        request.body = Some(serde_json::to_vec(&b).unwrap());
    }
    if let Some(c) = sign {
        request = request.with_credential(c);
    }
    let response = guard.fetch(request).await.unwrap();
    let body = serde_json::from_slice(&response.body).unwrap_or(Value::Null);
    (response.status.as_u16(), body)
}

/// A DynamoDB call on moto, signed as the `aws` account signs.
async fn dynamo(action: &str, body: Value) -> Value {
    let (status, answer) = raw(
        Method::POST,
        &std::env::var("CAIRN_MOTO_URL").unwrap(),
        &[
            ("x-amz-target", &format!("DynamoDB_20120810.{action}")),
            ("content-type", "application/x-amz-json-1.0"),
        ],
        Some(body),
        Some(CredentialUse {
            secret: "aws-test".into(),
            placement: Placement::AwsSigV4 {
                access_key_id: "AKIDCAIRNTEST".into(),
                region: "us-east-1".into(),
                service: "dynamodb".into(),
            },
        }),
    )
    .await;
    assert_eq!(status, 200, "{action}: {answer}");
    answer
}

/// An Azure Table call on Azurite, signed with the account's Shared Key.
async fn azure(method: Method, path: &str, body: Option<Value>) -> (u16, Value) {
    let url = format!("{}/{path}", std::env::var("CAIRN_AZURITE_TABLE").unwrap());
    let date = chrono::Utc::now()
        .format("%a, %d %b %Y %H:%M:%S GMT")
        .to_string();
    raw(
        method,
        &url,
        &[
            ("x-ms-date", &date),
            ("x-ms-version", "2021-08-06"),
            ("accept", "application/json;odata=nometadata"),
            ("content-type", "application/json"),
        ],
        body,
        Some(CredentialUse {
            secret: "azure-test".into(),
            placement: Placement::AzureSharedKey {
                account: std::env::var("CAIRN_AZURITE_ACCOUNT").unwrap(),
                table: true,
            },
        }),
    )
    .await
}

/// A Firestore document read straight from the emulator.
async fn firestore_doc(path: &str) -> (u16, Value) {
    let url = format!(
        "{}/v1/projects/cairn-test/databases/(default)/documents/{path}",
        std::env::var("CAIRN_FIRESTORE_URL").unwrap()
    );
    raw(Method::GET, &url, &[], None, None).await
}

/// The tools with the `gcp` account signing as the Firestore emulator's administrator
/// (`Authorization: Bearer owner`, which listing collections needs), as a vault secret would.
fn setup_firestore(dir: &std::path::Path) -> common::Setup {
    let mut accounts = common::accounts();
    accounts.get_mut("gcp").unwrap().secret = Some("gcp-test".into());
    let mut secrets = common::secrets();
    secrets.0.push(("gcp-test".into(), "owner".into()));
    common::setup_with(dir, &accounts, common::guard(secrets))
}

fn ok(seen: &Seen) -> &str {
    assert!(!seen.is_error, "{}", seen.text);
    &seen.text
}

fn err(seen: &Seen) -> &str {
    assert!(seen.is_error, "expected an error: {}", seen.text);
    &seen.text
}

/// Every item of a query, following `next` page by page.
async fn all_pages(s: &common::Setup, mut args: Value) -> (Vec<Value>, usize) {
    let mut items = Vec::new();
    let mut pages = 0;
    loop {
        let seen = call(&s.tools, "table_query", args.clone()).await;
        ok(&seen);
        pages += 1;
        let content = seen.result.structured_content.clone().unwrap();
        items.extend(content["items"].as_array().unwrap().iter().cloned());
        match content["next"].as_str() {
            Some(next) => {
                assert!(seen.text.contains(next), "{}", seen.text);
                args["next"] = json!(next);
            }
            None => return (items, pages),
        }
        assert!(pages < 50, "paging does not end");
    }
}

#[tokio::test]
async fn dynamodb_items_are_put_read_queried_and_paged_as_plain_json() {
    if !common::emulators() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let s = common::setup(dir.path());
    let table = common::unique("orders");
    dynamo(
        "CreateTable",
        json!({
            "TableName": table,
            "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}, {"AttributeName": "sk", "KeyType": "RANGE"}],
            "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"}, {"AttributeName": "sk", "AttributeType": "N"}],
            "BillingMode": "PAY_PER_REQUEST"
        }),
    )
    .await;

    let listed = call(
        &s.tools,
        "table_list",
        json!({"account": "aws", "limit": 1000}),
    )
    .await;
    assert!(ok(&listed).contains(&table), "{}", listed.text);
    let described = call(
        &s.tools,
        "table_list",
        json!({"account": "aws", "table": table}),
    )
    .await;
    let text = ok(&described);
    assert!(
        text.contains("key: pk (S, partition key), sk (N, sort key)"),
        "{text}"
    );
    assert!(text.contains("items: 0"), "{text}");

    let item = json!({"pk": "ada", "sk": 1, "total": 12.5, "paid": true, "note": null,
        "tags": {"$set": ["a", "b"]}, "raw": {"$binary": "AAEC"}, "lines": [{"sku": "x", "n": 2}]});
    let put = call(
        &s.tools,
        "table_put",
        json!({"account": "aws", "table": table, "item": item}),
    )
    .await;
    assert!(
        ok(&put).contains(r#"item {"pk":"ada","sk":1} in DynamoDB table"#),
        "{}",
        put.text
    );
    // What moto holds, typed as DynamoDB types it.
    let held = dynamo(
        "GetItem",
        json!({"TableName": table, "Key": {"pk": {"S": "ada"}, "sk": {"N": "1"}}}),
    )
    .await;
    assert_eq!(held["Item"]["total"], json!({"N": "12.5"}));
    assert_eq!(held["Item"]["tags"]["SS"].as_array().unwrap().len(), 2);
    assert_eq!(held["Item"]["raw"], json!({"B": "AAEC"}));
    assert_eq!(held["Item"]["lines"]["L"][0]["M"]["n"], json!({"N": "2"}));
    assert_eq!(held["Item"]["note"], json!({"NULL": true}));

    // The number key given as a string finds the item too: the schema types it.
    let got = call(
        &s.tools,
        "table_get",
        json!({"account": "aws", "table": table, "key": {"pk": "ada", "sk": "1"}}),
    )
    .await;
    ok(&got);
    let shown = &got.result.structured_content.as_ref().unwrap()["item"];
    assert_eq!(shown["total"], json!(12.5));
    assert_eq!(shown["lines"], json!([{"sku": "x", "n": 2}]));
    assert_eq!(shown["raw"], json!({"$binary": "AAEC"}));
    assert!(got.text.contains("\"paid\": true"), "{}", got.text);

    let missing = call(
        &s.tools,
        "table_get",
        json!({"account": "aws", "table": table, "key": {"pk": "ada", "sk": 99}}),
    )
    .await;
    assert!(
        ok(&missing).contains("no item with key"),
        "{}",
        missing.text
    );
    let partial = call(
        &s.tools,
        "table_get",
        json!({"account": "aws", "table": table, "key": {"pk": "ada"}}),
    )
    .await;
    assert!(err(&partial).contains("the key of"), "{}", partial.text);
    assert!(partial.text.contains("`sk` is missing"), "{}", partial.text);

    // only_if_new refuses, and the stored item is unchanged.
    let again = call(
        &s.tools,
        "table_put",
        json!({"account": "aws", "table": table, "only_if_new": true,
        "item": {"pk": "ada", "sk": 1, "total": 0}}),
    )
    .await;
    assert!(err(&again).contains("exists"), "{}", again.text);
    let held = dynamo(
        "GetItem",
        json!({"TableName": table, "Key": {"pk": {"S": "ada"}, "sk": {"N": "1"}}}),
    )
    .await;
    assert_eq!(held["Item"]["total"], json!({"N": "12.5"}));

    for sk in 2..=7 {
        let put = call(&s.tools, "table_put", json!({"account": "aws", "table": table, "item": {"pk": "ada", "sk": sk, "total": sk * 10}})).await;
        ok(&put);
    }
    let bob = call(
        &s.tools,
        "table_put",
        json!({"account": "aws", "table": table, "item": {"pk": "bob", "sk": 1, "total": 5}}),
    )
    .await;
    ok(&bob);

    // A key condition, descending, with a filter.
    let q = call(&s.tools, "table_query", json!({"account": "aws", "table": table,
        "key_condition": "pk = :p AND sk >= :s", "filter": "#t > :min",
        "names": {"#t": "total"}, "values": {":p": "ada", ":s": 2, ":min": 35}, "descending": true})).await;
    let text = ok(&q);
    let items = q.result.structured_content.as_ref().unwrap()["items"]
        .as_array()
        .unwrap()
        .clone();
    let sks: Vec<i64> = items.iter().map(|i| i["sk"].as_i64().unwrap()).collect();
    assert_eq!(sks, vec![7, 6, 5, 4], "{text}");
    assert!(text.contains(r#"{"pk":"ada","sk":7,"total":70}"#), "{text}");

    // A scan, two items a page, followed to the end: every item once.
    let (all, pages) = all_pages(&s, json!({"account": "aws", "table": table, "limit": 2})).await;
    assert_eq!(all.len(), 8);
    assert!(pages >= 4, "{pages}");

    // Arguments of another service, a bad token, an unknown table: clear errors.
    let wrong = call(&s.tools, "table_query", json!({"account": "aws", "table": table, "where": [{"field": "a", "op": "==", "value": 1}]})).await;
    assert!(
        err(&wrong).contains("`where` is for Firestore"),
        "{}",
        wrong.text
    );
    let token = call(
        &s.tools,
        "table_query",
        json!({"account": "aws", "table": table, "next": "not a token"}),
    )
    .await;
    assert!(
        err(&token).contains("`next` is not a token"),
        "{}",
        token.text
    );
    let nope = call(
        &s.tools,
        "table_get",
        json!({"account": "aws", "table": common::unique("none"), "key": {"pk": "a"}}),
    )
    .await;
    assert!(err(&nope).contains("does not exist"), "{}", nope.text);
    dynamo("DeleteTable", json!({"TableName": table})).await;
}

#[tokio::test]
async fn azure_entities_are_put_read_filtered_and_paged() {
    if !common::emulators() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let s = common::setup(dir.path());
    let table = common::unique("t").replace('-', "");
    let (status, body) = azure(Method::POST, "Tables", Some(json!({"TableName": table}))).await;
    assert_eq!(status, 201, "{body}");

    let listed = call(
        &s.tools,
        "table_list",
        json!({"account": "azure", "limit": 1000}),
    )
    .await;
    assert!(ok(&listed).contains(&table), "{}", listed.text);
    let described = call(
        &s.tools,
        "table_list",
        json!({"account": "azure", "table": table}),
    )
    .await;
    assert!(
        ok(&described).contains("PartitionKey + RowKey"),
        "{}",
        described.text
    );

    for i in 0..5 {
        let put = call(&s.tools, "table_put", json!({"account": "azure", "table": table,
            "item": {"PartitionKey": "p1", "RowKey": format!("r{i}"), "Price": i * 10, "Big": 5_000_000_000_i64, "Name": format!("n'{i}")}})).await;
        assert!(
            ok(&put).contains("PartitionKey \"p1\", RowKey"),
            "{}",
            put.text
        );
    }
    let other = call(&s.tools, "table_put", json!({"account": "azure", "table": table, "item": {"PartitionKey": "p2", "RowKey": "a'b", "Price": 1}})).await;
    ok(&other);

    // Read back from Azurite: the 64-bit number kept its type, the quote in a key works.
    let (status, held) = azure(
        Method::GET,
        &format!("{table}(PartitionKey='p1',RowKey='r3')"),
        None,
    )
    .await;
    assert_eq!(status, 200, "{held}");
    assert_eq!(held["Price"], json!(30));
    assert_eq!(held["Big"], json!("5000000000"));
    let got = call(
        &s.tools,
        "table_get",
        json!({"account": "azure", "table": table, "key": {"PartitionKey": "p2", "RowKey": "a'b"}}),
    )
    .await;
    assert!(ok(&got).contains("\"Price\": 1"), "{}", got.text);
    let missing = call(
        &s.tools,
        "table_get",
        json!({"account": "azure", "table": table, "key": {"PartitionKey": "p2", "RowKey": "zz"}}),
    )
    .await;
    assert!(
        ok(&missing).contains("no item with key"),
        "{}",
        missing.text
    );

    let q = call(&s.tools, "table_query", json!({"account": "azure", "table": table, "filter": "PartitionKey eq 'p1' and Price ge 20"})).await;
    let items = q.result.structured_content.as_ref().unwrap()["items"]
        .as_array()
        .unwrap()
        .clone();
    let rows: Vec<&str> = items
        .iter()
        .map(|i| i["RowKey"].as_str().unwrap())
        .collect();
    assert_eq!(rows, vec!["r2", "r3", "r4"], "{}", q.text);
    assert!(q.text.contains("\"Name\":\"n'3\""), "{}", q.text);

    let (all, pages) = all_pages(&s, json!({"account": "azure", "table": table, "limit": 2})).await;
    assert_eq!(all.len(), 6);
    assert_eq!(pages, 3);

    // Refusals: an existing entity with only_if_new (unchanged afterwards), a nested value.
    let again = call(
        &s.tools,
        "table_put",
        json!({"account": "azure", "table": table, "only_if_new": true,
        "item": {"PartitionKey": "p1", "RowKey": "r3", "Price": 0}}),
    )
    .await;
    assert!(err(&again).contains("exists"), "{}", again.text);
    let (_, held) = azure(
        Method::GET,
        &format!("{table}(PartitionKey='p1',RowKey='r3')"),
        None,
    )
    .await;
    assert_eq!(held["Price"], json!(30));
    let nested = call(
        &s.tools,
        "table_put",
        json!({"account": "azure", "table": table,
        "item": {"PartitionKey": "p1", "RowKey": "r9", "Tags": ["a"]}}),
    )
    .await;
    assert!(
        err(&nested).contains("not lists or objects"),
        "{}",
        nested.text
    );
    let (status, _) = azure(
        Method::GET,
        &format!("{table}(PartitionKey='p1',RowKey='r9')"),
        None,
    )
    .await;
    assert_eq!(status, 404);
    let bad = call(&s.tools, "table_get", json!({"account": "azure", "table": "no/such", "key": {"PartitionKey": "a", "RowKey": "b"}})).await;
    assert!(
        err(&bad).contains("not an Azure table name"),
        "{}",
        bad.text
    );
    let (status, _) = azure(Method::DELETE, &format!("Tables('{table}')"), None).await;
    assert_eq!(status, 204);
}

#[tokio::test]
async fn firestore_documents_are_put_read_queried_and_paged() {
    if !common::firestore() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let s = setup_firestore(dir.path());
    let coll = common::unique("users");

    for (i, city) in ["Oslo", "Lima", "Oslo", "Pune", "Oslo"].iter().enumerate() {
        let put = call(&s.tools, "table_put", json!({"account": "gcp", "table": coll, "id": format!("u{i}"),
            "item": {"age": 20 + i, "score": 1.5, "city": city, "tags": ["x"], "address": {"zip": "0150"},
                     "seen": {"$timestamp": "2026-01-02T03:04:05Z"}}})).await;
        assert!(
            ok(&put).contains(&format!("document `u{i}` in Firestore collection")),
            "{}",
            put.text
        );
    }
    let (status, held) = firestore_doc(&format!("{coll}/u1")).await;
    assert_eq!(status, 200, "{held}");
    assert_eq!(held["fields"]["age"], json!({"integerValue": "21"}));
    assert_eq!(held["fields"]["score"], json!({"doubleValue": 1.5}));
    assert_eq!(
        held["fields"]["address"]["mapValue"]["fields"]["zip"],
        json!({"stringValue": "0150"})
    );
    assert!(
        held["fields"]["seen"]["timestampValue"]
            .as_str()
            .unwrap()
            .starts_with("2026-01-02T03:04:05")
    );

    // Without an id Firestore names the document.
    let auto = call(
        &s.tools,
        "table_put",
        json!({"account": "gcp", "table": coll, "item": {"age": 99, "city": "Rome"}}),
    )
    .await;
    ok(&auto);

    let got = call(
        &s.tools,
        "table_get",
        json!({"account": "gcp", "table": coll, "key": "u1"}),
    )
    .await;
    ok(&got);
    let item = &got.result.structured_content.as_ref().unwrap()["item"];
    assert_eq!(item["_id"], json!("u1"));
    assert_eq!(item["age"], json!(21));
    assert_eq!(item["address"], json!({"zip": "0150"}));
    let missing = call(
        &s.tools,
        "table_get",
        json!({"account": "gcp", "table": coll, "key": "nobody"}),
    )
    .await;
    assert!(
        ok(&missing).contains("no item with key"),
        "{}",
        missing.text
    );

    let q = call(&s.tools, "table_query", json!({"account": "gcp", "table": coll,
        "where": [{"field": "city", "op": "==", "value": "Oslo"}, {"field": "age", "op": ">=", "value": 22}],
        "order_by": "age", "descending": true})).await;
    ok(&q);
    let items = q.result.structured_content.as_ref().unwrap()["items"]
        .as_array()
        .unwrap()
        .clone();
    let ids: Vec<&str> = items.iter().map(|i| i["_id"].as_str().unwrap()).collect();
    assert_eq!(ids, vec!["u4", "u2"], "{}", q.text);

    let (all, pages) = all_pages(&s, json!({"account": "gcp", "table": coll, "limit": 2})).await;
    assert_eq!(all.len(), 6);
    assert_eq!(pages, 3);

    let listed = call(
        &s.tools,
        "table_list",
        json!({"account": "gcp", "limit": 1000}),
    )
    .await;
    assert!(ok(&listed).contains(&coll), "{}", listed.text);
    let described = call(
        &s.tools,
        "table_list",
        json!({"account": "gcp", "table": coll}),
    )
    .await;
    assert!(ok(&described).contains("6 documents"), "{}", described.text);

    // Putting a document shown by table_get again (with its `_id`) and only_if_new: refused,
    // and the document is unchanged.
    let mut again = item.clone();
    again["age"] = json!(0);
    let refused = call(
        &s.tools,
        "table_put",
        json!({"account": "gcp", "table": coll, "item": again, "only_if_new": true}),
    )
    .await;
    assert!(err(&refused).contains("exists"), "{}", refused.text);
    let (_, held) = firestore_doc(&format!("{coll}/u1")).await;
    assert_eq!(held["fields"]["age"], json!({"integerValue": "21"}));
    // A collection under a document: put, get and query by its path.
    let orders = format!("{coll}/u1/orders");
    for (id, total) in [("o1", 5), ("o2", 50)] {
        let put = call(
            &s.tools,
            "table_put",
            json!({"account": "gcp", "table": orders, "id": id, "item": {"total": total}}),
        )
        .await;
        ok(&put);
    }
    let (status, held) = firestore_doc(&format!("{orders}/o2")).await;
    assert_eq!(status, 200, "{held}");
    assert_eq!(held["fields"]["total"], json!({"integerValue": "50"}));
    let q = call(&s.tools, "table_query", json!({"account": "gcp", "table": orders, "where": [{"field": "total", "op": ">", "value": 10}]})).await;
    assert!(ok(&q).contains(r#"{"_id":"o2","total":50}"#), "{}", q.text);
    assert!(q.text.contains("(1 item)"), "{}", q.text);
    let op = call(&s.tools, "table_query", json!({"account": "gcp", "table": coll, "where": [{"field": "a", "op": "like", "value": 1}]})).await;
    assert!(err(&op).contains("not a Firestore operator"), "{}", op.text);
    let path = call(
        &s.tools,
        "table_get",
        json!({"account": "gcp", "table": format!("{coll}/u1"), "key": "x"}),
    )
    .await;
    assert!(
        err(&path).contains("odd number of segments"),
        "{}",
        path.text
    );
}

#[tokio::test]
async fn an_unknown_account_is_named() {
    if !common::emulators() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let s = common::setup(dir.path());
    let seen = call(&s.tools, "table_list", json!({"account": "nope"})).await;
    assert!(
        err(&seen).contains("no cloud account `nope`"),
        "{}",
        seen.text
    );
    let seen = call(&s.tools, "table_list", json!({})).await;
    assert!(err(&seen).contains("several accounts fit"), "{}", seen.text);
}

#[tokio::test]
async fn wrong_keys_a_dead_endpoint_and_a_cancelled_run_give_clear_errors() {
    if !common::emulators() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    // A key Azurite does not know: the service's refusal, named.
    let wrong = common::Secrets(vec![
        ("aws-test".into(), common::AWS_SECRET.into()),
        (
            "azure-test".into(),
            "d3Jvbmcga2V5IGZvciB0aGUgdGVzdA==".into(),
        ),
    ]);
    let s = common::setup_with(dir.path(), &common::accounts(), common::guard(wrong));
    let seen = call(&s.tools, "table_list", json!({"account": "azure"})).await;
    assert!(err(&seen).contains("table answered 403"), "{}", seen.text);
    assert!(!seen.text.contains("d3Jvbmcga2V5"), "{}", seen.text);

    // An endpoint where nothing listens: an error at once, not a hang.
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = closed.local_addr().unwrap().port();
    drop(closed);
    let mut accounts = common::accounts();
    accounts.get_mut("aws").unwrap().endpoint = Some(format!("http://127.0.0.1:{port}"));
    let s = common::setup_with(dir.path(), &accounts, common::guard(common::secrets()));
    let seen = call(
        &s.tools,
        "table_query",
        json!({"account": "aws", "table": "t"}),
    )
    .await;
    assert!(
        err(&seen).contains(&format!("127.0.0.1:{port}")),
        "{}",
        seen.text
    );

    // A run cancelled before the call: it stops with "cancelled".
    let s = common::setup(dir.path());
    let cancel = tokio_util::sync::CancellationToken::new();
    cancel.cancel();
    let seen = cairn_test_support::tools::call_with(
        &s.tools,
        "table_list",
        json!({"account": "aws"}),
        cancel,
    )
    .await;
    assert!(err(&seen).contains("cancelled"), "{}", seen.text);
}

#[tokio::test]
async fn azure_dates_and_binary_keep_their_types() {
    if !common::emulators() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let s = common::setup(dir.path());
    let table = common::unique("d").replace('-', "");
    let (status, body) = azure(Method::POST, "Tables", Some(json!({"TableName": table}))).await;
    assert_eq!(status, 201, "{body}");
    let put = call(&s.tools, "table_put", json!({"account": "azure", "table": table,
        "item": {"PartitionKey": "p", "RowKey": "r", "When": {"$timestamp": "2026-01-02T03:04:05Z"}, "Raw": {"$binary": "AAEC"}}})).await;
    ok(&put);
    // Azurite filters on the date as a date: the type was kept.
    let q = call(
        &s.tools,
        "table_query",
        json!({"account": "azure", "table": table,
        "filter": "When gt datetime'2026-01-01T00:00:00Z'"}),
    )
    .await;
    let items = q.result.structured_content.as_ref().unwrap()["items"]
        .as_array()
        .unwrap()
        .clone();
    assert_eq!(items.len(), 1, "{}", q.text);
    assert_eq!(items[0]["Raw"], json!("AAEC"), "{}", q.text);
    let (status, _) = azure(Method::DELETE, &format!("Tables('{table}')"), None).await;
    assert_eq!(status, 204);
}
