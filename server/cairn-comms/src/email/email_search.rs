//! `email_search`: messages in one folder matching sender, recipient, subject, text, date and
//! unseen criteria (IMAP UID SEARCH, the folder opened read-only), newest first, one line each.

use cairn_toolkit::reply::text;
use cairn_toolkit::table::{Cell, Limits, Table};
use cairn_toolkit::{CallContext, Category, Effect, JsonSchema, Paths, Tool, ToolError};
use futures::TryStreamExt;
use mail_parser::MessageParser;
use rmcp::model::CallToolResult;
use serde::Deserialize;

use super::conn::{Mail, bounded};
use super::imap;
use crate::comms::Comms;

/// Messages listed when `limit` is not given.
const DEFAULT_LIMIT: usize = 20;
/// The most messages one call lists.
const MAX_LIMIT: usize = 100;

/// The `email_search` tool.
pub struct EmailSearch;

/// Arguments of `email_search`. Every criterion given must match; none lists the newest.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// The folder to search (as email_folders names it). Default: INBOX.
    folder: Option<String>,
    /// Text in the From header (a name or an address).
    from: Option<String>,
    /// Text in the To header.
    to: Option<String>,
    /// Text in the subject.
    subject: Option<String>,
    /// Text anywhere in the message (headers or body).
    text: Option<String>,
    /// Only messages received on or after this day (YYYY-MM-DD).
    since: Option<String>,
    /// Only messages not yet seen.
    unseen: Option<bool>,
    /// How many to list, newest first (default 20, at most 100).
    #[schemars(range(min = 1, max = 100))]
    limit: Option<usize>,
}

impl Tool for EmailSearch {
    type Host = Comms;
    type Args = Args;
    const NAME: &'static str = "email_search";
    const TITLE: &'static str = "Search email";
    const DESCRIPTION: &'static str = "Search one folder of the user's configured mailbox over IMAP by sender, recipient, subject, text, date and unseen; lists the newest matches first, one line each (uid, date, from, subject), at most 100. Read a message with email_read and its uid.";
    const CATEGORY: Category = Category::Communication;
    const EFFECT: Effect = Effect::Network;
    const READ_ONLY: bool = true;
    const AGENT_ONLY: bool = false;

    fn paths(_: &Args) -> Paths {
        Paths::none()
    }

    async fn call(comms: &Comms, args: Args, cx: CallContext) -> CallToolResult {
        let mail = match Mail::of(comms) {
            Ok(m) => m,
            Err(e) => return e.into(),
        };
        let (folder, query) = match criteria(&args) {
            Ok(q) => q,
            Err(e) => return e.into(),
        };
        let limit = args.limit.unwrap_or(DEFAULT_LIMIT).clamp(1, MAX_LIMIT);
        match bounded(&cx, "searching", search(&mail, &folder, &query, limit)).await {
            Ok((_, 0)) => text(format!("no message in {folder} matches ({query})")),
            Ok((table, total)) => {
                let heading = format!(
                    "{total} message(s) in {folder} match; newest first (by arrival), uid for email_read:"
                );
                table.result_hinting(
                    &heading,
                    &Limits::default(),
                    "narrow the search or raise `limit` (at most 100)",
                )
            }
            Err(e) => e.into(),
        }
    }
}

/// The folder and the IMAP search criteria for `args`.
fn criteria(args: &Args) -> Result<(String, String), ToolError> {
    let folder = imap::folder(args.folder.as_deref())?;
    let mut parts = Vec::new();
    let mut utf8 = false;
    for (key, value) in [
        ("FROM", &args.from),
        ("TO", &args.to),
        ("SUBJECT", &args.subject),
        ("TEXT", &args.text),
    ] {
        if let Some(v) = value.as_deref().map(str::trim).filter(|v| !v.is_empty()) {
            if v.len() > 500 {
                let field = key.to_lowercase();
                let reason = format!("`{field}` is longer than 500 bytes");
                return Err(ToolError::invalid_argument(field, reason));
            }
            utf8 |= !v.is_ascii();
            parts.push(format!("{key} {}", imap::quote(v)?));
        }
    }
    if let Some(since) = args.since.as_deref() {
        let day = chrono::NaiveDate::parse_from_str(since.trim(), "%Y-%m-%d").map_err(|_| {
            ToolError::invalid_argument(
                "since",
                format!("`since` = {since:?} is not a day (YYYY-MM-DD)"),
            )
        })?;
        parts.push(format!("SINCE {}", day.format("%-d-%b-%Y")));
    }
    if args.unseen == Some(true) {
        parts.push("UNSEEN".into());
    }
    if parts.is_empty() {
        parts.push("ALL".into());
    }
    let charset = if utf8 { "CHARSET UTF-8 " } else { "" };
    Ok((folder, format!("{charset}{}", parts.join(" "))))
}

async fn search(
    mail: &Mail<'_>,
    folder: &str,
    query: &str,
    limit: usize,
) -> Result<(Table, usize), ToolError> {
    let mut session = imap::open(mail).await?;
    session.examine(folder).await.map_err(|e| {
        ToolError::not_found(format!(
            "cannot open folder {folder:?}: {e} (email_folders lists them)"
        ))
    })?;
    let found = session
        .uid_search(query)
        .await
        .map_err(|e| ToolError::peer(format!("the search failed: {e}")))?;
    let mut uids: Vec<u32> = found.into_iter().collect();
    let total = uids.len();
    uids.sort_unstable_by_key(|u| std::cmp::Reverse(*u));
    let more = uids.len() > limit;
    uids.truncate(limit);
    let mut rows = Vec::new();
    if !uids.is_empty() {
        let fetched: Vec<_> = session
            .uid_fetch(
                imap::uid_set(&uids),
                "(UID FLAGS INTERNALDATE BODY.PEEK[HEADER])",
            )
            .await
            .map_err(|e| ToolError::peer(format!("fetching the messages failed: {e}")))?
            .try_collect()
            .await
            .map_err(|e| ToolError::peer(format!("fetching the messages failed: {e}")))?;
        let mut lines: Vec<(u32, Vec<Cell>)> = fetched
            .iter()
            .filter_map(|f| {
                let uid = f.uid?;
                let header = f.header().unwrap_or_default();
                let parsed = MessageParser::default().parse_headers(header);
                let (from, subject, date) = match &parsed {
                    Some(m) => (
                        imap::first_address(m.from()),
                        m.subject().unwrap_or("").to_owned(),
                        m.date().map(|d| d.to_rfc3339()),
                    ),
                    None => (String::new(), String::new(), None),
                };
                let date = date
                    .or_else(|| f.internal_date().map(|d| d.to_rfc3339()))
                    .unwrap_or_default();
                let seen = f
                    .flags()
                    .any(|fl| matches!(fl, async_imap::types::Flag::Seen));
                Some((
                    uid,
                    vec![
                        Cell::Text(uid.to_string()),
                        Cell::Text(date),
                        Cell::Text(imap::clean(&from)),
                        Cell::Text(imap::clean(&subject)),
                        Cell::Text(if seen { "" } else { "unseen" }.into()),
                    ],
                ))
            })
            .collect();
        lines.sort_unstable_by_key(|l| std::cmp::Reverse(l.0));
        rows = lines.into_iter().map(|(_, r)| r).collect();
    }
    imap::close(session).await;
    Ok((
        Table {
            columns: vec![
                "uid".into(),
                "date".into(),
                "from".into(),
                "subject".into(),
                "flags".into(),
            ],
            rows,
            more,
        },
        total,
    ))
}
