//! `queue_send`: one message onto an SQS queue, an Azure Storage queue or a Pub/Sub topic.

use std::collections::BTreeMap;

use cairn_toolkit::reply::{error, text};
use cairn_toolkit::{CallContext, Category, Effect, JsonSchema, Paths, Tool};
use cairn_web::Method;
use rmcp::model::CallToolResult;
use serde::Deserialize;
use serde_json::{Value, json};

use super::service::{KINDS, MAX_ATTRIBUTES, Service, encode_body, pubsub_project, queue_name};
use crate::account::Account;
use crate::cloud::Cloud;
use crate::error::CloudError;
use crate::request::{CloudRequest, segment, xml, xml_text};

/// The `queue_send` tool.
pub struct QueueSend;

/// The largest body sent: SQS's limit (Azure's is less, checked there).
const MAX_BODY: usize = 256 * 1024;
/// Azure's limit on a message's base64 text (64 KiB), as raw bytes.
const MAX_AZURE_BODY: usize = 48 * 1024;
/// The longest delay SQS allows (15 minutes); Azure allows up to 7 days.
const MAX_SQS_DELAY: u32 = 900;
const MAX_AZURE_DELAY: u32 = 7 * 24 * 3600;

/// Arguments of `queue_send`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// The `[cloud.NAME]` account; needed only when several fit.
    #[serde(default)]
    account: Option<String>,
    /// The queue's name (SQS, Azure) or, on Pub/Sub, the topic's.
    queue: String,
    /// The message text.
    body: String,
    /// Message attributes, name to text value (SQS, Pub/Sub; at most 10). Azure messages have none.
    #[serde(default)]
    attributes: BTreeMap<String, String>,
    /// Seconds before the message can be received (SQS up to 900, Azure up to 604800; not Pub/Sub).
    #[serde(default)]
    delay_seconds: Option<u32>,
    /// SQS FIFO queues (`.fifo`) only, and required there: the message group id.
    #[serde(default)]
    group: Option<String>,
}

impl Tool for QueueSend {
    type Host = Cloud;
    type Args = Args;
    const NAME: &'static str = "queue_send";
    const TITLE: &'static str = "Send a message to a queue";
    const DESCRIPTION: &'static str = "Send one text message to an SQS queue, an Azure Storage queue or a Pub/Sub topic, with optional attributes (SQS, Pub/Sub) and delay (SQS, Azure). Up to 256 KiB (48 KiB on Azure).";
    const CATEGORY: Category = Category::Cloud;
    const EFFECT: Effect = Effect::Write;
    const AGENT_ONLY: bool = true;

    fn paths(_: &Args) -> Paths {
        Paths::none()
    }

    async fn call(cloud: &Cloud, args: Args, cx: CallContext) -> CallToolResult {
        match send(cloud, &args, &cx).await {
            Ok(t) => text(t),
            Err(e) => error(e.to_string()),
        }
    }
}

async fn send(cloud: &Cloud, args: &Args, cx: &CallContext) -> Result<String, CloudError> {
    let account = cloud.account(args.account.as_deref(), KINDS)?;
    let service = Service::of(account);
    let name = queue_name(service, &args.queue)?;
    if args.body.len() > MAX_BODY {
        return Err(CloudError::Invalid(format!(
            "the body is {} bytes; a message is at most {MAX_BODY} bytes: send a reference (an object's key) instead",
            args.body.len()
        )));
    }
    if args.attributes.len() > MAX_ATTRIBUTES {
        return Err(CloudError::Invalid(format!(
            "{} attributes given; at most {MAX_ATTRIBUTES}",
            args.attributes.len()
        )));
    }
    if args.group.is_some() && !(service == Service::Sqs && name.ends_with(".fifo")) {
        return Err(CloudError::Invalid(
            "`group` is for SQS FIFO queues (names ending in `.fifo`) only".into(),
        ));
    }
    let id = match service {
        Service::Sqs => sqs(cloud, cx, account, &name, args).await?,
        Service::Azure => azure(cloud, cx, account, &name, args).await?,
        Service::PubSub => pubsub(cloud, cx, account, &name, args).await?,
    };
    let what = service.queue_word(true);
    let mut out = format!(
        "sent message {id} ({} bytes) to {what} `{name}` (account `{}`)",
        args.body.len(),
        account.name
    );
    if let Some(d) = args.delay_seconds.filter(|d| *d > 0) {
        out.push_str(&format!("; it can be received in {d} s"));
    }
    Ok(out)
}

async fn sqs(
    cloud: &Cloud,
    cx: &CallContext,
    account: &Account,
    name: &str,
    args: &Args,
) -> Result<String, CloudError> {
    if let Some(d) = args.delay_seconds
        && d > MAX_SQS_DELAY
    {
        return Err(CloudError::Invalid(format!(
            "`delay_seconds` is at most {MAX_SQS_DELAY} on SQS; {d} was asked"
        )));
    }
    let fifo = name.ends_with(".fifo");
    if fifo && args.group.as_deref().is_none_or(|g| g.trim().is_empty()) {
        return Err(CloudError::Invalid(format!(
            "`{name}` is a FIFO queue: pass `group` (the message group id)"
        )));
    }
    let url = cloud.sqs_queue_url(cx, account, name).await?;
    let mut params = vec![("QueueUrl", url), ("MessageBody", args.body.clone())];
    if let Some(d) = args.delay_seconds {
        params.push(("DelaySeconds", d.to_string()));
    }
    // The attributes' parameter names, numbered from 1, as the query protocol spells them.
    let keys: Vec<[String; 3]> = (1..=args.attributes.len())
        .map(|n| {
            [
                format!("MessageAttribute.{n}.Name"),
                format!("MessageAttribute.{n}.Value.DataType"),
                format!("MessageAttribute.{n}.Value.StringValue"),
            ]
        })
        .collect();
    for ([name_key, type_key, value_key], (k, v)) in keys.iter().zip(&args.attributes) {
        params.push((name_key.as_str(), k.clone()));
        params.push((type_key.as_str(), "String".to_owned()));
        params.push((value_key.as_str(), v.clone()));
    }
    if fifo {
        params.push(("MessageGroupId", args.group.clone().unwrap_or_default()));
        // A fresh id, so a queue without content-based deduplication accepts the send.
        params.push((
            "MessageDeduplicationId",
            uuid::Uuid::new_v4().simple().to_string(),
        ));
    }
    let answer = cloud.sqs(cx, account, "SendMessage", &params).await?;
    let doc = xml("sqs", &answer)?;
    Ok(xml_text(doc.root(), "MessageId")
        .unwrap_or("(no id)")
        .to_owned())
}

async fn azure(
    cloud: &Cloud,
    cx: &CallContext,
    account: &Account,
    name: &str,
    args: &Args,
) -> Result<String, CloudError> {
    if !args.attributes.is_empty() {
        return Err(CloudError::Invalid(
            "Azure Storage queue messages carry no attributes: put them in the body".into(),
        ));
    }
    if args.body.len() > MAX_AZURE_BODY {
        return Err(CloudError::Invalid(format!(
            "the body is {} bytes; an Azure queue message is at most {MAX_AZURE_BODY} bytes",
            args.body.len()
        )));
    }
    let delay = args.delay_seconds.unwrap_or(0);
    if delay > MAX_AZURE_DELAY {
        return Err(CloudError::Invalid(format!(
            "`delay_seconds` is at most {MAX_AZURE_DELAY} on Azure; {delay} was asked"
        )));
    }
    let delay = delay.to_string();
    let url = cloud.azure_queue_url(
        account,
        name,
        "messages",
        &[("visibilitytimeout", delay.as_str())],
    )?;
    // Base64, as Azure's SDKs write it, so any text (and `<`, `&`) travels unchanged.
    let body = format!(
        "<QueueMessage><MessageText>{}</MessageText></QueueMessage>",
        encode_body(&args.body)
    );
    let request =
        CloudRequest::new(Method::POST, url).body(body.into_bytes(), "application/xml")?;
    let response = cloud
        .azure(cx, account, "queue", request)
        .await
        .map_err(|e| {
            if e.is_not_found() {
                super::service::no_such("Azure Storage queue", name, account, "queue_list")
            } else {
                e
            }
        })?;
    let text = crate::request::text_of("queue", &response)?;
    let doc = xml("queue", &text)?;
    Ok(xml_text(doc.root(), "MessageId")
        .unwrap_or("(no id)")
        .to_owned())
}

async fn pubsub(
    cloud: &Cloud,
    cx: &CallContext,
    account: &Account,
    name: &str,
    args: &Args,
) -> Result<String, CloudError> {
    if args.delay_seconds.is_some_and(|d| d > 0) {
        return Err(CloudError::Invalid(
            "Pub/Sub has no delayed delivery: send without `delay_seconds`".into(),
        ));
    }
    let mut message = json!({ "data": encode_body(&args.body) });
    if !args.attributes.is_empty() {
        message["attributes"] = json!(args.attributes);
    }
    let path = format!(
        "{}/topics/{}:publish",
        pubsub_project(account),
        segment(name)
    );
    let answer = cloud
        .pubsub(
            cx,
            account,
            Method::POST,
            &path,
            Some(&json!({ "messages": [message] })),
            ("Pub/Sub topic", name),
        )
        .await?;
    Ok(answer
        .pointer("/messageIds/0")
        .and_then(Value::as_str)
        .unwrap_or("(no id)")
        .to_owned())
}
