//! The system tools (category `system`), one type per file, served in-process as the
//! [`ToolSet`] [`system_tools`] builds from [`SYSTEM_TOOLS`].
//!
//! Two kinds: the host cairn runs on (`host/`: OS, CPU, memory, disks, processes, ports,
//! interfaces, DNS through the web guard's resolver, environment names, programs on `PATH`, log
//! files), and everyday utilities that touch nothing but their arguments and workspace files
//! (`util/`: archives, checksums, time, cron, encodings, UUIDs, JSON/YAML/TOML, a calculator and
//! units). What the host tools show passes the redactor: command lines and environments carry
//! tokens.

mod host;
mod util;

use std::sync::Arc;

use cairn_agent::redact::Redact;
use cairn_toolkit::{Entry, ToolSet};
use cairn_web::WebGuard;
use cairn_workspace::Workspace;

/// What the system tools share.
pub struct System {
    workspace: Option<Arc<Workspace>>,
    guard: Option<Arc<WebGuard>>,
    redactor: Option<Arc<dyn Redact>>,
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
        }
    }

    /// What the host tools show goes through `redactor` before it is returned.
    pub fn with_redactor(mut self, redactor: Arc<dyn Redact>) -> System {
        self.redactor = Some(redactor);
        self
    }
}

/// The system tools, in the order listed.
pub const SYSTEM_TOOLS: &[Entry<System>] = &[
    // the host (host/)
    // utilities (util/)
    Entry::of::<util::archive_create::ArchiveCreate>(),
    Entry::of::<util::archive_list::ArchiveList>(),
    Entry::of::<util::archive_extract::ArchiveExtract>(),
    Entry::of::<util::checksum::Checksum>(),
    Entry::of::<util::encode_decode::EncodeDecode>(),
    Entry::of::<util::uuid_generate::UuidGenerate>(),
    Entry::of::<util::time_now::TimeNow>(),
    Entry::of::<util::time_convert::TimeConvert>(),
    Entry::of::<util::time_diff::TimeDiff>(),
    Entry::of::<util::cron_explain::CronExplain>(),
    Entry::of::<util::calculate::Calculate>(),
    Entry::of::<util::unit_convert::UnitConvert>(),
    Entry::of::<util::format_convert::FormatConvert>(),
    Entry::of::<util::schema_validate::SchemaValidate>(),
    Entry::of::<util::json_query::JsonQuery>(),
];

/// The system tools over `host`.
pub fn system_tools(host: System) -> ToolSet<System> {
    ToolSet::new(host, SYSTEM_TOOLS)
}
