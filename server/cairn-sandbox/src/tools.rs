//! The code-execution tools (category `code`), one type per file, served in-process as the
//! [`ToolSet`] [`code_tools`] builds from [`CODE_TOOLS`].
//!
//! Arguments are `deny_unknown_fields` structs: a model that sends `image`, `privileged`,
//! `binds`, `env` or any other knob gets an error naming it, and nothing reaches the engine.
//! The two powers a call may ask for, `network` and `workspace_write`, are asked of the user by
//! the agent's gate under their own effects; the tool only applies what was approved.

mod copy_into_sandbox;
mod copy_out_of_sandbox;
mod install_packages;
mod list_sandboxes;
mod python_session;
mod run_bash;
mod run_file;
mod run_go;
mod run_node;
mod run_perl;
mod run_python;
mod run_ruby;
mod run_rust;
mod run_tests;
mod runner;
mod stop_sandbox;

use std::sync::Arc;

use cairn_agent::tools::{EditReport, attach_edits};
use cairn_toolkit::reply::{error, text};
use cairn_toolkit::{CallContext, Entry, ToolSet};
use cairn_workspace::{Access, Operation, Workspace};
use rmcp::model::CallToolResult;

use crate::exec::RunReport;
use crate::service::{RunOptions, Sandbox};

/// What the code tools share: one sandbox service and (when a folder is open) the workspace.
pub struct Code {
    sandbox: Arc<Sandbox>,
    workspace: Option<Arc<Workspace>>,
}

impl std::fmt::Debug for Code {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Code").finish_non_exhaustive()
    }
}

impl cairn_toolkit::Host for Code {
    fn workspace(&self) -> Option<&Arc<Workspace>> {
        self.workspace.as_ref()
    }
}

/// The code tools, in the order listed.
pub const CODE_TOOLS: &[Entry<Code>] = &[
    Entry::of::<run_python::RunPython>(),
    Entry::of::<run_node::RunNode>(),
    Entry::of::<run_bash::RunBash>(),
    Entry::of::<run_ruby::RunRuby>(),
    Entry::of::<run_go::RunGo>(),
    Entry::of::<run_rust::RunRust>(),
    Entry::of::<run_perl::RunPerl>(),
    Entry::of::<run_file::RunFile>(),
    Entry::of::<run_tests::RunTests>(),
    Entry::of::<python_session::PythonSession>(),
    Entry::of::<install_packages::InstallPackages>(),
    Entry::of::<list_sandboxes::ListSandboxes>(),
    Entry::of::<stop_sandbox::StopSandbox>(),
    Entry::of::<copy_into_sandbox::CopyIntoSandbox>(),
    Entry::of::<copy_out_of_sandbox::CopyOutOfSandbox>(),
];

/// The code tools over `sandbox` and, when a folder is open, `workspace` (mounted into runs,
/// and where `run_file`, `run_tests` and the copies find their files).
pub fn code_tools(sandbox: Arc<Sandbox>, workspace: Option<Arc<Workspace>>) -> ToolSet<Code> {
    ToolSet::new(Code { sandbox, workspace }, CODE_TOOLS)
}

/// The chat a call belongs to; its Python session is kept under this key.
fn session(cx: &CallContext) -> &str {
    if cx.session_id.is_empty() {
        "default"
    } else {
        cx.session_id.as_str()
    }
}

/// The result of a finished run: its report, as an error when the program failed; with the
/// workspace files a run on a sent copy changed, reported as edits like the file tools' own.
fn report_result(report: &RunReport, sandbox: &Sandbox) -> CallToolResult {
    let body = report.to_text(sandbox.limits());
    let result = if report.failed() {
        error(body)
    } else {
        text(body)
    };
    match &report.applied {
        Some(applied) if !applied.is_empty() => {
            let edits: Vec<EditReport> = applied
                .edits()
                .into_iter()
                .map(|(uri, applied, reason)| EditReport {
                    uri,
                    applied,
                    reason,
                })
                .collect();
            attach_edits(result, &edits)
        }
        _ => result,
    }
}

/// A tool's outcome: its result, or the message of what stopped it as an error result.
fn outcome(result: Result<CallToolResult, String>) -> CallToolResult {
    result.unwrap_or_else(error)
}

impl Code {
    /// Runs `run` (a program over the workspace), checkpointing the files it changes when the
    /// workspace is mounted writable, so a rewind can undo them: the files are read before it
    /// runs and compared after.
    async fn checkpointed<T>(
        &self,
        workspace_write: bool,
        run: impl std::future::Future<Output = T>,
    ) -> T {
        let ws = self.workspace.as_ref().filter(|_| workspace_write);
        let snapshot = match ws {
            Some(ws) => cairn_workspace::off_thread(ws, |ws| ws.snapshot_before_program())
                .await
                .ok()
                .flatten(),
            None => None,
        };
        let out = run.await;
        if let (Some(ws), Some(snapshot)) = (ws, snapshot) {
            let _ =
                cairn_workspace::off_thread(ws, move |ws| ws.record_after_program(snapshot)).await;
        }
        out
    }

    /// The workspace, for the tools that need its files.
    fn open_workspace(&self) -> Result<&Arc<Workspace>, String> {
        self.workspace
            .as_ref()
            .ok_or_else(|| "no workspace folder is open, so there is no file to run".to_owned())
    }

    /// The run options for an approved call: the workspace mounted read-only (writable only
    /// when asked, approved by the gate, and allowed by the user's grants, and then with its
    /// files that run code still read-only), its secrets, unreadable files and `.git` hidden,
    /// all of them or the run is refused; run as a user who
    /// reads the workspace as the user does, or refused before a container starts.
    async fn options(
        &self,
        network: bool,
        workspace_write: bool,
        dir: Option<String>,
    ) -> Result<RunOptions, String> {
        let Some(ws) = &self.workspace else {
            if workspace_write {
                return Err("no workspace folder is open to mount writable".into());
            }
            return Ok(RunOptions {
                network,
                workspace: None,
                working_dir: dir,
            });
        };
        let root = ws.resolve(".").map_err(|e| e.to_string())?;
        if workspace_write && let Access::Deny { why } = ws.access_of(&root, Operation::Write) {
            return Err(format!(
                "refused to mount the workspace writable: {why}; run without workspace_write"
            ));
        }
        let mount = self.sandbox.workspace_mount(ws, workspace_write).await?;
        Ok(RunOptions {
            network,
            workspace: Some(mount),
            working_dir: dir,
        })
    }
}
