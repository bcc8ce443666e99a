//! The queue and notification tools against the emulators: SQS and SNS on moto, Azure Queue
//! Storage on Azurite, Pub/Sub on Google's emulator. Each test makes its own queues, topics and
//! subscriptions (unique names) through the services' own APIs, calls the tools as the model
//! does, and reads back from the service what the tools did (or did not do).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use std::time::Duration;

use base64::Engine;
use cairn_test_support::tools::{call, call_with};
use cairn_web::{CredentialUse, Method, Placement, WebRequest};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

// ---- the services, reached directly (through a guard that signs as the tools' does) ----

/// An AWS query call (`sqs`, `sns`) to moto, signed: the XML answer.
async fn aws(service: &str, version: &str, params: &[(&str, &str)]) -> String {
    let mut all = vec![("Version", version)];
    all.extend_from_slice(params);
    common::aws_form(service, &all).await
}

async fn sqs(params: &[(&str, &str)]) -> String {
    aws("sqs", "2012-11-05", params).await
}

async fn sns(params: &[(&str, &str)]) -> String {
    aws("sns", "2010-03-31", params).await
}

/// The texts of every `<tag>` in `xml`.
fn all(xml: &str, tag: &str) -> Vec<String> {
    let doc = roxmltree::Document::parse(xml).unwrap();
    doc.descendants()
        .filter(|n| n.tag_name().name() == tag)
        .map(|n| n.text().unwrap_or_default().to_owned())
        .collect()
}

async fn sqs_create(name: &str) -> String {
    let answer = sqs(&[("Action", "CreateQueue"), ("QueueName", name)]).await;
    all(&answer, "QueueUrl").remove(0)
}

/// The approximate number of visible messages in an SQS queue.
async fn sqs_count(url: &str) -> u64 {
    let answer = sqs(&[
        ("Action", "GetQueueAttributes"),
        ("QueueUrl", url),
        ("AttributeName.1", "ApproximateNumberOfMessages"),
    ])
    .await;
    all(&answer, "Value")[0].parse().unwrap()
}

/// The bodies an SQS queue hands out now (taken for 30 s).
async fn sqs_take(url: &str) -> Vec<String> {
    let answer = sqs(&[
        ("Action", "ReceiveMessage"),
        ("QueueUrl", url),
        ("MaxNumberOfMessages", "10"),
        ("VisibilityTimeout", "30"),
    ])
    .await;
    all(&answer, "Body")
}

async fn sqs_delete(url: &str) {
    sqs(&[("Action", "DeleteQueue"), ("QueueUrl", url)]).await;
}

/// An Azure Queue Storage request to Azurite, signed with the account's key.
async fn azure(method: Method, path: &str, body: Option<String>) -> (u16, String, Option<u64>) {
    let url = format!("{}/{path}", std::env::var("CAIRN_AZURITE_QUEUE").unwrap());
    let mut request = WebRequest::new(method, url);
    let date = chrono::Utc::now()
        .format("%a, %d %b %Y %H:%M:%S GMT")
        .to_string();
    request.headers.insert("x-ms-date", date.parse().unwrap());
    request
        .headers
        .insert("x-ms-version", "2021-08-06".parse().unwrap());
    if let Some(body) = body {
        request
            .headers
            .insert("content-type", "application/xml".parse().unwrap());
        request.body = Some(body.into_bytes());
    }
    let request = request.with_credential(CredentialUse {
        secret: "azure-test".into(),
        placement: Placement::AzureSharedKey {
            account: std::env::var("CAIRN_AZURITE_ACCOUNT").unwrap(),
            table: false,
        },
    });
    let response = common::guard(common::secrets())
        .fetch(request)
        .await
        .unwrap();
    let count = response
        .headers
        .get("x-ms-approximate-messages-count")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse().ok());
    (
        response.status.as_u16(),
        String::from_utf8(response.body).unwrap(),
        count,
    )
}

async fn azure_count(queue: &str) -> u64 {
    let (status, body, count) = azure(Method::GET, &format!("{queue}?comp=metadata"), None).await;
    assert_eq!(status, 200, "{body}");
    count.unwrap()
}

/// A Pub/Sub emulator request (no credentials): the JSON answer.
async fn pubsub(method: Method, path: &str, body: Option<Value>) -> Value {
    let url = format!(
        "{}/v1/projects/cairn-test/{path}",
        std::env::var("CAIRN_PUBSUB_URL").unwrap()
    );
    let mut request = WebRequest::new(method, url);
    if let Some(body) = body {
        request
            .headers
            .insert("content-type", "application/json".parse().unwrap());
        request.body = Some(serde_json::to_vec(&body).unwrap());
    }
    let response = common::guard(common::secrets())
        .fetch(request)
        .await
        .unwrap();
    let text = String::from_utf8(response.body).unwrap();
    assert!(response.status.is_success(), "{path}: {text}");
    serde_json::from_str(&text).unwrap_or(Value::Null)
}

/// A topic and a subscription to it.
async fn pubsub_create(topic: &str, subscription: &str) {
    pubsub(Method::PUT, &format!("topics/{topic}"), None).await;
    pubsub(
        Method::PUT,
        &format!("subscriptions/{subscription}"),
        Some(json!({ "topic": format!("projects/cairn-test/topics/{topic}") })),
    )
    .await;
}

async fn pubsub_delete(topic: &str, subscription: &str) {
    pubsub(
        Method::DELETE,
        &format!("subscriptions/{subscription}"),
        None,
    )
    .await;
    pubsub(Method::DELETE, &format!("topics/{topic}"), None).await;
}

/// The bodies a subscription hands out now (acknowledged, so the test reads each once).
async fn pubsub_drain(subscription: &str) -> Vec<String> {
    let answer = pubsub(
        Method::POST,
        &format!("subscriptions/{subscription}:pull"),
        Some(json!({ "maxMessages": 10, "returnImmediately": true })),
    )
    .await;
    let received = answer["receivedMessages"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let acks: Vec<Value> = received.iter().map(|m| m["ackId"].clone()).collect();
    if !acks.is_empty() {
        pubsub(
            Method::POST,
            &format!("subscriptions/{subscription}:acknowledge"),
            Some(json!({ "ackIds": acks })),
        )
        .await;
    }
    received
        .iter()
        .map(|m| {
            let data = m["message"]["data"].as_str().unwrap_or_default();
            String::from_utf8(
                base64::engine::general_purpose::STANDARD
                    .decode(data)
                    .unwrap(),
            )
            .unwrap()
        })
        .collect()
}

// ---- SQS ----

#[tokio::test]
async fn sqs_messages_go_round_trip_back_to_the_queue_or_deleted() {
    if !common::emulators() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let s = common::setup(dir.path());
    let name = common::unique("cairn-q");
    let url = sqs_create(&name).await;

    let sent = call(
        &s.tools,
        "queue_send",
        json!({"account": "aws", "queue": name, "body": "deploy 42 done <ok> & \"quoted\"",
               "attributes": {"env": "staging"}}),
    )
    .await;
    assert!(!sent.is_error, "{}", sent.text);
    assert!(
        sent.text.contains(&format!("to SQS queue `{name}`")),
        "{}",
        sent.text
    );

    let listed = call(
        &s.tools,
        "queue_list",
        json!({"account": "aws", "prefix": name}),
    )
    .await;
    assert!(!listed.is_error, "{}", listed.text);
    assert!(
        listed.text.contains(&format!("| {name} | 1 | 0 | 0 |")),
        "{}",
        listed.text
    );

    // Read without deleting: the message is shown and stays in the queue.
    let seen = call(
        &s.tools,
        "queue_receive",
        json!({"account": "aws", "queue": name, "wait_seconds": 1}),
    )
    .await;
    assert!(!seen.is_error, "{}", seen.text);
    assert!(
        seen.text.contains("1 message from SQS queue"),
        "{}",
        seen.text
    );
    assert!(
        seen.text
            .contains("```text\ndeploy 42 done <ok> & \"quoted\"\n```"),
        "{}",
        seen.text
    );
    assert!(
        seen.text.contains("attributes: env=staging"),
        "{}",
        seen.text
    );
    assert!(seen.text.contains("returned to the queue"), "{}", seen.text);
    assert_eq!(sqs_count(&url).await, 1);

    // With `delete`, it is gone after reading.
    let taken = call(
        &s.tools,
        "queue_receive",
        json!({"account": "aws", "queue": name, "delete": true}),
    )
    .await;
    assert!(!taken.is_error, "{}", taken.text);
    assert!(taken.text.contains("deploy 42 done"), "{}", taken.text);
    assert!(
        taken.text.contains("deleted after reading"),
        "{}",
        taken.text
    );
    assert!(sqs_take(&url).await.is_empty());

    let empty = call(
        &s.tools,
        "queue_receive",
        json!({"account": "aws", "queue": name, "wait_seconds": 0}),
    )
    .await;
    assert!(!empty.is_error, "{}", empty.text);
    assert!(
        empty
            .text
            .starts_with(&format!("no messages in SQS queue `{name}`")),
        "{}",
        empty.text
    );
    sqs_delete(&url).await;
}

#[tokio::test]
async fn sqs_purge_asks_first_and_leaves_the_queue_unchanged_until_approved() {
    if !common::emulators() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let s = common::setup(dir.path());
    let name = common::unique("cairn-purge");
    let url = sqs_create(&name).await;
    for body in ["one", "two"] {
        sqs(&[
            ("Action", "SendMessage"),
            ("QueueUrl", &url),
            ("MessageBody", body),
        ])
        .await;
    }
    let args = json!({"account": "aws", "queue": name});
    let refused = call(&s.tools, "queue_purge", args.clone()).await;
    assert!(refused.is_error, "{}", refused.text);
    assert!(refused.text.contains("refused for now"), "{}", refused.text);
    assert!(
        refused.text.contains(&format!(
            "every message in SQS queue `{name}` (account `aws`, about 2 messages)"
        )),
        "{}",
        refused.text
    );
    assert_eq!(sqs_count(&url).await, 2);

    common::approve(&s.approvals, &refused.result);
    let purged = call(&s.tools, "queue_purge", args).await;
    assert!(!purged.is_error, "{}", purged.text);
    assert!(
        purged.text.starts_with("purged: deleted every message"),
        "{}",
        purged.text
    );
    assert_eq!(sqs_count(&url).await, 0);
    assert!(sqs_take(&url).await.is_empty());
    sqs_delete(&url).await;
}

#[tokio::test]
async fn a_fifo_queue_needs_a_group_and_gets_it() {
    if !common::emulators() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let s = common::setup(dir.path());
    let name = format!("{}.fifo", common::unique("cairn-fifo"));
    let answer = sqs(&[
        ("Action", "CreateQueue"),
        ("QueueName", &name),
        ("Attribute.1.Name", "FifoQueue"),
        ("Attribute.1.Value", "true"),
    ])
    .await;
    let url = all(&answer, "QueueUrl").remove(0);
    let without = call(
        &s.tools,
        "queue_send",
        json!({"account": "aws", "queue": name, "body": "x"}),
    )
    .await;
    assert!(without.is_error);
    assert!(without.text.contains("pass `group`"), "{}", without.text);
    let with = call(
        &s.tools,
        "queue_send",
        json!({"account": "aws", "queue": name, "body": "in order", "group": "g1"}),
    )
    .await;
    assert!(!with.is_error, "{}", with.text);
    assert_eq!(sqs_take(&url).await, vec!["in order".to_owned()]);
    sqs_delete(&url).await;
}

// ---- Azure Queue Storage ----

#[tokio::test]
async fn azure_queues_send_peek_delete_and_purge_after_approval() {
    if !common::emulators() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let s = common::setup(dir.path());
    let name = common::unique("cairn-aq");
    let (status, body, _) = azure(Method::PUT, &name, None).await;
    assert_eq!(status, 201, "{body}");

    let sent = call(
        &s.tools,
        "queue_send",
        json!({"account": "azure", "queue": name, "body": "héllo <azure> & co"}),
    )
    .await;
    assert!(!sent.is_error, "{}", sent.text);
    assert!(
        sent.text.contains("to Azure Storage queue `"),
        "{}",
        sent.text
    );

    let listed = call(
        &s.tools,
        "queue_list",
        json!({"account": "azure", "prefix": name}),
    )
    .await;
    assert!(
        listed.text.contains(&format!("| {name} | 1 |")),
        "{}",
        listed.text
    );

    // A peek: shown, left in the queue untouched.
    let seen = call(
        &s.tools,
        "queue_receive",
        json!({"account": "azure", "queue": name}),
    )
    .await;
    assert!(!seen.is_error, "{}", seen.text);
    assert!(
        seen.text.contains("```text\nhéllo <azure> & co\n```"),
        "{}",
        seen.text
    );
    assert_eq!(azure_count(&name).await, 1);

    let taken = call(
        &s.tools,
        "queue_receive",
        json!({"account": "azure", "queue": name, "delete": true}),
    )
    .await;
    assert!(!taken.is_error, "{}", taken.text);
    assert!(taken.text.contains("héllo <azure> & co"), "{}", taken.text);
    assert_eq!(azure_count(&name).await, 0);

    // Azure messages have no attributes: refused, nothing sent.
    let refused = call(
        &s.tools,
        "queue_send",
        json!({"account": "azure", "queue": name, "body": "x", "attributes": {"a": "b"}}),
    )
    .await;
    assert!(refused.is_error);
    assert!(
        refused.text.contains("carry no attributes"),
        "{}",
        refused.text
    );
    assert_eq!(azure_count(&name).await, 0);

    for body in ["a", "b", "c"] {
        let r = call(
            &s.tools,
            "queue_send",
            json!({"account": "azure", "queue": name, "body": body}),
        )
        .await;
        assert!(!r.is_error, "{}", r.text);
    }
    let args = json!({"account": "azure", "queue": name});
    let asked = call(&s.tools, "queue_purge", args.clone()).await;
    assert!(asked.is_error);
    assert!(asked.text.contains("about 3 messages"), "{}", asked.text);
    assert_eq!(azure_count(&name).await, 3);
    common::approve(&s.approvals, &asked.result);
    let purged = call(&s.tools, "queue_purge", args).await;
    assert!(!purged.is_error, "{}", purged.text);
    assert_eq!(azure_count(&name).await, 0);

    let (status, _, _) = azure(Method::DELETE, &name, None).await;
    assert_eq!(status, 204);
}

// ---- Pub/Sub ----

#[tokio::test]
async fn pubsub_publishes_to_topics_and_pulls_from_subscriptions() {
    if !common::pubsub() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let s = common::setup(dir.path());
    let topic = common::unique("cairn-topic");
    let sub = common::unique("cairn-sub");
    pubsub_create(&topic, &sub).await;

    let sent = call(
        &s.tools,
        "queue_send",
        json!({"account": "gcp", "queue": topic, "body": "build green", "attributes": {"run": "7"}}),
    )
    .await;
    assert!(!sent.is_error, "{}", sent.text);
    assert!(
        sent.text.contains(&format!("to Pub/Sub topic `{topic}`")),
        "{}",
        sent.text
    );

    let listed = call(
        &s.tools,
        "queue_list",
        json!({"account": "gcp", "prefix": "cairn-"}),
    )
    .await;
    assert!(!listed.is_error, "{}", listed.text);
    assert!(
        listed.text.contains(&format!("| topic | {topic} |")),
        "{}",
        listed.text
    );
    assert!(
        listed
            .text
            .contains(&format!("| subscription | {sub} | {topic} | 10 |")),
        "{}",
        listed.text
    );

    // Pulled without acknowledging: shown, and handed out again at once.
    let args = json!({"account": "gcp", "queue": sub, "wait_seconds": 5});
    for _ in 0..2 {
        let seen = call(&s.tools, "queue_receive", args.clone()).await;
        assert!(!seen.is_error, "{}", seen.text);
        assert!(
            seen.text.contains("```text\nbuild green\n```"),
            "{}",
            seen.text
        );
        assert!(seen.text.contains("attributes: run=7"), "{}", seen.text);
    }
    let taken = call(
        &s.tools,
        "queue_receive",
        json!({"account": "gcp", "queue": sub, "wait_seconds": 5, "delete": true}),
    )
    .await;
    assert!(taken.text.contains("build green"), "{}", taken.text);
    assert!(pubsub_drain(&sub).await.is_empty());

    // Purge: a question first (the messages stay), then a seek to now.
    for body in ["p1", "p2"] {
        call(
            &s.tools,
            "queue_send",
            json!({"account": "gcp", "queue": topic, "body": body}),
        )
        .await;
    }
    let purge = json!({"account": "gcp", "queue": sub});
    let asked = call(&s.tools, "queue_purge", purge.clone()).await;
    assert!(asked.is_error);
    assert!(
        asked
            .text
            .contains(&format!("Pub/Sub subscription `{sub}`")),
        "{}",
        asked.text
    );
    // Refused: both messages are still there (read, and handed back).
    let still = call(&s.tools, "queue_receive", args.clone()).await;
    assert!(
        still.text.contains("p1") && still.text.contains("p2"),
        "{}",
        still.text
    );
    common::approve(&s.approvals, &asked.result);
    let purged = call(&s.tools, "queue_purge", purge).await;
    assert!(!purged.is_error, "{}", purged.text);
    assert!(pubsub_drain(&sub).await.is_empty());
    let empty = call(
        &s.tools,
        "queue_receive",
        json!({"account": "gcp", "queue": sub, "wait_seconds": 1}),
    )
    .await;
    assert!(!empty.is_error, "{}", empty.text);
    assert!(
        empty
            .text
            .starts_with(&format!("no messages in Pub/Sub subscription `{sub}`")),
        "{}",
        empty.text
    );

    let delay = call(
        &s.tools,
        "queue_send",
        json!({"account": "gcp", "queue": topic, "body": "x", "delay_seconds": 5}),
    )
    .await;
    assert!(delay.is_error);
    assert!(delay.text.contains("no delayed delivery"), "{}", delay.text);
    pubsub_delete(&topic, &sub).await;
}

// ---- SNS ----

#[tokio::test]
async fn sns_publish_reaches_a_subscribed_sqs_queue() {
    if !common::emulators() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let s = common::setup(dir.path());
    let topic = common::unique("cairn-sns");
    let queue = common::unique("cairn-snsq");
    let arn = all(
        &sns(&[("Action", "CreateTopic"), ("Name", &topic)]).await,
        "TopicArn",
    )
    .remove(0);
    let url = sqs_create(&queue).await;
    let queue_arn = format!("arn:aws:sqs:us-east-1:123456789012:{queue}");
    sns(&[
        ("Action", "Subscribe"),
        ("TopicArn", &arn),
        ("Protocol", "sqs"),
        ("Endpoint", &queue_arn),
    ])
    .await;

    let listed = call(&s.tools, "sns_topics", json!({"account": "aws"})).await;
    assert!(!listed.is_error, "{}", listed.text);
    assert!(
        listed.text.contains(&format!("| {topic} | 1 | {arn} |")),
        "{}",
        listed.text
    );

    // A subject with a line break would be a header line for email subscribers: refused, and
    // nothing is delivered.
    let injected = call(
        &s.tools,
        "sns_publish",
        json!({"account": "aws", "topic": topic, "message": "m", "subject": "hi\r\nBcc: eve@example.com"}),
    )
    .await;
    assert!(injected.is_error);
    assert!(injected.text.contains("one line"), "{}", injected.text);
    assert!(sqs_take(&url).await.is_empty());

    let published = call(
        &s.tools,
        "sns_publish",
        json!({"account": "aws", "topic": topic, "message": "release 1.4 is out", "subject": "Release"}),
    )
    .await;
    assert!(!published.is_error, "{}", published.text);
    assert!(
        published.text.contains(&format!("to SNS topic `{topic}`")),
        "{}",
        published.text
    );

    // What the queue got is SNS's envelope around the message.
    let bodies = sqs_take(&url).await;
    assert_eq!(bodies.len(), 1, "{bodies:?}");
    let envelope: Value = serde_json::from_str(&bodies[0]).unwrap();
    assert_eq!(envelope["Message"], "release 1.4 is out");
    assert_eq!(envelope["Subject"], "Release");
    assert_eq!(envelope["TopicArn"], arn.as_str());

    // By ARN too; a topic that does not exist is named as such.
    let by_arn = call(
        &s.tools,
        "sns_publish",
        json!({"account": "aws", "topic": arn, "message": "second"}),
    )
    .await;
    assert!(!by_arn.is_error, "{}", by_arn.text);
    let missing = call(
        &s.tools,
        "sns_publish",
        json!({"account": "aws", "topic": common::unique("cairn-none"), "message": "m"}),
    )
    .await;
    assert!(missing.is_error);
    assert!(
        missing.text.contains("no SNS topic `cairn-none-"),
        "{}",
        missing.text
    );
    assert!(
        missing.text.contains("`sns_topics` lists them"),
        "{}",
        missing.text
    );

    sns(&[("Action", "DeleteTopic"), ("TopicArn", &arn)]).await;
    sqs_delete(&url).await;
}

// ---- paging ----

/// The `next` token a listing printed.
fn next_of(seen: &cairn_test_support::tools::Seen) -> Option<String> {
    seen.result.structured_content.as_ref()?["next"]
        .as_str()
        .map(str::to_owned)
}

#[tokio::test]
async fn listings_page_with_the_token_they_print() {
    if !common::emulators() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let s = common::setup(dir.path());
    let prefix = common::unique("cairn-page");
    let names: Vec<String> = (1..=3).map(|i| format!("{prefix}-{i}")).collect();
    let mut urls = Vec::new();
    for name in &names {
        urls.push(sqs_create(name).await);
        let (status, body, _) = azure(Method::PUT, name, None).await;
        assert_eq!(status, 201, "{body}");
    }
    for account in ["aws", "azure"] {
        let first = call(
            &s.tools,
            "queue_list",
            json!({"account": account, "prefix": prefix, "max": 2}),
        )
        .await;
        assert!(!first.is_error, "{}", first.text);
        let token = next_of(&first).unwrap_or_else(|| panic!("{account}: no next: {}", first.text));
        assert!(
            first
                .text
                .contains("2 rows shown; more were left out: pass `next:"),
            "{}",
            first.text
        );
        let second = call(
            &s.tools,
            "queue_list",
            json!({"account": account, "prefix": prefix, "max": 2, "next": token}),
        )
        .await;
        assert!(!second.is_error, "{}", second.text);
        // Every queue once across the two pages.
        for name in &names {
            let hits = [&first.text, &second.text]
                .iter()
                .filter(|t| t.contains(&format!("| {name} |")))
                .count();
            assert_eq!(hits, 1, "{account} {name}: {}\n{}", first.text, second.text);
        }
        assert!(next_of(&second).is_none(), "{}", second.text);
    }
    let none = call(
        &s.tools,
        "queue_list",
        json!({"account": "azure", "prefix": common::unique("cairn-nothing")}),
    )
    .await;
    assert!(none.text.ends_with("(none)"), "{}", none.text);
    for (name, url) in names.iter().zip(&urls) {
        sqs_delete(url).await;
        azure(Method::DELETE, name, None).await;
    }
}

#[tokio::test]
async fn counting_stops_at_the_users_web_rate_with_a_note() {
    if !common::emulators() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let prefix = common::unique("cairn-rate");
    let names: Vec<String> = (1..=4).map(|i| format!("{prefix}-{i}")).collect();
    for name in &names {
        let (status, _, _) = azure(Method::PUT, name, None).await;
        assert_eq!(status, 201);
    }
    // Three requests a minute: the listing and two counts.
    let guard = std::sync::Arc::new(
        cairn_web::WebGuard::new(cairn_web::GuardConfig {
            allow_loopback: true,
            per_user_per_minute: 3,
            per_host_per_minute: 100,
            ..cairn_web::GuardConfig::default()
        })
        .unwrap()
        .with_credentials(std::sync::Arc::new(common::secrets())),
    );
    let s = common::setup_with(dir.path(), &common::accounts(), guard);
    let r = call(
        &s.tools,
        "queue_list",
        json!({"account": "azure", "prefix": prefix}),
    )
    .await;
    assert!(!r.is_error, "{}", r.text);
    assert!(
        r.text.contains("(message counts stopped: rate limit"),
        "{}",
        r.text
    );
    assert!(
        r.text.contains(&format!("| {} | 0 |", names[0])),
        "{}",
        r.text
    );
    assert!(
        r.text.contains(&format!("| {} | NULL |", names[3])),
        "{}",
        r.text
    );
    for name in &names {
        azure(Method::DELETE, name, None).await;
    }
}

// ---- what does not exist, bad input, cancellation ----

#[tokio::test]
async fn queues_that_do_not_exist_give_a_clear_error_on_every_service() {
    if !common::emulators() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let s = common::setup(dir.path());
    let mut cases = vec![("aws", "SQS queue"), ("azure", "Azure Storage queue")];
    // Without Pub/Sub the other services still run, and the missing case is logged as a skip.
    let with_pubsub = cairn_test_support::peer(
        "CAIRN_PUBSUB_URL",
        "for its Pub/Sub cases (scripts/cloud-emulators starts the emulator where gcloud is)",
    )
    .is_some();
    if with_pubsub {
        cases.push(("gcp", "Pub/Sub subscription"));
    }
    for (account, what) in cases {
        let name = common::unique("cairn-none");
        for tool in ["queue_receive", "queue_purge"] {
            let r = call(
                &s.tools,
                tool,
                json!({"account": account, "queue": name, "wait_seconds": 0})
                    .as_object()
                    .map(|o| {
                        let mut o = o.clone();
                        if tool == "queue_purge" {
                            o.remove("wait_seconds");
                        }
                        Value::Object(o)
                    })
                    .unwrap(),
            )
            .await;
            assert!(r.is_error, "{tool} {account}: {}", r.text);
            assert!(
                r.text.starts_with(&format!(
                    "no {what} `{name}` in account `{account}`; `queue_list` lists them"
                )),
                "{tool}: {}",
                r.text
            );
            assert!(cairn_agent::tools::protected_of(&r.result).is_empty());
        }
    }
    if with_pubsub {
        // A topic where a subscription is needed: the error says which is which.
        let topic = common::unique("cairn-topic");
        pubsub(Method::PUT, &format!("topics/{topic}"), None).await;
        let r = call(
            &s.tools,
            "queue_receive",
            json!({"account": "gcp", "queue": topic}),
        )
        .await;
        assert!(
            r.text
                .ends_with("received from a subscription, not a topic)"),
            "{}",
            r.text
        );
        pubsub(Method::DELETE, &format!("topics/{topic}"), None).await;
    }
    let r = call(
        &s.tools,
        "queue_send",
        json!({"account": "aws", "queue": "cairn-none-at-all", "body": "x"}),
    )
    .await;
    assert_eq!(
        r.text,
        "no SQS queue `cairn-none-at-all` in account `aws`; `queue_list` lists them"
    );
}

#[tokio::test]
async fn bad_input_is_refused_before_anything_is_sent() {
    if !common::emulators() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let s = common::setup(dir.path());
    let name = common::unique("cairn-bad");
    let url = sqs_create(&name).await;
    let cases = [
        (
            "queue_send",
            json!({"account": "aws", "queue": name, "body": "x".repeat(300 * 1024)}),
            "a message is at most 262144 bytes",
        ),
        (
            "queue_send",
            json!({"account": "aws", "queue": name, "body": "x",
                   "attributes": (0..11).map(|i| (format!("a{i}"), json!("v"))).collect::<serde_json::Map<_, _>>()}),
            "11 attributes given; at most 10",
        ),
        (
            "queue_send",
            json!({"account": "aws", "queue": name, "body": "x", "delay_seconds": 901}),
            "`delay_seconds` is at most 900 on SQS",
        ),
        (
            "queue_send",
            json!({"account": "aws", "queue": "../../admin", "body": "x"}),
            "is not a SQS queue name",
        ),
        (
            "queue_receive",
            json!({"account": "aws", "queue": name, "wait_seconds": 21}),
            "`wait_seconds` is at most 20",
        ),
        (
            "queue_receive",
            json!({"queue": name}),
            "several accounts fit",
        ),
        (
            "queue_receive",
            json!({"account": "s3", "queue": name}),
            "account `s3` is s3",
        ),
        (
            "queue_send",
            json!({"account": "aws", "queue": name, "body": "x", "priority": 1}),
            "unknown field `priority`",
        ),
    ];
    for (tool, args, expected) in cases {
        let r = call(&s.tools, tool, args).await;
        assert!(r.is_error, "{tool}: {}", r.text);
        assert!(
            r.text.contains(expected),
            "{tool}: {} (wanted {expected})",
            r.text
        );
    }
    assert_eq!(sqs_count(&url).await, 0);
    sqs_delete(&url).await;
}

#[tokio::test]
async fn a_wrong_key_or_a_dead_endpoint_is_a_clear_error_and_sends_nothing() {
    if !common::emulators() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let name = common::unique("cairn-key");
    let (status, _, _) = azure(Method::PUT, &name, None).await;
    assert_eq!(status, 201);
    // A key Azurite does not know: the service refuses, the tool says so, the queue stays empty.
    let wrong = common::Secrets(vec![(
        "azure-test".into(),
        "d3Jvbmcga2V5IGZvciB0aGUgdGVzdA==".into(),
    )]);
    let s = common::setup_with(dir.path(), &common::accounts(), common::guard(wrong));
    let r = call(
        &s.tools,
        "queue_send",
        json!({"account": "azure", "queue": name, "body": "x"}),
    )
    .await;
    assert!(r.is_error);
    assert!(r.text.contains("403 AuthenticationFailed"), "{}", r.text);
    assert!(!r.text.contains("d3Jvbmcga2V5"), "{}", r.text);
    assert_eq!(azure_count(&name).await, 0);
    azure(Method::DELETE, &name, None).await;

    // An endpoint nothing listens on: an error naming the request, at once.
    let mut dead = common::accounts();
    dead.get_mut("aws").unwrap().endpoint = Some("http://127.0.0.1:9".into());
    let s = common::setup_with(dir.path(), &dead, common::guard(common::secrets()));
    let r = call(&s.tools, "queue_list", json!({"account": "aws"})).await;
    assert!(r.is_error);
    assert!(r.text.contains("http://127.0.0.1:9/"), "{}", r.text);
    assert!(!r.text.contains(common::AWS_SECRET), "{}", r.text);
}

#[tokio::test]
async fn a_long_wait_ends_when_the_run_is_cancelled() {
    if !common::emulators() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let s = common::setup(dir.path());
    let name = common::unique("cairn-wait");
    let (status, _, _) = azure(Method::PUT, &name, None).await;
    assert_eq!(status, 201);
    let cancel = CancellationToken::new();
    let later = cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(500)).await;
        later.cancel();
    });
    let r = call_with(
        &s.tools,
        "queue_receive",
        json!({"account": "azure", "queue": name, "wait_seconds": 20}),
        cancel,
    )
    .await;
    assert!(r.is_error);
    assert!(r.text.contains("cancelled"), "{}", r.text);
    azure(Method::DELETE, &name, None).await;
}
