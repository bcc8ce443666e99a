//! `queue_list`: the queues of an account (SQS queues, Azure queues, Pub/Sub topics and
//! subscriptions), with approximate message counts where the service tells them.

use cairn_toolkit::reply::error;
use cairn_toolkit::table::{Cell, Limits, Table};
use cairn_toolkit::{CallContext, Category, Effect, JsonSchema, Paths, Tool};
use cairn_web::Method;
use rmcp::model::CallToolResult;
use serde::Deserialize;
use serde_json::Value;

use super::service::{KINDS, Service, attribute, pubsub_project};
use crate::account::Account;
use crate::cloud::Cloud;
use crate::error::CloudError;
use crate::request::{CloudRequest, url_of, xml, xml_text};

/// The `queue_list` tool.
pub struct QueueList;

/// Queues whose counts are asked for, one request each (against the user's web rate, 10 a
/// minute by default); past that the counts are left blank.
const MAX_COUNTED: usize = 5;
/// The most queues one call lists.
const MAX_LIST: u32 = 1000;

/// Arguments of `queue_list`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// The `[cloud.NAME]` account; needed only when several fit.
    #[serde(default)]
    account: Option<String>,
    /// Only queues whose name starts with this (on Pub/Sub, filtered from the page fetched).
    #[serde(default)]
    prefix: Option<String>,
    /// How many to list (default 50, at most 1000); message counts are fetched for the first 5.
    #[serde(default)]
    #[schemars(range(min = 1, max = 1000))]
    max: Option<u32>,
    /// The continuation token a previous call printed, to list the next page.
    #[serde(default)]
    next: Option<String>,
}

impl Tool for QueueList {
    type Host = Cloud;
    type Args = Args;
    const NAME: &'static str = "queue_list";
    const TITLE: &'static str = "List message queues";
    const DESCRIPTION: &'static str = "List the message queues of a cloud account: SQS queues (AWS), Azure Storage queues, or Pub/Sub topics and subscriptions (Google), with approximate message counts where the service gives them (for the first 5). Paged: pass `next` from the previous answer.";
    const CATEGORY: Category = Category::Cloud;
    const EFFECT: Effect = Effect::Network;
    const AGENT_ONLY: bool = false;
    const READ_ONLY: bool = true;

    fn paths(_: &Args) -> Paths {
        Paths::none()
    }

    async fn call(cloud: &Cloud, args: Args, cx: CallContext) -> CallToolResult {
        match list(cloud, &args, &cx).await {
            Ok(result) => result,
            Err(e) => error(e.to_string()),
        }
    }
}

async fn list(cloud: &Cloud, args: &Args, cx: &CallContext) -> Result<CallToolResult, CloudError> {
    let account = cloud.account(args.account.as_deref(), KINDS)?;
    let max = args.max.unwrap_or(50).clamp(1, MAX_LIST);
    let prefix = args.prefix.as_deref().map(str::trim).unwrap_or_default();
    match Service::of(account) {
        Service::Sqs => sqs(cloud, cx, account, prefix, max, args.next.as_deref()).await,
        Service::Azure => azure(cloud, cx, account, prefix, max, args.next.as_deref()).await,
        Service::PubSub => pubsub(cloud, cx, account, prefix, max, args.next.as_deref()).await,
    }
}

fn count(value: Option<&str>) -> Cell {
    value.map_or(Cell::Null, |v| Cell::Text(v.to_owned()))
}

/// Why counting stopped, after a count failed: a queue deleted since the listing is only left
/// without counts; the guard refusing (the rate limit) stops further counts; cancelling ends
/// the call.
fn stop(e: CloudError) -> Result<Option<String>, CloudError> {
    match e {
        CloudError::Cancelled => Err(e),
        CloudError::Web(_) | CloudError::NoGuard => Ok(Some(e.to_string())),
        _ => Ok(None),
    }
}

/// The heading and the hint for the next page.
fn finish(
    table: &Table,
    heading: String,
    next: Option<String>,
    counted: usize,
    stopped: Option<String>,
) -> CallToolResult {
    let mut heading = heading;
    if let Some(why) = stopped {
        heading.push_str(&format!("\n(message counts stopped: {why})"));
    }
    if table.rows.is_empty() && next.is_none() {
        heading.push_str("\n(none)");
        return cairn_toolkit::reply::text(heading);
    }
    if table.rows.len() > counted {
        heading.push_str(&format!(
            "\n(message counts fetched for the first {counted}; pass a `prefix` to see others' counts)"
        ));
    }
    let hint = match &next {
        Some(token) => format!("pass `next: \"{token}\"` for the next page"),
        None => "pass a `prefix` or a smaller `max`".to_owned(),
    };
    let mut result = table.result_hinting(&heading, &Limits::default(), &hint);
    if let (Some(token), Some(structured)) = (next, result.structured_content.as_mut()) {
        structured["next"] = Value::String(token);
    }
    result
}

async fn sqs(
    cloud: &Cloud,
    cx: &CallContext,
    account: &Account,
    prefix: &str,
    max: u32,
    next: Option<&str>,
) -> Result<CallToolResult, CloudError> {
    let mut params = vec![("MaxResults", max.to_string())];
    if !prefix.is_empty() {
        params.push(("QueueNamePrefix", prefix.to_owned()));
    }
    if let Some(token) = next {
        params.push(("NextToken", token.to_owned()));
    }
    let answer = cloud.sqs(cx, account, "ListQueues", &params).await?;
    let doc = xml("sqs", &answer)?;
    let urls: Vec<String> = doc
        .descendants()
        .filter(|n| n.tag_name().name() == "QueueUrl")
        .filter_map(|n| n.text())
        .map(|t| t.trim().to_owned())
        .collect();
    let token = xml_text(doc.root(), "NextToken").map(str::to_owned);
    let mut table = Table {
        columns: ["queue", "messages", "in flight", "delayed"]
            .map(String::from)
            .to_vec(),
        rows: Vec::new(),
        more: token.is_some(),
    };
    let mut stopped = None;
    for (i, url) in urls.iter().enumerate() {
        let name = url.rsplit('/').next().unwrap_or(url).to_owned();
        let mut row = vec![Cell::Text(name), Cell::Null, Cell::Null, Cell::Null];
        if i < MAX_COUNTED && stopped.is_none() {
            match cloud.sqs_attributes(cx, account, url).await {
                Ok(attrs) => {
                    row[1] = count(attribute(&attrs, "ApproximateNumberOfMessages"));
                    row[2] = count(attribute(&attrs, "ApproximateNumberOfMessagesNotVisible"));
                    row[3] = count(attribute(&attrs, "ApproximateNumberOfMessagesDelayed"));
                }
                Err(e) => stopped = stop(e)?,
            }
        }
        table.rows.push(row);
    }
    let heading = format!(
        "SQS queues of account `{}` ({}){}; counts are approximate:",
        account.name,
        account.region,
        if prefix.is_empty() {
            String::new()
        } else {
            format!(" starting with `{prefix}`")
        }
    );
    Ok(finish(&table, heading, token, MAX_COUNTED, stopped))
}

async fn azure(
    cloud: &Cloud,
    cx: &CallContext,
    account: &Account,
    prefix: &str,
    max: u32,
    next: Option<&str>,
) -> Result<CallToolResult, CloudError> {
    let base = account.base_url("queue")?;
    let max_text = max.to_string();
    let mut query = vec![("comp", "list"), ("maxresults", max_text.as_str())];
    if !prefix.is_empty() {
        query.push(("prefix", prefix));
    }
    if let Some(marker) = next {
        query.push(("marker", marker));
    }
    let url = url_of(&base, "", &query)?;
    let response = cloud
        .azure(cx, account, "queue", CloudRequest::new(Method::GET, url))
        .await?;
    let text = crate::request::text_of("queue", &response)?;
    let doc = xml("queue", &text)?;
    let names: Vec<String> = doc
        .descendants()
        .filter(|n| n.tag_name().name() == "Queue")
        .filter_map(|n| xml_text(n, "Name"))
        .map(str::to_owned)
        .collect();
    let token = xml_text(doc.root(), "NextMarker")
        .map(str::trim)
        .filter(|t| !t.is_empty())
        .map(str::to_owned);
    let mut table = Table {
        columns: ["queue", "messages"].map(String::from).to_vec(),
        rows: Vec::new(),
        more: token.is_some(),
    };
    let mut stopped = None;
    for (i, name) in names.into_iter().enumerate() {
        let mut messages = Cell::Null;
        if i < MAX_COUNTED && stopped.is_none() {
            match cloud.azure_queue_count(cx, account, &name).await {
                Ok(n) => messages = count(n.map(|n| n.to_string()).as_deref()),
                Err(e) => stopped = stop(e)?,
            }
        }
        table.rows.push(vec![Cell::Text(name), messages]);
    }
    let heading = format!(
        "Azure Storage queues of account `{}`{}; counts are approximate:",
        account.name,
        if prefix.is_empty() {
            String::new()
        } else {
            format!(" starting with `{prefix}`")
        }
    );
    Ok(finish(&table, heading, token, MAX_COUNTED, stopped))
}

/// Pub/Sub lists topics and subscriptions separately; a `next` token says which list it
/// continues (`topics:TOKEN`, `subscriptions:TOKEN`).
async fn pubsub(
    cloud: &Cloud,
    cx: &CallContext,
    account: &Account,
    prefix: &str,
    max: u32,
    next: Option<&str>,
) -> Result<CallToolResult, CloudError> {
    let (only, token) = match next {
        Some(t) => match t.split_once(':') {
            Some((kind @ ("topics" | "subscriptions"), token)) => (Some(kind), Some(token)),
            _ => {
                return Err(CloudError::Invalid(format!(
                    "`next` {t:?} is not a token `queue_list` printed for Pub/Sub"
                )));
            }
        },
        None => (None, None),
    };
    let project = pubsub_project(account);
    let mut table = Table {
        columns: ["kind", "name", "topic", "ack deadline (s)"]
            .map(String::from)
            .to_vec(),
        rows: Vec::new(),
        more: false,
    };
    let mut tokens = Vec::new();
    for kind in ["topics", "subscriptions"] {
        if only.is_some_and(|o| o != kind) {
            continue;
        }
        let mut path = format!("{project}/{kind}?pageSize={max}");
        if let Some(t) = token {
            path.push_str(&format!("&pageToken={}", crate::request::segment(t)));
        }
        let answer = cloud
            .pubsub(cx, account, Method::GET, &path, None, ("", ""))
            .await?;
        for item in answer
            .get(kind)
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            let full = item.get("name").and_then(Value::as_str).unwrap_or_default();
            let name = full.rsplit('/').next().unwrap_or(full);
            if !name.starts_with(prefix) {
                continue;
            }
            let topic = item
                .get("topic")
                .and_then(Value::as_str)
                .map(|t| t.rsplit('/').next().unwrap_or(t).to_owned());
            let deadline = item
                .get("ackDeadlineSeconds")
                .and_then(Value::as_i64)
                .map(|d| d.to_string());
            table.rows.push(vec![
                Cell::Text(
                    if kind == "topics" {
                        "topic"
                    } else {
                        "subscription"
                    }
                    .to_owned(),
                ),
                Cell::Text(name.to_owned()),
                topic.map_or(Cell::Null, Cell::Text),
                deadline.map_or(Cell::Null, Cell::Text),
            ]);
        }
        if let Some(t) = answer
            .get("nextPageToken")
            .and_then(Value::as_str)
            .filter(|t| !t.is_empty())
        {
            tokens.push(format!("{kind}:{t}"));
        }
    }
    table.more = !tokens.is_empty();
    // Both lists may have more: the first token continues one, the note names the other.
    let mut heading = format!(
        "Pub/Sub topics (send to them) and subscriptions (receive from them) of account `{}` (project {}); Pub/Sub gives no message counts:",
        account.name,
        account.project.as_deref().unwrap_or_default()
    );
    if tokens.len() > 1 {
        heading.push_str(&format!(
            "\n(subscriptions continue with `next: \"{}\"`)",
            tokens[1]
        ));
    }
    Ok(finish(
        &table,
        heading,
        tokens.into_iter().next(),
        usize::MAX,
        None,
    ))
}
