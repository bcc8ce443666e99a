//! Per-user permissions applied to every read and write of workspace content.
//!
//! The scope (`path.rs`) decides whether a path is inside the workspace; this module decides
//! whether *this user* may read or write it: the grants of the team policy and the user's own
//! config, and the built-in deny list (`cairn_config::access`). The check runs in the `fs`
//! operations themselves, so no tool can forget it.
//!
//! A path on the deny list passes only while an approval of that exact path is held in
//! [`ExactApprovals`]. Only the agent's gate adds one, after the user approved that very path,
//! and removes it when the call it was given for has finished; a blanket `--yes` or "allow for
//! this session" never adds one.

use std::path::Path;
use std::sync::Arc;

use cairn_config::access::{Access, AccessRules, Operation};

use crate::approvals::ExactApprovals;
use crate::error::ScopeError;
use crate::path::WorkspacePath;
use crate::workspace::Workspace;

/// The name an operation goes by in messages.
pub(crate) fn op_word(op: Operation) -> &'static str {
    match op {
        Operation::Read => "read",
        Operation::Write => "write",
    }
}

impl Workspace {
    /// Apply each root's rules (the user's grants under that project's policy, and the deny
    /// list) to every read and write; approvals of protected paths are looked up in `approvals`.
    pub fn with_access(
        mut self,
        rules_for_root: impl Fn(&Path) -> AccessRules,
        approvals: Arc<ExactApprovals>,
    ) -> Workspace {
        self.access = self
            .roots
            .iter()
            .map(|root| (root.clone(), Arc::new(rules_for_root(root))))
            .collect();
        self.approvals = approvals;
        self
    }

    /// What the user's policy says of `path` for `op`, without any held approval. Without
    /// rules (a workspace built for a test or a benchmark) everything is allowed.
    pub fn access_of(&self, path: &WorkspacePath, op: Operation) -> Access {
        if self.access.is_empty() {
            return Access::Allow;
        }
        match self.access.iter().find(|(root, _)| root == path.root()) {
            Some((_, rules)) => {
                let canonical = rules.decide(&policy_path(path.relative()), op);
                match path.named() {
                    // Named through a symlink: the stricter of the two names' decisions.
                    Some(named) => stricter(canonical, rules.decide(&policy_path(named), op)),
                    None => canonical,
                }
            }
            // Every root gets rules in `with_access`; a path in none of them is not granted.
            None => Access::Deny {
                why: "no access rules cover this root".to_owned(),
            },
        }
    }

    /// True when every path under the directory `path` is write-protected by the deny list (a
    /// `dir/**` entry such as `.github/workflows/**`), so a file created in it would be too.
    pub fn protects_everything_under(&self, path: &WorkspacePath) -> bool {
        self.access
            .iter()
            .find(|(root, _)| root == path.root())
            .is_some_and(|(_, rules)| {
                rules.protects_everything_under(&policy_path(path.relative()))
            })
    }

    /// True when the contents of `path` may be shown (search, read many): allowed outright, or
    /// protected with an approval of this path held.
    pub fn may_read(&self, path: &WorkspacePath) -> bool {
        self.check(path, Operation::Read).is_ok()
    }

    /// `Ok` when `op` on `path` may go ahead now. `Ask` counts as allowed here: asking is the
    /// gate's job before the call, on the tool's effect.
    pub fn check(&self, path: &WorkspacePath, op: Operation) -> Result<(), ScopeError> {
        match self.access_of(path, op) {
            Access::Allow | Access::Ask => Ok(()),
            Access::AskExactPath { why } => {
                if self.approvals.holds(path.as_path(), op) {
                    Ok(())
                } else {
                    Err(ScopeError::Protected {
                        path: path.display_path(),
                        abs: path.as_path().to_path_buf(),
                        operation: op_word(op),
                        why,
                    })
                }
            }
            Access::Deny { why } => Err(ScopeError::NotGranted {
                path: path.display_path(),
                operation: op_word(op),
                why,
            }),
        }
    }
}

/// The more restrictive of two decisions.
fn stricter(a: Access, b: Access) -> Access {
    let rank = |x: &Access| match x {
        Access::Allow => 0,
        Access::Ask => 1,
        Access::AskExactPath { .. } => 2,
        Access::Deny { .. } => 3,
    };
    if rank(&b) > rank(&a) { b } else { a }
}

/// The path the policy globs match: relative to the root, `/`-separated.
fn policy_path(rel: &Path) -> String {
    let parts: Vec<String> = rel
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    if parts.is_empty() {
        ".".to_owned()
    } else {
        parts.join("/")
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use cairn_config::access::AccessPolicy;

    use super::*;

    const TEAM: &str = r#"
[default]
read = ["**"]

[groups.maintainers]
write = ["**"]

[groups.docs]
write = ["docs/**"]

[users."ada@example.com"]
groups = ["maintainers"]

[users."bob@example.com"]
groups = ["docs"]

[users."eve@example.com"]
"#;

    fn workspace_for(user: &str) -> (tempfile::TempDir, Workspace, Arc<ExactApprovals>) {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("src")).unwrap();
        std::fs::create_dir_all(dir.path().join("docs")).unwrap();
        std::fs::write(dir.path().join("src/main.rs"), "fn main() {}\n").unwrap();
        std::fs::write(dir.path().join(".env"), "TOKEN=s3cret\n").unwrap();
        let team = AccessPolicy::from_toml_str(TEAM, "policy.toml").unwrap();
        let approvals = ExactApprovals::new();
        let ws = Workspace::new(vec![dir.path().to_path_buf()])
            .unwrap()
            .with_access(
                |_| AccessRules::new(user, Some(&team), None),
                approvals.clone(),
            );
        (dir, ws, approvals)
    }

    #[test]
    fn three_users_write_only_where_granted() {
        for (user, src_write, docs_write) in [
            ("ada@example.com", true, true),
            ("bob@example.com", false, true),
            ("eve@example.com", false, false),
        ] {
            let (dir, ws, _) = workspace_for(user);
            let src = ws.resolve("src/main.rs").unwrap();
            let result = ws.write_text_atomic(&src, "changed\n");
            assert_eq!(result.is_ok(), src_write, "{user}: {result:?}");
            if !src_write {
                let e = result.unwrap_err();
                assert!(matches!(e, ScopeError::NotGranted { .. }), "{e:?}");
                assert_eq!(
                    e.to_string(),
                    format!(
                        "refused to write `src/main.rs`: no write grant for {user} covers `src/main.rs`"
                    )
                );
                let left = std::fs::read_to_string(dir.path().join("src/main.rs")).unwrap();
                assert_eq!(left, "fn main() {}\n", "{user}: the file is unchanged");
            }
            let doc = ws.resolve("docs/new.md").unwrap();
            assert_eq!(
                ws.create_text_exclusive(&doc, "# hi\n").is_ok(),
                docs_write,
                "{user}"
            );
            assert_eq!(
                dir.path().join("docs/new.md").exists(),
                docs_write,
                "{user}"
            );
            // Everyone reads.
            assert!(ws.read_text(&src).is_ok(), "{user}");
        }
    }

    #[test]
    fn a_protected_path_passes_only_while_its_approval_is_held() {
        let (_dir, ws, approvals) = workspace_for("ada@example.com");
        let env = ws.resolve(".env").unwrap();
        let e = ws.read_text(&env).unwrap_err();
        assert!(
            matches!(
                &e,
                ScopeError::Protected {
                    operation: "read",
                    ..
                }
            ),
            "{e:?}"
        );
        assert!(
            e.to_string()
                .contains("only the user's approval of this exact path"),
            "{e}"
        );
        assert!(!ws.may_read(&env));
        // An approval of another operation or another path does not count.
        approvals.hold(env.as_path(), Operation::Write);
        approvals.hold(&env.as_path().with_file_name(".env2"), Operation::Read);
        assert!(ws.read_text(&env).is_err());
        approvals.hold(env.as_path(), Operation::Read);
        assert_eq!(ws.read_text(&env).unwrap().0, "TOKEN=s3cret\n");
        approvals.release(env.as_path(), Operation::Read);
        assert!(ws.read_text(&env).is_err());
    }

    #[cfg(unix)]
    #[test]
    fn a_symlinked_git_directory_is_still_protected() {
        let (dir, ws, _) = workspace_for("ada@example.com");
        std::fs::create_dir_all(dir.path().join("gitdir/hooks")).unwrap();
        std::os::unix::fs::symlink("gitdir", dir.path().join(".git")).unwrap();
        let hook = ws.resolve(".git/hooks/pre-commit").unwrap();
        let e = ws
            .write_text_atomic(&hook, "#!/bin/sh\ntouch pwned\n")
            .unwrap_err();
        assert!(matches!(e, ScopeError::Protected { .. }), "{e:?}");
        assert!(!dir.path().join("gitdir/hooks/pre-commit").exists());
        // And the other way round: a link that names an ordinary path but lands in `.git/`.
        std::fs::remove_file(dir.path().join(".git")).unwrap();
        std::fs::rename(dir.path().join("gitdir"), dir.path().join(".git")).unwrap();
        std::os::unix::fs::symlink(".git/hooks", dir.path().join("hooks")).unwrap();
        let hook = ws.resolve("hooks/pre-commit").unwrap();
        assert!(matches!(
            ws.write_text_atomic(&hook, "x").unwrap_err(),
            ScopeError::Protected { .. }
        ));
        assert!(!dir.path().join(".git/hooks/pre-commit").exists());
    }

    #[test]
    fn a_broken_policy_refuses_everything() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.txt"), "a").unwrap();
        let ws = Workspace::new(vec![dir.path().to_path_buf()])
            .unwrap()
            .with_access(
                |_| AccessRules::broken("ada@example.com", "policy.toml: bad".into()),
                ExactApprovals::new(),
            );
        let e = ws.read_text(&ws.resolve("a.txt").unwrap()).unwrap_err();
        assert!(
            e.to_string()
                .contains("the access policy cannot be used: policy.toml: bad"),
            "{e}"
        );
    }
}
