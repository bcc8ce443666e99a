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

/// Why a CI configuration file is protected.
const CI: &str = "CI runs it on the next push, with the repository's secrets";
/// Why a shell start-up file is protected.
const SHELL: &str = "the shell runs it";

/// Paths that hold secrets or run code, whatever the policy grants: (glob, why). Globs are
/// lower-case: paths are also matched lower-cased, so `Jenkinsfile` and `.GIT` are caught.
///
/// "Runs code" means runs without the user asking for it: on opening the folder or a file, on
/// entering the directory, on every start of a tool, on the next push or commit, or by redirecting
/// what a command the user types runs (a wrapper, a toolchain, a package index). Project source
/// that a build runs (`build.rs`, `Makefile`, `package.json` scripts, `setup.py`, `conftest.py`,
/// `Dockerfile`) is not listed: it is the code the agent is there to edit, and the user runs it
/// by building.
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
    // Git.
    (
        "**/.git/**",
        "it is git's own data (hooks and config run code)",
    ),
    (
        "**/.git",
        "it is git's own data; a `.git` file points git at another repository",
    ),
    (
        "**/.gitmodules",
        "git fetches and checks out the repositories it names on a recursive clone or submodule update",
    ),
    (
        "**/.gitconfig",
        "git applies it as your configuration when this is your home directory, and configuration can run commands",
    ),
    (
        "**/.githooks/**",
        "git runs these hooks on every commit when `core.hooksPath` names the directory",
    ),
    (
        "**/.pre-commit-config.yaml",
        "pre-commit runs the hooks it lists on every commit",
    ),
    ("**/.husky/**", "husky runs these hooks on every commit"),
    ("**/lefthook.*", "lefthook runs its commands on git hooks"),
    ("**/.lefthook.*", "lefthook runs its commands on git hooks"),
    (
        "**/lefthook-local.*",
        "lefthook runs its commands on git hooks",
    ),
    (
        "**/.lefthook-local.*",
        "lefthook runs its commands on git hooks",
    ),
    // Editors.
    ("**/.vscode/tasks.json", "VS Code runs its tasks"),
    (
        "**/.vscode/settings.json",
        "VS Code applies it, and it can run code",
    ),
    (
        "**/.vscode/launch.json",
        "VS Code runs the programs and pre-launch tasks it names when you start debugging",
    ),
    (
        "**/*.code-workspace",
        "VS Code applies its settings, tasks and launch configurations",
    ),
    (
        "**/.idea/**",
        "JetBrains IDEs run the run configurations, startup tasks and external tools it holds",
    ),
    (
        "**/.exrc",
        "Vim and Neovim run it on start when 'exrc' is set",
    ),
    ("**/.nvimrc", "Neovim runs it on start when 'exrc' is set"),
    ("**/.nvim.lua", "Neovim runs it on start when 'exrc' is set"),
    (
        "**/.vimrc",
        "Vim runs it on start when this is your home directory",
    ),
    (
        "**/.helix/languages.toml",
        "Helix starts the language servers it names (any command) when you open a file",
    ),
    (
        "**/.helix/config.toml",
        "Helix applies it, and it can name commands to run",
    ),
    (
        "**/.zed/**",
        "Zed applies its settings (language servers and shells are commands) and runs its tasks",
    ),
    (
        "**/.dir-locals.el",
        "Emacs applies it when a file here is opened, and its `eval` entries run code",
    ),
    (
        "**/.dir-locals-2.el",
        "Emacs applies it when a file here is opened, and its `eval` entries run code",
    ),
    // Shells.
    ("**/.bashrc", SHELL),
    ("**/.zshrc", SHELL),
    ("**/.profile", SHELL),
    ("**/.bash_profile", SHELL),
    ("**/.bash_login", SHELL),
    ("**/.bash_logout", SHELL),
    ("**/.zshenv", SHELL),
    ("**/.zprofile", SHELL),
    ("**/.zlogin", SHELL),
    // Cargo and Rust.
    (
        "**/.cargo/config",
        "Cargo runs the `build.rustc-wrapper`, runners and linkers it names on the next build",
    ),
    (
        "**/.cargo/config.toml",
        "Cargo runs the `build.rustc-wrapper`, runners and linkers it names on the next build",
    ),
    ("**/.cargo/credentials", "it holds a registry token"),
    ("**/.cargo/credentials.toml", "it holds a registry token"),
    (
        "**/rust-toolchain",
        "rustup runs the toolchain it names (any directory, with `path`) for every cargo and rustc command here",
    ),
    (
        "**/rust-toolchain.toml",
        "rustup runs the toolchain it names (any directory, with `path`) for every cargo and rustc command here",
    ),
    // JavaScript.
    ("**/.npmrc", "it can hold a registry token"),
    (
        "**/.yarnrc",
        "yarn runs the file its `yarn-path` names on every yarn command",
    ),
    (
        "**/.yarnrc.yml",
        "yarn runs the file its `yarnPath` names and the plugins it lists on every yarn command, and it can hold a registry token",
    ),
    ("**/.pnpmfile.cjs", "pnpm runs its hooks on every install"),
    ("**/.pnpmfile.mjs", "pnpm runs its hooks on every install"),
    (
        "**/bunfig.toml",
        "bun runs the scripts its `preload` names on every `bun run` and `bun test`",
    ),
    (
        "**/.bunfig.toml",
        "bun runs the scripts its `preload` names on every `bun run` and `bun test`",
    ),
    // Python.
    ("**/.pypirc", "it can hold a registry token"),
    (
        "**/sitecustomize.py",
        "Python runs it at every start when it is on the path (as in a virtual environment)",
    ),
    (
        "**/usercustomize.py",
        "Python runs it at every start when it is on the path",
    ),
    (
        "**/site-packages/*.pth",
        "Python runs the `import` lines of every .pth file in site-packages at every start",
    ),
    (
        "**/dist-packages/*.pth",
        "Python runs the `import` lines of every .pth file in dist-packages at every start",
    ),
    (
        "**/pip.conf",
        "pip applies it in a virtual environment: it can send installs to another index and hold its credentials",
    ),
    (
        "**/pip.ini",
        "pip applies it in a virtual environment: it can send installs to another index and hold its credentials",
    ),
    (
        "**/uv.toml",
        "uv applies it to every command here: it can send installs to another index",
    ),
    (
        "**/.pdbrc",
        "pdb runs its commands whenever the debugger starts here",
    ),
    (
        "**/.pylintrc",
        "pylint runs its `init-hook`, and editors run pylint on their own",
    ),
    (
        "**/pylintrc",
        "pylint runs its `init-hook`, and editors run pylint on their own",
    ),
    // Ruby, JVM, .NET.
    (
        "**/.bundle/config",
        "Bundler applies it to every bundle command, and it can hold gem-server credentials",
    ),
    ("**/.irbrc", "irb runs it whenever it starts here"),
    ("**/.pryrc", "pry runs it whenever it starts here"),
    (
        "**/gradle-wrapper.properties",
        "`./gradlew`, and IDEs importing the project, download and run the Gradle it names",
    ),
    (
        "**/maven-wrapper.properties",
        "`./mvnw`, and IDEs importing the project, download and run the Maven it names",
    ),
    (
        "**/.mvn/jvm.config",
        "Maven passes its options (such as `-javaagent`) to the JVM on every build",
    ),
    (
        "**/.mvn/extensions.xml",
        "Maven loads the build extensions it lists on every build",
    ),
    (
        "**/nuget.config",
        "NuGet applies it to every restore: it can send restores to another package source and hold its credentials",
    ),
    // Tool managers.
    (
        "**/mise.toml",
        "mise runs its hooks and sourced scripts when you enter the directory",
    ),
    (
        "**/.mise.toml",
        "mise runs its hooks and sourced scripts when you enter the directory",
    ),
    (
        "**/mise.*.toml",
        "mise runs its hooks and sourced scripts when you enter the directory",
    ),
    (
        "**/.mise.*.toml",
        "mise runs its hooks and sourced scripts when you enter the directory",
    ),
    (
        "**/.mise/**",
        "mise runs its hooks, tasks and sourced scripts when you enter the directory",
    ),
    (
        "**/.config/mise.toml",
        "mise runs its hooks and sourced scripts when you enter the directory",
    ),
    (
        "**/.config/mise/**",
        "mise runs its hooks, tasks and sourced scripts when you enter the directory",
    ),
    // CI.
    ("**/.github/workflows/**", CI),
    ("**/.github/actions/**", CI),
    ("**/.gitlab-ci.yml", CI),
    ("**/.circleci/**", CI),
    ("**/jenkinsfile", CI),
    ("**/.travis.yml", CI),
    ("**/azure-pipelines*.yml", CI),
    ("**/azure-pipelines*.yaml", CI),
    ("**/.buildkite/**", CI),
    ("**/bitbucket-pipelines.yml", CI),
    ("**/.drone.yml", CI),
    ("**/.woodpecker.yml", CI),
    ("**/.woodpecker/**", CI),
    ("**/.forgejo/workflows/**", CI),
    ("**/.gitea/workflows/**", CI),
    ("**/appveyor.yml", CI),
    ("**/.appveyor.yml", CI),
    // Dev containers.
    (
        "**/.devcontainer/**",
        "dev container tools run its lifecycle commands when they build or open the container",
    ),
    (
        "**/.devcontainer.json",
        "dev container tools run its lifecycle commands when they build or open the container",
    ),
    // Agents (cairn's own, and others that start servers or run hooks from the project).
    ("**/.cairn/config.toml", "it is cairn's own configuration"),
    ("**/.cairn/policy.toml", "it is this policy"),
    ("**/.cairn/mcp.json", "it is cairn's own configuration"),
    ("**/.mcp.json", "MCP clients start the servers it lists"),
    (
        "**/.cursor/mcp.json",
        "Cursor starts the MCP servers it lists",
    ),
    (
        "**/.claude/settings.json",
        "Claude Code runs the hooks it lists",
    ),
    (
        "**/.claude/settings.local.json",
        "Claude Code runs the hooks it lists",
    ),
    // Credentials.
    ("**/.netrc", "it holds credentials"),
];

/// The decisions for one user, with the globs compiled once.
#[derive(Debug, Clone)]
pub struct AccessRules {
    user: String,
    /// Why the policy could not be used; when set, everything is refused (fail closed).
    broken: Option<String>,
    read: GlobSet,
    write: GlobSet,
    /// The deny list as one set, and the reason of each glob in the order added.
    deny: GlobSet,
    deny_why: Vec<&'static str>,
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
        let mut deny = GlobSetBuilder::new();
        let mut deny_why = Vec::new();
        for (glob, why) in DENY_LIST {
            if let Ok(g) = glob_of(glob) {
                deny.add(g);
                deny_why.push(*why);
            }
        }
        let deny = deny.build().unwrap_or_else(|_| GlobSet::empty());
        AccessRules {
            user: user.to_string(),
            broken: None,
            read: set_of(&read_and_write),
            write: set_of(&grants.write),
            deny,
            deny_why,
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
            deny: GlobSet::empty(),
            deny_why: Vec::new(),
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
        let first = self
            .deny
            .matches(path)
            .into_iter()
            .chain(self.deny.matches(&lower))
            .min();
        if let Some(why) = first.and_then(|i| self.deny_why.get(i)) {
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

    /// Issue 14 class 6: files that run code without the user asking, in every ecosystem listed,
    /// at the root and nested, in any case; ordinary project files (which a build runs when the
    /// user builds) stay writable after the usual question.
    #[test]
    fn files_that_run_code_are_protected_and_project_files_are_not() {
        use Operation::*;
        for path in [
            ".git",
            "vendor/lib/.git",
            ".gitmodules",
            ".githooks/pre-commit",
            ".pre-commit-config.yaml",
            ".husky/pre-commit",
            "lefthook.yml",
            ".vscode/launch.json",
            "app.code-workspace",
            ".idea/workspace.xml",
            ".idea/runConfigurations/Run.xml",
            ".exrc",
            ".nvim.lua",
            ".nvimrc",
            ".helix/languages.toml",
            ".helix/config.toml",
            ".zed/settings.json",
            ".zed/tasks.json",
            ".dir-locals.el",
            ".zshenv",
            ".cargo/config.toml",
            ".cargo/config",
            "crates/x/.cargo/config.toml",
            ".cargo/credentials.toml",
            "rust-toolchain.toml",
            "rust-toolchain",
            ".yarnrc",
            ".yarnrc.yml",
            ".pnpmfile.cjs",
            "bunfig.toml",
            "sitecustomize.py",
            "usercustomize.py",
            ".venv/lib/python3.12/site-packages/evil.pth",
            ".venv/pip.conf",
            "uv.toml",
            ".pdbrc",
            ".pylintrc",
            ".bundle/config",
            ".irbrc",
            "gradle/wrapper/gradle-wrapper.properties",
            ".mvn/wrapper/maven-wrapper.properties",
            ".mvn/jvm.config",
            "NuGet.Config",
            "mise.toml",
            ".mise.toml",
            "mise.local.toml",
            ".config/mise/config.toml",
            ".github/workflows/ci.yml",
            ".github/workflows/nested/release.yaml",
            ".github/actions/setup/action.yml",
            ".gitlab-ci.yml",
            ".circleci/config.yml",
            "Jenkinsfile",
            "JENKINSFILE",
            ".travis.yml",
            "azure-pipelines.yml",
            ".buildkite/pipeline.yml",
            "bitbucket-pipelines.yml",
            ".drone.yml",
            ".devcontainer/devcontainer.json",
            ".devcontainer.json",
            ".mcp.json",
            ".claude/settings.json",
        ] {
            check("ada@example.com", path, Write, "exact");
            check("ada@example.com", path, Read, "exact");
        }
        for path in [
            "build.rs",
            "Makefile",
            "package.json",
            "pyproject.toml",
            "setup.py",
            "conftest.py",
            "Dockerfile",
            "src/main.rs",
            "models/weights.pth",
            ".github/dependabot.yml",
            ".github/CODEOWNERS",
            ".gitignore",
            ".gitattributes",
            ".tool-versions",
            ".editorconfig",
            ".vscode/extensions.json",
            "docs/git.md",
            "src/.github.rs",
        ] {
            check("ada@example.com", path, Write, "ask");
        }
    }

    /// Every entry of the deny list compiles, is lower-case (paths are also matched
    /// lower-cased), and says why in words the user reads.
    #[test]
    fn every_deny_entry_is_a_lower_case_glob_with_a_reason() {
        for (glob, why) in DENY_LIST {
            assert!(glob_of(glob).is_ok(), "{glob}");
            assert_eq!(*glob, glob.to_lowercase(), "{glob} is not lower-case");
            assert!(glob.starts_with("**/"), "{glob} must match at any depth");
            assert!(why.len() > 10 && !why.ends_with('.'), "{glob}: {why}");
        }
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
