//! `logs_events`: the newest events of a CloudWatch Logs group matching a filter pattern in a
//! time range (FilterLogEvents), capped in count, pages searched and characters.

use std::collections::VecDeque;

use cairn_toolkit::reply::error;
use cairn_toolkit::{CallContext, Category, Effect, JsonSchema, Paths, Tool};
use chrono::Utc;
use rmcp::model::CallToolResult;
use serde::Deserialize;
use serde_json::json;

use super::client::{account, rows_wanted, said, show_millis, show_time, table, time_arg};
use crate::cloud::Cloud;

/// The `logs_events` tool.
pub struct LogsEvents;

/// Arguments of `logs_events`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// The `[cloud.NAME]` account; needed only when several fit.
    account: Option<String>,
    /// The log group (`/aws/lambda/my-function`, as `logs_groups` shows).
    group: String,
    /// A CloudWatch Logs filter pattern (`ERROR`, `"timed out"`, `{ $.level = "error" }`).
    /// Default: every event.
    pattern: Option<String>,
    /// From when: RFC 3339, a date, or an age (`15m`, `2h`, `3d`). Default: `1h`.
    start: Option<String>,
    /// Until when, in the same forms. Default: now.
    end: Option<String>,
    /// Only these log streams of the group (at most 100).
    streams: Option<Vec<String>>,
    /// The newest events to show, 1 to 200. Default: 50.
    max: Option<u32>,
}

impl Tool for LogsEvents {
    type Host = Cloud;
    type Args = Args;
    const NAME: &'static str = "logs_events";
    const TITLE: &'static str = "CloudWatch Logs events";
    const DESCRIPTION: &'static str = "Search a CloudWatch Logs group for events matching a filter pattern in a time range (default the last hour) and show the newest ones (at most 200, oldest first) with their time and stream; narrow the range when the group is busy.";
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

/// The service's pages one call reads at most; a range with more events must be narrowed.
const MAX_PAGES: usize = 20;

async fn run(host: &Cloud, args: Args, cx: &CallContext) -> Result<CallToolResult, String> {
    let account = account(host, args.account.as_deref()).map_err(said)?;
    let group = args.group.trim();
    if group.is_empty() || group.len() > 512 {
        return Err(
            "`group` must be a log group name (1 to 512 characters; see `logs_groups`)".into(),
        );
    }
    let pattern = args.pattern.as_deref().unwrap_or_default();
    if pattern.len() > 1024 {
        return Err("`pattern` is longer than CloudWatch's 1024 characters".into());
    }
    let start = time_arg("start", args.start.as_deref().unwrap_or("1h"))?;
    let end = match args.end.as_deref() {
        Some(e) => time_arg("end", e)?,
        None => Utc::now(),
    };
    if start >= end {
        return Err(format!(
            "`start` ({}) is not before `end` ({})",
            show_time(start),
            show_time(end)
        ));
    }
    let streams = args.streams.unwrap_or_default();
    if streams.len() > 100 {
        return Err(format!("{} streams given; at most 100", streams.len()));
    }
    let max = rows_wanted(args.max);
    let mut body = json!({
        "logGroupName": group,
        "startTime": start.timestamp_millis(),
        "endTime": end.timestamp_millis(),
        "limit": 1000,
    });
    if !pattern.is_empty() {
        body["filterPattern"] = json!(pattern);
    }
    if !streams.is_empty() {
        body["logStreamNames"] = json!(streams);
    }
    // Events come oldest first: keep the newest `max` of every page read.
    let mut newest: VecDeque<(i64, String, String)> = VecDeque::new();
    let mut matched = 0usize;
    let mut pages = 0;
    let mut unread = false;
    loop {
        let answer = host
            .aws_json(
                cx,
                account,
                "logs",
                "Logs_20140328.FilterLogEvents",
                "1.1",
                &body,
            )
            .await
            .map_err(|e| {
                if e.is_not_found() {
                    format!(
                        "no log group {group:?} in {} (list them with `logs_groups`): {e}",
                        account.name
                    )
                } else {
                    e.to_string()
                }
            })?;
        pages += 1;
        for e in answer["events"].as_array().into_iter().flatten() {
            matched += 1;
            newest.push_back((
                e["timestamp"].as_i64().unwrap_or_default(),
                e["logStreamName"].as_str().unwrap_or_default().to_owned(),
                e["message"]
                    .as_str()
                    .unwrap_or_default()
                    .trim_end()
                    .to_owned(),
            ));
            if newest.len() > max {
                newest.pop_front();
            }
        }
        let next = answer["nextToken"].as_str().filter(|t| !t.is_empty());
        match next {
            Some(token) if pages < MAX_PAGES => body["nextToken"] = json!(token),
            Some(_) => {
                unread = true;
                break;
            }
            None => break,
        }
    }
    let mut heading = format!(
        "{group} in {}, {} to {} UTC{}: {matched} matching event(s){}",
        account.name,
        show_time(start),
        show_time(end),
        if pattern.is_empty() {
            String::new()
        } else {
            format!(", pattern {pattern:?}")
        },
        if matched > newest.len() {
            format!(", the newest {} shown", newest.len())
        } else {
            String::new()
        },
    );
    if unread {
        heading.push_str(&format!(
            "\n(the range has more events than {MAX_PAGES} pages: the newest of those read are \
             shown; narrow `start`/`end` or the pattern to see the latest)"
        ));
    }
    let rows = newest
        .into_iter()
        .map(|(t, stream, message)| vec![show_millis(t), stream, message])
        .collect();
    Ok(table(
        &heading,
        &["time (UTC)", "stream", "message"],
        rows,
        max,
        unread,
        "narrow `start`/`end` or the pattern",
    ))
}
