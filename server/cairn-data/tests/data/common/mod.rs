//! What the data tools' test files share: the tools over a real workspace under the user's
//! default access rules, as the binary builds them.

use std::path::Path;
use std::sync::Arc;

use cairn_data::{Data, Limits, data_tools};
use cairn_toolkit::ToolSet;
use cairn_workspace::{AccessRules, ExactApprovals, Workspace};

/// The tools over `dir` with the default limits.
pub fn tools(dir: &Path) -> ToolSet<Data> {
    tools_with(dir, Limits::default())
}

/// The tools over `dir` with `limits`.
pub fn tools_with(dir: &Path, limits: Limits) -> ToolSet<Data> {
    // The user's rules as the binary applies them: `.env` and other secrets are protected.
    #[allow(clippy::unwrap_used)]
    let ws = Workspace::new(vec![dir.to_path_buf()])
        .unwrap()
        .with_access(
            |_| AccessRules::new("ada@example.com", None, None),
            ExactApprovals::new(),
        );
    data_tools(Data::new(Some(Arc::new(ws))).with_limits(limits))
}
