//! `sendgrid_suppressions`: the addresses SendGrid will not deliver to (bounces, blocks, spam
//! reports, invalid addresses) with when and why; or whether one address is on a list.

use cairn_toolkit::reply::{error, text};
use cairn_toolkit::table::{Cell, Limits, Table};
use cairn_toolkit::{CallContext, Category, Effect, JsonSchema, Paths, Tool};
use rmcp::model::CallToolResult;
use serde::Deserialize;

use super::{PUBLIC, SERVICE};
use crate::api::services::Services;
use crate::api::services::github::{bounded, s};
use crate::api::services::paging::{self, Items, More, Next, Paging, Size};
use crate::api::services::vercel::{id_segment, unix_when};
use cairn_web::Method;

/// The most entries one call lists.
const MAX_LIMIT: u32 = 500;
/// How a suppression list pages: an `offset`, a full page perhaps not the last.
const PAGING: Paging = Paging {
    items: Items::At(""),
    size: Some(Size {
        param: "limit",
        max: MAX_LIMIT as usize,
    }),
    next: Next::Offset {
        param: "offset",
        more: More::FullPage,
    },
};

/// The `sendgrid_suppressions` tool.
pub struct SendgridSuppressions;

/// A suppression list.
#[derive(Debug, Clone, Copy, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum List {
    Bounces,
    Blocks,
    SpamReports,
    InvalidEmails,
}

/// Arguments of `sendgrid_suppressions`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// Which list: `bounces` (default: the receiving server refused the address),
    /// `blocks` (refused for another reason, such as the sending IP), `spam_reports` or
    /// `invalid_emails`.
    list: Option<List>,
    /// One address: whether it is on the list, and why.
    email: Option<String>,
    /// Only entries added in the last this many days.
    days: Option<u32>,
    /// How many entries to list, newest first (default 50, at most 500).
    limit: Option<u32>,
    /// Skip this many entries: the value the previous answer gave for its next page.
    offset: Option<u32>,
}

impl Tool for SendgridSuppressions {
    type Host = Services;
    type Args = Args;
    const NAME: &'static str = "sendgrid_suppressions";
    const TITLE: &'static str = "SendGrid suppressions";
    const DESCRIPTION: &'static str = "List the addresses SendGrid will not deliver to (bounces, blocks, spam reports, invalid emails) with when and why, or check one address, to see why mail did not arrive.";
    const CATEGORY: Category = Category::Api;
    const EFFECT: Effect = Effect::Network;
    const AGENT_ONLY: bool = false;
    const READ_ONLY: bool = true;

    fn paths(_: &Args) -> Paths {
        Paths::none()
    }

    async fn call(services: &Services, args: Args, cx: CallContext) -> CallToolResult {
        let list = args.list.unwrap_or(List::Bounces);
        let (path, noun) = match list {
            List::Bounces => ("suppression/bounces", "bounces"),
            List::Blocks => ("suppression/blocks", "blocks"),
            List::SpamReports => ("suppression/spam_reports", "spam reports"),
            List::InvalidEmails => ("suppression/invalid_emails", "invalid emails"),
        };
        let email = args
            .email
            .as_deref()
            .map(str::trim)
            .filter(|e| !e.is_empty());
        let limit = bounded(args.limit, 50, MAX_LIMIT);
        let offset = args.offset.unwrap_or(0);
        let (path, query, heading) = match email {
            Some(e) => {
                if !e.contains('@') {
                    return error(format!("`email` {e:?} is not an email address"));
                }
                let segment = match id_segment("email", e) {
                    Ok(s) => s,
                    Err(err) => return error(err),
                };
                (
                    format!("{path}/{segment}"),
                    vec![],
                    format!("{e} on the {noun} list"),
                )
            }
            None => {
                let mut query = vec![("limit", limit.to_string()), ("offset", offset.to_string())];
                let mut heading = format!("{noun}, newest first");
                if let Some(days) = args.days.filter(|d| *d > 0) {
                    let since = chrono::Utc::now().timestamp() - i64::from(days.min(3650)) * 86_400;
                    query.push(("start_time", since.to_string()));
                    heading.push_str(&format!(", last {days} days"));
                }
                (path.to_owned(), query, heading)
            }
        };
        // One entry by address is not paged: no `limit` is sent with it.
        let paging = match email {
            Some(_) => Paging {
                size: None,
                ..PAGING
            },
            None => PAGING,
        };
        let what = format!("the {noun} list");
        let from = paging::List {
            service: SERVICE,
            public: PUBLIC,
            label: "SendGrid",
            method: Method::GET,
            path: &path,
            query,
            body: None,
            what: &what,
        };
        let listed = match paging::list(services, &cx, &from, &paging, limit as usize, 1).await {
            Ok(l) => l,
            Err(e) => return error(e.to_string()),
        };
        let entries = &listed.items;
        if entries.is_empty() {
            return text(match email {
                Some(e) => format!("{e} is not on the {noun} list"),
                None => format!("{heading}: none"),
            });
        }
        let full = email.is_none() && listed.next.is_some();
        let mut columns = vec!["email", "added"];
        columns.push(if matches!(list, List::SpamReports) {
            "ip"
        } else {
            "reason"
        });
        columns.push("status");
        let table = Table {
            columns: columns.into_iter().map(str::to_owned).collect(),
            rows: entries
                .iter()
                .map(|e| {
                    let why = match list {
                        List::SpamReports => s(e, "ip"),
                        _ => s(e, "reason"),
                    };
                    [
                        s(e, "email").to_owned(),
                        unix_when(e.get("created"), false),
                        cairn_toolkit::table::cut(why.trim(), 300),
                        s(e, "status").to_owned(),
                    ]
                    .into_iter()
                    .map(Cell::Text)
                    .collect()
                })
                .collect(),
            more: full,
        };
        table.result_hinting(
            &heading,
            &Limits::default(),
            &format!(
                "call again with offset={}",
                u64::from(offset) + entries.len() as u64
            ),
        )
    }
}
