//! [`ExactApprovals`]: the approvals of exact protected paths the agent's gate holds while a
//! call runs (see `access.rs` for how the check uses them).

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use cairn_config::access::Operation;

/// Approvals of exact paths (canonical, absolute), each for one operation, held while the call
/// they were given for runs. Shared between the workspace and the agent's gate.
#[derive(Debug, Default)]
pub struct ExactApprovals {
    held: Mutex<HashSet<(PathBuf, Operation)>>,
}

impl ExactApprovals {
    pub fn new() -> Arc<ExactApprovals> {
        Arc::new(ExactApprovals::default())
    }

    /// Hold an approval of `path` for `op` until [`ExactApprovals::release`].
    pub fn hold(&self, path: &Path, op: Operation) {
        if let Ok(mut held) = self.held.lock() {
            held.insert((path.to_path_buf(), op));
        }
    }

    pub fn release(&self, path: &Path, op: Operation) {
        if let Ok(mut held) = self.held.lock() {
            held.remove(&(path.to_path_buf(), op));
        }
    }

    /// Whether an approval of `path` for `op` is held (a tool that keys approvals on objects
    /// other than files checks it itself).
    pub fn holds(&self, path: &Path, op: Operation) -> bool {
        self.held
            .lock()
            .map(|held| held.contains(&(path.to_path_buf(), op)))
            .unwrap_or(false)
    }
}
