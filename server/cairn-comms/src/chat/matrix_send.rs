//! `matrix_send`: post a text message to an allowed Matrix room, after the user approved that
//! exact message.

use cairn_toolkit::reply::{error, text};
use cairn_toolkit::{CallContext, Category, Effect, JsonSchema, Paths, Tool};
use cairn_web::Method;
use rmcp::model::CallToolResult;
use serde::Deserialize;
use serde_json::json;

use super::matrix::{ALLOW_SETTING, Matrix, check_room, enc, markdown_html};
use crate::comms::Comms;
use crate::send::Outgoing;

/// The longest message posted (Matrix events are capped at 64 KiB in all).
const MAX_TEXT: usize = 16 * 1024;

/// The `matrix_send` tool.
pub struct MatrixSend;

/// Arguments of `matrix_send`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// The room: an id (`!abc:example.org`) or alias (`#dev:example.org`) exactly as listed in
    /// `[comms.matrix] allow_rooms`.
    room: String,
    /// The message text (at most 16 KiB).
    text: String,
    /// Render the text as Markdown (bold, italic, `code`, code blocks, links) for clients that
    /// show formatting; the plain text is sent too. Default: false.
    markdown: Option<bool>,
}

impl Tool for MatrixSend {
    type Host = Comms;
    type Args = Args;
    const NAME: &'static str = "matrix_send";
    const TITLE: &'static str = "Post to Matrix";
    const DESCRIPTION: &'static str = "Post a text message (optionally Markdown) to a Matrix room the user allowed in `[comms.matrix] allow_rooms`, by room id or alias; the user approves each exact message first, and sends are rate-limited.";
    const CATEGORY: Category = Category::Communication;
    const EFFECT: Effect = Effect::Write;
    const AGENT_ONLY: bool = true;

    fn paths(_: &Args) -> Paths {
        Paths::none()
    }

    async fn call(host: &Comms, args: Args, cx: CallContext) -> CallToolResult {
        let matrix = match Matrix::of(host) {
            Ok(m) => m,
            Err(e) => return e,
        };
        let room = args.room.trim();
        if let Err(e) = check_room(room) {
            return e.into();
        }
        if args.text.trim().is_empty() {
            return error("nothing to send: `text` is empty");
        }
        if args.text.len() > MAX_TEXT {
            return error(format!(
                "the message is {} bytes, more than the {MAX_TEXT} one message may have: shorten it or split it",
                args.text.len()
            ));
        }
        let markdown = args.markdown.unwrap_or(false);
        let out = Outgoing {
            service: "matrix",
            recipients: vec![room.to_owned()],
            text: args.text.clone(),
            setting: ALLOW_SETTING,
        };
        if let Err(refusal) = host.check_send(&out, &matrix.settings.allow_rooms) {
            return refusal;
        }
        let room_id = match matrix.room_id(room, &cx).await {
            Ok(id) => id,
            Err(e) => return error(format!("not sent: {e}")),
        };
        let mut content = json!({"msgtype": "m.text", "body": args.text});
        if markdown {
            content["format"] = json!("org.matrix.custom.html");
            content["formatted_body"] = json!(markdown_html(&args.text));
        }
        // A fresh transaction id: the homeserver keeps a retried PUT with the same id as one event.
        let txn = uuid::Uuid::new_v4().simple().to_string();
        let path = format!(
            "/_matrix/client/v3/rooms/{}/send/m.room.message/{txn}",
            enc(&room_id)
        );
        match matrix.call(Method::PUT, &path, Some(&content), &cx).await {
            Ok(v) => {
                let event = v["event_id"].as_str().unwrap_or("(no event id returned)");
                let shown = if room_id == room {
                    room.to_owned()
                } else {
                    format!("{room} ({room_id})")
                };
                text(format!(
                    "posted to {shown}: event {event}, {} characters{}",
                    args.text.chars().count(),
                    if markdown {
                        ", with Markdown formatting"
                    } else {
                        ""
                    }
                ))
            }
            // A transport failure after sending may still have posted it: said as "failed", not "not sent".
            Err(e) => error(format!("posting to {room} failed: {e}")),
        }
    }
}
