//! The communication tools (category `communication`), one type per file, served in-process as
//! the [`ToolSet`] [`comms_tools`] builds from [`COMMS_TOOLS`].
//!
//! Email over SMTP and IMAP (`email/`), Matrix and Slack (`chat/`), webhooks and SMS
//! (`notify/`), and CalDAV calendars (`calendar/`), for the services the user declared in
//! `[comms]`. Every connection goes through the web guard (its address checks, rate limits and
//! size cap); every secret is a vault secret bound to its service's host.
//!
//! Sending is the dangerous part, so every send goes through [`Comms::check_send`]: the
//! recipients must be ones the user allowed in `[comms]` (never guessed or widened), their
//! number is capped, sends are rate-limited per user, and the user approves that exact message
//! once (recipients and text shown), so no session grant covers a second message.

mod calendar;
mod chat;
mod comms;
mod email;
mod limiter;
mod notify;
mod send;

pub use comms::Comms;
pub use send::SendRefusal;

use cairn_toolkit::{Entry, ToolSet};

/// The communication tools, in the order listed.
pub const COMMS_TOOLS: &[Entry<Comms>] = &[
    // email (email/)
    Entry::of::<email::email_send::EmailSend>(),
    Entry::of::<email::email_folders::EmailFolders>(),
    Entry::of::<email::email_search::EmailSearch>(),
    Entry::of::<email::email_read::EmailRead>(),
    Entry::of::<email::email_move::EmailMove>(),
    // -- end of email
    // Matrix and Slack (chat/)
    Entry::of::<chat::matrix_send::MatrixSend>(),
    Entry::of::<chat::matrix_read::MatrixRead>(),
    Entry::of::<chat::matrix_rooms::MatrixRooms>(),
    Entry::of::<chat::slack_post::SlackPost>(),
    Entry::of::<chat::slack_channels::SlackChannels>(),
    Entry::of::<chat::slack_history::SlackHistory>(),
    // -- end of chat
    // webhooks and SMS (notify/)
    Entry::of::<notify::webhook_post::WebhookPost>(),
    Entry::of::<notify::sms_send::SmsSend>(),
    // -- end of notify
    // calendars (calendar/)
    Entry::of::<calendar::calendar_events::CalendarEvents>(),
    Entry::of::<calendar::calendar_create::CalendarCreate>(),
    // -- end of calendar
];

/// The communication tools over `host`.
pub fn comms_tools(host: Comms) -> ToolSet<Comms> {
    ToolSet::new(host, COMMS_TOOLS)
}
