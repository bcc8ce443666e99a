//! `sns_publish`: one message (with an optional subject and attributes) to an SNS topic, which
//! delivers it to every subscriber.

use std::collections::BTreeMap;

use cairn_config::CloudKind;
use cairn_toolkit::reply::{error, text};
use cairn_toolkit::{CallContext, Category, Effect, JsonSchema, Paths, Tool};
use rmcp::model::CallToolResult;
use serde::Deserialize;

use super::service::MAX_ATTRIBUTES;
use crate::cloud::Cloud;
use crate::error::CloudError;
use crate::request::{xml, xml_text};

/// The `sns_publish` tool.
pub struct SnsPublish;

/// SNS's limit on a message.
const MAX_MESSAGE: usize = 256 * 1024;
/// SNS's limit on a subject.
const MAX_SUBJECT: usize = 100;

/// Arguments of `sns_publish`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// The `[cloud.NAME]` account; needed only when several fit.
    #[serde(default)]
    account: Option<String>,
    /// The topic: its name or its ARN (`sns_topics` lists them).
    topic: String,
    /// The message text (up to 256 KiB).
    message: String,
    /// A subject for email subscribers: one line, up to 100 characters.
    #[serde(default)]
    subject: Option<String>,
    /// Message attributes, name to text value (at most 10).
    #[serde(default)]
    attributes: BTreeMap<String, String>,
    /// FIFO topics (`.fifo`) only, and required there: the message group id.
    #[serde(default)]
    group: Option<String>,
}

impl Tool for SnsPublish {
    type Host = Cloud;
    type Args = Args;
    const NAME: &'static str = "sns_publish";
    const TITLE: &'static str = "Publish to an SNS topic";
    const DESCRIPTION: &'static str = "Publish one message (with an optional one-line subject and attributes) to an SNS topic of an AWS account, by name or ARN; SNS delivers it to every subscriber (queues, email, HTTP endpoints).";
    const CATEGORY: Category = Category::Cloud;
    const EFFECT: Effect = Effect::Write;
    const AGENT_ONLY: bool = true;

    fn paths(_: &Args) -> Paths {
        Paths::none()
    }

    async fn call(cloud: &Cloud, args: Args, cx: CallContext) -> CallToolResult {
        match publish(cloud, &args, &cx).await {
            Ok(t) => text(t),
            Err(e) => error(e.to_string()),
        }
    }
}

/// Checks a subject: SNS refuses line breaks and control characters (and an email subscriber
/// would see them as header lines).
fn check_subject(subject: &str) -> Result<(), CloudError> {
    if subject.trim().is_empty() || subject.chars().count() > MAX_SUBJECT {
        return Err(CloudError::Invalid(format!(
            "the subject must be 1 to {MAX_SUBJECT} characters"
        )));
    }
    if subject.chars().any(char::is_control) {
        return Err(CloudError::Invalid(
            "the subject must be one line: no line breaks or control characters".into(),
        ));
    }
    Ok(())
}

async fn publish(cloud: &Cloud, args: &Args, cx: &CallContext) -> Result<String, CloudError> {
    let account = cloud.account(args.account.as_deref(), &[CloudKind::Aws])?;
    if args.message.is_empty() {
        return Err(CloudError::Invalid("the message is empty".into()));
    }
    if args.message.len() > MAX_MESSAGE {
        return Err(CloudError::Invalid(format!(
            "the message is {} bytes; SNS takes at most {MAX_MESSAGE}",
            args.message.len()
        )));
    }
    if let Some(subject) = &args.subject {
        check_subject(subject)?;
    }
    if args.attributes.len() > MAX_ATTRIBUTES {
        return Err(CloudError::Invalid(format!(
            "{} attributes given; at most {MAX_ATTRIBUTES}",
            args.attributes.len()
        )));
    }
    let arn = cloud.sns_topic_arn(cx, account, &args.topic).await?;
    let fifo = arn.ends_with(".fifo");
    if fifo != args.group.is_some() {
        return Err(CloudError::Invalid(if fifo {
            "this is a FIFO topic: pass `group` (the message group id)".into()
        } else {
            "`group` is for FIFO topics (names ending in `.fifo`) only".into()
        }));
    }
    let mut params = vec![("TopicArn", arn.clone()), ("Message", args.message.clone())];
    if let Some(subject) = &args.subject {
        params.push(("Subject", subject.clone()));
    }
    // The attributes' parameter names, numbered from 1, as the query protocol spells them.
    let keys: Vec<[String; 3]> = (1..=args.attributes.len())
        .map(|n| {
            [
                format!("MessageAttributes.entry.{n}.Name"),
                format!("MessageAttributes.entry.{n}.Value.DataType"),
                format!("MessageAttributes.entry.{n}.Value.StringValue"),
            ]
        })
        .collect();
    for ([name_key, type_key, value_key], (k, v)) in keys.iter().zip(&args.attributes) {
        params.push((name_key.as_str(), k.clone()));
        params.push((type_key.as_str(), "String".to_owned()));
        params.push((value_key.as_str(), v.clone()));
    }
    if let Some(group) = &args.group {
        params.push(("MessageGroupId", group.clone()));
        params.push((
            "MessageDeduplicationId",
            uuid::Uuid::new_v4().simple().to_string(),
        ));
    }
    let answer = cloud
        .sns(cx, account, "Publish", &params)
        .await
        .map_err(|e| {
            // SNS says `NotFound` for a topic that went away (or an ARN that never was).
            if e.is_not_found() {
                super::service::no_such("SNS topic", &args.topic, account, "sns_topics")
            } else {
                e
            }
        })?;
    let doc = xml("sns", &answer)?;
    let id = xml_text(doc.root(), "MessageId").unwrap_or("(no id)");
    Ok(format!(
        "published message {id} ({} bytes) to SNS topic `{}` (account `{}`)",
        args.message.len(),
        arn.rsplit(':').next().unwrap_or(&arn),
        account.name
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn subjects_are_one_short_line() {
        assert!(check_subject("Deploy done").is_ok());
        assert!(check_subject("a\r\nBcc: eve@example.com").is_err());
        assert!(check_subject(&"x".repeat(101)).is_err());
        assert!(check_subject("  ").is_err());
    }
}
