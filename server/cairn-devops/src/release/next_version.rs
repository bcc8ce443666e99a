//! `next_version`: the next semantic version from the commits since the last version tag.

use cairn_toolkit::reply::{error, text};
use cairn_toolkit::{CallContext, Category, Effect, JsonSchema, Paths, Tool};
use rmcp::model::CallToolResult;
use serde::Deserialize;

use super::{Bump, Change, Version, changes, kinds, version_tags, with_repository};
use crate::DevOps;

/// The `next_version` tool.
pub struct NextVersion;

/// Arguments of `next_version`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// A directory inside the repository, relative to the workspace root. Default: the workspace root.
    repo_path: Option<String>,
    /// What version tags start with. Default: `v` (as in `v1.2.3`); give "" for bare `1.2.3`.
    tag_prefix: Option<String>,
    /// Make the next version a pre-release with this label, numbered after the newest one of it
    /// (`rc` gives `2.0.0-rc.1`, then `2.0.0-rc.2`).
    pre_release: Option<String>,
}

impl Tool for NextVersion {
    type Host = DevOps;
    type Args = Args;
    const NAME: &'static str = "next_version";
    const TITLE: &'static str = "Next release version";
    const DESCRIPTION: &'static str = "Work out the next semantic version from the Conventional Commits since the newest version tag reachable from HEAD (breaking change: major, feat: minor, fix/perf: patch; 0.x bumps one place lower), listing the commits that decided it.";
    const CATEGORY: Category = Category::Devops;
    const EFFECT: Effect = Effect::Read;
    const AGENT_ONLY: bool = false;
    const NEEDS_WORKSPACE: bool = true;

    /// Commit messages and tags only, read through the git tools' confinement.
    fn paths(_: &Args) -> Paths {
        Paths::metadata()
    }

    async fn call(host: &DevOps, args: Args, _: CallContext) -> CallToolResult {
        let Some(ws) = host.workspace.as_ref() else {
            return error(
                "next_version reads a repository in the workspace, and no workspace is open",
            );
        };
        let prefix = args.tag_prefix.unwrap_or_else(|| "v".into());
        if let Some(pre) = &args.pre_release
            && (pre.is_empty() || !pre.chars().all(|c| c.is_ascii_alphanumeric() || c == '-'))
        {
            return error(format!(
                "`{pre}` is not a pre-release label: use letters, digits and `-`, like `rc` or `beta`"
            ));
        }
        let pre = args.pre_release;
        let result = with_repository(ws, args.repo_path, move |repo| {
            let head = repo
                .head()
                .and_then(|h| h.peel_to_commit())
                .map_err(|_| "the repository has no commits yet".to_owned())?;
            let tags = version_tags(repo, head.id(), &prefix)?;
            let released = tags.iter().find(|t| t.version.pre.is_none());
            let (changes, capped) = changes(repo, released.map(|t| t.commit), head.id())?;
            Ok(report(
                released.map(|t| (t.name.as_str(), &t.version)),
                &tags,
                &changes,
                capped,
                &prefix,
                pre.as_deref(),
            ))
        })
        .await;
        match result {
            Ok(out) => text(out),
            Err(e) => error(e),
        }
    }
}

fn report(
    released: Option<(&str, &Version)>,
    tags: &[super::Tagged],
    changes: &[Change],
    capped: bool,
    prefix: &str,
    pre: Option<&str>,
) -> String {
    let bump = changes.iter().filter_map(Change::bump).max();
    let mut out = String::new();
    let base = match released {
        Some((name, v)) => {
            out.push_str(&format!(
                "current: {v} (tag {name}), {} commits since\n",
                changes.len()
            ));
            v.clone()
        }
        None => {
            out.push_str(&format!(
                "no version tag `{prefix}X.Y.Z` is reachable from HEAD; {} commits in all\n",
                changes.len()
            ));
            Version {
                major: 0,
                minor: 0,
                patch: 0,
                pre: None,
            }
        }
    };
    let next = match (released, bump) {
        (_, None) if changes.is_empty() => {
            out.push_str("no commits since the last release: nothing to release\n");
            return out;
        }
        (_, None) => {
            out.push_str(&format!(
                "no commit is a feature, fix or breaking change (only {}), so no release is needed; release anyway as a patch: {}\n",
                kinds(changes),
                base.bumped(Bump::Patch)
            ));
            return out;
        }
        // A first release: 0.1.0, or 1.0.0 when something already says it breaks.
        (None, Some(Bump::Major)) => Version {
            major: 1,
            minor: 0,
            patch: 0,
            pre: None,
        },
        (None, Some(_)) => Version {
            major: 0,
            minor: 1,
            patch: 0,
            pre: None,
        },
        (Some(_), Some(b)) => base.bumped(b),
    };
    let next = match pre {
        Some(label) => {
            let n = tags
                .iter()
                .filter(|t| {
                    t.version.major == next.major
                        && t.version.minor == next.minor
                        && t.version.patch == next.patch
                })
                .filter_map(|t| {
                    t.version
                        .pre
                        .as_deref()?
                        .strip_prefix(&format!("{label}."))?
                        .parse::<u64>()
                        .ok()
                })
                .max()
                .unwrap_or(0);
            Version {
                pre: Some(format!("{label}.{}", n + 1)),
                ..next
            }
        }
        None => next,
    };
    let why = match bump {
        Some(Bump::Major) if base.major == 0 && released.is_some() => {
            "a breaking change (0.x: minor)"
        }
        Some(Bump::Major) => "a breaking change",
        Some(Bump::Minor) if base.major == 0 && released.is_some() => "a feature (0.x: patch)",
        Some(Bump::Minor) => "a feature",
        _ => "fixes only",
    };
    out.push_str(&format!("next: {next} ({why}); tag it {prefix}{next}\n"));
    let deciding: Vec<&Change> = changes.iter().filter(|c| c.bump() == bump).collect();
    out.push_str(&format!("decided by {} commit(s):\n", deciding.len()));
    for c in deciding.iter().take(20) {
        out.push_str(&format!("  {} {} {}\n", c.id, c.date, c.header()));
        if let Some(note) = &c.breaking_note {
            out.push_str(&format!("      BREAKING CHANGE: {note}\n"));
        }
    }
    if deciding.len() > 20 {
        out.push_str(&format!("  ... and {} more\n", deciding.len() - 20));
    }
    out.push_str(&format!("all commits since: {}\n", kinds(changes)));
    if capped {
        out.push_str("(only the newest 5000 commits were read)\n");
    }
    out
}
