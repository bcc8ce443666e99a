//! `slack_post`: post a message to a Slack channel the user allowed (`chat.postMessage`), after
//! the user approved that exact message.

use cairn_toolkit::reply::{error, text};
use cairn_toolkit::{CallContext, Category, Effect, JsonSchema, Paths, Tool};
use rmcp::model::CallToolResult;
use serde::Deserialize;
use serde_json::Value;

use crate::chat::slack::{SETTING, Slack, time_of};
use crate::comms::Comms;
use crate::send::Outgoing;

/// Slack cuts longer messages off (its documented limit for `text`).
const MAX_CHARS: usize = 40_000;

/// The `slack_post` tool.
pub struct SlackPost;

/// Arguments of `slack_post`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// The channel: its id (`C0123ABCD`) or its name (`#dev`); it must be allowed in
    /// `[comms.slack] allow_channels`.
    channel: String,
    /// The message (Slack's mrkdwn: `*bold*`, `_italic_`, `<https://example.com|link>`); at
    /// most 40,000 characters.
    text: String,
    /// Reply in the thread of this message (its `ts`, as `slack_history` shows it).
    thread_ts: Option<String>,
}

impl Tool for SlackPost {
    type Host = Comms;
    type Args = Args;
    const NAME: &'static str = "slack_post";
    const TITLE: &'static str = "Post to Slack";
    const DESCRIPTION: &'static str = "Post a message to a Slack channel the user allowed (by id or #name), as the configured bot; the user approves each message first. Only channels in `[comms.slack] allow_channels`.";
    const CATEGORY: Category = Category::Communication;
    const EFFECT: Effect = Effect::Write;
    const AGENT_ONLY: bool = true;

    fn paths(_: &Args) -> Paths {
        Paths::none()
    }

    async fn call(host: &Comms, args: Args, cx: CallContext) -> CallToolResult {
        let slack = match Slack::of(host) {
            Ok(s) => s,
            Err(e) => return e,
        };
        let body = args.text.trim_end();
        if body.trim().is_empty() {
            return error("slack: the message is empty; nothing was posted");
        }
        let count = body.chars().count();
        if count > MAX_CHARS {
            return error(format!(
                "slack: the message has {count} characters, more than the {MAX_CHARS} Slack takes; shorten it or split it into several posts"
            ));
        }
        if let Some(ts) = &args.thread_ts
            && !ts.chars().all(|c| c.is_ascii_digit() || c == '.')
        {
            return error(format!(
                "slack: thread_ts {ts:?} is not a message time such as 1512085950.000216"
            ));
        }
        let channel = match slack.allowed_channel(&args.channel, &cx).await {
            Ok(c) => c,
            Err(e) => return e,
        };
        let allow = slack.config.allow_channels.clone();
        let shown = match &args.thread_ts {
            Some(ts) => format!("(in the thread of {ts}) {body}"),
            None => body.to_owned(),
        };
        let out = Outgoing {
            service: "slack",
            recipients: vec![channel.entry.clone()],
            text: shown,
            setting: SETTING,
        };
        if let Err(asked) = host.check_send(&out, &allow) {
            return asked;
        }
        let mut params = vec![("channel", channel.id.as_str()), ("text", body)];
        if let Some(ts) = &args.thread_ts {
            params.push(("thread_ts", ts.as_str()));
        }
        match slack.call("chat.postMessage", true, &params, &cx).await {
            Ok(answer) => {
                let ts = answer.get("ts").and_then(Value::as_str).unwrap_or("");
                let mut out = format!("posted to {}", channel.label());
                if !ts.is_empty() {
                    out.push_str(&format!(" at {} (ts {ts})", time_of(ts)));
                }
                if let Some(t) = &args.thread_ts {
                    out.push_str(&format!(", in the thread of {t}"));
                }
                text(out)
            }
            Err(e) => error(format!("Slack did not confirm the post: {e}")),
        }
    }
}
