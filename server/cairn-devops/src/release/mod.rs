//! Release chores: the next version from the commits, a changelog since a tag, a TLS
//! certificate's details, an HTTP health check.
//!
//! The first two read the repository through the git tools' confinement
//! ([`cairn_tools::open_repository`]: every location git reads must be inside the workspace) and
//! use commit messages only, never file contents. Commits are read as Conventional Commits
//! (`type(scope)!: description`, a `BREAKING CHANGE:` footer); a message that is not one counts
//! as "other". The last two reach the network only through the web guard.

pub mod changelog;
pub mod http_health_check;
pub mod next_version;
pub mod tls_certificate;

use std::fmt;

use cairn_workspace::Workspace;
use git2::{Oid, Repository, Sort};

/// At most this many commits are read between two points, so a huge history stays bounded.
const MAX_COMMITS: usize = 5_000;

/// A semantic version `MAJOR.MINOR.PATCH` with an optional pre-release part.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Version {
    pub major: u64,
    pub minor: u64,
    pub patch: u64,
    pub pre: Option<String>,
}

impl Version {
    /// Parses `1.2.3`, `1.2.3-rc.1` (build metadata after `+` is ignored).
    pub fn parse(text: &str) -> Option<Version> {
        let text = text.split('+').next().unwrap_or(text);
        let (core, pre) = match text.split_once('-') {
            Some((c, p)) if !p.is_empty() => (c, Some(p.to_owned())),
            Some(_) => return None,
            None => (text, None),
        };
        let mut parts = core.split('.');
        let mut number = || -> Option<u64> {
            let p = parts.next()?;
            // Leading zeros are not semantic versions (`01.2.3`).
            if p.is_empty() || (p.len() > 1 && p.starts_with('0')) {
                return None;
            }
            p.parse().ok()
        };
        let v = Version {
            major: number()?,
            minor: number()?,
            patch: number()?,
            pre,
        };
        parts.next().is_none().then_some(v)
    }

    /// The order of versions: a pre-release sorts before its release.
    fn key(&self) -> (u64, u64, u64, bool, Vec<PreId<'_>>) {
        let pre = self
            .pre
            .as_deref()
            .map(|p| {
                p.split('.')
                    .map(|id| match id.parse::<u64>() {
                        Ok(n) => PreId::Number(n),
                        Err(_) => PreId::Text(id),
                    })
                    .collect()
            })
            .unwrap_or_default();
        (self.major, self.minor, self.patch, self.pre.is_none(), pre)
    }

    /// The version after a change of `bump`. Before 1.0.0 a breaking change bumps the minor
    /// number and a feature the patch number (the usual rule for 0.x: the API is not stable).
    pub fn bumped(&self, bump: Bump) -> Version {
        let (major, minor, patch) = (self.major, self.minor, self.patch);
        let (major, minor, patch) = match (bump, major) {
            (Bump::Major, 0) => (0, minor + 1, 0),
            (Bump::Major, _) => (major + 1, 0, 0),
            (Bump::Minor, 0) => (0, minor, patch + 1),
            (Bump::Minor, _) => (major, minor + 1, 0),
            (Bump::Patch, _) => (major, minor, patch + 1),
        };
        // A pre-release of the next version is released as that version itself.
        if self.pre.is_some() {
            return Version {
                pre: None,
                ..self.clone()
            };
        }
        Version {
            major,
            minor,
            patch,
            pre: None,
        }
    }
}

#[derive(Debug, PartialEq, Eq, PartialOrd, Ord)]
enum PreId<'a> {
    Number(u64),
    Text(&'a str),
}

impl PartialOrd for Version {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Version {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.key().cmp(&other.key())
    }
}

impl fmt::Display for Version {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}.{}", self.major, self.minor, self.patch)?;
        if let Some(pre) = &self.pre {
            write!(f, "-{pre}")?;
        }
        Ok(())
    }
}

/// How much a set of commits changes the version.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Bump {
    Patch,
    Minor,
    Major,
}

/// One commit read as a Conventional Commit.
#[derive(Debug, Clone)]
pub struct Change {
    pub id: String,
    pub date: String,
    /// `feat`, `fix`, ... lower-cased; `None` when the summary is not a conventional header.
    pub kind: Option<String>,
    pub scope: Option<String>,
    pub breaking: bool,
    /// The description (the whole summary when it is not conventional).
    pub description: String,
    /// What the `BREAKING CHANGE:` footer says, if there is one.
    pub breaking_note: Option<String>,
}

impl Change {
    /// Reads a commit message.
    pub fn parse(id: String, date: String, message: &str) -> Change {
        let summary = message.lines().next().unwrap_or("").trim();
        let footer = message.lines().skip(1).find_map(|l| {
            l.strip_prefix("BREAKING CHANGE:")
                .or_else(|| l.strip_prefix("BREAKING-CHANGE:"))
                .map(|t| t.trim().to_owned())
        });
        let header = summary.split_once(": ").and_then(|(head, description)| {
            let (head, bang) = match head.strip_suffix('!') {
                Some(h) => (h, true),
                None => (head, false),
            };
            let (kind, scope) = match head.split_once('(') {
                Some((k, rest)) => (k, Some(rest.strip_suffix(')')?.trim().to_owned())),
                None => (head, None),
            };
            let valid = !kind.is_empty()
                && kind.len() <= 20
                && kind.chars().all(|c| c.is_ascii_alphanumeric() || c == '-');
            valid.then(|| (kind.to_ascii_lowercase(), scope, bang, description.trim()))
        });
        match header {
            Some((kind, scope, bang, description)) => Change {
                id,
                date,
                kind: Some(kind),
                scope: scope.filter(|s| !s.is_empty()),
                breaking: bang || footer.is_some(),
                description: description.to_owned(),
                breaking_note: footer,
            },
            None => Change {
                id,
                date,
                kind: None,
                scope: None,
                breaking: footer.is_some(),
                description: summary.to_owned(),
                breaking_note: footer,
            },
        }
    }

    /// The header as written (`feat(api)!: description`), for listing.
    pub fn header(&self) -> String {
        match &self.kind {
            Some(kind) => format!(
                "{kind}{}{}: {}",
                self.scope
                    .as_deref()
                    .map(|s| format!("({s})"))
                    .unwrap_or_default(),
                if self.breaking { "!" } else { "" },
                self.description
            ),
            None => self.description.clone(),
        }
    }

    /// What this commit alone does to the version.
    pub fn bump(&self) -> Option<Bump> {
        if self.breaking {
            return Some(Bump::Major);
        }
        match self.kind.as_deref() {
            Some("feat") => Some(Bump::Minor),
            Some("fix" | "perf" | "revert" | "security") => Some(Bump::Patch),
            _ => None,
        }
    }
}

/// How many commits of each kind, most first: `3 feat, 2 fix, 1 other`.
pub fn kinds(changes: &[Change]) -> String {
    let mut counts: Vec<(String, usize)> = Vec::new();
    for c in changes {
        let k = c.kind.clone().unwrap_or_else(|| "other".into());
        match counts.iter_mut().find(|(n, _)| *n == k) {
            Some((_, n)) => *n += 1,
            None => counts.push((k, 1)),
        }
    }
    counts.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    counts
        .iter()
        .map(|(k, n)| format!("{n} {k}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The newest version tag (by version, among tags `prefix` + semver whose commit is HEAD or an
/// ancestor of it): its name, version and commit.
pub struct Tagged {
    pub name: String,
    pub version: Version,
    pub commit: Oid,
}

/// The version tags reachable from `head`, newest version first.
pub fn version_tags(repo: &Repository, head: Oid, prefix: &str) -> Result<Vec<Tagged>, String> {
    let names = repo.tag_names(None).map_err(|e| e.message().to_owned())?;
    let mut tags = Vec::new();
    for name in names.iter().flatten() {
        let Some(version) = name.strip_prefix(prefix).and_then(Version::parse) else {
            continue;
        };
        let Ok(object) = repo.revparse_single(&format!("refs/tags/{name}")) else {
            continue;
        };
        let Ok(commit) = object.peel_to_commit() else {
            continue;
        };
        let reachable =
            commit.id() == head || repo.graph_descendant_of(head, commit.id()).unwrap_or(false);
        if reachable {
            tags.push(Tagged {
                name: name.to_owned(),
                version,
                commit: commit.id(),
            });
        }
    }
    tags.sort_by(|a, b| b.version.cmp(&a.version));
    Ok(tags)
}

/// The commits reachable from `until` and not from `since`, newest first, as changes; `true`
/// when the walk stopped at [`MAX_COMMITS`]. Merge commits are skipped (their branches' commits
/// are listed themselves).
pub fn changes(
    repo: &Repository,
    since: Option<Oid>,
    until: Oid,
) -> Result<(Vec<Change>, bool), String> {
    let err = |e: git2::Error| e.message().to_owned();
    let mut walk = repo.revwalk().map_err(err)?;
    walk.set_sorting(Sort::TOPOLOGICAL | Sort::TIME)
        .map_err(err)?;
    walk.push(until).map_err(err)?;
    if let Some(since) = since {
        walk.hide(since).map_err(err)?;
    }
    let mut out = Vec::new();
    for id in walk {
        if out.len() == MAX_COMMITS {
            return Ok((out, true));
        }
        let commit = repo.find_commit(id.map_err(err)?).map_err(err)?;
        if commit.parent_count() > 1 {
            continue;
        }
        let mut short = commit.id().to_string();
        short.truncate(7);
        out.push(Change::parse(
            short,
            cairn_tools::git_date(commit.author().when()),
            &String::from_utf8_lossy(commit.message_bytes()),
        ));
    }
    Ok((out, false))
}

/// A commit `rev` names, or a message the model can act on.
pub fn commit_of(repo: &Repository, rev: &str) -> Result<Oid, String> {
    if rev.starts_with('-') {
        return Err(format!("refused: `{rev}` starts with `-`"));
    }
    repo.revparse_single(rev)
        .and_then(|o| o.peel_to_commit())
        .map(|c| c.id())
        .map_err(|_| format!("no commit named `{rev}` in the repository; list tags with git_tags"))
}

/// Opens the repository under `repo_path` off the executor and runs `f` on it.
pub async fn with_repository<T: Send + 'static>(
    ws: &std::sync::Arc<Workspace>,
    repo_path: Option<String>,
    f: impl FnOnce(&Repository) -> Result<T, String> + Send + 'static,
) -> Result<T, String> {
    let ws = ws.clone();
    tokio::task::spawn_blocking(move || {
        let repo =
            cairn_tools::open_repository(&ws, repo_path.as_deref()).map_err(|e| e.to_string())?;
        f(&repo)
    })
    .await
    .map_err(|e| format!("the repository could not be read: {e}"))?
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn versions_parse_order_and_bump() {
        let v = |s: &str| Version::parse(s).unwrap();
        assert!(Version::parse("1.2").is_none());
        assert!(Version::parse("01.2.3").is_none());
        assert!(Version::parse("1.2.3.4").is_none());
        assert!(v("1.0.0-rc.1") < v("1.0.0"));
        assert!(v("1.0.0-rc.2") < v("1.0.0-rc.10"));
        assert!(v("1.10.0") > v("1.9.9"));
        assert_eq!(v("1.2.3").bumped(Bump::Major).to_string(), "2.0.0");
        assert_eq!(v("1.2.3").bumped(Bump::Minor).to_string(), "1.3.0");
        assert_eq!(v("1.2.3").bumped(Bump::Patch).to_string(), "1.2.4");
        assert_eq!(v("0.4.1").bumped(Bump::Major).to_string(), "0.5.0");
        assert_eq!(v("0.4.1").bumped(Bump::Minor).to_string(), "0.4.2");
        assert_eq!(v("2.0.0-rc.1").bumped(Bump::Patch).to_string(), "2.0.0");
        assert_eq!(v("1.2.3+build.5").to_string(), "1.2.3");
    }

    #[test]
    fn conventional_headers_and_footers() {
        let c = |m: &str| Change::parse("abc".into(), "2024-01-01".into(), m);
        let feat = c("feat(api): add paging");
        assert_eq!(feat.kind.as_deref(), Some("feat"));
        assert_eq!(feat.scope.as_deref(), Some("api"));
        assert_eq!(feat.bump(), Some(Bump::Minor));
        assert_eq!(c("fix!: drop v1").bump(), Some(Bump::Major));
        let footer = c("refactor: rename\n\nBREAKING CHANGE: `run` is now `start`");
        assert_eq!(footer.bump(), Some(Bump::Major));
        assert_eq!(
            footer.breaking_note.as_deref(),
            Some("`run` is now `start`")
        );
        assert_eq!(c("docs: typo").bump(), None);
        let plain = c("Update README.md");
        assert_eq!(plain.kind, None);
        assert_eq!(plain.description, "Update README.md");
        assert_eq!(c("Merge: a b").kind.as_deref(), Some("merge"));
        assert_eq!(c("feat(: x").kind, None);
    }
}
