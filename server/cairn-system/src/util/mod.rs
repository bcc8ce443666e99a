//! Everyday utilities that touch nothing but their arguments and workspace files: archives,
//! checksums, time, cron, encodings, UUIDs, JSON/YAML/TOML, a calculator and units.
//!
//! Shared here: walking archives under caps ([`archive`]), running workspace access off the executor ([`with_workspace`]), parsing times
//! and zones ([`times`]) for the time and cron tools, and reading, parsing and writing
//! JSON/YAML/TOML documents ([`doc`]) for the data-format tools.

pub(crate) mod archive;
pub(crate) mod archive_create;
pub(crate) mod archive_extract;
pub(crate) mod archive_list;
pub(crate) mod calculate;
pub(crate) mod checksum;
pub(crate) mod cron_explain;
pub(crate) mod doc;
pub(crate) mod encode_decode;
pub(crate) mod format_convert;
pub(crate) mod json_query;
pub(crate) mod schema_validate;
pub(crate) mod time_convert;
pub(crate) mod time_diff;
pub(crate) mod time_now;
pub(crate) mod times;
pub(crate) mod unit_convert;
pub(crate) mod uuid_generate;

use std::sync::Arc;

use cairn_toolkit::reply::error;
use cairn_workspace::Workspace;
use cairn_workspace::checkpoint::carry;
use rmcp::model::CallToolResult;

use crate::system::System;

/// Runs `f` over the host's workspace on a blocking thread (file access blocks), or says that
/// no workspace is open.
pub(crate) async fn with_workspace(
    host: &System,
    tool: &str,
    f: impl FnOnce(&Workspace) -> CallToolResult + Send + 'static,
) -> CallToolResult {
    let Some(ws) = host.workspace.as_ref().map(Arc::clone) else {
        return error(format!(
            "{tool} works on workspace files, and no workspace is open"
        ));
    };
    match tokio::task::spawn_blocking(carry(move || f(&ws))).await {
        Ok(result) => result,
        Err(e) => error(format!("internal error: {tool} failed ({e})")),
    }
}
