//! Built-in tools, served in-process as a [`ToolHost`](cairn_agent::tools::ToolHost).
//!
//! The first category is `file` ([`FILE_TOOLS`]: reading, searching, editing, patching and
//! managing files, and the editor's diagnostics), one tool per module, built on `cairn_toolkit`. They act
//! on workspace files only through [`cairn_workspace::Workspace`], so every path the model names
//! is resolved inside a root, and reads see (and edits go through) the editor's open buffers.
//!
//! Every failure is an `is_error` result the model can read and act on, never a panic:
//! arguments are deserialised into `deny_unknown_fields` structs and a bad one is named before
//! the tool runs, the protected paths a call declares are refused before it runs (named, for
//! the agent's approval question), scope denials say what was refused and why, and an unknown
//! tool name is reported as such.

#![deny(missing_docs)]

mod apply_patch;
mod copy_file;
mod count;
mod create_file;
mod delete_file;
mod diff;
mod diff_files;
mod edit;
mod edit_file;
mod find_files;
mod get_diagnostics;
mod git;
mod glob;
mod grep;
mod head_tail;
mod insert_at_line;
mod list_directory;
mod make_directory;
mod move_file;
mod multi_edit;
mod numbered;
mod read_file;
mod read_many;
mod replace_in_files;
mod stat;
mod tree;
mod util;
mod walk;
mod write_file;

use std::sync::Arc;

use cairn_agent::tools::{PathApprovals, ProtectedPath};
use cairn_toolkit::{Entry, ToolSet};
use cairn_workspace::{ExactApprovals, Operation, Workspace};
use futures::future::BoxFuture;
use rmcp::model::CallToolResult;

pub use crate::git::{
    GIT_TOOLS, Git, cap as cap_output, date as git_date, git_tools, open_repository,
};

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

    /// An edit is followed by the editor's new diagnostics of the files it changed, when the
    /// editor sends them (`get_diagnostics::after_edit`).
    fn around_write<'a>(
        &'a self,
        call: BoxFuture<'a, CallToolResult>,
    ) -> BoxFuture<'a, CallToolResult> {
        get_diagnostics::after_edit(&self.workspace, call)
    }
}

/// The file tools, in the order listed.
pub const FILE_TOOLS: &[Entry<Files>] = &[
    Entry::of::<read_file::ReadFile>(),
    Entry::of::<list_directory::ListDirectory>(),
    Entry::of::<grep::Grep>(),
    Entry::of::<edit_file::EditFile>(),
    Entry::of::<read_many::ReadMany>(),
    Entry::of::<tree::Tree>(),
    Entry::of::<glob::Glob>(),
    Entry::of::<find_files::FindFiles>(),
    Entry::of::<stat::Stat>(),
    Entry::of::<head_tail::HeadTail>(),
    Entry::of::<count::Count>(),
    Entry::of::<diff_files::DiffFiles>(),
    Entry::of::<get_diagnostics::GetDiagnostics>(),
    Entry::of::<write_file::WriteFile>(),
    Entry::of::<create_file::CreateFile>(),
    Entry::of::<multi_edit::MultiEdit>(),
    Entry::of::<apply_patch::ApplyPatch>(),
    Entry::of::<insert_at_line::InsertAtLine>(),
    Entry::of::<delete_file::DeleteFile>(),
    Entry::of::<move_file::MoveFile>(),
    Entry::of::<copy_file::CopyFile>(),
    Entry::of::<make_directory::MakeDirectory>(),
    Entry::of::<replace_in_files::ReplaceInFiles>(),
];

/// The built-in file tools over one workspace.
///
/// Plug the editor's buffers into the workspace before building this:
/// `file_tools(Arc::new(Workspace::new(roots)?.with_overlay(overlay)))`.
pub fn file_tools(workspace: Arc<Workspace>) -> ToolSet<Files> {
    ToolSet::new(Files::new(workspace), FILE_TOOLS)
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
