//! What a call touches in the workspace, as its tool declares it, and the check of those paths
//! against the protected ones before the tool runs.

use cairn_agent::tools::{ProtectedPath, attach_protected};
use cairn_workspace::{Operation, ScopeError, Workspace};
use rmcp::model::CallToolResult;

use crate::reply;

/// The workspace paths one call touches, each with what it does to it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[must_use]
pub struct Paths {
    uses: Vec<(String, Operation)>,
}

impl Paths {
    /// The call touches no workspace file.
    pub fn none() -> Paths {
        Paths::default()
    }

    /// The call only walks directories; the walk itself skips what the user may not read, so
    /// the directories are not checked here.
    pub fn walks() -> Paths {
        Paths::default()
    }

    /// The call looks at names or metadata only, never contents (the workspace scope still
    /// refuses paths outside the roots).
    pub fn metadata() -> Paths {
        Paths::default()
    }

    /// The call reads `path`.
    pub fn read(path: impl Into<String>) -> Paths {
        Paths::none().and_read(path)
    }

    /// The call writes (creates, changes, moves or deletes) `path`.
    pub fn write(path: impl Into<String>) -> Paths {
        Paths::none().and_write(path)
    }

    /// The call reads each of `paths`.
    pub fn read_all<S: Into<String>>(paths: impl IntoIterator<Item = S>) -> Paths {
        paths.into_iter().fold(Paths::none(), Paths::and_read)
    }

    /// ...and reads `path`.
    pub fn and_read(mut self, path: impl Into<String>) -> Paths {
        self.uses.push((path.into(), Operation::Read));
        self
    }

    /// ...and writes `path`.
    pub fn and_write(mut self, path: impl Into<String>) -> Paths {
        self.uses.push((path.into(), Operation::Write));
        self
    }

    /// ...and reads `path`, when there is one.
    pub fn and_read_opt(self, path: Option<&str>) -> Paths {
        match path {
            Some(p) => self.and_read(p),
            None => self,
        }
    }

    /// ...and writes `path`, when there is one.
    pub fn and_write_opt(self, path: Option<&str>) -> Paths {
        match path {
            Some(p) => self.and_write(p),
            None => self,
        }
    }

    /// The paths and operations, in the order declared.
    pub fn uses(&self) -> &[(String, Operation)] {
        &self.uses
    }

    /// Whether the call touches no declared path.
    pub fn is_empty(&self) -> bool {
        self.uses.is_empty()
    }

    /// A refusal naming the protected paths among these that have no approval, carrying them
    /// for the agent; `None` when the call may go on. A path that does not resolve is left to
    /// the tool, which reports it in its own words. The tool set checks what `paths()`
    /// declares; a tool that learns what it touches only while it runs (a checkout) checks that
    /// with this too.
    pub fn refusal(&self, ws: &Workspace) -> Option<CallToolResult> {
        let mut protected = Vec::new();
        let mut messages = Vec::new();
        for (requested, op) in &self.uses {
            let Ok(path) = ws.resolve(requested) else {
                continue;
            };
            if let Err(e) = ws.check(&path, *op)
                && let ScopeError::Protected {
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
                messages.push(e.to_string());
            }
        }
        if protected.is_empty() {
            return None;
        }
        Some(attach_protected(
            reply::error(messages.join("\n")),
            &protected,
        ))
    }
}
