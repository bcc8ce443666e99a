//! [`Db`], what every database tool shares: the configured connections, where their passwords
//! come from, the workspace, the result limits and the export redactor.
//!
//! Its own file, apart from `lib.rs`, so that the tools can import it without importing the
//! list of tools, which imports them.

use std::sync::Arc;

use cairn_workspace::Workspace;

use crate::conn::{Connection, DbSpec, PasswordSource};
use crate::error::DbError;
use crate::table::Limits;

/// What the database tools share: the configured connections and, when a folder is open, the
/// workspace (`sqlite:` files are opened through its scope).
pub struct Db {
    pub(crate) connections: Vec<Connection>,
    pub(crate) passwords: PasswordSource,
    pub(crate) workspace: Option<Arc<Workspace>>,
    pub(crate) limits: Limits,
    /// Takes vault values out of what an export writes into the workspace.
    pub(crate) redactor: Option<Arc<dyn cairn_agent::redact::Redact>>,
}

impl std::fmt::Debug for Db {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Db")
            .field("connections", &self.connections)
            .finish_non_exhaustive()
    }
}

impl cairn_toolkit::Host for Db {
    fn workspace(&self) -> Option<&Arc<Workspace>> {
        self.workspace.as_ref()
    }
}

impl Db {
    /// The tools' host over `connections`; passwords come from `passwords` when a connection
    /// is opened. A connection whose spec is invalid is left out, and the reason returned.
    pub fn new(
        specs: &[DbSpec],
        passwords: PasswordSource,
        workspace: Option<Arc<Workspace>>,
    ) -> (Db, Vec<(String, DbError)>) {
        let mut connections = Vec::new();
        let mut problems = Vec::new();
        for spec in specs {
            match Connection::parse(spec) {
                Ok(c) => connections.push(c),
                Err(e) => problems.push((spec.name.clone(), e)),
            }
        }
        let db = Db {
            connections,
            passwords,
            workspace,
            limits: Limits::default(),
            redactor: None,
        };
        (db, problems)
    }

    /// Caps on what a result shows (rows, bytes, cell length).
    pub fn with_limits(mut self, limits: Limits) -> Db {
        self.limits = limits;
        self
    }

    /// The redactor an export passes each value through before it is written (a password a
    /// table holds, in any encoding the redactor knows, becomes a marker in the file).
    pub fn with_redactor(mut self, redactor: Arc<dyn cairn_agent::redact::Redact>) -> Db {
        self.redactor = Some(redactor);
        self
    }

    pub fn connections(&self) -> &[Connection] {
        &self.connections
    }

    pub(crate) fn connection(&self, name: &str) -> Result<&Connection, DbError> {
        self.connections
            .iter()
            .find(|c| c.name == name)
            .ok_or_else(|| DbError::UnknownConnection {
                name: name.to_owned(),
                known: self.connections.iter().map(|c| c.name.clone()).collect(),
            })
    }
}
