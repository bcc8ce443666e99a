//! [`Comms`], what every communication tool shares: the `[comms]` settings, the web guard, the
//! workspace, the approvals, the vault's credentials and the send limiter.
//!
//! Its own file, apart from `lib.rs`, so that the send path and the tools can import it
//! without importing the list of tools, which imports them.

use std::sync::Arc;

use cairn_config::CommsConfig;
use cairn_web::{Credentials, WebGuard};
use cairn_workspace::{ExactApprovals, Workspace};

use crate::limiter::SendLimiter;

/// What the communication tools share.
pub struct Comms {
    pub(crate) guard: Option<Arc<WebGuard>>,
    pub(crate) workspace: Option<Arc<Workspace>>,
    pub(crate) approvals: Arc<ExactApprovals>,
    /// Where passwords for protocols the guard does not speak (SMTP, IMAP) come from: the
    /// vault, per host, as the guard's own credential step asks it.
    pub(crate) secrets: Arc<dyn Credentials>,
    pub(crate) settings: CommsConfig,
    pub(crate) sends: SendLimiter,
    /// Who the web guard's and the send limiter's per-user limits count against.
    pub(crate) user: String,
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
        let sends = SendLimiter::new(settings.sends_per_minute);
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

/// The failure of a call the run's cancellation stopped (the user stopped it; nothing more was
/// done): a refusal, as the user's own stop.
pub(crate) fn cancelled() -> cairn_toolkit::ToolError {
    cairn_toolkit::ToolError::refused("cancelled")
}
