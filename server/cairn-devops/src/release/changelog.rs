//! `changelog`: release notes in Markdown from the Conventional Commits between two points.

use cairn_toolkit::reply::{error, text};
use cairn_toolkit::{CallContext, Category, Effect, JsonSchema, Paths, Tool};
use rmcp::model::CallToolResult;
use serde::Deserialize;

use super::{Change, changes, commit_of, kinds, version_tags, with_repository};
use crate::DevOps;

/// The `changelog` tool.
pub struct Changelog;

/// Arguments of `changelog`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// A directory inside the repository, relative to the workspace root. Default: the workspace root.
    repo_path: Option<String>,
    /// Where to start (a tag, branch or commit; excluded). Default: the newest release tag
    /// reachable from `until` other than one on `until` itself, or the first commit.
    since: Option<String>,
    /// Where to end (included). Default: HEAD.
    until: Option<String>,
    /// The heading of the notes, such as `v1.4.0 (2024-05-01)`. Default: `Unreleased`.
    title: Option<String>,
    /// What version tags start with, for finding the default `since`. Default: `v`.
    tag_prefix: Option<String>,
    /// Also list commits that are not features, fixes or breaking changes (docs, chores, CI,
    /// tests, refactors and non-conventional messages). Default: only count them.
    include_other: Option<bool>,
}

/// The sections, in the order they are printed, with the commit kinds each holds.
const SECTIONS: [(&str, &[&str]); 5] = [
    ("Features", &["feat"]),
    ("Fixes", &["fix"]),
    ("Performance", &["perf"]),
    ("Security", &["security"]),
    ("Reverts", &["revert"]),
];

/// Most entries per section.
const MAX_ENTRIES: usize = 200;

impl Tool for Changelog {
    type Host = DevOps;
    type Args = Args;
    const NAME: &'static str = "changelog";
    const TITLE: &'static str = "Changelog since a tag";
    const DESCRIPTION: &'static str = "Write release notes in Markdown from the Conventional Commits between two points (default: the last version tag to HEAD), grouped into breaking changes, features, fixes, performance, security and reverts, each line with its scope and commit.";
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
                "changelog reads a repository in the workspace, and no workspace is open",
            );
        };
        let result = with_repository(ws, args.repo_path.clone(), move |repo| {
            let until = commit_of(repo, args.until.as_deref().unwrap_or("HEAD"))?;
            let prefix = args.tag_prefix.as_deref().unwrap_or("v");
            let (since, from) = match &args.since {
                Some(rev) => (Some(commit_of(repo, rev)?), rev.clone()),
                // From the last release before `until` (a tag on `until` itself is the release
                // these notes are for; pre-release tags are passed over).
                None => match version_tags(repo, until, prefix)?
                    .into_iter()
                    .find(|t| t.commit != until && t.version.pre.is_none())
                {
                    Some(t) => (Some(t.commit), t.name),
                    None => (None, "the first commit".into()),
                },
            };
            let (list, capped) = changes(repo, since, until)?;
            Ok(notes(
                args.title.as_deref().unwrap_or("Unreleased"),
                &from,
                args.until.as_deref().unwrap_or("HEAD"),
                &list,
                capped,
                args.include_other.unwrap_or(false),
            ))
        })
        .await;
        match result {
            Ok(out) => text(cairn_tools::cap_output(out)),
            Err(e) => error(e),
        }
    }
}

fn notes(
    title: &str,
    from: &str,
    until: &str,
    list: &[Change],
    capped: bool,
    include_other: bool,
) -> String {
    let mut out = format!("## {title}\n\n");
    if list.is_empty() {
        out.push_str(&format!("No commits from {from} to {until}.\n"));
        return out;
    }
    let entry = |c: &Change| {
        let scope = c
            .scope
            .as_deref()
            .map(|s| format!("**{s}:** "))
            .unwrap_or_default();
        format!("- {scope}{} ({})\n", c.description, c.id)
    };
    let breaking: Vec<&Change> = list.iter().filter(|c| c.breaking).collect();
    if !breaking.is_empty() {
        out.push_str("### Breaking changes\n\n");
        for c in breaking.iter().take(MAX_ENTRIES) {
            match &c.breaking_note {
                Some(note) => out.push_str(&format!("- {note} ({})\n", c.id)),
                None => out.push_str(&entry(c)),
            }
        }
        out.push('\n');
    }
    for (heading, kinds_of) in SECTIONS {
        let items: Vec<&Change> = list
            .iter()
            .filter(|c| c.kind.as_deref().is_some_and(|k| kinds_of.contains(&k)))
            .collect();
        if items.is_empty() {
            continue;
        }
        out.push_str(&format!("### {heading}\n\n"));
        for c in items.iter().take(MAX_ENTRIES) {
            out.push_str(&entry(c));
        }
        if items.len() > MAX_ENTRIES {
            out.push_str(&format!("- ... and {} more\n", items.len() - MAX_ENTRIES));
        }
        out.push('\n');
    }
    let listed = |c: &&Change| {
        c.breaking
            || c.kind
                .as_deref()
                .is_some_and(|k| SECTIONS.iter().any(|(_, ks)| ks.contains(&k)))
    };
    let other: Vec<&Change> = list.iter().filter(|c| !listed(c)).collect();
    if !other.is_empty() && include_other {
        out.push_str("### Other changes\n\n");
        for c in other.iter().take(MAX_ENTRIES) {
            out.push_str(&format!("- {} ({})\n", c.header(), c.id));
        }
        out.push('\n');
    }
    let others: Vec<Change> = other.iter().map(|c| (*c).clone()).collect();
    out.push_str(&format!(
        "{} commits from {from} to {until}: {}{}{}\n",
        list.len(),
        kinds(list),
        if !others.is_empty() && !include_other {
            format!(
                "; {} not listed ({}), add include_other to list them",
                others.len(),
                kinds(&others)
            )
        } else {
            String::new()
        },
        if capped {
            "; only the newest 5000 were read"
        } else {
            ""
        }
    ));
    out
}
