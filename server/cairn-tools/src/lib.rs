//! Built-in tools, served in-process as a [`ToolHost`].
//!
//! The first category is `file` ([`TOOL_NAMES`]: reading, searching, editing, patching and
//! managing files). They act
//! on workspace files only through [`cairn_workspace::Workspace`], so every path the model names
//! is resolved inside a root, and reads see (and edits go through) the editor's open buffers.
//!
//! Every failure is an `is_error` result the model can read and act on, never a panic:
//! arguments are deserialised into `deny_unknown_fields` structs and a bad one is named, scope
//! denials say what was refused and why, and an unknown tool name is reported as such.

#![deny(missing_docs)]

mod apply_patch;
mod copy_file;
mod count;
mod create_file;
mod delete_file;
mod diff;
mod diff_files;
mod edit_file;
mod find_files;
mod git;
mod glob;
mod grep;
mod head_tail;
mod insert_at_line;
mod list_directory;
mod make_directory;
pub mod mcp_server;
mod move_file;
mod multi_edit;
mod read_file;
mod read_many;
mod replace_in_files;
mod stat;
mod tree;
mod util;
mod write_file;

use std::sync::Arc;

use cairn_agent::tools::{CallContext, Effect, PathApprovals, ProtectedPath, ToolHost, ToolInfo};
use cairn_workspace::{ExactApprovals, Operation, ScopeError, Workspace};
use futures::future::BoxFuture;
use rmcp::model::CallToolResult;
use serde_json::{Map, Value};

pub use crate::git::{GIT_TOOLS, Git, git_tools};
use crate::util::error_result;

/// The tool names this host serves, in the order listed.
pub const TOOL_NAMES: [&str; 22] = [
    "read_file",
    "list_directory",
    "grep",
    "edit_file",
    "read_many",
    "tree",
    "glob",
    "find_files",
    "stat",
    "head_tail",
    "count",
    "diff_files",
    "write_file",
    "create_file",
    "multi_edit",
    "apply_patch",
    "insert_at_line",
    "delete_file",
    "move_file",
    "copy_file",
    "make_directory",
    "replace_in_files",
];

/// What the file tools share: the workspace they act on.
#[derive(Debug, Clone)]
pub struct Files {
    workspace: Arc<Workspace>,
}

impl Files {
    /// The file tools' state over `workspace`.
    pub fn new(workspace: Arc<Workspace>) -> Files {
        Files { workspace }
    }

    /// The workspace the tools act on.
    pub fn workspace(&self) -> Arc<Workspace> {
        self.workspace.clone()
    }
}

impl cairn_toolkit::Host for Files {
    fn workspace(&self) -> Option<&Arc<Workspace>> {
        Some(&self.workspace)
    }
}

/// The file tools, in the order listed.
pub const FILE_TOOLS: &[cairn_toolkit::Entry<Files>] = &[cairn_toolkit::Entry::of::<stat::Stat>()];

/// The built-in file tools over one workspace.
///
/// Plug the editor's buffers into the workspace before building this:
/// `BuiltinTools::new(Arc::new(Workspace::new(roots)?.with_overlay(overlay)))`.
#[derive(Debug, Clone)]
pub struct BuiltinTools {
    workspace: Arc<Workspace>,
}

impl BuiltinTools {
    /// Tools acting on `workspace`.
    pub fn new(workspace: Arc<Workspace>) -> BuiltinTools {
        BuiltinTools { workspace }
    }

    /// The workspace the tools act on.
    pub fn workspace(&self) -> &Arc<Workspace> {
        &self.workspace
    }

    fn kit(&self) -> cairn_toolkit::ToolSet<Files> {
        cairn_toolkit::ToolSet::new(Files::new(self.workspace.clone()), FILE_TOOLS)
    }
}

impl ToolHost for BuiltinTools {
    fn list(&self) -> Vec<ToolInfo> {
        let file = |tool, effect, agent_only| ToolInfo {
            tool,
            effect,
            category: "file".to_owned(),
            agent_only,
            origin: None,
        };
        vec![
            file(read_file::definition(), Effect::Read, false),
            file(list_directory::definition(), Effect::Read, false),
            file(grep::definition(), Effect::Read, false),
            file(edit_file::definition(), Effect::Write, true),
            file(read_many::definition(), Effect::Read, false),
            file(tree::definition(), Effect::Read, false),
            file(glob::definition(), Effect::Read, false),
            file(find_files::definition(), Effect::Read, false),
            self.kit().list().remove(0),
            file(head_tail::definition(), Effect::Read, false),
            file(count::definition(), Effect::Read, false),
            file(diff_files::definition(), Effect::Read, false),
            file(write_file::definition(), Effect::Write, true),
            file(create_file::definition(), Effect::Write, true),
            file(multi_edit::definition(), Effect::Write, true),
            file(apply_patch::definition(), Effect::Write, true),
            file(insert_at_line::definition(), Effect::Write, true),
            file(delete_file::definition(), Effect::Write, true),
            file(move_file::definition(), Effect::Write, true),
            file(copy_file::definition(), Effect::Write, true),
            file(make_directory::definition(), Effect::Write, true),
            file(replace_in_files::definition(), Effect::Write, true),
        ]
    }

    fn call(
        &self,
        name: &str,
        arguments: serde_json::Map<String, serde_json::Value>,
        ctx: CallContext,
    ) -> BoxFuture<'_, CallToolResult> {
        let name = name.to_owned();
        let ws = self.workspace.clone();
        Box::pin(async move {
            tracing::debug!(tool = %name, call_id = %ctx.call_id, "built-in tool call");
            if let Some(refusal) = protected_refusal(&ws, &name, &arguments) {
                return refusal;
            }
            match name.as_str() {
                "read_file" => read_file::call(ws, arguments).await,
                "list_directory" => list_directory::call(ws, arguments).await,
                "grep" => grep::call(ws, arguments, ctx).await,
                "edit_file" => edit_file::call(ws, arguments).await,
                "read_many" => read_many::call(ws, arguments).await,
                "tree" => tree::call(ws, arguments).await,
                "glob" => glob::call(ws, arguments).await,
                "find_files" => find_files::call(ws, arguments).await,
                "stat" => self.kit().call("stat", arguments, ctx).await,
                "head_tail" => head_tail::call(ws, arguments).await,
                "count" => count::call(ws, arguments).await,
                "diff_files" => diff_files::call(ws, arguments).await,
                "write_file" => write_file::call(ws, arguments).await,
                "create_file" => create_file::call(ws, arguments).await,
                "multi_edit" => multi_edit::call(ws, arguments).await,
                "apply_patch" => apply_patch::call(ws, arguments).await,
                "insert_at_line" => insert_at_line::call(ws, arguments).await,
                "delete_file" => delete_file::call(ws, arguments).await,
                "move_file" => move_file::call(ws, arguments).await,
                "copy_file" => copy_file::call(ws, arguments).await,
                "make_directory" => make_directory::call(ws, arguments).await,
                "replace_in_files" => replace_in_files::call(ws, arguments).await,
                other => error_result(format!(
                    "unknown tool `{other}`; the built-in file tools are {}",
                    TOOL_NAMES.join(", ")
                )),
            }
        })
    }
}

/// The path arguments of a call, with what the tool does to each. Directory arguments of the
/// walking tools are not listed: a walk skips what the user may not read.
fn path_arguments(name: &str, arguments: &Map<String, Value>) -> Vec<(String, Operation)> {
    let one = |key: &str| {
        arguments
            .get(key)
            .and_then(Value::as_str)
            .map(str::to_owned)
    };
    let many = |key: &str| -> Vec<String> {
        arguments
            .get(key)
            .and_then(Value::as_array)
            .map(|a| {
                a.iter()
                    .filter_map(Value::as_str)
                    .map(str::to_owned)
                    .collect()
            })
            .unwrap_or_default()
    };
    let with = |paths: Vec<Option<String>>, op| paths.into_iter().flatten().map(move |p| (p, op));
    use Operation::{Read, Write};
    match name {
        "read_file" | "head_tail" => with(vec![one("path")], Read).collect(),
        "read_many" | "count" => many("paths").into_iter().map(|p| (p, Read)).collect(),
        "diff_files" => with(vec![one("a"), one("b")], Read).collect(),
        "edit_file" | "write_file" | "create_file" | "multi_edit" | "insert_at_line"
        | "delete_file" | "make_directory" => with(vec![one("path")], Write).collect(),
        "move_file" => with(vec![one("from"), one("to")], Write).collect(),
        "copy_file" => with(vec![one("from")], Read)
            .chain(with(vec![one("to")], Write))
            .collect(),
        _ => Vec::new(),
    }
}

/// Before a tool runs: a refusal naming the protected paths it would touch and has no approval
/// for, carrying them in `_meta` so the agent can ask the user about exactly those paths.
fn protected_refusal(
    ws: &Workspace,
    name: &str,
    arguments: &Map<String, Value>,
) -> Option<CallToolResult> {
    let mut protected = Vec::new();
    let mut messages = Vec::new();
    for (requested, op) in path_arguments(name, arguments) {
        // A path that does not resolve is the tool's to report.
        let Ok(path) = ws.resolve(&requested) else {
            continue;
        };
        if let Err(e @ ScopeError::Protected { .. }) = ws.check(&path, op) {
            if let ScopeError::Protected {
                path: shown,
                abs,
                operation,
                why,
            } = &e
            {
                protected.push(ProtectedPath {
                    path: shown.clone(),
                    key: abs.display().to_string(),
                    operation: (*operation).to_owned(),
                    why: (*why).to_owned(),
                });
            }
            messages.push(e.to_string());
        }
    }
    if protected.is_empty() {
        return None;
    }
    Some(cairn_agent::tools::attach_protected(
        error_result(messages.join("\n")),
        &protected,
    ))
}

/// Holds approvals of protected paths in the workspace's [`ExactApprovals`], for the agent.
#[derive(Debug, Clone)]
pub struct WorkspacePathApprovals(pub Arc<ExactApprovals>);

impl PathApprovals for WorkspacePathApprovals {
    fn hold(&self, paths: &[ProtectedPath]) {
        for (path, op) in paths.iter().filter_map(approval_of) {
            self.0.hold(&path, op);
        }
    }

    fn release(&self, paths: &[ProtectedPath]) {
        for (path, op) in paths.iter().filter_map(approval_of) {
            self.0.release(&path, op);
        }
    }
}

fn approval_of(p: &ProtectedPath) -> Option<(std::path::PathBuf, Operation)> {
    let op = match p.operation.as_str() {
        "read" => Operation::Read,
        "write" => Operation::Write,
        _ => return None,
    };
    Some((std::path::PathBuf::from(&p.key), op))
}

#[cfg(test)]
mod tests;
