//! Who may read and write which workspace files: the team policy (`.cairn/policy.toml`,
//! committed with the project), the user's own grants, and a built-in deny list.
//!
//! Decisions are made on paths relative to the workspace root, with `/` separators, already
//! resolved beneath the root (the scope does that); globs match whole paths (`*` does not cross
//! `/`; `**` does). The deny list holds unless the user approved that very path: a blanket
//! `--yes` or "allow for this session" does not count. Its secrets are protected from reads
//! and writes; its files that run code from writes only (reading them follows the grants).
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
            glob_of(glob).map_err(|e| AccessError::Glob {
                source_name: source_name.to_string(),
                glob: glob.clone(),
                message: e.to_string(),
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

fn glob_of(pattern: &str) -> Result<Glob, globset::Error> {
    GlobBuilder::new(pattern).literal_separator(true).build()
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
const SHELL: &str = "the shell runs it, and the variables it exports are often tokens";

/// What a deny-list entry protects against.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Kind {
    /// It holds secrets (or may: anything that can hold a token is here when in doubt), and
    /// `.git` (its config can hold credentials in remote URLs): reading and writing it both
    /// need an approval of that exact path, and the sandbox hides it.
    Secret,
    /// It runs code: writing it needs an approval of that exact path, and a sandbox with a
    /// writable workspace sees it read-only; reading it follows the ordinary read grants.
    RunsCode,
}

use Kind::{RunsCode, Secret};

/// Paths that hold secrets or run code, whatever the policy grants: (glob, kind, why). Globs are
/// lower-case: paths are also matched lower-cased, so `Jenkinsfile` and `.GIT` are caught.
///
/// "Runs code" means runs without the user asking for it: on opening the folder or a file, on
/// entering the directory, on every start of a tool, on the next push or commit, or by redirecting
/// what a command the user types runs (a wrapper, a toolchain, a package index). Project source
/// that a build runs (`build.rs`, `Makefile`, `package.json` scripts, `setup.py`, `conftest.py`,
/// `Dockerfile`) is not listed: it is the code the agent is there to edit, and the user runs it
/// by building.
///
/// Each entry is a [`Kind`]: a [`Secret`] is read- and write-protected, a file that only
/// [`RunsCode`] is write-protected. A file that runs code and may hold a token is a secret.
pub const DENY_LIST: &[(&str, Kind, &str)] = &[
    ("**/.env", Secret, "it usually holds secrets"),
    ("**/.env.*", Secret, "it usually holds secrets"),
    (
        "**/.envrc",
        Secret,
        "direnv runs it when you enter the directory, and the variables it exports are often tokens",
    ),
    ("**/*.pem", Secret, "it is a key or certificate"),
    ("**/*.key", Secret, "it is a private key"),
    ("**/id_rsa*", Secret, "it is an SSH key"),
    ("**/id_ed25519*", Secret, "it is an SSH key"),
    ("**/id_ecdsa*", Secret, "it is an SSH key"),
    ("**/*.p12", Secret, "it is a keystore"),
    ("**/*.pfx", Secret, "it is a keystore"),
    ("**/*.jks", Secret, "it is a keystore"),
    ("**/*.keystore", Secret, "it is a keystore"),
    // Git.
    (
        "**/.git/**",
        Secret,
        "it is git's own data (hooks and config run code)",
    ),
    (
        "**/.git",
        Secret,
        "it is git's own data; a `.git` file points git at another repository",
    ),
    (
        "**/.gitmodules",
        RunsCode,
        "git fetches and checks out the repositories it names on a recursive clone or submodule update",
    ),
    (
        "**/.gitconfig",
        Secret,
        "git applies it as your configuration when this is your home directory: it can run commands, and its URLs and credential settings can hold tokens",
    ),
    (
        "**/.githooks/**",
        RunsCode,
        "git runs these hooks on every commit when `core.hooksPath` names the directory",
    ),
    (
        "**/.pre-commit-config.yaml",
        RunsCode,
        "pre-commit runs the hooks it lists on every commit",
    ),
    (
        "**/.husky/**",
        RunsCode,
        "husky runs these hooks on every commit",
    ),
    (
        "**/lefthook.*",
        RunsCode,
        "lefthook runs its commands on git hooks",
    ),
    (
        "**/.lefthook.*",
        RunsCode,
        "lefthook runs its commands on git hooks",
    ),
    (
        "**/lefthook-local.*",
        RunsCode,
        "lefthook runs its commands on git hooks",
    ),
    (
        "**/.lefthook-local.*",
        RunsCode,
        "lefthook runs its commands on git hooks",
    ),
    // Editors.
    ("**/.vscode/tasks.json", RunsCode, "VS Code runs its tasks"),
    (
        "**/.vscode/settings.json",
        RunsCode,
        "VS Code applies it, and it can run code",
    ),
    (
        "**/.vscode/launch.json",
        RunsCode,
        "VS Code runs the programs and pre-launch tasks it names when you start debugging",
    ),
    (
        "**/*.code-workspace",
        RunsCode,
        "VS Code applies its settings, tasks and launch configurations",
    ),
    (
        "**/.idea/**",
        RunsCode,
        "JetBrains IDEs run the run configurations, startup tasks and external tools it holds",
    ),
    (
        "**/.exrc",
        RunsCode,
        "Vim and Neovim run it on start when 'exrc' is set",
    ),
    (
        "**/.nvimrc",
        RunsCode,
        "Neovim runs it on start when 'exrc' is set",
    ),
    (
        "**/.nvim.lua",
        RunsCode,
        "Neovim runs it on start when 'exrc' is set",
    ),
    (
        "**/.vimrc",
        RunsCode,
        "Vim runs it on start when this is your home directory",
    ),
    (
        "**/.helix/languages.toml",
        RunsCode,
        "Helix starts the language servers it names (any command) when you open a file",
    ),
    (
        "**/.helix/config.toml",
        RunsCode,
        "Helix applies it, and it can name commands to run",
    ),
    (
        "**/.zed/**",
        RunsCode,
        "Zed applies its settings (language servers and shells are commands) and runs its tasks",
    ),
    (
        "**/.dir-locals.el",
        RunsCode,
        "Emacs applies it when a file here is opened, and its `eval` entries run code",
    ),
    (
        "**/.dir-locals-2.el",
        RunsCode,
        "Emacs applies it when a file here is opened, and its `eval` entries run code",
    ),
    // Shells.
    ("**/.bashrc", Secret, SHELL),
    ("**/.zshrc", Secret, SHELL),
    ("**/.profile", Secret, SHELL),
    ("**/.bash_profile", Secret, SHELL),
    ("**/.bash_login", Secret, SHELL),
    ("**/.bash_logout", Secret, SHELL),
    ("**/.zshenv", Secret, SHELL),
    ("**/.zprofile", Secret, SHELL),
    ("**/.zlogin", Secret, SHELL),
    // Cargo and Rust.
    (
        "**/.cargo/config",
        RunsCode,
        "Cargo runs the `build.rustc-wrapper`, runners and linkers it names on the next build",
    ),
    (
        "**/.cargo/config.toml",
        RunsCode,
        "Cargo runs the `build.rustc-wrapper`, runners and linkers it names on the next build",
    ),
    ("**/.cargo/credentials", Secret, "it holds a registry token"),
    (
        "**/.cargo/credentials.toml",
        Secret,
        "it holds a registry token",
    ),
    (
        "**/rust-toolchain",
        RunsCode,
        "rustup runs the toolchain it names (any directory, with `path`) for every cargo and rustc command here",
    ),
    (
        "**/rust-toolchain.toml",
        RunsCode,
        "rustup runs the toolchain it names (any directory, with `path`) for every cargo and rustc command here",
    ),
    // JavaScript.
    ("**/.npmrc", Secret, "it can hold a registry token"),
    (
        "**/.yarnrc",
        Secret,
        "yarn runs the file its `yarn-path` names on every yarn command, and yarn 1 reads registry tokens from it",
    ),
    (
        "**/.yarnrc.yml",
        Secret,
        "yarn runs the file its `yarnPath` names and the plugins it lists on every yarn command, and it can hold a registry token",
    ),
    (
        "**/.pnpmfile.cjs",
        RunsCode,
        "pnpm runs its hooks on every install",
    ),
    (
        "**/.pnpmfile.mjs",
        RunsCode,
        "pnpm runs its hooks on every install",
    ),
    (
        "**/bunfig.toml",
        Secret,
        "bun runs the scripts its `preload` names on every `bun run` and `bun test`, and its registry settings can hold a token",
    ),
    (
        "**/.bunfig.toml",
        Secret,
        "bun runs the scripts its `preload` names on every `bun run` and `bun test`, and its registry settings can hold a token",
    ),
    // Python.
    ("**/.pypirc", Secret, "it can hold a registry token"),
    (
        "**/sitecustomize.py",
        RunsCode,
        "Python runs it at every start when it is on the path (as in a virtual environment)",
    ),
    (
        "**/usercustomize.py",
        RunsCode,
        "Python runs it at every start when it is on the path",
    ),
    (
        "**/site-packages/*.pth",
        RunsCode,
        "Python runs the `import` lines of every .pth file in site-packages at every start",
    ),
    (
        "**/dist-packages/*.pth",
        RunsCode,
        "Python runs the `import` lines of every .pth file in dist-packages at every start",
    ),
    (
        "**/pip.conf",
        Secret,
        "pip applies it in a virtual environment: it can send installs to another index and hold its credentials",
    ),
    (
        "**/pip.ini",
        Secret,
        "pip applies it in a virtual environment: it can send installs to another index and hold its credentials",
    ),
    (
        "**/uv.toml",
        Secret,
        "uv applies it to every command here: it can send installs to another index, and index URLs can hold credentials",
    ),
    (
        "**/.pdbrc",
        RunsCode,
        "pdb runs its commands whenever the debugger starts here",
    ),
    (
        "**/.pylintrc",
        RunsCode,
        "pylint runs its `init-hook`, and editors run pylint on their own",
    ),
    (
        "**/pylintrc",
        RunsCode,
        "pylint runs its `init-hook`, and editors run pylint on their own",
    ),
    // Ruby, JVM, .NET.
    (
        "**/.bundle/config",
        Secret,
        "Bundler applies it to every bundle command, and it can hold gem-server credentials",
    ),
    ("**/.irbrc", RunsCode, "irb runs it whenever it starts here"),
    ("**/.pryrc", RunsCode, "pry runs it whenever it starts here"),
    (
        "**/gradle-wrapper.properties",
        RunsCode,
        "`./gradlew`, and IDEs importing the project, download and run the Gradle it names",
    ),
    (
        "**/maven-wrapper.properties",
        RunsCode,
        "`./mvnw`, and IDEs importing the project, download and run the Maven it names",
    ),
    (
        "**/.mvn/jvm.config",
        RunsCode,
        "Maven passes its options (such as `-javaagent`) to the JVM on every build",
    ),
    (
        "**/.mvn/extensions.xml",
        RunsCode,
        "Maven loads the build extensions it lists on every build",
    ),
    (
        "**/nuget.config",
        Secret,
        "NuGet applies it to every restore: it can send restores to another package source and hold its credentials",
    ),
    // Tool managers.
    (
        "**/mise.toml",
        Secret,
        "mise runs its hooks and sourced scripts when you enter the directory, and the variables its `[env]` sets are often tokens",
    ),
    (
        "**/.mise.toml",
        Secret,
        "mise runs its hooks and sourced scripts when you enter the directory, and the variables its `[env]` sets are often tokens",
    ),
    (
        "**/mise.*.toml",
        Secret,
        "mise runs its hooks and sourced scripts when you enter the directory, and the variables its `[env]` sets are often tokens",
    ),
    (
        "**/.mise.*.toml",
        Secret,
        "mise runs its hooks and sourced scripts when you enter the directory, and the variables its `[env]` sets are often tokens",
    ),
    (
        "**/.mise/**",
        Secret,
        "mise runs its hooks, tasks and sourced scripts when you enter the directory, and the variables its `[env]` sets are often tokens",
    ),
    (
        "**/.config/mise.toml",
        Secret,
        "mise runs its hooks and sourced scripts when you enter the directory, and the variables its `[env]` sets are often tokens",
    ),
    (
        "**/.config/mise/**",
        Secret,
        "mise runs its hooks, tasks and sourced scripts when you enter the directory, and the variables its `[env]` sets are often tokens",
    ),
    // CI.
    ("**/.github/workflows/**", RunsCode, CI),
    ("**/.github/actions/**", RunsCode, CI),
    ("**/.gitlab-ci.yml", RunsCode, CI),
    ("**/.circleci/**", RunsCode, CI),
    ("**/jenkinsfile", RunsCode, CI),
    ("**/.travis.yml", RunsCode, CI),
    ("**/azure-pipelines*.yml", RunsCode, CI),
    ("**/azure-pipelines*.yaml", RunsCode, CI),
    ("**/.buildkite/**", RunsCode, CI),
    ("**/bitbucket-pipelines.yml", RunsCode, CI),
    ("**/.drone.yml", RunsCode, CI),
    ("**/.woodpecker.yml", RunsCode, CI),
    ("**/.woodpecker/**", RunsCode, CI),
    ("**/.forgejo/workflows/**", RunsCode, CI),
    ("**/.gitea/workflows/**", RunsCode, CI),
    ("**/appveyor.yml", RunsCode, CI),
    ("**/.appveyor.yml", RunsCode, CI),
    // Dev containers.
    (
        "**/.devcontainer/**",
        RunsCode,
        "dev container tools run its lifecycle commands when they build or open the container",
    ),
    (
        "**/.devcontainer.json",
        RunsCode,
        "dev container tools run its lifecycle commands when they build or open the container",
    ),
    // Agents (cairn's own, and others that start servers or run hooks from the project).
    (
        "**/.cairn/config.toml",
        RunsCode,
        "it is cairn's own configuration",
    ),
    ("**/.cairn/policy.toml", RunsCode, "it is this policy"),
    (
        "**/.cairn/mcp.json",
        Secret,
        "cairn starts the MCP servers it lists, and their environment and headers often hold tokens",
    ),
    (
        "**/.mcp.json",
        Secret,
        "MCP clients start the servers it lists, and their environment and headers often hold tokens",
    ),
    (
        "**/.cursor/mcp.json",
        Secret,
        "Cursor starts the MCP servers it lists, and their environment and headers often hold tokens",
    ),
    (
        "**/.claude/settings.json",
        Secret,
        "Claude Code runs the hooks it lists, and its `env` and `apiKeyHelper` settings can hold keys",
    ),
    (
        "**/.claude/settings.local.json",
        Secret,
        "Claude Code runs the hooks it lists, and its `env` and `apiKeyHelper` settings can hold keys",
    ),
    // Credentials.
    ("**/.netrc", Secret, "it holds credentials"),
];

/// The decisions for one user, with the globs compiled once.
#[derive(Debug, Clone)]
pub struct AccessRules {
    user: String,
    /// Why the policy could not be used; when set, everything is refused (fail closed).
    broken: Option<String>,
    read: GlobSet,
    write: GlobSet,
    /// The deny list as one set, and the kind and reason of each glob in the order added.
    deny: GlobSet,
    deny_why: Vec<(Kind, &'static str)>,
    /// The directories `P` of the entries `P/**`: everything under one of them is protected.
    deny_dirs: GlobSet,
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
        let mut deny_dirs = Vec::new();
        for (glob, kind, why) in DENY_LIST {
            if let Ok(g) = glob_of(glob) {
                deny.add(g);
                deny_why.push((*kind, *why));
            }
            if let Some(dir) = glob.strip_suffix("/**") {
                deny_dirs.push(dir.to_owned());
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
            deny_dirs: set_of(&deny_dirs),
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
            deny_dirs: GlobSet::empty(),
        }
    }

    /// The user these rules are for.
    pub fn user(&self) -> &str {
        &self.user
    }

    /// True when every path under the directory `dir` is on the deny list by a `dir/**` entry
    /// (`.github/workflows`, `.idea`): a file created in it is as protected as one already there.
    pub fn protects_everything_under(&self, dir: &str) -> bool {
        self.broken.is_none()
            && (self.deny_dirs.is_match(dir) || self.deny_dirs.is_match(dir.to_lowercase()))
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
        let mut matched: Vec<usize> = self
            .deny
            .matches(path)
            .into_iter()
            .chain(self.deny.matches(&lower))
            .collect();
        matched.sort_unstable();
        // A secret is protected from reads and writes, a file that runs code from writes only
        // (its reads fall through to the grants). The reason shown is the first entry's that
        // applies.
        let entry = matched
            .iter()
            .filter_map(|&i| self.deny_why.get(i))
            .find(|(kind, _)| *kind == Secret || op == Operation::Write);
        if let Some((_, why)) = entry {
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
            ".bashrc",
            "sub/.npmrc",
        ] {
            check("ada@example.com", path, Write, "exact");
            check("ada@example.com", path, Read, "exact");
        }
        for path in [
            ".vscode/tasks.json",
            ".vscode/settings.json",
            ".cairn/config.toml",
            ".cairn/policy.toml",
        ] {
            check("ada@example.com", path, Write, "exact");
            check("ada@example.com", path, Read, "allow");
        }
        check("ada@example.com", "src/env.rs", Write, "ask");
        check("ada@example.com", ".vscode/extensions.json", Write, "ask");
    }

    /// Issue 14 class 6: files that run code without the user asking, in every ecosystem listed,
    /// at the root and nested, in any case, are written only with an approval of that path and
    /// read under the ordinary grants, unless they may hold a token; ordinary project files
    /// (which a build runs when the user builds) stay writable after the usual question.
    #[test]
    fn files_that_run_code_are_protected_and_project_files_are_not() {
        use Operation::*;
        for path in [
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
            ".cargo/config.toml",
            ".cargo/config",
            "crates/x/.cargo/config.toml",
            "rust-toolchain.toml",
            "rust-toolchain",
            ".pnpmfile.cjs",
            "sitecustomize.py",
            "usercustomize.py",
            ".venv/lib/python3.12/site-packages/evil.pth",
            ".pdbrc",
            ".pylintrc",
            ".irbrc",
            "gradle/wrapper/gradle-wrapper.properties",
            ".mvn/wrapper/maven-wrapper.properties",
            ".mvn/jvm.config",
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
        ] {
            check("ada@example.com", path, Write, "exact");
            check("ada@example.com", path, Read, "allow");
        }
        // Files that run code and may hold a token (or are git's data) are secrets.
        for path in [
            ".git",
            "vendor/lib/.git",
            ".zshenv",
            ".cargo/credentials.toml",
            ".yarnrc",
            ".yarnrc.yml",
            "bunfig.toml",
            ".venv/pip.conf",
            "uv.toml",
            ".bundle/config",
            "NuGet.Config",
            "mise.toml",
            ".mise.toml",
            "mise.local.toml",
            ".config/mise/config.toml",
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

    /// A file that runs code is read under the read grants like any other (allowed with one,
    /// refused without); a write to it, and any use of a secret, needs the exact-path approval.
    #[test]
    fn files_that_run_code_are_read_under_the_grants_and_secrets_are_not() {
        let team =
            AccessPolicy::from_toml_str("[default]\nread = [\".github/**\"]\n", "team").unwrap();
        let rules = AccessRules::new("ada@example.com", Some(&team), None);
        assert_eq!(
            rules.decide(".github/workflows/ci.yml", Operation::Read),
            Access::Allow
        );
        assert_eq!(
            rules.decide(".github/workflows/ci.yml", Operation::Write),
            Access::AskExactPath { why: CI }
        );
        assert!(matches!(
            rules.decide(".cargo/config.toml", Operation::Read),
            Access::Deny { .. }
        ));
        assert_eq!(
            rules.decide(".env", Operation::Read),
            Access::AskExactPath {
                why: "it usually holds secrets"
            }
        );
        // Matched by an entry that runs code and a later secret one: the secret's protection
        // and reason hold.
        let Access::AskExactPath { why } =
            rules.decide(".github/workflows/.mcp.json", Operation::Read)
        else {
            panic!("a secret under a directory that runs code is readable");
        };
        assert!(why.contains("often hold tokens"), "{why}");
        assert!(rules.protects_everything_under(".github/workflows"));
        assert!(rules.protects_everything_under("sub/.IDEA"));
        assert!(!rules.protects_everything_under(".github"));
        assert!(!rules.protects_everything_under(".cargo"));
    }

    /// Every entry of the deny list compiles, is lower-case (paths are also matched
    /// lower-cased), and says why in words the user reads.
    #[test]
    fn every_deny_entry_is_a_lower_case_glob_with_a_reason() {
        for (glob, _, why) in DENY_LIST {
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
