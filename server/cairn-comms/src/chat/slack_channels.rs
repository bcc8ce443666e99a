//! `slack_channels`: the Slack channels the bot can see, and which of them the user allowed.

use cairn_toolkit::table::{Cell, Limits, Table};
use cairn_toolkit::{CallContext, Category, Effect, JsonSchema, Paths, Tool};
use rmcp::model::CallToolResult;
use serde::Deserialize;

use crate::chat::slack::{MAX_PAGES, PAGE, Slack};
use crate::comms::Comms;

/// Channels listed by default.
const DEFAULT_LIMIT: usize = 200;
/// The most one call lists.
const MAX_LIMIT: usize = 1000;

/// The `slack_channels` tool.
pub struct SlackChannels;

/// Arguments of `slack_channels`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// Only channels whose name contains this text (case-insensitive).
    filter: Option<String>,
    /// Include archived channels. Default: false.
    include_archived: Option<bool>,
    /// The most channels listed (default 200, at most 1000).
    #[schemars(range(min = 1, max = 1000))]
    limit: Option<usize>,
}

impl Tool for SlackChannels {
    type Host = Comms;
    type Args = Args;
    const NAME: &'static str = "slack_channels";
    const TITLE: &'static str = "Slack channels";
    const DESCRIPTION: &'static str = "List the Slack channels the configured bot can see: id, name, members, private or not, and whether the user allowed posting and reading there; use it to find a channel's id or name.";
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
        let limit = args.limit.unwrap_or(DEFAULT_LIMIT).clamp(1, MAX_LIMIT);
        let filter = args.filter.as_deref().map(str::to_lowercase);
        // With a filter, read as many as the page cap allows and keep the matches.
        let read = if filter.is_some() {
            PAGE * MAX_PAGES
        } else {
            limit
        };
        let listing = match slack
            .channels(args.include_archived.unwrap_or(false), read, &cx)
            .await
        {
            Ok(l) => l,
            Err(e) => return e.into(),
        };
        let mut rows = Vec::new();
        let mut more = listing.more;
        for c in &listing.channels {
            if filter
                .as_deref()
                .is_some_and(|f| !c.name.to_lowercase().contains(f))
            {
                continue;
            }
            if rows.len() == limit {
                more = true;
                break;
            }
            let allowed = slack.entry_for(Some(&c.id), Some(&c.name)).is_some();
            let mut kind = if c.private { "private" } else { "public" }.to_owned();
            if c.archived {
                kind.push_str(", archived");
            }
            rows.push(vec![
                Cell::Text(c.id.clone()),
                Cell::Text(format!("#{}", c.name)),
                c.members.map_or(Cell::Null, |n| Cell::Text(n.to_string())),
                Cell::Text(kind),
                Cell::Text(if allowed { "yes" } else { "no" }.into()),
            ]);
        }
        let table = Table {
            columns: ["id", "name", "members", "kind", "allowed"]
                .map(String::from)
                .to_vec(),
            rows,
            more,
        };
        let heading = format!(
            "Slack channels the bot can see{} (allowed: `[comms.slack] allow_channels`)",
            match &args.filter {
                Some(f) => format!(" matching {f:?}"),
                None => String::new(),
            }
        );
        table.result_hinting(
            &heading,
            &Limits::default(),
            "use `filter` to narrow it, or a larger `limit` (at most 1000)",
        )
    }
}
