//! `cloudformation_events`: a stack's recent events, newest first, with the failures (and
//! their reasons) listed first, since they are what one looks for.

use cairn_toolkit::reply::{error, text};
use cairn_toolkit::table::{Cell, Limits, Table};
use cairn_toolkit::{CallContext, Category, Effect, JsonSchema, Paths, Tool};
use rmcp::model::CallToolResult;
use serde::Deserialize;

use super::client::{CLOUDFORMATION, Params, account, find, items, said, show_timestamp, text_at};
use super::cloudformation_stacks::{check_stack, stack_error};
use crate::cloud::Cloud;
use crate::request::xml;

/// The `cloudformation_events` tool.
pub struct CloudformationEvents;

/// Arguments of `cloudformation_events`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// The `[cloud.NAME]` account; needed only when several fit.
    account: Option<String>,
    /// The stack's name or id.
    stack: String,
    /// The newest events to show, 1 to 100. Default: 30.
    max: Option<u32>,
}

impl Tool for CloudformationEvents {
    type Host = Cloud;
    type Args = Args;
    const NAME: &'static str = "cloudformation_events";
    const TITLE: &'static str = "CloudFormation stack events";
    const DESCRIPTION: &'static str = "Show a CloudFormation stack's recent events (newest first, at most 100): time, resource, type, status and reason, with failed events listed first so a failed deploy's cause is at the top.";
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
    let stack = check_stack(&args.stack)?;
    let max = args.max.unwrap_or(30).clamp(1, 100) as usize;
    // One page: the service returns events newest first, and that page holds the recent ones.
    let mut params = Params::new();
    params.set("StackName", stack);
    let answer = host
        .aws_query(
            cx,
            account,
            "cloudformation",
            CLOUDFORMATION,
            "DescribeStackEvents",
            &params.0,
        )
        .await
        .map_err(|e| stack_error(e, stack, account))?;
    let doc = xml("cloudformation", &answer).map_err(said)?;
    let result = find(&doc, "DescribeStackEventsResult")
        .ok_or("CloudFormation answered without a result")?;
    let events: Vec<[String; 5]> = items(result, "StackEvents", "member")
        .into_iter()
        .map(|e| {
            [
                text_at(e, "Timestamp"),
                text_at(e, "LogicalResourceId"),
                text_at(e, "ResourceType"),
                text_at(e, "ResourceStatus"),
                text_at(e, "ResourceStatusReason"),
            ]
        })
        .collect();
    let older = !text_at(result, "NextToken").is_empty();
    Ok(text(render(stack, &account.name, events, older, max)))
}

/// The events as shown: the newest `max`, the failures among them first; `older` says the
/// service has older ones.
fn render(
    stack: &str,
    account: &str,
    mut events: Vec<[String; 5]>,
    older: bool,
    max: usize,
) -> String {
    // Newest first whatever order came back.
    events.sort_by(|a, b| b[0].cmp(&a[0]));
    let more = older || events.len() > max;
    events.truncate(max);
    let failed = |status: &str| status.ends_with("_FAILED");
    let failures: Vec<_> = events.iter().filter(|e| failed(&e[3])).collect();
    let mut out = format!(
        "events of stack {stack} in {account}: the newest {} ({}), {} failure(s)",
        events.len(),
        if more {
            "older ones left out"
        } else {
            "all there are"
        },
        failures.len()
    );
    let row = |e: &[String; 5], flag: bool| {
        let mut cells = vec![Cell::Text(show_timestamp(&e[0]))];
        cells.extend(e[1..].iter().enumerate().map(|(i, v)| {
            let v = if i == 2 && flag && failed(v) {
                format!("FAILED: {v}")
            } else {
                v.clone()
            };
            Cell::Text(if v.is_empty() { "-".into() } else { v })
        }));
        cells
    };
    let columns: Vec<String> = ["time (UTC)", "resource", "type", "status", "reason"]
        .iter()
        .map(|c| (*c).to_owned())
        .collect();
    let limits = Limits {
        max_rows: 100,
        max_bytes: 12 * 1024,
        max_cell_chars: 400,
    };
    if !failures.is_empty() {
        let t = Table {
            columns: columns.clone(),
            rows: failures.iter().map(|e| row(e, false)).collect(),
            more: false,
        };
        out.push_str(&format!("\n\nfailures first:\n{}", t.markdown(&limits).0));
    }
    let t = Table {
        columns,
        rows: events.iter().map(|e| row(e, true)).collect(),
        more,
    };
    let (markdown, shown) = t.markdown(&limits);
    out.push_str(&format!("\n\nall events, newest first:\n{markdown}"));
    if shown < events.len() {
        out.push_str(&format!(
            "({} of {} shown: the rest did not fit; ask for fewer with `max`)",
            shown,
            events.len()
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::render;

    fn event(at: &str, id: &str, status: &str, reason: &str) -> [String; 5] {
        [at, id, "AWS::S3::Bucket", status, reason].map(str::to_owned)
    }

    #[test]
    fn failures_come_first_and_are_flagged_in_the_full_list() {
        let events = vec![
            event("2026-01-01T10:00:00Z", "Logs", "CREATE_COMPLETE", ""),
            event(
                "2026-01-01T10:02:00Z",
                "Site",
                "CREATE_FAILED",
                "Bucket name already exists",
            ),
            event(
                "2026-01-01T10:03:00Z",
                "app",
                "ROLLBACK_IN_PROGRESS",
                "Resource creation failed: [Site]",
            ),
        ];
        let out = render("app", "prod", events, false, 30);
        assert!(
            out.contains("the newest 3 (all there are), 1 failure(s)"),
            "{out}"
        );
        let first = out.find("failures first:").unwrap();
        let failure = out
            .find("| Site | AWS::S3::Bucket | CREATE_FAILED | Bucket name already exists |")
            .unwrap();
        let all = out.find("all events, newest first:").unwrap();
        assert!(first < failure && failure < all, "{out}");
        assert!(out.contains("| FAILED: CREATE_FAILED |"), "{out}");
        // Newest first in the full list.
        assert!(
            out.rfind("ROLLBACK_IN_PROGRESS").unwrap() < out.rfind("CREATE_COMPLETE").unwrap(),
            "{out}"
        );
        let out = render(
            "app",
            "prod",
            vec![event("2026-01-01T10:00:00Z", "a", "CREATE_COMPLETE", "")],
            true,
            30,
        );
        assert!(
            out.contains("older ones left out") && !out.contains("failures first"),
            "{out}"
        );
    }
}
