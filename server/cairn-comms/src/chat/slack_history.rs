//! `slack_history`: the latest messages of a Slack channel the user allowed
//! (`conversations.history`).

use cairn_toolkit::reply::error;
use cairn_toolkit::table::{Cell, Limits, Table};
use cairn_toolkit::{CallContext, Category, Effect, JsonSchema, Paths, Tool};
use rmcp::model::CallToolResult;
use serde::Deserialize;
use serde_json::Value;

use crate::chat::slack::{Slack, time_of};
use crate::comms::Comms;

/// Messages read by default.
const DEFAULT_LIMIT: usize = 20;
/// The most one call reads (one page of the API).
const MAX_LIMIT: usize = 200;
/// Characters of one message shown; a longer one is cut with its length said.
const MAX_TEXT: usize = 1000;

/// The `slack_history` tool.
pub struct SlackHistory;

/// Arguments of `slack_history`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// The channel: its id (`C0123ABCD`) or its name (`#dev`); it must be allowed in
    /// `[comms.slack] allow_channels`.
    channel: String,
    /// How many of the latest messages (default 20, at most 200).
    #[schemars(range(min = 1, max = 200))]
    limit: Option<usize>,
    /// Only messages before this time (a message's `ts`, or Unix seconds), to page back.
    before: Option<String>,
}

impl Tool for SlackHistory {
    type Host = Comms;
    type Args = Args;
    const NAME: &'static str = "slack_history";
    const TITLE: &'static str = "Slack channel history";
    const DESCRIPTION: &'static str = "Read the latest messages of a Slack channel the user allowed (time, user id, text, ts), newest first; page back with `before`. Only channels in `[comms.slack] allow_channels`.";
    const CATEGORY: Category = Category::Communication;
    const EFFECT: Effect = Effect::Network;
    const READ_ONLY: bool = true;
    const AGENT_ONLY: bool = false;

    fn paths(_: &Args) -> Paths {
        Paths::none()
    }

    async fn call(host: &Comms, args: Args, cx: CallContext) -> CallToolResult {
        let slack = match Slack::of(host) {
            Ok(s) => s,
            Err(e) => return e,
        };
        if let Some(b) = &args.before
            && (b.is_empty() || !b.chars().all(|c| c.is_ascii_digit() || c == '.'))
        {
            return error(format!(
                "slack: before {b:?} is not a message time such as 1512085950.000216"
            ));
        }
        let channel = match slack.allowed_channel(&args.channel, &cx).await {
            Ok(c) => c,
            Err(e) => return e,
        };
        let limit = args.limit.unwrap_or(DEFAULT_LIMIT).clamp(1, MAX_LIMIT);
        let limit_text = limit.to_string();
        let mut params = vec![
            ("channel", channel.id.as_str()),
            ("limit", limit_text.as_str()),
        ];
        if let Some(b) = &args.before {
            params.push(("latest", b.as_str()));
        }
        let answer = match slack
            .call("conversations.history", false, &params, &cx)
            .await
        {
            Ok(a) => a,
            Err(e) => return e.into(),
        };
        let mut rows = Vec::new();
        let messages = answer
            .get("messages")
            .and_then(Value::as_array)
            .map(Vec::as_slice)
            .unwrap_or_default();
        for m in messages.iter().take(limit) {
            let s = |k: &str| m.get(k).and_then(Value::as_str).unwrap_or("");
            let ts = s("ts");
            let who = [s("user"), s("username"), s("bot_id")]
                .into_iter()
                .find(|w| !w.is_empty())
                .unwrap_or("?");
            let mut body = s("text").to_owned();
            if let Some(n) = m.get("reply_count").and_then(Value::as_u64) {
                body.push_str(&format!(" [{n} replies]"));
            }
            rows.push(vec![
                Cell::Text(time_of(ts)),
                Cell::Text(who.to_owned()),
                Cell::Text(body),
                Cell::Text(ts.to_owned()),
            ]);
        }
        let more = answer
            .get("has_more")
            .and_then(Value::as_bool)
            .unwrap_or(false)
            || messages.len() > limit;
        let table = Table {
            columns: ["time", "user", "text", "ts"].map(String::from).to_vec(),
            rows,
            more,
        };
        let oldest = messages
            .iter()
            .take(limit)
            .filter_map(|m| m.get("ts").and_then(Value::as_str))
            .next_back()
            .unwrap_or("")
            .to_owned();
        table.result_hinting(
            &format!("Messages in {}, newest first", channel.label()),
            &Limits {
                max_cell_chars: MAX_TEXT,
                ..Limits::default()
            },
            &format!("call again with `before: \"{oldest}\"` for older ones"),
        )
    }
}
