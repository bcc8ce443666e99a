//! `sns_topics`: the SNS topics of an AWS account, with how many subscriptions each has.

use std::collections::BTreeMap;

use cairn_config::CloudKind;
use cairn_toolkit::reply::error;
use cairn_toolkit::table::{Cell, Limits, Table};
use cairn_toolkit::{CallContext, Category, Effect, JsonSchema, Paths, Tool};
use rmcp::model::CallToolResult;
use serde::Deserialize;
use serde_json::Value;

use crate::cloud::Cloud;
use crate::error::CloudError;
use crate::request::{xml, xml_text};

/// The `sns_topics` tool.
pub struct SnsTopics;

/// Pages of subscriptions (100 each) read to count them; past that the counts are lower bounds.
const MAX_SUBSCRIPTION_PAGES: usize = 10;

/// Arguments of `sns_topics`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// The `[cloud.NAME]` account; needed only when several fit.
    #[serde(default)]
    account: Option<String>,
    /// The continuation token a previous call printed, to list the next page of topics.
    #[serde(default)]
    next: Option<String>,
}

impl Tool for SnsTopics {
    type Host = Cloud;
    type Args = Args;
    const NAME: &'static str = "sns_topics";
    const TITLE: &'static str = "List SNS topics";
    const DESCRIPTION: &'static str = "List the SNS topics of an AWS account (100 per page; pass `next` for more) with their ARNs and subscription counts; use before `sns_publish`.";
    const CATEGORY: Category = Category::Cloud;
    const EFFECT: Effect = Effect::Network;
    const AGENT_ONLY: bool = false;
    const READ_ONLY: bool = true;

    fn paths(_: &Args) -> Paths {
        Paths::none()
    }

    async fn call(cloud: &Cloud, args: Args, cx: CallContext) -> CallToolResult {
        topics(cloud, &args, &cx)
            .await
            .unwrap_or_else(|e| error(e.to_string()))
    }
}

async fn topics(
    cloud: &Cloud,
    args: &Args,
    cx: &CallContext,
) -> Result<CallToolResult, CloudError> {
    let account = cloud.account(args.account.as_deref(), &[CloudKind::Aws])?;
    let (arns, token) = cloud
        .sns_topic_page(cx, account, args.next.as_deref())
        .await?;
    // One listing of the account's subscriptions counts them for every topic at once (rather
    // than a request per topic).
    let mut counts: BTreeMap<String, usize> = BTreeMap::new();
    let mut next: Option<String> = None;
    let mut complete = false;
    if !arns.is_empty() {
        for _ in 0..MAX_SUBSCRIPTION_PAGES {
            let params: Vec<(&str, String)> = next
                .as_ref()
                .map(|t| vec![("NextToken", t.clone())])
                .unwrap_or_default();
            let answer = cloud.sns(cx, account, "ListSubscriptions", &params).await?;
            let doc = xml("sns", &answer)?;
            for member in doc
                .descendants()
                .filter(|n| n.tag_name().name() == "member")
            {
                if let Some(topic) = xml_text(member, "TopicArn") {
                    *counts.entry(topic.trim().to_owned()).or_default() += 1;
                }
            }
            next = xml_text(doc.root(), "NextToken")
                .map(str::trim)
                .filter(|t| !t.is_empty())
                .map(str::to_owned);
            if next.is_none() {
                complete = true;
                break;
            }
        }
    }
    let table = Table {
        columns: ["topic", "subscriptions", "ARN"].map(String::from).to_vec(),
        rows: arns
            .iter()
            .map(|arn| {
                let n = counts.get(arn).copied().unwrap_or(0);
                vec![
                    Cell::Text(arn.rsplit(':').next().unwrap_or(arn).to_owned()),
                    Cell::Text(if complete {
                        n.to_string()
                    } else {
                        format!("{n}+")
                    }),
                    Cell::Text(arn.clone()),
                ]
            })
            .collect(),
        more: token.is_some(),
    };
    let mut heading = format!(
        "SNS topics of account `{}` ({}):",
        account.name, account.region
    );
    if arns.is_empty() && token.is_none() {
        heading.push_str("\n(none)");
        return Ok(cairn_toolkit::reply::text(heading));
    }
    if !complete && !arns.is_empty() {
        heading.push_str(&format!(
            "\n(subscriptions counted from the first {} only: `N+` means at least N)",
            MAX_SUBSCRIPTION_PAGES * 100
        ));
    }
    let hint = match &token {
        Some(t) => format!("pass `next: \"{t}\"` for the next page"),
        None => "the rest did not fit".to_owned(),
    };
    let mut result = table.result_hinting(&heading, &Limits::default(), &hint);
    if let (Some(t), Some(s)) = (token, result.structured_content.as_mut()) {
        s["next"] = Value::String(t);
    }
    Ok(result)
}
