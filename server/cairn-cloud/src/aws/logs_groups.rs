//! `logs_groups`: CloudWatch Logs groups with their stored bytes and retention.

use cairn_toolkit::reply::error;
use cairn_toolkit::{CallContext, Category, Effect, JsonSchema, Paths, Tool};
use rmcp::model::CallToolResult;
use serde::Deserialize;
use serde_json::json;

use super::client::{account, next_page, said, show_millis, table};
use crate::cloud::Cloud;

/// The `logs_groups` tool.
pub struct LogsGroups;

/// Arguments of `logs_groups`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// The `[cloud.NAME]` account; needed only when several fit.
    account: Option<String>,
    /// Only groups whose name starts with this (`/aws/lambda/`).
    prefix: Option<String>,
    /// Groups to show, 1 to 50 (the service's page). Default: 50.
    max: Option<u32>,
    /// The `next_token` a previous call returned, for the next page.
    next_token: Option<String>,
}

impl Tool for LogsGroups {
    type Host = Cloud;
    type Args = Args;
    const NAME: &'static str = "logs_groups";
    const TITLE: &'static str = "CloudWatch Logs groups";
    const DESCRIPTION: &'static str = "List CloudWatch Logs groups (optionally by name prefix) with their stored bytes, retention and creation time; at most 50 per call, paged with `next_token`. Read a group's events with `logs_events`.";
    const CATEGORY: Category = Category::Cloud;
    const EFFECT: Effect = Effect::Network;
    const READ_ONLY: bool = true;
    const AGENT_ONLY: bool = false;

    fn paths(_: &Args) -> Paths {
        Paths::none()
    }

    async fn call(host: &Cloud, args: Args, cx: CallContext) -> CallToolResult {
        run(host, args, &cx).await.unwrap_or_else(error)
    }
}

/// Bytes as people read them.
fn size(bytes: u64) -> String {
    const UNITS: &[&str] = &["B", "KiB", "MiB", "GiB", "TiB"];
    let mut value = bytes as f64;
    let mut unit = 0;
    while value >= 1024.0 && unit + 1 < UNITS.len() {
        value /= 1024.0;
        unit += 1;
    }
    if unit == 0 {
        format!("{bytes} B")
    } else {
        format!("{value:.1} {}", UNITS[unit])
    }
}

async fn run(host: &Cloud, args: Args, cx: &CallContext) -> Result<CallToolResult, String> {
    let account = account(host, args.account.as_deref()).map_err(said)?;
    let max = args.max.unwrap_or(50).clamp(1, 50);
    let mut body = json!({ "limit": max });
    if let Some(p) = args.prefix.as_deref().filter(|p| !p.is_empty()) {
        body["logGroupNamePrefix"] = json!(p);
    }
    if let Some(t) = &args.next_token {
        body["nextToken"] = json!(t);
    }
    let answer = host
        .aws_json(
            cx,
            account,
            "logs",
            "Logs_20140328.DescribeLogGroups",
            "1.1",
            &body,
        )
        .await
        .map_err(said)?;
    let groups = answer["logGroups"].as_array().cloned().unwrap_or_default();
    let rows = groups
        .iter()
        .map(|g| {
            vec![
                g["logGroupName"].as_str().unwrap_or_default().to_owned(),
                g["storedBytes"].as_u64().map(size).unwrap_or_default(),
                match g["retentionInDays"].as_u64() {
                    Some(d) => format!("{d} days"),
                    None => "never expires".into(),
                },
                g["creationTime"]
                    .as_i64()
                    .map(show_millis)
                    .unwrap_or_default(),
            ]
        })
        .collect();
    let token = answer["nextToken"].as_str().map(str::to_owned);
    let hint = match &token {
        Some(t) => next_page("next_token", t),
        None => "narrow with `prefix`".into(),
    };
    let heading = match args.prefix.as_deref() {
        Some(p) => format!(
            "CloudWatch Logs groups starting with {p:?} in {}",
            account.name
        ),
        None => format!("CloudWatch Logs groups in {}", account.name),
    };
    Ok(table(
        &heading,
        &["group", "stored", "retention", "created"],
        rows,
        max as usize,
        token.is_some(),
        &hint,
    ))
}
