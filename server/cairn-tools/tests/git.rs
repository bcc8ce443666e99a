//! The git tools against real repositories built with git2 (never the git CLI).
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::disallowed_methods,
    unsafe_code
)]

use std::fs;
use std::path::Path;
use std::sync::{Arc, Once};

use cairn_agent::tools::{Effect, ToolHost};
use cairn_toolkit::{Entry, ToolSet};
use cairn_tools::{GIT_TOOLS, Git, git_tools};
use cairn_workspace::Workspace;
use git2::{Repository, Signature};
use serde_json::{Value, json};

/// Point libgit2's global, XDG and system config at an empty directory, so the machine's own
/// git configuration (identity, hooks path...) cannot leak into the tests.
fn isolate_config() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let empty = tempfile::tempdir().unwrap().keep();
        for level in [
            git2::ConfigLevel::Global,
            git2::ConfigLevel::XDG,
            git2::ConfigLevel::System,
            git2::ConfigLevel::ProgramData,
        ] {
            // SAFETY: called once, before any other libgit2 use in this test binary.
            unsafe { git2::opts::set_search_path(level, &empty).unwrap() };
        }
    });
}

struct Fixture {
    dir: tempfile::TempDir,
    repo: Repository,
    tools: ToolSet<Git>,
}

impl Fixture {
    /// A repository at the workspace root with an identity configured.
    fn new() -> Fixture {
        let f = Fixture::bare_identity();
        let mut config = f.repo.config().unwrap();
        config.set_str("user.name", "Ada Tester").unwrap();
        config.set_str("user.email", "ada@example.com").unwrap();
        f
    }

    /// A repository with no identity anywhere.
    fn bare_identity() -> Fixture {
        isolate_config();
        let dir = tempfile::tempdir().unwrap();
        let repo = Repository::init(dir.path()).unwrap();
        let mut config = repo.config().unwrap();
        // Make `main` the initial branch regardless of defaults.
        config.set_str("init.defaultBranch", "main").unwrap();
        repo.set_head("refs/heads/main").unwrap();
        let ws = Workspace::new(vec![dir.path().to_path_buf()]).unwrap();
        let tools = git_tools(Arc::new(ws));
        Fixture { dir, repo, tools }
    }

    fn write(&self, rel: &str, text: &str) {
        let path = self.dir.path().join(rel);
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(path, text).unwrap();
    }

    fn read(&self, rel: &str) -> String {
        fs::read_to_string(self.dir.path().join(rel)).unwrap()
    }

    /// Stage everything and commit with git2 directly.
    fn commit_all(&self, message: &str) -> git2::Oid {
        let mut index = self.repo.index().unwrap();
        index
            .add_all(["*"], git2::IndexAddOption::DEFAULT, None)
            .unwrap();
        index.update_all(["*"], None).unwrap();
        index.write().unwrap();
        let tree = self.repo.find_tree(index.write_tree().unwrap()).unwrap();
        let sig = Signature::now("Ada Tester", "ada@example.com").unwrap();
        let parent = self.repo.head().ok().and_then(|h| h.peel_to_commit().ok());
        let parents: Vec<&git2::Commit<'_>> = parent.iter().collect();
        self.repo
            .commit(Some("HEAD"), &sig, &sig, message, &tree, &parents)
            .unwrap()
    }

    async fn call(&self, name: &str, args: Value) -> (bool, String) {
        call(&self.tools, name, args).await
    }
}

async fn call(tools: &ToolSet<Git>, name: &str, args: Value) -> (bool, String) {
    let seen = cairn_test_support::tools::call(tools, name, args).await;
    (seen.is_error, seen.text)
}

#[track_caller]
fn ok(outcome: (bool, String)) -> String {
    assert!(!outcome.0, "expected success, got error: {}", outcome.1);
    outcome.1
}

#[track_caller]
fn err(outcome: (bool, String)) -> String {
    assert!(outcome.0, "expected an error, got: {}", outcome.1);
    outcome.1
}

#[test]
fn listing_has_the_contract_names_effects_and_schemas() {
    isolate_config();
    let dir = tempfile::tempdir().unwrap();
    let tools = git_tools(Arc::new(
        Workspace::new(vec![dir.path().to_path_buf()]).unwrap(),
    ));
    let infos = tools.list();
    let names: Vec<&str> = infos.iter().map(|i| i.tool.name.as_ref()).collect();
    let listed: Vec<&str> = GIT_TOOLS.iter().map(Entry::name).collect();
    assert_eq!(names, listed);
    assert_eq!(names.len(), 19, "{names:?}");
    let mut unique = names.clone();
    unique.sort_unstable();
    unique.dedup();
    assert_eq!(unique.len(), names.len(), "{names:?}");
    // The seven that change the repository: branch create, switch, stage, unstage, commit,
    // stash push and stash pop.
    let writes = infos.iter().filter(|i| i.effect == Effect::Write).count();
    assert_eq!(writes, 7);
    for info in &infos {
        let name = info.tool.name.as_ref();
        assert!(name.starts_with("git_"), "{name}");
        assert_eq!(info.category, "git");
        let write = info.effect == Effect::Write;
        assert_eq!(info.effect == Effect::Read, !write, "{name}");
        assert_eq!(info.agent_only, write, "{name}");
        let schema = &info.tool.input_schema;
        assert_eq!(schema["additionalProperties"], false, "{name}");
        assert!(schema["properties"].get("repo_path").is_some(), "{name}");
        let annotations = info.tool.annotations.as_ref().unwrap();
        assert_eq!(annotations.read_only_hint, Some(!write), "{name}");
        let description = info.tool.description.as_deref().unwrap();
        assert!(!description.contains('\n'), "{name}");
    }
}

#[tokio::test]
async fn bad_arguments_and_unknown_tools_are_errors() {
    let f = Fixture::new();
    let cases: &[(&str, Value, &str)] = &[
        ("git_status", json!({"bogus": 1}), "unknown field `bogus`"),
        ("git_log", json!({"max_count": "ten"}), "`max_count`"),
        ("git_log", json!({"max_count": 0}), "at least 1"),
        ("git_commit", json!({}), "missing field `message`"),
        ("git_stage", json!({"paths": []}), "at least one path"),
        ("git_diff", json!({"to": "HEAD"}), "`to` needs `from`"),
        ("git_nope", json!({}), "unknown tool `git_nope`"),
        ("git_show", json!({}), "`HEAD` does not name a commit"),
        (
            "git_blame",
            json!({"path": "missing.txt"}),
            "no commits yet",
        ),
    ];
    for (tool, args, expected) in cases {
        let text = err(f.call(tool, args.clone()).await);
        assert!(text.contains(expected), "{tool} {args}: {text}");
    }
}

#[tokio::test]
async fn a_whole_workflow() {
    let f = Fixture::new();
    // Empty repository.
    let status = ok(f.call("git_status", json!({})).await);
    assert!(status.starts_with("## main (no commits yet)"), "{status}");
    assert_eq!(ok(f.call("git_log", json!({})).await), "(no commits yet)");

    // Stage and commit through the tools.
    f.write("src/lib.rs", "fn one() {}\n");
    f.write("README.md", "hello\n");
    let status = ok(f.call("git_status", json!({})).await);
    assert!(status.contains("?? README.md"), "{status}");
    assert!(status.contains("?? src/lib.rs"), "{status}");
    let staged = ok(f.call("git_stage", json!({"paths": ["."]})).await);
    assert!(staged.contains("staged 2 path(s)"), "{staged}");
    // Unstaging before the first commit removes the path from the index.
    ok(f.call("git_unstage", json!({"paths": ["README.md"]})).await);
    let status = ok(f.call("git_status", json!({})).await);
    assert!(status.contains("?? README.md"), "{status}");
    assert!(status.contains("A  src/lib.rs"), "{status}");
    ok(f.call("git_stage", json!({"paths": ["README.md"]})).await);
    let diff = ok(f.call("git_diff", json!({"staged": true})).await);
    assert!(diff.contains("+fn one() {}"), "{diff}");
    let done = ok(f
        .call("git_commit", json!({"message": "First commit"}))
        .await);
    assert!(done.contains("Ada Tester First commit"), "{done}");
    let again = err(f.call("git_commit", json!({"message": "again"})).await);
    assert!(again.contains("nothing staged"), "{again}");

    // Unstaged diff, stage one path, unstage it.
    f.write("src/lib.rs", "fn one() {}\nfn two() {}\n");
    f.write("README.md", "hello world\n");
    let diff = ok(f.call("git_diff", json!({"paths": ["src"]})).await);
    assert!(diff.contains("+fn two() {}"), "{diff}");
    assert!(!diff.contains("README"), "{diff}");
    ok(f.call("git_stage", json!({"paths": ["README.md"]})).await);
    let status = ok(f.call("git_status", json!({})).await);
    assert!(status.contains("M  README.md"), "{status}");
    assert!(status.contains(" M src/lib.rs"), "{status}");
    ok(f.call("git_unstage", json!({"paths": ["README.md"]})).await);
    let status = ok(f.call("git_status", json!({})).await);
    assert!(status.contains(" M README.md"), "{status}");
    assert_eq!(f.read("README.md"), "hello world\n");
    ok(
        f.call("git_stage", json!({"paths": ["src/lib.rs", "README.md"]}))
            .await,
    );
    ok(f.call(
        "git_commit",
        json!({"message": "Second: add two\n\nWith a body."}),
    )
    .await);

    // Log, show, blame.
    let log = ok(f.call("git_log", json!({})).await);
    let lines: Vec<&str> = log.lines().collect();
    assert_eq!(lines.len(), 2, "{log}");
    assert!(lines[0].ends_with("Ada Tester Second: add two"), "{log}");
    assert!(lines[1].ends_with("First commit"), "{log}");
    let log1 = ok(f
        .call("git_log", json!({"max_count": 1, "path": "README.md"}))
        .await);
    assert_eq!(log1.lines().count(), 1, "{log1}");
    let show = ok(f.call("git_show", json!({"rev": "HEAD"})).await);
    assert!(show.contains("With a body."), "{show}");
    assert!(show.contains("2 files changed"), "{show}");
    assert!(show.contains("+fn two() {}"), "{show}");
    let blame = ok(f
        .call("git_blame", json!({"path": "src/lib.rs", "start_line": 2}))
        .await);
    assert_eq!(blame.lines().count(), 1, "{blame}");
    assert!(blame.contains("fn two() {}"), "{blame}");
    assert!(blame.contains("Ada Tester"), "{blame}");
    let head_short = &log[..7];
    assert!(blame.starts_with(head_short), "{blame} vs {log}");

    // Branches, switch, merge base.
    let created = ok(f
        .call(
            "git_branch_create",
            json!({"name": "feature", "start": "HEAD~1"}),
        )
        .await);
    assert!(created.contains("First commit"), "{created}");
    let dup = err(f
        .call("git_branch_create", json!({"name": "feature"}))
        .await);
    assert!(dup.contains("already exists"), "{dup}");
    let branches = ok(f.call("git_branches", json!({})).await);
    assert!(branches.contains("  feature "), "{branches}");
    assert!(branches.contains("* main "), "{branches}");
    let switched = ok(f.call("git_switch", json!({"branch": "feature"})).await);
    assert!(switched.contains("switched to feature"), "{switched}");
    assert_eq!(f.read("README.md"), "hello\n");
    f.write("feature.txt", "f\n");
    ok(f.call("git_stage", json!({"paths": ["feature.txt"]})).await);
    ok(f.call("git_commit", json!({"message": "Feature work"}))
        .await);
    let base = ok(f
        .call("git_merge_base", json!({"a": "main", "b": "feature"}))
        .await);
    assert!(base.contains("First commit"), "{base}");
    ok(f.call("git_switch", json!({"branch": "main"})).await);
    assert!(!f.dir.path().join("feature.txt").exists());
    let range = ok(f
        .call("git_diff", json!({"from": "main", "to": "feature"}))
        .await);
    assert!(range.contains("+f"), "{range}");
    assert!(range.contains("-fn two() {}"), "{range}");
    let since = ok(f.call("git_diff", json!({"from": "HEAD~1"})).await);
    assert!(since.contains("+hello world"), "{since}");
    let all = ok(f.call("git_branches", json!({"remote": true})).await);
    assert!(all.contains("* main "), "{all}");
    let missing = err(f.call("git_switch", json!({"branch": "nope"})).await);
    assert!(
        missing.contains("no local branch named `nope`"),
        "{missing}"
    );

    // Tags and remotes (set up with git2; never contacted).
    let head = f.repo.head().unwrap().peel_to_commit().unwrap();
    f.repo
        .tag_lightweight("v0.1", head.as_object(), false)
        .unwrap();
    let sig = Signature::now("Ada Tester", "ada@example.com").unwrap();
    f.repo
        .tag("v0.2", head.as_object(), &sig, "Release two", false)
        .unwrap();
    let tags = ok(f.call("git_tags", json!({})).await);
    assert!(tags.contains("v0.1  -> "), "{tags}");
    assert!(tags.contains("[annotated: Release two]"), "{tags}");
    f.repo
        .remote("origin", "https://alice:s3cret@example.invalid/repo.git")
        .unwrap();
    let remotes = ok(f.call("git_remotes", json!({})).await);
    assert!(
        remotes.contains("origin\thttps://alice:***@example.invalid/repo.git (fetch)"),
        "{remotes}"
    );
    assert!(!remotes.contains("s3cret"), "{remotes}");

    // Stash push, list, pop.
    f.write("README.md", "stashed change\n");
    let pushed = ok(f
        .call("git_stash_push", json!({"message": "wip readme"}))
        .await);
    assert!(pushed.contains("stash@{0}"), "{pushed}");
    assert_eq!(f.read("README.md"), "hello world\n");
    let list = ok(f.call("git_stash_list", json!({})).await);
    assert!(list.starts_with("stash@{0} "), "{list}");
    assert!(list.contains("wip readme"), "{list}");
    let none = err(f.call("git_stash_push", json!({})).await);
    assert!(none.contains("no local changes"), "{none}");
    ok(f.call("git_stash_pop", json!({})).await);
    assert_eq!(f.read("README.md"), "stashed change\n");
    assert_eq!(
        ok(f.call("git_stash_list", json!({})).await),
        "(no stashes)"
    );
    let gone = err(f.call("git_stash_pop", json!({"index": 3})).await);
    assert!(gone.contains("no stash@{3}"), "{gone}");

    // No conflicts here.
    assert_eq!(
        ok(f.call("git_conflicts", json!({})).await),
        "(no conflicts)"
    );
}

#[tokio::test]
async fn switch_refuses_to_overwrite_local_changes() {
    let f = Fixture::new();
    f.write("a.txt", "one\n");
    f.commit_all("one");
    ok(f.call("git_branch_create", json!({"name": "other"})).await);
    f.write("a.txt", "two\n");
    f.commit_all("two");
    f.write("a.txt", "local edit\n");
    let refused = err(f.call("git_switch", json!({"branch": "other"})).await);
    assert!(refused.contains("refused to switch to other"), "{refused}");
    assert_eq!(f.read("a.txt"), "local edit\n");
    let status = ok(f.call("git_status", json!({})).await);
    assert!(status.starts_with("## main at "), "{status}");
}

#[tokio::test]
async fn file_history_follows_a_rename() {
    let f = Fixture::new();
    let body: String = (0..40).map(|i| format!("line {i}\n")).collect();
    f.write("old.rs", &body);
    f.write("other.txt", "x\n");
    f.commit_all("add old.rs");
    f.write("other.txt", "y\n");
    f.commit_all("touch other");
    fs::rename(f.dir.path().join("old.rs"), f.dir.path().join("new.rs")).unwrap();
    f.commit_all("rename old to new");
    f.write("new.rs", &format!("{body}line 40\n"));
    f.commit_all("extend new.rs");
    let history = ok(f.call("git_file_history", json!({"path": "new.rs"})).await);
    let lines: Vec<&str> = history.lines().collect();
    assert_eq!(lines.len(), 3, "{history}");
    assert!(lines[0].contains("extend new.rs  [new.rs]"), "{history}");
    assert!(
        lines[1].contains("rename old to new  [new.rs] (renamed from old.rs)"),
        "{history}"
    );
    assert!(lines[2].contains("add old.rs  [old.rs]"), "{history}");
    let log = ok(f.call("git_log", json!({"path": "new.rs"})).await);
    assert_eq!(log.lines().count(), 2, "{log}");
}

#[tokio::test]
async fn a_merge_conflict_is_listed() {
    let f = Fixture::new();
    f.write("c.txt", "base\n");
    f.commit_all("base");
    ok(f.call("git_branch_create", json!({"name": "theirs"})).await);
    f.write("c.txt", "ours\n");
    f.commit_all("ours");
    ok(f.call("git_switch", json!({"branch": "theirs"})).await);
    f.write("c.txt", "theirs\n");
    f.commit_all("theirs");
    ok(f.call("git_switch", json!({"branch": "main"})).await);
    let theirs = f
        .repo
        .find_branch("theirs", git2::BranchType::Local)
        .unwrap();
    let annotated = f.repo.reference_to_annotated_commit(theirs.get()).unwrap();
    f.repo.merge(&[&annotated], None, None).unwrap();

    let conflicts = ok(f.call("git_conflicts", json!({})).await);
    assert_eq!(conflicts, "c.txt\t(base, ours, theirs)\n");
    let status = ok(f.call("git_status", json!({})).await);
    assert!(status.contains("UU c.txt"), "{status}");
    assert!(status.contains("Merge in progress"), "{status}");
    let refused = err(f.call("git_commit", json!({"message": "merge"})).await);
    assert!(refused.contains("in progress"), "{refused}");
}

#[tokio::test]
async fn refs_and_paths_beginning_with_a_dash_are_refused() {
    let f = Fixture::new();
    f.write("a.txt", "a\n");
    f.commit_all("a");
    let cases: &[(&str, Value)] = &[
        ("git_diff", json!({"from": "--output=/tmp/cairn-x"})),
        ("git_diff", json!({"from": "HEAD", "to": "-c"})),
        ("git_diff", json!({"paths": ["--output=x"]})),
        ("git_log", json!({"rev": "-c core.pager=touch"})),
        ("git_log", json!({"path": "-p"})),
        ("git_show", json!({"rev": "--output=x"})),
        ("git_blame", json!({"path": "--help"})),
        ("git_merge_base", json!({"a": "-x", "b": "HEAD"})),
        ("git_branch_create", json!({"name": "-f"})),
        (
            "git_branch_create",
            json!({"name": "ok", "start": "--orphan"}),
        ),
        ("git_switch", json!({"branch": "-"})),
        ("git_stage", json!({"paths": ["-A"]})),
        ("git_unstage", json!({"paths": ["--all"]})),
        ("git_file_history", json!({"path": "--follow"})),
        ("git_status", json!({"repo_path": "-C"})),
    ];
    for (tool, args) in cases {
        let text = err(f.call(tool, args.clone()).await);
        assert!(
            text.contains("may not begin with `-`"),
            "{tool} {args}: {text}"
        );
    }
    assert!(f.repo.find_branch("ok", git2::BranchType::Local).is_err());
}

#[tokio::test]
async fn repositories_and_paths_outside_the_workspace_are_refused() {
    isolate_config();
    let outside = tempfile::tempdir().unwrap();
    let out_repo = Repository::init(outside.path()).unwrap();
    fs::write(outside.path().join("secret.txt"), "secret\n").unwrap();
    let f = Fixture::new();
    f.write("a.txt", "a\n");
    f.commit_all("a");
    std::os::unix::fs::symlink(outside.path(), f.dir.path().join("link")).unwrap();
    let out = outside.path().to_str().unwrap().to_owned();
    let cases: &[(&str, Value, &str)] = &[
        (
            "git_status",
            json!({"repo_path": out}),
            "outside the workspace",
        ),
        (
            "git_commit",
            json!({"repo_path": "../", "message": "x"}),
            "outside the workspace",
        ),
        (
            "git_stage",
            json!({"repo_path": out, "paths": ["."]}),
            "outside the workspace",
        ),
        (
            "git_stage",
            json!({"paths": [format!("{out}/secret.txt")]}),
            "outside the workspace",
        ),
        (
            "git_stage",
            json!({"paths": ["link/secret.txt"]}),
            "symlink",
        ),
        ("git_blame", json!({"path": "link/secret.txt"}), "symlink"),
        ("git_status", json!({"repo_path": "link"}), "symlink"),
    ];
    for (tool, args, expected) in cases {
        let text = err(f.call(tool, args.clone()).await);
        assert!(text.contains(expected), "{tool} {args}: {text}");
    }
    // The outside repository was not touched: nothing staged, no commit.
    assert!(out_repo.index().unwrap().is_empty());
    assert!(out_repo.head().is_err());

    // A workspace inside a repository whose working directory contains the root: refused.
    let sub = f.dir.path().join("sub");
    fs::create_dir_all(&sub).unwrap();
    let inner = git_tools(Arc::new(Workspace::new(vec![sub]).unwrap()));
    let text = err(call(&inner, "git_status", json!({})).await);
    assert!(
        text.contains("open the repository's own directory"),
        "{text}"
    );
    let text = err(call(&inner, "git_stage", json!({"paths": ["."]})).await);
    assert!(
        text.contains("open the repository's own directory"),
        "{text}"
    );
}

#[tokio::test]
async fn fsmonitor_and_hooks_never_run() {
    let f = Fixture::new();
    let marker = tempfile::tempdir().unwrap();
    let pwned = marker.path().join("pwned");
    let hooked = marker.path().join("hooked");
    let mut config = f.repo.config().unwrap();
    config
        .set_str("core.fsmonitor", &format!("touch {}", pwned.display()))
        .unwrap();
    config
        .set_str("core.pager", &format!("touch {}", pwned.display()))
        .unwrap();
    let hooks = f.repo.path().join("hooks");
    fs::create_dir_all(&hooks).unwrap();
    for hook in ["post-commit", "pre-commit", "commit-msg", "post-checkout"] {
        let script = hooks.join(hook);
        fs::write(&script, format!("#!/bin/sh\ntouch {}\n", hooked.display())).unwrap();
        use std::os::unix::fs::PermissionsExt;
        fs::set_permissions(&script, fs::Permissions::from_mode(0o755)).unwrap();
    }
    f.write("a.txt", "a\n");
    ok(f.call("git_status", json!({})).await);
    ok(f.call("git_stage", json!({"paths": ["a.txt"]})).await);
    ok(f.call("git_diff", json!({"staged": true})).await);
    ok(f.call("git_commit", json!({"message": "a"})).await);
    f.write("a.txt", "b\n");
    ok(f.call("git_diff", json!({})).await);
    ok(f.call("git_branch_create", json!({"name": "b"})).await);
    ok(f.call("git_stash_push", json!({})).await);
    ok(f.call("git_switch", json!({"branch": "b"})).await);
    assert!(!pwned.exists(), "fsmonitor or pager ran");
    assert!(!hooked.exists(), "a hook ran");
    assert!(!Path::new(&marker.path().join("anything")).exists());
}

#[tokio::test]
async fn a_missing_identity_is_a_clear_error() {
    let f = Fixture::bare_identity();
    f.write("a.txt", "a\n");
    ok(f.call("git_stage", json!({"paths": ["a.txt"]})).await);
    let text = err(f.call("git_commit", json!({"message": "a"})).await);
    assert!(text.contains("no commit identity is configured"), "{text}");
    assert!(text.contains("git config user.name"), "{text}");
    assert!(f.repo.head().is_err(), "no commit was made");
    f.commit_all("made with git2");
    f.write("a.txt", "b\n");
    let text = err(f.call("git_stash_push", json!({})).await);
    assert!(text.contains("git config user.email"), "{text}");
}

#[tokio::test]
async fn big_outputs_are_capped() {
    let f = Fixture::new();
    f.write("a.txt", "start\n");
    f.commit_all("start");
    let big: String = (0..5000)
        .map(|i| format!("a fairly long line number {i}\n"))
        .collect();
    f.write("a.txt", &big);
    let diff = ok(f.call("git_diff", json!({})).await);
    assert!(diff.len() < 51_000, "{}", diff.len());
    assert!(
        diff.contains("[output capped at 50000 bytes"),
        "{}",
        &diff[diff.len() - 200..]
    );
    f.commit_all("big");
    let show = ok(f.call("git_show", json!({})).await);
    assert!(show.contains("output capped"));
    let blame = ok(f.call("git_blame", json!({"path": "a.txt"})).await);
    assert!(blame.contains("output capped"));
}

#[tokio::test]
async fn stage_and_unstage_directories_whole_trees_and_deletions() {
    let f = Fixture::new();
    f.write("keep.txt", "k\n");
    f.write("gone.txt", "g\n");
    f.commit_all("base");
    f.write("dir/a.txt", "a\n");
    f.write("dir/sub/b.txt", "b\n");
    f.write("other.txt", "o\n");
    fs::remove_file(f.dir.path().join("gone.txt")).unwrap();
    let staged = ok(f.call("git_stage", json!({"paths": ["dir"]})).await);
    assert_eq!(staged, "staged 2 path(s):\n  dir/a.txt\n  dir/sub/b.txt\n");
    let staged = ok(f.call("git_stage", json!({"paths": ["gone.txt"]})).await);
    assert_eq!(staged, "staged 1 path(s):\n  gone.txt\n");
    let status = ok(f.call("git_status", json!({})).await);
    assert!(status.contains("D  gone.txt"), "{status}");
    assert!(status.contains("A  dir/sub/b.txt"), "{status}");
    assert!(status.contains("?? other.txt"), "{status}");
    let nothing = ok(f.call("git_stage", json!({"paths": ["keep.txt"]})).await);
    assert!(nothing.starts_with("nothing to stage"), "{nothing}");
    ok(f.call("git_unstage", json!({"paths": ["dir/sub"]})).await);
    let status = ok(f.call("git_status", json!({})).await);
    assert!(status.contains("?? dir/sub/b.txt"), "{status}");
    assert!(status.contains("A  dir/a.txt"), "{status}");
    ok(f.call("git_unstage", json!({"paths": ["."]})).await);
    let status = ok(f.call("git_status", json!({})).await);
    assert!(status.contains(" D gone.txt"), "{status}");
    assert!(status.contains("?? dir/a.txt"), "{status}");
    let staged = ok(f.call("git_stage", json!({"paths": ["."]})).await);
    assert!(staged.starts_with("staged 4 path(s)"), "{staged}");
    ok(f.call("git_commit", json!({"message": "all"})).await);
    let status = ok(f.call("git_status", json!({})).await);
    assert!(status.contains("working tree clean"), "{status}");
}

/// The git tools never show the contents of a file the user may not read: a committed `.env`
/// (protected) and a file outside the user's read grants. Headers show; changes are withheld.
#[tokio::test]
async fn contents_the_user_may_not_read_are_withheld() {
    use cairn_workspace::{AccessRules, ExactApprovals};
    let f = Fixture::new();
    f.write(".env", "TOKEN=first-secret\n");
    f.write("private/pay.txt", "salary 1\n");
    f.write("src/lib.rs", "fn a() {}\n");
    f.commit_all("initial");
    f.write(".env", "TOKEN=second-secret\n");
    f.write("private/pay.txt", "salary 2\n");
    f.write("src/lib.rs", "fn b() {}\n");
    f.commit_all("change");
    f.write(".env", "TOKEN=third-secret\n");
    let team = cairn_workspace::AccessPolicy::from_toml_str(
        "[default]\nread = [\"src/**\", \".env\"]\n",
        "policy.toml",
    )
    .unwrap();
    let ws = Workspace::new(vec![f.dir.path().to_path_buf()])
        .unwrap()
        .with_access(
            |_| AccessRules::new("eve@example.com", Some(&team), None),
            ExactApprovals::new(),
        );
    let tools = git_tools(Arc::new(ws));
    for (name, args) in [
        ("git_show", json!({})),
        ("git_diff", json!({})),
        ("git_diff", json!({"from": "HEAD~1", "to": "HEAD"})),
    ] {
        let out = ok(call(&tools, name, args.clone()).await);
        for secret in ["first-secret", "second-secret", "third-secret", "salary"] {
            assert!(
                !out.contains(secret),
                "{name} {args} showed {secret}: {out}"
            );
        }
        assert!(out.contains("[changes withheld"), "{name} {args}: {out}");
        if name != "git_diff" || args.get("from").is_some() {
            assert!(out.contains("fn b()"), "readable changes still show: {out}");
        }
    }
    let refused = err(call(&tools, "git_blame", json!({"path": ".env"})).await);
    assert!(refused.contains("protected"), "{refused}");
    let refused = err(call(&tools, "git_blame", json!({"path": "private/pay.txt"})).await);
    assert!(refused.contains("no read grant"), "{refused}");
    ok(call(&tools, "git_blame", json!({"path": "src/lib.rs"})).await);
}

/// A repository outside the workspace, with one commit whose file and message are markers.
struct Outside {
    dir: tempfile::TempDir,
    repo: Repository,
    head: git2::Oid,
}

impl Outside {
    fn new() -> Outside {
        isolate_config();
        let dir = tempfile::tempdir().unwrap();
        let repo = Repository::init(dir.path()).unwrap();
        repo.set_head("refs/heads/main").unwrap();
        fs::write(dir.path().join("secret.txt"), "outside-content\n").unwrap();
        let mut index = repo.index().unwrap();
        index.add_path(Path::new("secret.txt")).unwrap();
        index.write().unwrap();
        let tree = repo.find_tree(index.write_tree().unwrap()).unwrap();
        let sig = Signature::now("Outsider", "out@example.com").unwrap();
        let head = repo
            .commit(Some("HEAD"), &sig, &sig, "outside-history\n", &tree, &[])
            .unwrap();
        drop(tree);
        Outside { dir, repo, head }
    }

    fn git_dir(&self) -> String {
        self.dir.path().join(".git").to_str().unwrap().to_owned()
    }

    /// Every ref name and target, to compare before and after.
    fn refs(&self) -> Vec<(String, Option<git2::Oid>)> {
        let mut refs: Vec<_> = self
            .repo
            .references()
            .unwrap()
            .map(|r| {
                let r = r.unwrap();
                (r.name().unwrap().to_owned(), r.target())
            })
            .collect();
        refs.sort();
        refs
    }
}

/// Nothing of `outside` in `text`.
#[track_caller]
fn nothing_of(outside: &Outside, text: &str) {
    for marker in [
        "outside-content".to_owned(),
        "outside-history".to_owned(),
        "Outsider".to_owned(),
        outside.head.to_string()[..7].to_owned(),
    ] {
        assert!(!text.contains(&marker), "{marker} leaked: {text}");
    }
}

/// Issue 14 class 1: a `.git` file and a small fake git directory whose `commondir` names another
/// repository on the machine. Every tool refuses, naming what pointed where; nothing of the other
/// repository shows and its refs are unchanged.
#[tokio::test]
async fn a_commondir_pointing_outside_is_refused() {
    let outside = Outside::new();
    let before = outside.refs();
    let f = Fixture::new();
    f.write("a.txt", "a\n");
    f.commit_all("inside");
    f.write("sub/.git", "gitdir: ../fake\n");
    f.write("fake/HEAD", "ref: refs/heads/main\n");
    f.write("fake/commondir", &format!("{}\n", outside.git_dir()));
    f.write(
        "fake/gitdir",
        &format!("{}\n", f.dir.path().join("sub/.git").display()),
    );
    for repo_path in ["sub", "fake"] {
        for (tool, args) in [
            ("git_log", json!({})),
            ("git_show", json!({})),
            ("git_status", json!({})),
            ("git_branches", json!({})),
            ("git_diff", json!({"from": "HEAD"})),
            ("git_branch_create", json!({"name": "pwned"})),
            ("git_stage", json!({"paths": ["sub"]})),
        ] {
            let mut args = args.clone();
            args["repo_path"] = json!(repo_path);
            let (failed, text) = f.call(tool, args.clone()).await;
            nothing_of(&outside, &text);
            assert!(failed, "{tool} {args}: {text}");
            assert!(
                text.contains("outside the workspace"),
                "{tool} {args}: {text}"
            );
        }
    }
    let text = err(f.call("git_log", json!({"repo_path": "sub"})).await);
    assert!(text.contains("common directory"), "{text}");
    assert!(text.contains("fake/commondir"), "{text}");
    assert!(text.contains(&outside.git_dir()), "{text}");
    assert_eq!(
        outside.refs(),
        before,
        "the outside repository's refs changed"
    );
    // The workspace's own repository still works.
    assert!(ok(f.call("git_log", json!({})).await).contains("inside"));
}

/// Other ways for git data to lead outside: alternates, a symlink inside `.git`, a `.git`
/// symlink, config includes and path keys, a nested repository about to be staged.
#[tokio::test]
async fn every_other_pointer_outside_is_refused() {
    let outside = Outside::new();
    let head = outside.head.to_string();
    let outside_objects = format!("{}/objects", outside.git_dir());
    type Plant<'a> = Box<dyn Fn(&Fixture) + 'a>;
    let cases: Vec<(&str, Plant<'_>, &str, Value)> = vec![
        (
            "alternates",
            Box::new(|f: &Fixture| {
                f.write(
                    ".git/objects/info/alternates",
                    &format!("{outside_objects}\n"),
                )
            }),
            "alternate object directory",
            json!({"rev": head}),
        ),
        (
            "relative alternates",
            Box::new(|f: &Fixture| {
                let rel = relative_to(
                    f.dir.path().join(".git/objects").as_path(),
                    &outside_objects,
                );
                f.write(
                    ".git/objects/info/alternates",
                    &format!("# shared\n{rel}\n"),
                )
            }),
            "alternate object directory",
            json!({"rev": head}),
        ),
        (
            "symlinked ref",
            Box::new(|f: &Fixture| {
                std::os::unix::fs::symlink(
                    format!("{}/refs/heads/main", outside.git_dir()),
                    f.dir.path().join(".git/refs/heads/evil"),
                )
                .unwrap()
            }),
            "symlink",
            json!({"rev": "evil"}),
        ),
        (
            "symlinked objects",
            Box::new(|f: &Fixture| {
                let dir = &head[..2];
                // The inside commit may share the fan-out directory: replace it, so the link
                // is always made and the refusal is for the link.
                let fan_out = f.dir.path().join(".git/objects").join(dir);
                let _ = std::fs::remove_dir_all(&fan_out);
                std::os::unix::fs::symlink(format!("{outside_objects}/{dir}"), fan_out).unwrap();
            }),
            "symlink",
            json!({"rev": head}),
        ),
        (
            "include",
            Box::new(|f: &Fixture| {
                let mut c = f.repo.config().unwrap();
                c.set_str("include.path", &format!("{}/config", outside.git_dir()))
                    .unwrap();
            }),
            "include.path",
            json!({}),
        ),
        (
            "includeIf",
            Box::new(|f: &Fixture| {
                let mut c = f.repo.config().unwrap();
                c.set_str("includeIf.gitdir:/.path", "../../elsewhere/config")
                    .unwrap();
            }),
            "includeif.gitdir:/.path",
            json!({}),
        ),
        (
            "excludesFile",
            Box::new(|f: &Fixture| {
                let mut c = f.repo.config().unwrap();
                c.set_str(
                    "core.excludesFile",
                    &format!("{}/secret.txt", outside.dir.path().display()),
                )
                .unwrap();
            }),
            "core.excludesfile",
            json!({}),
        ),
    ];
    for (name, plant, expected, show_args) in cases {
        let f = Fixture::new();
        f.write("a.txt", "a\n");
        f.commit_all("inside");
        plant(&f);
        for (tool, args) in [("git_show", show_args.clone()), ("git_status", json!({}))] {
            let text = err(f.call(tool, args).await);
            nothing_of(&outside, &text);
            assert!(text.contains("outside the workspace"), "{name}: {text}");
            assert!(text.contains(expected), "{name}: {text}");
        }
    }

    // A `.git` symlink to another repository.
    let f = Fixture::new();
    f.write("a.txt", "a\n");
    f.commit_all("inside");
    std::os::unix::fs::symlink(outside.git_dir(), f.dir.path().join("linked")).unwrap();
    f.write("other/keep", "");
    std::os::unix::fs::symlink(outside.git_dir(), f.dir.path().join("other/.git")).unwrap();
    let text = err(f.call("git_log", json!({"repo_path": "other"})).await);
    nothing_of(&outside, &text);
    assert!(text.contains("git directory"), "{text}");

    // A nested repository whose `.git` file leads outside: staging it would read its HEAD.
    let before = outside.refs();
    fs::remove_file(f.dir.path().join("other/.git")).unwrap();
    f.write("nested/.git", &format!("gitdir: {}\n", outside.git_dir()));
    f.write("nested/x.txt", "x\n");
    let text = err(f.call("git_stage", json!({"paths": ["."]})).await);
    assert!(text.contains("nested"), "{text}");
    nothing_of(&outside, &text);
    let index = f.repo.index().unwrap();
    assert!(
        index.iter().all(|e| e.mode != 0o160_000),
        "a gitlink was staged"
    );
    assert_eq!(outside.refs(), before);
}

/// `target` relative to `from`, through the common ancestor (`../..`).
fn relative_to(from: &Path, target: &str) -> String {
    let from = from.canonicalize().unwrap();
    let target = Path::new(target).canonicalize().unwrap();
    let common = from
        .ancestors()
        .find(|a| target.starts_with(a))
        .unwrap()
        .to_path_buf();
    let ups = from.strip_prefix(&common).unwrap().components().count();
    let mut rel = String::from(".");
    for _ in 0..ups {
        rel.push_str("/..");
    }
    format!("{rel}/{}", target.strip_prefix(&common).unwrap().display())
}

/// A linked worktree and its main repository, both inside the workspace, are used as before.
#[tokio::test]
async fn a_linked_worktree_inside_the_workspace_works() {
    let f = Fixture::new();
    f.write("a.txt", "a\n");
    f.commit_all("inside");
    let wt = f.dir.path().join("wt");
    f.repo.worktree("wt", &wt, None).unwrap();
    let log = ok(f.call("git_log", json!({"repo_path": "wt"})).await);
    assert!(log.contains("inside"), "{log}");
    ok(f.call(
        "git_branch_create",
        json!({"repo_path": "wt", "name": "side"}),
    )
    .await);
    assert!(f.repo.find_branch("side", git2::BranchType::Local).is_ok());
}

/// Issue 14 class 7: a withheld file leaks nothing derived from its contents: no blob id (full or
/// abbreviated) in diffs, `git_show` or an error, no line counts, and naming its blob (or a path
/// into a tree) answers exactly as a revision that does not exist.
#[tokio::test]
async fn withheld_files_leak_no_blob_id_or_counts() {
    use cairn_workspace::{AccessRules, ExactApprovals};
    let f = Fixture::new();
    f.write(".env", "PIN=1234\n");
    f.write("src/lib.rs", "fn a() {}\n");
    f.commit_all("initial");
    f.write(".env", "PIN=5678\nMORE=1\n");
    f.write("src/lib.rs", "fn b() {}\n");
    f.commit_all("change");
    f.write(".env", "PIN=9012\n");
    let blobs: Vec<String> = ["PIN=1234\n", "PIN=5678\nMORE=1\n", "PIN=9012\n"]
        .iter()
        .map(|t| {
            git2::Oid::hash_object(git2::ObjectType::Blob, t.as_bytes())
                .unwrap()
                .to_string()
        })
        .collect();
    let ws = Workspace::new(vec![f.dir.path().to_path_buf()])
        .unwrap()
        .with_access(
            |_| AccessRules::new("ada@example.com", None, None),
            ExactApprovals::new(),
        );
    let tools = git_tools(Arc::new(ws));
    let mut outputs = Vec::new();
    for (name, args) in [
        ("git_show", json!({})),
        ("git_show", json!({"rev": "HEAD~1"})),
        ("git_diff", json!({})),
        ("git_diff", json!({"from": "HEAD~1"})),
        ("git_diff", json!({"from": "HEAD~1", "to": "HEAD"})),
        ("git_diff", json!({"paths": [".env"]})),
    ] {
        let out = ok(call(&tools, name, args.clone()).await);
        assert!(
            out.contains("diff --git a/.env b/.env"),
            "{name} {args}: {out}"
        );
        assert!(out.contains("[changes withheld"), "{name} {args}: {out}");
        outputs.push(out);
    }
    let show = &outputs[0];
    assert!(show.contains(" .env | withheld"), "{show}");
    assert!(show.contains(" src/lib.rs | 2 +-"), "{show}");
    assert!(
        show.contains(
            "1 file changed, 1 insertion(+), 1 deletion(-) (1 withheld file not counted)"
        ),
        "{show}"
    );
    // Naming the protected file's blob, or a path into a tree, answers like a missing revision.
    let missing = err(call(
        &tools,
        "git_show",
        json!({"rev": "0123456789abcdef0123456789abcdef01234567"}),
    )
    .await);
    for rev in [
        blobs[1].clone(),
        blobs[1][..7].to_owned(),
        "HEAD:.env".to_owned(),
        "HEAD:.env^{tree}".to_owned(),
        "HEAD^{tree}".to_owned(),
    ] {
        let text = err(call(&tools, "git_show", json!({"rev": rev})).await);
        // The same answer as a missing revision (the argument itself is echoed).
        assert_eq!(
            text,
            missing.replace("0123456789abcdef0123456789abcdef01234567", &rev),
            "{rev}"
        );
    }
    for out in &outputs {
        for blob in &blobs {
            assert!(!out.contains(&blob[..7]), "blob id {blob} shown: {out}");
        }
        assert!(!out.contains("PIN="), "{out}");
    }
}

/// A rename pairs files by likeness of contents, so a pair of a readable and a withheld file is
/// not shown as one: `git_show` lists a deletion and an addition, and `git_file_history` does
/// not follow the rename into the withheld file.
#[tokio::test]
async fn a_rename_between_readable_and_withheld_files_is_not_paired() {
    use cairn_workspace::{AccessRules, ExactApprovals};
    let f = Fixture::new();
    let body = "PIN=4821\nHOST=db.internal\nPORT=5432\nUSER=ada\nMODE=prod\n";
    f.write(".env", body);
    f.commit_all("secret");
    fs::remove_file(f.dir.path().join(".env")).unwrap();
    f.write("notes.txt", body);
    f.commit_all("moved");
    let ws = Workspace::new(vec![f.dir.path().to_path_buf()])
        .unwrap()
        .with_access(
            |_| AccessRules::new("ada@example.com", None, None),
            ExactApprovals::new(),
        );
    let tools = git_tools(Arc::new(ws));
    let show = ok(call(&tools, "git_show", json!({})).await);
    assert!(
        !show.contains("rename") && !show.contains("similarity"),
        "{show}"
    );
    assert!(show.contains("it was deleted"), "{show}");
    assert!(show.contains(" .env | withheld"), "{show}");
    assert!(!show.contains("PIN"), "{show}");
    let history = ok(call(&tools, "git_file_history", json!({"path": "notes.txt"})).await);
    assert!(!history.contains(".env"), "{history}");
    assert_eq!(history.lines().count(), 1, "{history}");
    // With both files readable (no rules), the rename is followed as before.
    let open = git_tools(Arc::new(
        Workspace::new(vec![f.dir.path().to_path_buf()]).unwrap(),
    ));
    let history = ok(call(&open, "git_file_history", json!({"path": "notes.txt"})).await);
    assert!(history.contains("(renamed from .env)"), "{history}");
}

/// Issue 14 class 7, as a property: whatever a protected file holds (text or binary, any size,
/// renamed or not), no diff or `git_show` shows its blob ids or its contents' line counts.
#[test]
fn fuzz_withheld_files_show_no_blob_id() {
    use cairn_workspace::{AccessRules, ExactApprovals};
    use proptest::prelude::*;
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let contents = || {
        prop_oneof![
            "[a-zA-Z0-9=\n ]{0,200}".prop_map(String::into_bytes),
            proptest::collection::vec(any::<u8>(), 0..300),
        ]
    };
    let strategy = (contents(), contents(), contents(), any::<bool>());
    // One repository for every case: each case commits on top of the last.
    let f = Fixture::new();
    let ws = Workspace::new(vec![f.dir.path().to_path_buf()])
        .unwrap()
        .with_access(
            |_| AccessRules::new("ada@example.com", None, None),
            ExactApprovals::new(),
        );
    let tools = git_tools(Arc::new(ws));
    cairn_test_support::fuzz::check(
        "withheld files show no blob id",
        strategy,
        |(first, second, working, rename)| {
            let _ = fs::remove_file(f.dir.path().join("key.pem"));
            let write = |rel: &str, bytes: &[u8]| {
                fs::write(f.dir.path().join(rel), bytes).unwrap();
            };
            write(".env", &first);
            write("README.md", "readable\n".as_bytes());
            f.commit_all("first");
            if rename {
                fs::remove_file(f.dir.path().join(".env")).unwrap();
                write("key.pem", &second);
            } else {
                write(".env", &second);
            }
            // The readable file changes in every second commit.
            write("README.md", "still readable\n".as_bytes());
            f.commit_all("second");
            write(".env", &working);
            let blobs: Vec<String> = [&first, &second, &working]
                .iter()
                .map(|b| {
                    git2::Oid::hash_object(git2::ObjectType::Blob, b)
                        .unwrap()
                        .to_string()
                })
                .collect();
            for (name, args) in [("git_show", json!({})), ("git_diff", json!({}))] {
                let (failed, out) = rt.block_on(call(&tools, name, args.clone()));
                prop_assert!(!failed, "{} {}: {}", name, args, out);
                for blob in &blobs {
                    prop_assert!(!out.contains(&blob[..7]), "{} {}: {}", name, args, out);
                }
                prop_assert!(!out.contains("similarity"), "{}", out);
                // The readable file's change still shows.
                if name == "git_show" {
                    prop_assert!(out.contains("+still readable"), "{}", out);
                }
            }
            Ok(())
        },
    );
}

/// A repository whose workspace protects secrets and files that run code, with the approvals
/// the agent would hold for one call.
fn protected_fixture() -> (Fixture, Arc<cairn_workspace::ExactApprovals>) {
    let f = Fixture::new();
    let approvals = cairn_workspace::ExactApprovals::new();
    let ws = Workspace::new(vec![f.dir.path().to_path_buf()])
        .unwrap()
        .with_access(
            |_| cairn_workspace::AccessRules::new("ada", None, None),
            approvals.clone(),
        );
    let f = Fixture {
        tools: git_tools(Arc::new(ws)),
        ..f
    };
    (f, approvals)
}

/// The protected paths a refused call names for the agent.
async fn protected_named(f: &Fixture, name: &str, args: Value) -> Vec<(String, String)> {
    let result = cairn_test_support::tools::call(&f.tools, name, args)
        .await
        .result;
    assert_eq!(result.is_error, Some(true), "{name} was not refused");
    cairn_agent::tools::protected_of(&result)
        .into_iter()
        .map(|p| (p.path, p.operation))
        .collect()
}

/// Git tools whose files are known only once git computes them check them too: a checkout or
/// a stash that would rewrite a protected file, and staging (or stashing) a secret's contents
/// into the object database, are refused naming the paths, and nothing changes; with the
/// user's approval of that very path, the call goes through.
#[tokio::test]
async fn protected_files_a_git_call_would_touch_need_an_approval() {
    let (f, approvals) = protected_fixture();
    f.write("a.txt", "a\n");
    f.write(".github/workflows/ci.yml", "on: push\n");
    let base = f.commit_all("base");
    ok(f.call("git_branch_create", json!({"name": "other"})).await);
    f.write(".github/workflows/ci.yml", "on: push\njobs: {pwn: {}}\n");
    f.commit_all("ci on main");
    let head = f.repo.head().unwrap().target().unwrap();

    // Switching back to `other` would rewrite the workflow.
    let named = protected_named(&f, "git_switch", json!({"branch": "other"})).await;
    assert_eq!(
        named,
        [(".github/workflows/ci.yml".to_owned(), "write".to_owned())]
    );
    assert_eq!(
        f.repo.head().unwrap().target().unwrap(),
        head,
        "still on main"
    );
    assert_eq!(
        f.read(".github/workflows/ci.yml"),
        "on: push\njobs: {pwn: {}}\n"
    );

    // Staging a secret would put its contents where git_show reads them back.
    f.write(".env", "TOKEN=s3cret\n");
    let named = protected_named(&f, "git_stage", json!({"paths": ["."]})).await;
    assert_eq!(named, [(".env".to_owned(), "read".to_owned())]);
    assert!(
        f.repo
            .index()
            .unwrap()
            .get_path(Path::new(".env"), 0)
            .is_none()
    );

    // Stashing it would store and then reset it.
    let named = protected_named(&f, "git_stash_push", json!({"include_untracked": true})).await;
    assert_eq!(named, [(".env".to_owned(), "read".to_owned())]);
    assert_eq!(f.read(".env"), "TOKEN=s3cret\n");
    fs::remove_file(f.dir.path().join(".env")).unwrap();

    // A stash that writes the workflow back when popped.
    f.write(".github/workflows/ci.yml", "on: push\njobs: {evil: {}}\n");
    let workflow = f
        .dir
        .path()
        .join(".github/workflows/ci.yml")
        .canonicalize()
        .unwrap();
    approvals.hold(&workflow, cairn_workspace::Operation::Read);
    approvals.hold(&workflow, cairn_workspace::Operation::Write);
    ok(f.call("git_stash_push", json!({})).await);
    approvals.release(&workflow, cairn_workspace::Operation::Read);
    approvals.release(&workflow, cairn_workspace::Operation::Write);
    assert_eq!(
        f.read(".github/workflows/ci.yml"),
        "on: push\njobs: {pwn: {}}\n"
    );
    let named = protected_named(&f, "git_stash_pop", json!({})).await;
    assert_eq!(
        named,
        [(".github/workflows/ci.yml".to_owned(), "write".to_owned())]
    );
    assert_eq!(
        f.read(".github/workflows/ci.yml"),
        "on: push\njobs: {pwn: {}}\n"
    );
    assert!(ok(f.call("git_stash_list", json!({})).await).starts_with("stash@{0}"));

    // Approved, the switch goes through.
    approvals.hold(&workflow, cairn_workspace::Operation::Write);
    ok(f.call("git_switch", json!({"branch": "other"})).await);
    assert_eq!(f.repo.head().unwrap().target().unwrap(), base);
    assert_eq!(f.read(".github/workflows/ci.yml"), "on: push\n");
}
