//! [`System`], what every system tool shares: the workspace, the web guard (for DNS), the
//! redactor and the user's settings for the host tools.
//!
//! Its own file, apart from `lib.rs`, so that the tools can import it without importing the
//! list of tools, which imports them.

use std::sync::Arc;

use cairn_agent::redact::Redact;
use cairn_config::SystemConfig as HostSettings;
use cairn_web::WebGuard;
use cairn_workspace::Workspace;

/// What the system tools share.
pub struct System {
    pub(crate) workspace: Option<Arc<Workspace>>,
    pub(crate) guard: Option<Arc<WebGuard>>,
    pub(crate) redactor: Option<Arc<dyn Redact>>,
    pub(crate) settings: HostSettings,
}

impl std::fmt::Debug for System {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("System").finish_non_exhaustive()
    }
}

impl cairn_toolkit::Host for System {
    fn workspace(&self) -> Option<&Arc<Workspace>> {
        self.workspace.as_ref()
    }
}

impl System {
    /// The tools' host. Without a guard, DNS lookups are refused; without a workspace the tools
    /// over workspace files are not offered.
    pub fn new(workspace: Option<Arc<Workspace>>, guard: Option<Arc<WebGuard>>) -> System {
        System {
            workspace,
            guard,
            redactor: None,
            settings: HostSettings::default(),
        }
    }

    /// What the host tools show goes through `redactor` before it is returned.
    pub fn with_redactor(mut self, redactor: Arc<dyn Redact>) -> System {
        self.redactor = Some(redactor);
        self
    }

    /// The user's settings for the host tools (environment values shown, log directories).
    pub fn with_settings(mut self, settings: HostSettings) -> System {
        self.settings = settings;
        self
    }
}
