//! `email_folders`: the mailbox's folders (IMAP LIST), each with its message and unseen counts.

use cairn_toolkit::table::{Cell, Limits, Table};
use cairn_toolkit::{CallContext, Category, Effect, JsonSchema, Paths, Tool, ToolError};
use futures::TryStreamExt;
use rmcp::model::CallToolResult;
use serde::Deserialize;

use super::conn::{Mail, bounded};
use super::imap;
use crate::comms::Comms;

/// The most folders listed (and counted).
const MAX_FOLDERS: usize = 200;

/// The `email_folders` tool.
pub struct EmailFolders;

/// Arguments of `email_folders`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {}

impl Tool for EmailFolders {
    type Host = Comms;
    type Args = Args;
    const NAME: &'static str = "email_folders";
    const TITLE: &'static str = "Email folders";
    const DESCRIPTION: &'static str = "List the folders of the user's configured mailbox over IMAP, with how many messages each holds and how many are unseen; use it to find a folder's exact name for email_search or email_move.";
    const CATEGORY: Category = Category::Communication;
    const EFFECT: Effect = Effect::Network;
    const READ_ONLY: bool = true;
    const AGENT_ONLY: bool = false;

    fn paths(_: &Args) -> Paths {
        Paths::none()
    }

    async fn call(comms: &Comms, _: Args, cx: CallContext) -> CallToolResult {
        let mail = match Mail::of(comms) {
            Ok(m) => m,
            Err(e) => return e.into(),
        };
        match bounded(&cx, "listing folders", folders(&mail)).await {
            Ok(table) => table.result_hinting(
                "Folders of the mailbox (messages, unseen):",
                &Limits::default(),
                "the rest were not listed",
            ),
            Err(e) => e.into(),
        }
    }
}

async fn folders(mail: &Mail<'_>) -> Result<Table, ToolError> {
    let mut session = imap::open(mail).await?;
    let names: Vec<(String, bool)> = {
        let listed = session
            .list(Some(""), Some("\"*\""))
            .await
            .map_err(|e| ToolError::peer(format!("LIST failed: {e}")))?;
        listed
            .map_ok(|n| {
                let selectable = !n
                    .attributes()
                    .iter()
                    .any(|a| matches!(a, async_imap::types::NameAttribute::NoSelect));
                (n.name().to_owned(), selectable)
            })
            .try_collect()
            .await
            .map_err(|e| ToolError::peer(format!("LIST failed: {e}")))?
    };
    let more = names.len() > MAX_FOLDERS;
    let mut rows = Vec::new();
    for (name, selectable) in names.into_iter().take(MAX_FOLDERS) {
        let counts = if selectable {
            session.status(&name, "(MESSAGES UNSEEN)").await.ok()
        } else {
            None
        };
        let (messages, unseen) = match counts {
            Some(m) => (
                Cell::Text(m.exists.to_string()),
                m.unseen.map_or(Cell::Null, |u| Cell::Text(u.to_string())),
            ),
            None => (Cell::Text("(not a folder of messages)".into()), Cell::Null),
        };
        rows.push(vec![Cell::Text(imap::clean(&name)), messages, unseen]);
    }
    imap::close(session).await;
    Ok(Table {
        columns: vec!["folder".into(), "messages".into(), "unseen".into()],
        rows,
        more,
    })
}
