//! Who may read and write which workspace files: the team policy (`.cairn/policy.toml`,
//! committed with the project), the user's own grants, and a built-in deny list.
//!
//! Decisions are made on paths relative to the workspace root, with `/` separators, already
//! resolved beneath the root (the scope does that); globs match whole paths (`*` does not cross
//! `/`; `**` does). The deny list holds unless the user approved that very path: a blanket
//! `--yes` or "allow for this session" does not count.
//!
//! ```toml
//! # .cairn/policy.toml
//! [default]                 # everyone
//! read = ["**"]
//!
//! [groups.maintainers]
//! write = ["**"]
//!
//! [groups.docs]
//! write = ["docs/**", "*.md"]
//!
//! [users."ada@example.com"]
//! groups = ["maintainers"]
//!
//! [users."bob@example.com"]
//! groups = ["docs"]
//! read = ["**"]
//! ```

use std::collections::BTreeMap;

use globset::{Glob, GlobBuilder, GlobSet, GlobSetBuilder};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// One set of grants.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct Grants {
    pub read: Vec<String>,
    pub write: Vec<String>,
}

/// A user's entry: their groups and their own grants.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct UserEntry {
    pub groups: Vec<String>,
    pub read: Vec<String>,
    pub write: Vec<String>,
}

/// `.cairn/policy.toml`, or the `[access]` part of a user's config.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct AccessPolicy {
    /// Grants for everyone.
    pub default: Grants,
    pub groups: BTreeMap<String, Grants>,
    pub users: BTreeMap<String, UserEntry>,
}

/// Why a policy could not be used.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum AccessError {
    #[error("{source_name}: not a valid access policy: {message}")]
    Parse {
        source_name: String,
        message: String,
    },
    #[error("{source_name}: invalid glob `{glob}`: {message}")]
    Glob {
        source_name: String,
        glob: String,
        message: String,
    },
    #[error("{source_name}: user `{user}` names group `{group}`, which is not defined")]
    UnknownGroup {
        source_name: String,
        user: String,
        group: String,
    },
}

impl AccessPolicy {
    /// Parses TOML, checking every glob and group name.
    pub fn from_toml_str(text: &str, source_name: &str) -> Result<AccessPolicy, AccessError> {
        let policy: AccessPolicy =
            toml::from_str(text).map_err(|e: toml::de::Error| AccessError::Parse {
                source_name: source_name.to_string(),
                message: e.message().to_string(),
            })?;
        policy.validate(source_name)?;
        Ok(policy)
    }

    /// Checks every glob and group name.
    pub fn validate(&self, source_name: &str) -> Result<(), AccessError> {
        let policy = self;
        for (user, entry) in &policy.users {
            for group in &entry.groups {
                if !policy.groups.contains_key(group) {
                    return Err(AccessError::UnknownGroup {
                        source_name: source_name.to_string(),
                        user: user.clone(),
                        group: group.clone(),
                    });
                }
            }
        }
        let all = policy
            .groups
            .values()
            .chain(std::iter::once(&policy.default))
            .flat_map(|g| g.read.iter().chain(&g.write))
            .chain(
                policy
                    .users
                    .values()
                    .flat_map(|u| u.read.iter().chain(&u.write)),
            );
        for glob in all {
            glob_of(glob).map_err(|message| AccessError::Glob {
                source_name: source_name.to_string(),
                glob: glob.clone(),
                message,
            })?;
        }
        Ok(())
    }

    /// The grants that apply to `user`: everyone's, their groups', and their own.
    fn grants_for(&self, user: &str) -> Grants {
        let mut g = self.default.clone();
        if let Some(entry) = self.users.get(user) {
            for group in &entry.groups {
                if let Some(grants) = self.groups.get(group) {
                    g.read.extend(grants.read.iter().cloned());
                    g.write.extend(grants.write.iter().cloned());
                }
            }
            g.read.extend(entry.read.iter().cloned());
            g.write.extend(entry.write.iter().cloned());
        }
        g
    }
}

fn glob_of(pattern: &str) -> Result<Glob, String> {
    GlobBuilder::new(pattern)
        .literal_separator(true)
        .build()
        .map_err(|e| e.to_string())
}

fn set_of(patterns: &[String]) -> GlobSet {
    let mut b = GlobSetBuilder::new();
    for p in patterns {
        if let Ok(g) = glob_of(p) {
            b.add(g);
        }
    }
    b.build().unwrap_or_else(|_| GlobSet::empty())
}

/// Reading or writing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Operation {
    Read,
    Write,
}

/// What may happen to one path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Access {
    /// Allowed (reads under a read grant).
    Allow,
    /// Allowed after the user approves this call (writes under a write grant).
    Ask,
    /// On the built-in deny list: only an approval of this very path lets it through.
    AskExactPath { why: &'static str },
    /// Not granted.
    Deny { why: String },
}

/// Paths that hold secrets or run code, whatever the policy grants: (glob, why).
pub const DENY_LIST: &[(&str, &str)] = &[
    ("**/.env", "it usually holds secrets"),
    ("**/.env.*", "it usually holds secrets"),
    ("**/.envrc", "direnv runs it when you enter the directory"),
    ("**/*.pem", "it is a key or certificate"),
    ("**/*.key", "it is a private key"),
    ("**/id_rsa*", "it is an SSH key"),
    ("**/id_ed25519*", "it is an SSH key"),
    ("**/id_ecdsa*", "it is an SSH key"),
    ("**/*.p12", "it is a keystore"),
    ("**/*.pfx", "it is a keystore"),
    ("**/*.jks", "it is a keystore"),
    ("**/*.keystore", "it is a keystore"),
    (
        "**/.git/**",
        "it is git's own data (hooks and config run code)",
    ),
    ("**/.vscode/tasks.json", "VS Code runs its tasks"),
    (
        "**/.vscode/settings.json",
        "VS Code applies it, and it can run code",
    ),
    ("**/.bashrc", "the shell runs it"),
    ("**/.zshrc", "the shell runs it"),
    ("**/.profile", "the shell runs it"),
    ("**/.bash_profile", "the shell runs it"),
    ("**/.cairn/config.toml", "it is cairn's own configuration"),
    ("**/.cairn/policy.toml", "it is this policy"),
    ("**/.cairn/mcp.json", "it is cairn's own configuration"),
    ("**/.netrc", "it holds credentials"),
    ("**/.npmrc", "it can hold a registry token"),
    ("**/.pypirc", "it can hold a registry token"),
];

/// The decisions for one user, with the globs compiled once.
#[derive(Debug, Clone)]
pub struct AccessRules {
    user: String,
    /// Why the policy could not be used; when set, everything is refused (fail closed).
    broken: Option<String>,
    read: GlobSet,
    write: GlobSet,
    deny: Vec<(GlobSet, &'static str)>,
}

impl AccessRules {
    /// Rules for `user` from the team policy and the user's own grants (either may be absent).
    pub fn new(user: &str, team: Option<&AccessPolicy>, own: Option<&AccessPolicy>) -> AccessRules {
        let mut grants = Grants::default();
        if team.is_none() && own.is_none() {
            // No policy anywhere: the user may read everything and write everything (each write
            // still asked by the approval policy); the deny list still holds.
            grants.read.push("**".to_owned());
            grants.write.push("**".to_owned());
        }
        for policy in [team, own].into_iter().flatten() {
            let g = policy.grants_for(user);
            grants.read.extend(g.read);
            grants.write.extend(g.write);
        }
        // What one may write one may read.
        let read_and_write: Vec<String> =
            grants.read.iter().chain(&grants.write).cloned().collect();
        let deny = DENY_LIST
            .iter()
            .map(|(g, why)| (set_of(&[(*g).to_string()]), *why))
            .collect();
        AccessRules {
            user: user.to_string(),
            broken: None,
            read: set_of(&read_and_write),
            write: set_of(&grants.write),
            deny,
        }
    }

    /// Rules for a project whose policy cannot be used: every read and write is refused with
    /// `why`, so a damaged policy never widens access.
    pub fn broken(user: &str, why: String) -> AccessRules {
        AccessRules {
            user: user.to_string(),
            broken: Some(why),
            read: GlobSet::empty(),
            write: GlobSet::empty(),
            deny: Vec::new(),
        }
    }

    /// The user these rules are for.
    pub fn user(&self) -> &str {
        &self.user
    }

    /// What may happen to `path` (relative to the root, `/`-separated).
    pub fn decide(&self, path: &str, op: Operation) -> Access {
        if let Some(why) = &self.broken {
            return Access::Deny {
                why: format!("the access policy cannot be used: {why}"),
            };
        }
        // Deny-list matching ignores case: on case-insensitive file systems `.GIT/config` is
        // `.git/config`.
        let lower = path.to_lowercase();
        if let Some((_, why)) = self
            .deny
            .iter()
            .find(|(set, _)| set.is_match(path) || set.is_match(&lower))
        {
            return Access::AskExactPath { why };
        }
        match op {
            Operation::Read if self.read.is_match(path) => Access::Allow,
            Operation::Write if self.write.is_match(path) => Access::Ask,
            Operation::Read => Access::Deny {
                why: format!("no read grant for {} covers `{path}`", self.user),
            },
            Operation::Write => Access::Deny {
                why: format!("no write grant for {} covers `{path}`", self.user),
            },
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    const TEAM: &str = r#"
[default]
read = ["**"]

[groups.maintainers]
write = ["**"]

[groups.docs]
write = ["docs/**", "*.md"]

[users."ada@example.com"]
groups = ["maintainers"]

[users."bob@example.com"]
groups = ["docs"]

[users."eve@example.com"]
read = []
"#;

    #[track_caller]
    fn check(user: &str, path: &str, op: Operation, expected: &str) {
        let team = AccessPolicy::from_toml_str(TEAM, ".cairn/policy.toml").unwrap();
        let rules = AccessRules::new(user, Some(&team), None);
        let got = match rules.decide(path, op) {
            Access::Allow => "allow".to_string(),
            Access::Ask => "ask".to_string(),
            Access::AskExactPath { .. } => "exact".to_string(),
            Access::Deny { .. } => "deny".to_string(),
        };
        assert_eq!(got, expected, "{user} {op:?} {path}");
    }

    #[test]
    fn three_users_with_different_grants() {
        use Operation::*;
        // A maintainer writes anywhere (asked), reads anywhere.
        check("ada@example.com", "src/main.rs", Write, "ask");
        check("ada@example.com", "docs/a.md", Read, "allow");
        // The docs group writes docs and top-level Markdown only.
        check("bob@example.com", "docs/guide/intro.md", Write, "ask");
        check("bob@example.com", "README.md", Write, "ask");
        check("bob@example.com", "src/README.md", Write, "deny"); // `*` does not cross `/`
        check("bob@example.com", "src/main.rs", Write, "deny");
        check("bob@example.com", "src/main.rs", Read, "allow");
        // Someone the policy does not name gets only the defaults.
        check("eve@example.com", "src/main.rs", Read, "allow");
        check("eve@example.com", "src/main.rs", Write, "deny");
        check("mallory@example.com", "docs/a.md", Write, "deny");
    }

    #[test]
    fn the_deny_list_holds_whatever_the_grants() {
        use Operation::*;
        for path in [
            ".env",
            "config/.env.production",
            ".envrc",
            "keys/prod.pem",
            "home/id_ed25519",
            ".git/config",
            ".git/hooks/pre-commit",
            ".GIT/config",
            ".vscode/tasks.json",
            ".vscode/settings.json",
            ".bashrc",
            ".cairn/config.toml",
            ".cairn/policy.toml",
            "sub/.npmrc",
        ] {
            check("ada@example.com", path, Write, "exact");
            check("ada@example.com", path, Read, "exact");
        }
        check("ada@example.com", "src/env.rs", Write, "ask");
        check("ada@example.com", ".vscode/extensions.json", Write, "ask");
    }

    #[test]
    fn own_grants_add_to_the_team_policy() {
        let team = AccessPolicy::from_toml_str(TEAM, "team").unwrap();
        let own = AccessPolicy::from_toml_str(
            "[users.\"bob@example.com\"]\nwrite = [\"notes/**\"]\n",
            "user config",
        )
        .unwrap();
        let rules = AccessRules::new("bob@example.com", Some(&team), Some(&own));
        assert_eq!(
            rules.decide("notes/today.txt", Operation::Write),
            Access::Ask
        );
        let without = AccessRules::new("bob@example.com", Some(&team), None);
        assert!(matches!(
            without.decide("notes/today.txt", Operation::Write),
            Access::Deny { .. }
        ));
    }

    #[test]
    fn bad_policies_are_named() {
        let e =
            AccessPolicy::from_toml_str("[users.x]\ngroups = [\"nope\"]\n", "p.toml").unwrap_err();
        assert_eq!(
            e.to_string(),
            "p.toml: user `x` names group `nope`, which is not defined"
        );
        let e = AccessPolicy::from_toml_str("[default]\nread = [\"a[\"]\n", "p.toml").unwrap_err();
        assert!(
            e.to_string().starts_with("p.toml: invalid glob `a[`"),
            "{e}"
        );
        let e = AccessPolicy::from_toml_str("[default]\nwrite_all = true\n", "p.toml").unwrap_err();
        assert!(e.to_string().contains("unknown field `write_all`"), "{e}");
    }
}
