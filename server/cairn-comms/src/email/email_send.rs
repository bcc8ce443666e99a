//! `email_send`: one plain-text email over SMTP, to addresses the user allowed, after the user
//! approved that exact message; optional attachments from workspace files.

use std::io::Read;

use cairn_toolkit::reply::text;
use cairn_toolkit::{CallContext, Category, Effect, JsonSchema, Paths, Tool, ToolError};
use rmcp::model::CallToolResult;
use serde::Deserialize;
use sha2::{Digest, Sha256};

use super::compose::{self, Attachment, Message};
use super::conn::{Mail, bounded};
use super::smtp::{self, Envelope};
use crate::comms::Comms;
use crate::send::Outgoing;

/// The most bytes of body text.
const MAX_BODY: usize = 1024 * 1024;
/// The most attachments one message carries.
const MAX_ATTACHMENTS: usize = 10;
/// The most bytes of all attachments together.
const MAX_ATTACHMENT_BYTES: u64 = 10 * 1024 * 1024;

/// The `email_send` tool.
pub struct EmailSend;

/// Arguments of `email_send`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// Recipients: bare addresses (`bob@example.com`), each allowed in `[comms.email] allow_to`.
    to: Vec<String>,
    /// Copy recipients (bare addresses, allowed like `to`).
    #[serde(default)]
    cc: Vec<String>,
    /// Blind-copy recipients (bare addresses, allowed like `to`); no header names them.
    #[serde(default)]
    bcc: Vec<String>,
    /// The subject, on one line.
    subject: String,
    /// The message text (plain text, UTF-8).
    body: String,
    /// Workspace files to attach (at most 10, 10 MiB together).
    #[serde(default)]
    attachments: Vec<String>,
}

impl Tool for EmailSend {
    type Host = Comms;
    type Args = Args;
    const NAME: &'static str = "email_send";
    const TITLE: &'static str = "Send email";
    const DESCRIPTION: &'static str = "Send a plain-text email (optionally with workspace files attached) from the user's configured mailbox over SMTP to addresses the user allowed in `[comms.email] allow_to`; the user approves each exact message first. Use it to report results to people, not for bulk mail.";
    const CATEGORY: Category = Category::Communication;
    const EFFECT: Effect = Effect::Write;
    const AGENT_ONLY: bool = true;

    fn paths(args: &Args) -> Paths {
        Paths::read_all(args.attachments.iter().cloned())
    }

    async fn call(comms: &Comms, args: Args, cx: CallContext) -> CallToolResult {
        match send(comms, args, &cx).await {
            Ok(done) => text(done),
            Err(Refused::Result(r)) => r,
            Err(Refused::Error(e)) => e.into(),
        }
    }
}

/// Why nothing was sent: a failure, or a result made for the agent (the strict question).
enum Refused {
    Error(ToolError),
    Result(CallToolResult),
}

impl From<ToolError> for Refused {
    fn from(e: ToolError) -> Self {
        Refused::Error(e)
    }
}

async fn send(comms: &Comms, args: Args, cx: &CallContext) -> Result<String, Refused> {
    let mail = Mail::of(comms)?;
    let server = mail.server("smtp")?;
    let (from_name, from) = compose::sender(&mail.settings.from)?;
    // Every address and the subject are checked before anything else: a line break in either
    // would add headers (or recipients) of its own.
    let all = args.to.len() + args.cc.len() + args.bcc.len();
    let max = comms.settings.max_recipients;
    if all > max {
        return Err(ToolError::limit(format!(
            "email: {all} recipients, more than the {max} one message may have (`[comms] max_recipients`); nothing was sent"
        ))
        .into());
    }
    let check = |list: &[String]| -> Result<Vec<String>, ToolError> {
        list.iter().map(|a| compose::address(a)).collect()
    };
    let (to, cc, bcc) = (check(&args.to)?, check(&args.cc)?, check(&args.bcc)?);
    let subject = compose::subject(&args.subject)?;
    if args.body.len() > MAX_BODY {
        return Err(ToolError::limit(format!(
            "the body is {} bytes, more than the {MAX_BODY} one message may carry",
            args.body.len()
        ))
        .into());
    }
    if let Some(c) = args
        .body
        .chars()
        .find(|c| c.is_control() && !matches!(c, '\n' | '\r' | '\t'))
    {
        return Err(ToolError::invalid_argument(
            "body",
            format!("the body holds the control character {c:?}; remove it"),
        )
        .into());
    }
    // The password is looked up before the user is asked: a secret not bound to the server's
    // host is refused now, not after the approval.
    let password = mail.password(&server)?;
    let attachments = read_attachments(comms, &args.attachments).await?;

    let mut shown = format!("Subject: {subject}\n");
    if !cc.is_empty() {
        shown.push_str(&format!("Cc: {}\n", cc.join(", ")));
    }
    if !bcc.is_empty() {
        shown.push_str(&format!("Bcc: {}\n", bcc.join(", ")));
    }
    for a in &attachments {
        let digest = Sha256::digest(&a.bytes);
        let short: String = digest.iter().take(8).map(|b| format!("{b:02x}")).collect();
        shown.push_str(&format!(
            "Attachment: {} ({} bytes, sha256 {short}…)\n",
            a.name,
            a.bytes.len()
        ));
    }
    shown.push('\n');
    shown.push_str(&args.body);
    let recipients: Vec<String> = to.iter().chain(&cc).chain(&bcc).cloned().collect();
    let out = Outgoing {
        service: "email",
        recipients: recipients.clone(),
        text: shown,
        setting: "comms.email.allow_to",
    };
    comms
        .check_send(&out, &mail.settings.allow_to)
        .map_err(Refused::Result)?;

    let domain = from.rsplit_once('@').map_or("localhost", |(_, d)| d);
    let message_id = format!("{}@{domain}", uuid::Uuid::new_v4().simple());
    let message = Message {
        from_name: from_name.as_deref(),
        from: &from,
        to: &to,
        cc: &cc,
        subject: &subject,
        body: &args.body,
        attachments: &attachments,
    }
    .build(&message_id);
    let envelope = Envelope {
        from: &from,
        recipients: &recipients,
        message: &message,
    };
    let accepted = bounded(
        cx,
        "sending",
        smtp::send(&mail, &server, &password, &envelope),
    )
    .await
    .map_err(|e| e.context("not sent"))?;
    let mut done = format!(
        "sent \"{subject}\" to {} ({} bytes, Message-ID <{message_id}>)",
        recipients.join(", "),
        message.len()
    );
    if !attachments.is_empty() {
        done.push_str(&format!(
            " with {} attachment(s): {}",
            attachments.len(),
            attachments
                .iter()
                .map(|a| a.name.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    done.push_str(&format!("; the server said: {accepted}"));
    Ok(done)
}

/// The attachments, read through the workspace scope, within the caps.
async fn read_attachments(comms: &Comms, paths: &[String]) -> Result<Vec<Attachment>, ToolError> {
    if paths.is_empty() {
        return Ok(Vec::new());
    }
    if paths.len() > MAX_ATTACHMENTS {
        return Err(ToolError::limit(format!(
            "{} attachments, more than the {MAX_ATTACHMENTS} one message may carry",
            paths.len()
        )));
    }
    let ws = comms
        .workspace
        .clone()
        .ok_or_else(|| ToolError::not_found("there is no workspace to attach files from"))?;
    let paths = paths.to_vec();
    tokio::task::spawn_blocking(move || {
        let mut out = Vec::new();
        let mut total = 0u64;
        for requested in &paths {
            let path = ws.resolve(requested)?;
            let file = ws.open_read(&path)?;
            let mut bytes = Vec::new();
            file.take(MAX_ATTACHMENT_BYTES - total + 1)
                .read_to_end(&mut bytes)
                .map_err(|e| ToolError::peer(format!("reading {}: {e}", path.display_path())))?;
            total += bytes.len() as u64;
            if total > MAX_ATTACHMENT_BYTES {
                return Err(ToolError::limit(format!(
                    "the attachments are larger than {} MiB together (at {}); nothing was sent",
                    MAX_ATTACHMENT_BYTES / 1024 / 1024,
                    path.display_path()
                )));
            }
            let name = path
                .relative()
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_else(|| "attachment".into());
            out.push(Attachment { name, bytes });
        }
        Ok(out)
    })
    .await
    .map_err(|e| ToolError::peer(format!("internal error reading the attachments: {e}")))?
}
