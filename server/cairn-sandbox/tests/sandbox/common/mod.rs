//! What the sandbox's test files share.
#![allow(clippy::unwrap_used)]

use std::sync::Arc;

use cairn_workspace::Workspace;

/// A workspace with the user's access rules, at `dir/ws`, owned by `nobody` as a user's own
/// workspace belongs to the user (the tests run as root, and a sandbox never does).
pub fn protected_workspace(
    dir: &std::path::Path,
    files: &[(&str, &str)],
    approvals: Arc<cairn_workspace::ExactApprovals>,
) -> Arc<Workspace> {
    let ws = dir.join("ws");
    for (path, text) in files {
        let path = ws.join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    let chown = std::process::Command::new("chown")
        .args(["-hR", "65534:65534"])
        .arg(&ws)
        .status()
        .unwrap();
    assert!(chown.success());
    let rules = cairn_config::access::AccessRules::new("ada@example.com", None, None);
    Arc::new(
        Workspace::new(vec![ws])
            .unwrap()
            .with_access(move |_| rules.clone(), approvals),
    )
}
