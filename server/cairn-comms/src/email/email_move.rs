//! `email_move`: messages moved by uid from one folder to another (IMAP MOVE, or COPY then
//! delete and expunge those uids where the server has no MOVE).

use cairn_toolkit::reply::{error, text};
use cairn_toolkit::{CallContext, Category, Effect, JsonSchema, Paths, Tool, ToolError};
use futures::TryStreamExt;
use rmcp::model::CallToolResult;
use serde::Deserialize;

use super::conn::{Mail, bounded};
use super::imap;
use crate::comms::Comms;

/// The most messages one call moves.
const MAX_UIDS: usize = 500;

/// The `email_move` tool.
pub struct EmailMove;

/// Arguments of `email_move`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// The uids of the messages to move (from email_search), at most 500.
    uids: Vec<u32>,
    /// The folder they are in. Default: INBOX.
    folder: Option<String>,
    /// The folder to move them to (as email_folders names it; it must exist).
    to_folder: String,
}

impl Tool for EmailMove {
    type Host = Comms;
    type Args = Args;
    const NAME: &'static str = "email_move";
    const TITLE: &'static str = "Move email";
    const DESCRIPTION: &'static str = "Move messages, by uid, from one folder of the user's configured mailbox to another existing folder over IMAP (such as to an archive); uids that are not in the folder are reported, not guessed.";
    const CATEGORY: Category = Category::Communication;
    const EFFECT: Effect = Effect::Write;
    const AGENT_ONLY: bool = true;

    fn paths(_: &Args) -> Paths {
        Paths::none()
    }

    async fn call(comms: &Comms, args: Args, cx: CallContext) -> CallToolResult {
        let mail = match Mail::of(comms) {
            Ok(m) => m,
            Err(e) => return e.into(),
        };
        let (from, to) = match (
            imap::folder(args.folder.as_deref()),
            imap::folder(Some(&args.to_folder)),
        ) {
            (Ok(f), Ok(t)) => (f, t),
            (Err(e), _) | (_, Err(e)) => return e.into(),
        };
        if from == to {
            return error(format!("the messages are already in {from}"));
        }
        let mut uids = args.uids.clone();
        uids.sort_unstable();
        uids.dedup();
        if uids.is_empty() {
            return error("no uid given: email_search lists them");
        }
        if uids.len() > MAX_UIDS {
            return error(format!(
                "{} uids, more than the {MAX_UIDS} one call moves; move them in parts",
                uids.len()
            ));
        }
        match bounded(&cx, "moving", move_uids(&mail, &from, &to, &uids)).await {
            Ok((moved, missing, how)) => {
                let mut out = if moved.is_empty() {
                    format!("nothing moved: no message of those uids is in {from}")
                } else {
                    format!(
                        "moved {} message(s) from {from} to {to} ({how}): uids {}",
                        moved.len(),
                        imap::uid_set(&moved)
                    )
                };
                if !missing.is_empty() && !moved.is_empty() {
                    out.push_str(&format!(
                        "\nnot in {from} (left alone): {}",
                        imap::uid_set(&missing)
                    ));
                }
                if moved.is_empty() {
                    error(out)
                } else {
                    text(out)
                }
            }
            Err(e) => e.into(),
        }
    }
}

/// The uids moved, those not found, and how.
async fn move_uids(
    mail: &Mail<'_>,
    from: &str,
    to: &str,
    uids: &[u32],
) -> Result<(Vec<u32>, Vec<u32>, &'static str), ToolError> {
    let mut session = imap::open(mail).await?;
    // The target must exist: a typo must not create a folder or lose mail.
    session.status(to, "(MESSAGES)").await.map_err(|e| {
        ToolError::not_found(format!(
            "there is no folder {to:?} ({e}): email_folders lists them"
        ))
    })?;
    session.select(from).await.map_err(|e| {
        ToolError::not_found(format!(
            "cannot open folder {from:?}: {e} (email_folders lists them)"
        ))
    })?;
    let set = imap::uid_set(uids);
    let present = session
        .uid_search(format!("UID {set}"))
        .await
        .map_err(|e| ToolError::peer(format!("looking up the uids failed: {e}")))?;
    let mut moved: Vec<u32> = uids
        .iter()
        .copied()
        .filter(|u| present.contains(u))
        .collect();
    moved.sort_unstable();
    let missing: Vec<u32> = uids
        .iter()
        .copied()
        .filter(|u| !present.contains(u))
        .collect();
    if moved.is_empty() {
        imap::close(session).await;
        return Ok((moved, missing, "nothing to do"));
    }
    let set = imap::uid_set(&moved);
    let caps = session
        .capabilities()
        .await
        .map_err(|e| ToolError::peer(format!("CAPABILITY failed: {e}")))?;
    let how = if caps.has_str("MOVE") {
        session
            .uid_mv(&set, to)
            .await
            .map_err(|e| ToolError::peer(format!("MOVE failed, nothing moved: {e}")))?;
        "IMAP MOVE"
    } else {
        if !caps.has_str("UIDPLUS") {
            // Without UID EXPUNGE, EXPUNGE would also remove other messages marked deleted.
            return Err(ToolError::refused(
                "the server has neither MOVE nor UIDPLUS, so messages cannot be moved without \
                 touching others; nothing moved",
            ));
        }
        session
            .uid_copy(&set, to)
            .await
            .map_err(|e| ToolError::peer(format!("COPY failed, nothing moved: {e}")))?;
        let stored: Vec<_> = session
            .uid_store(&set, "+FLAGS.SILENT (\\Deleted)")
            .await
            .map_err(|e| {
                ToolError::peer(format!(
                    "copied to {to}, but marking the originals failed: {e}"
                ))
            })?
            .try_collect()
            .await
            .map_err(|e| {
                ToolError::peer(format!(
                    "copied to {to}, but marking the originals failed: {e}"
                ))
            })?;
        drop(stored);
        let expunged: Vec<_> = session
            .uid_expunge(&set)
            .await
            .map_err(|e| {
                ToolError::peer(format!(
                    "copied to {to}, but removing the originals failed: {e}"
                ))
            })?
            .try_collect()
            .await
            .map_err(|e| {
                ToolError::peer(format!(
                    "copied to {to}, but removing the originals failed: {e}"
                ))
            })?;
        drop(expunged);
        "COPY, then the originals expunged"
    };
    imap::close(session).await;
    Ok((moved, missing, how))
}
