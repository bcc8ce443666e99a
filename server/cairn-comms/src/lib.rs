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
mod email;
mod notify;
mod send;

pub use send::SendRefusal;

use std::sync::Arc;

use cairn_config::CommsConfig;
use cairn_toolkit::{Entry, ToolSet};
use cairn_web::{Credentials, WebGuard};
use cairn_workspace::{ExactApprovals, Workspace};

/// What the communication tools share.
pub struct Comms {
    guard: Option<Arc<WebGuard>>,
    workspace: Option<Arc<Workspace>>,
    approvals: Arc<ExactApprovals>,
    /// Where passwords for protocols the guard does not speak (SMTP, IMAP) come from: the
    /// vault, per host, as the guard's own credential step asks it.
    secrets: Arc<dyn Credentials>,
    settings: CommsConfig,
    sends: send::SendLimiter,
    /// Who the web guard's and the send limiter's per-user limits count against.
    user: String,
}

impl std::fmt::Debug for Comms {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Comms").finish_non_exhaustive()
    }
}

impl cairn_toolkit::Host for Comms {
    fn workspace(&self) -> Option<&Arc<Workspace>> {
        self.workspace.as_ref()
    }
}

impl Comms {
    /// The tools' host over the user's `[comms]` settings. Without a guard every tool refuses.
    pub fn new(
        settings: CommsConfig,
        guard: Option<Arc<WebGuard>>,
        secrets: Arc<dyn Credentials>,
        approvals: Arc<ExactApprovals>,
    ) -> Comms {
        let sends = send::SendLimiter::new(settings.sends_per_minute);
        Comms {
            guard,
            workspace: None,
            approvals,
            secrets,
            settings,
            sends,
            user: "local".into(),
        }
    }

    /// The workspace, for tools that attach or save files.
    pub fn with_workspace(mut self, workspace: Option<Arc<Workspace>>) -> Comms {
        self.workspace = workspace;
        self
    }

    /// The user the limits count against (the access identity).
    pub fn with_user(mut self, user: impl Into<String>) -> Comms {
        self.user = user.into();
        self
    }
}

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
