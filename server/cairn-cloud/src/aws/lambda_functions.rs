//! `lambda_functions`: Lambda functions with runtime, memory, timeout and last change.

use cairn_toolkit::reply::error;
use cairn_toolkit::{CallContext, Category, Effect, JsonSchema, Paths, Tool};
use cairn_web::Method;
use rmcp::model::CallToolResult;
use serde::Deserialize;

use super::client::{account, next_page, rows_wanted, said, show_timestamp, table};
use crate::cloud::Cloud;
use crate::request::{CloudRequest, json_of, url_of};

/// The `lambda_functions` tool.
pub struct LambdaFunctions;

/// Arguments of `lambda_functions`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// The `[cloud.NAME]` account; needed only when several fit.
    account: Option<String>,
    /// Functions to show, 1 to 50 (the service's page). Default: 50.
    max: Option<u32>,
    /// The `marker` a previous call returned, for the next page.
    marker: Option<String>,
}

impl Tool for LambdaFunctions {
    type Host = Cloud;
    type Args = Args;
    const NAME: &'static str = "lambda_functions";
    const TITLE: &'static str = "Lambda functions";
    const DESCRIPTION: &'static str = "List an AWS account's Lambda functions with runtime, handler, memory, timeout and last modified time; at most 50 per call, paged with `marker`. Run one with `lambda_invoke`.";
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

async fn run(host: &Cloud, args: Args, cx: &CallContext) -> Result<CallToolResult, String> {
    let account = account(host, args.account.as_deref()).map_err(said)?;
    let max = rows_wanted(args.max).min(50);
    let max_items = max.to_string();
    let mut query = vec![("MaxItems", max_items.as_str())];
    if let Some(m) = args.marker.as_deref() {
        query.push(("Marker", m));
    }
    let base = account.base_url("lambda").map_err(said)?;
    let url = url_of(&base, "2015-03-31/functions/", &query).map_err(said)?;
    let response = host
        .send_ok(cx, account, "lambda", CloudRequest::new(Method::GET, url))
        .await
        .map_err(said)?;
    let answer = json_of("lambda", &response).map_err(said)?;
    let s = |v: &serde_json::Value| v.as_str().unwrap_or_default().to_owned();
    let rows = answer["Functions"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|f| {
            vec![
                s(&f["FunctionName"]),
                if f["PackageType"] == "Image" {
                    "image".into()
                } else {
                    s(&f["Runtime"])
                },
                s(&f["Handler"]),
                f["MemorySize"]
                    .as_u64()
                    .map(|m| format!("{m} MB"))
                    .unwrap_or_default(),
                f["Timeout"]
                    .as_u64()
                    .map(|t| format!("{t} s"))
                    .unwrap_or_default(),
                show_timestamp(&s(&f["LastModified"])),
            ]
        })
        .collect();
    let marker = answer["NextMarker"].as_str().filter(|m| !m.is_empty());
    let hint = match marker {
        Some(m) => next_page("marker", m),
        None => "ask for fewer with `max`".into(),
    };
    Ok(table(
        &format!("Lambda functions in {} ({})", account.name, account.region),
        &[
            "function",
            "runtime",
            "handler",
            "memory",
            "timeout",
            "last modified (UTC)",
        ],
        rows,
        max,
        marker.is_some(),
        &hint,
    ))
}
