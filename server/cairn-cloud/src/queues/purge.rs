//! `queue_purge`: deletes every message in an SQS queue or an Azure Storage queue, or on
//! Pub/Sub every message a subscription holds (a seek to now). Destructive: the user approves
//! that very queue, once.

use cairn_toolkit::reply::{approved_once, error, strict_question, text};
use cairn_toolkit::{CallContext, Category, Effect, JsonSchema, Paths, Tool};
use cairn_web::Method;
use rmcp::model::CallToolResult;
use serde::Deserialize;
use serde_json::json;

use super::service::{KINDS, Service, attribute, pubsub_project, queue_name};
use crate::account::Account;
use crate::cloud::Cloud;
use crate::error::CloudError;
use crate::request::{CloudRequest, segment};

/// The `queue_purge` tool.
pub struct QueuePurge;

/// Arguments of `queue_purge`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// The `[cloud.NAME]` account; needed only when several fit.
    #[serde(default)]
    account: Option<String>,
    /// The queue's name (SQS, Azure) or, on Pub/Sub, the subscription's.
    queue: String,
}

impl Tool for QueuePurge {
    type Host = Cloud;
    type Args = Args;
    const NAME: &'static str = "queue_purge";
    const TITLE: &'static str = "Purge a queue";
    const DESCRIPTION: &'static str = "Delete every message in an SQS queue or an Azure Storage queue, or every message a Pub/Sub subscription holds (seek to now). Cannot be undone; the user approves that exact queue, once.";
    const CATEGORY: Category = Category::Cloud;
    const EFFECT: Effect = Effect::Write;
    const AGENT_ONLY: bool = true;

    fn paths(_: &Args) -> Paths {
        Paths::none()
    }

    async fn call(cloud: &Cloud, args: Args, cx: CallContext) -> CallToolResult {
        purge(cloud, &args, &cx)
            .await
            .unwrap_or_else(|e| error(e.to_string()))
    }
}

/// Why purging needs the strict question.
const WHY: &str = "purging deletes every message in the queue and cannot be undone: it needs your approval of this queue, once";

async fn purge(cloud: &Cloud, args: &Args, cx: &CallContext) -> Result<CallToolResult, CloudError> {
    let account = cloud.account(args.account.as_deref(), KINDS)?;
    let service = Service::of(account);
    let name = queue_name(service, &args.queue)?;
    // The queue is looked up first: a name that does not exist is an error, not a question.
    let (shown, target) = match service {
        Service::Sqs => {
            let url = cloud.sqs_queue_url(cx, account, &name).await?;
            let attrs = cloud.sqs_attributes(cx, account, &url).await?;
            let count = attribute(&attrs, "ApproximateNumberOfMessages")
                .map(|n| format!(", about {n} messages"))
                .unwrap_or_default();
            (
                format!(
                    "every message in SQS queue `{name}` (account `{}`{count})",
                    account.name
                ),
                Target::Sqs(url),
            )
        }
        Service::Azure => {
            let count = cloud
                .azure_queue_count(cx, account, &name)
                .await?
                .map(|n| format!(", about {n} messages"))
                .unwrap_or_default();
            (
                format!(
                    "every message in Azure Storage queue `{name}` (account `{}`{count})",
                    account.name
                ),
                Target::Azure,
            )
        }
        Service::PubSub => {
            let path = format!(
                "{}/subscriptions/{}",
                pubsub_project(account),
                segment(&name)
            );
            cloud
                .pubsub(
                    cx,
                    account,
                    Method::GET,
                    &path,
                    None,
                    ("Pub/Sub subscription", &name),
                )
                .await?;
            (
                format!(
                    "every message Pub/Sub subscription `{name}` holds (account `{}`)",
                    account.name
                ),
                Target::PubSub(path),
            )
        }
    };
    let key = format!(
        "cloud:{}:{}:purge:{name}",
        account.name,
        crate::account::kind_name(account.kind)
    );
    if !approved_once(&cloud.approvals, &key) {
        return Ok(strict_question(
            format!(
                "refused for now: purging deletes {shown}, which cannot be undone; it needs the \
                 user's approval of this queue (asked once, never covered by a session grant)"
            ),
            shown,
            key,
            WHY,
        ));
    }
    run(cloud, cx, account, &name, target).await?;
    Ok(text(format!("purged: deleted {shown}")))
}

/// Where the purge goes, as looked up.
enum Target {
    Sqs(String),
    Azure,
    PubSub(String),
}

async fn run(
    cloud: &Cloud,
    cx: &CallContext,
    account: &Account,
    name: &str,
    target: Target,
) -> Result<(), CloudError> {
    match target {
        Target::Sqs(url) => {
            cloud
                .sqs(cx, account, "PurgeQueue", &[("QueueUrl", url)])
                .await?;
        }
        Target::Azure => {
            let url = cloud.azure_queue_url(account, name, "messages", &[])?;
            cloud
                .azure(cx, account, "queue", CloudRequest::new(Method::DELETE, url))
                .await?;
        }
        Target::PubSub(path) => {
            // Seeking to now marks everything published before as acknowledged.
            let now = chrono::Utc::now()
                .format("%Y-%m-%dT%H:%M:%S%.3fZ")
                .to_string();
            cloud
                .pubsub(
                    cx,
                    account,
                    Method::POST,
                    &format!("{path}:seek"),
                    Some(&json!({ "time": now })),
                    ("Pub/Sub subscription", name),
                )
                .await?;
        }
    }
    Ok(())
}
