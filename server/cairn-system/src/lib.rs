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
mod system;
mod util;

pub use host::HostSettings;
pub use system::System;

use cairn_toolkit::{Entry, ToolSet};

/// The system tools, in the order listed.
pub const SYSTEM_TOOLS: &[Entry<System>] = &[
    // the host (host/)
    Entry::of::<host::system_info::SystemInfo>(),
    Entry::of::<host::disk_usage::DiskUsage>(),
    Entry::of::<host::folder_sizes::FolderSizes>(),
    Entry::of::<host::process_list::ProcessList>(),
    Entry::of::<host::process_tree::ProcessTree>(),
    Entry::of::<host::process_top::ProcessTop>(),
    Entry::of::<host::process_details::ProcessDetails>(),
    Entry::of::<host::process_signal::ProcessSignal>(),
    Entry::of::<host::listening_ports::ListeningPorts>(),
    Entry::of::<host::network_interfaces::NetworkInterfaces>(),
    Entry::of::<host::dns_lookup::DnsLookup>(),
    Entry::of::<host::env_vars::EnvVars>(),
    Entry::of::<host::which_program::WhichProgram>(),
    Entry::of::<host::log_tail::LogTail>(),
    Entry::of::<host::log_search::LogSearch>(),
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
