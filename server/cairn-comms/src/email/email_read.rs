//! `email_read`: one message by uid (the folder opened read-only, the message not marked seen):
//! its headers and text, HTML turned into text with nothing it links or embeds fetched, and its
//! attachments listed by name, type and size, never inlined.

use cairn_toolkit::reply::{error, text};
use cairn_toolkit::{CallContext, Category, Effect, JsonSchema, Paths, Tool, ToolError};
use futures::TryStreamExt;
use mail_parser::{MessageParser, MimeHeaders};
use rmcp::model::CallToolResult;
use serde::Deserialize;

use super::conn::{Mail, bounded};
use super::imap;
use crate::comms::Comms;

/// The most bytes of a message fetched; the rest stays on the server.
const MAX_MESSAGE: usize = 2 * 1024 * 1024;
/// The most characters of body text shown.
const MAX_TEXT: usize = 20_000;
/// The most attachments listed.
const MAX_LISTED: usize = 50;

/// The `email_read` tool.
pub struct EmailRead;

/// Arguments of `email_read`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// The message's uid, as email_search lists it.
    uid: u32,
    /// The folder it is in. Default: INBOX.
    folder: Option<String>,
}

impl Tool for EmailRead {
    type Host = Comms;
    type Args = Args;
    const NAME: &'static str = "email_read";
    const TITLE: &'static str = "Read email";
    const DESCRIPTION: &'static str = "Read one message of the user's configured mailbox over IMAP by its uid (from email_search): headers and text, HTML converted to text with no remote content fetched, attachments listed but not included; long texts are cut.";
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
        let folder = match imap::folder(args.folder.as_deref()) {
            Ok(f) => f,
            Err(e) => return e.into(),
        };
        match bounded(&cx, "reading", fetch(&mail, &folder, args.uid)).await {
            Ok(Some((raw, size))) => text(render(&raw, size, args.uid, &folder)),
            Ok(None) => error(format!(
                "no message with uid {} in {folder}: email_search lists the uids",
                args.uid
            )),
            Err(e) => e.into(),
        }
    }
}

/// The first `MAX_MESSAGE` bytes of message `uid` and its full size, or `None` when absent.
async fn fetch(
    mail: &Mail<'_>,
    folder: &str,
    uid: u32,
) -> Result<Option<(Vec<u8>, u32)>, ToolError> {
    let mut session = imap::open(mail).await?;
    session.examine(folder).await.map_err(|e| {
        ToolError::not_found(format!(
            "cannot open folder {folder:?}: {e} (email_folders lists them)"
        ))
    })?;
    let fetched: Vec<_> = session
        .uid_fetch(
            uid.to_string(),
            format!("(UID RFC822.SIZE BODY.PEEK[]<0.{MAX_MESSAGE}>)"),
        )
        .await
        .map_err(|e| ToolError::peer(format!("fetching the message failed: {e}")))?
        .try_collect()
        .await
        .map_err(|e| ToolError::peer(format!("fetching the message failed: {e}")))?;
    let found = fetched
        .iter()
        .find(|f| f.uid == Some(uid))
        .map(|f| (f.body().unwrap_or_default().to_vec(), f.size.unwrap_or(0)));
    imap::close(session).await;
    Ok(found)
}

/// What the model reads of one message.
fn render(raw: &[u8], size: u32, uid: u32, folder: &str) -> String {
    let cut = size as usize > raw.len();
    let Some(m) = MessageParser::default().parse(raw) else {
        return format!("uid {uid} in {folder}: the message ({size} bytes) does not parse as mail");
    };
    let mut out = format!("uid {uid} in {folder}, {size} bytes\n");
    let mut line = |name: &str, value: String| {
        if !value.is_empty() {
            out.push_str(&format!("{name}: {}\n", imap::clean(&value)));
        }
    };
    line("From", imap::all_addresses(m.from()));
    line("To", imap::all_addresses(m.to()));
    line("Cc", imap::all_addresses(m.cc()));
    line("Reply-To", imap::all_addresses(m.reply_to()));
    line("Date", m.date().map(|d| d.to_rfc3339()).unwrap_or_default());
    line("Subject", m.subject().unwrap_or("").to_owned());
    line(
        "Message-ID",
        m.message_id().map(|i| format!("<{i}>")).unwrap_or_default(),
    );
    // The text part when there is one; else the HTML part as text (tags dropped, so no image,
    // stylesheet or link is ever loaded; links are not followed either).
    let (body, from_html) = match (m.text_body_count(), m.html_body_count()) {
        (0, 0) => (String::new(), false),
        _ => {
            let is_html = m
                .text_part(0)
                .is_some_and(|p| p.is_content_type("text", "html"));
            (
                m.body_text(0).map(|b| b.into_owned()).unwrap_or_default(),
                is_html,
            )
        }
    };
    out.push('\n');
    if from_html {
        out.push_str("[HTML converted to text; remote images and other content were not loaded]\n");
    }
    let count = body.chars().count();
    if count > MAX_TEXT {
        out.push_str(&body.chars().take(MAX_TEXT).collect::<String>());
        out.push_str(&format!(
            "\n[… text cut: {MAX_TEXT} of {count} characters shown]\n"
        ));
    } else {
        out.push_str(body.trim_end());
        out.push('\n');
    }
    let attachments: Vec<String> = m
        .attachments()
        .map(|a| {
            let kind = a.content_type().map_or_else(
                || "application/octet-stream".to_owned(),
                |t| format!("{}/{}", t.ctype(), t.subtype().unwrap_or("*")),
            );
            format!(
                "- {} ({kind}, {} bytes)",
                imap::clean(a.attachment_name().unwrap_or("(no name)")),
                a.contents().len()
            )
        })
        .collect();
    if !attachments.is_empty() {
        out.push_str(&format!(
            "\nAttachments ({}; not included):\n",
            attachments.len()
        ));
        for a in attachments.iter().take(MAX_LISTED) {
            out.push_str(a);
            out.push('\n');
        }
        if attachments.len() > MAX_LISTED {
            out.push_str(&format!(
                "- … and {} more\n",
                attachments.len() - MAX_LISTED
            ));
        }
    }
    if cut {
        out.push_str(&format!(
            "\n[only the first {} MiB of the {size}-byte message were read: the end of the text and later attachments are missing]\n",
            MAX_MESSAGE / 1024 / 1024
        ));
    }
    out
}
