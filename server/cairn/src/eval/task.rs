//! The task suite on disk: `SUITE/<category>/<id>/task.toml`, its `workspace/` (what the agent
//! starts from), `check/` (files laid in only when the checkers run) and `reference/` (a solution
//! laid over the workspace, only for the suite's own tests). A `task.toml` is untrusted input:
//! every problem is an error naming the file, never a panic, and a checker that could silently
//! check less than its author meant (an unknown field, an empty list, a path out of the task)
//! is refused.

use std::collections::BTreeSet;
use std::path::{Component, Path, PathBuf};

use serde::Deserialize;

/// The suite's categories, in the order the report lists them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Category {
    FileRead,
    Debugging,
    DataAnalysis,
    Refactor,
    Feature,
}

impl Category {
    pub const ALL: [Category; 5] = [
        Category::FileRead,
        Category::Debugging,
        Category::DataAnalysis,
        Category::Refactor,
        Category::Feature,
    ];

    /// The id used in directories, on the command line and in reports.
    pub fn id(self) -> &'static str {
        match self {
            Category::FileRead => "file-read",
            Category::Debugging => "debugging",
            Category::DataAnalysis => "data-analysis",
            Category::Refactor => "refactor",
            Category::Feature => "feature",
        }
    }

    pub fn parse(id: &str) -> Option<Category> {
        Category::ALL.into_iter().find(|c| c.id() == id)
    }

    pub fn known() -> String {
        Category::ALL.map(Category::id).join(", ")
    }

    /// The success rate cairn claims for the category (README), which reports hold runs to.
    pub fn target(self) -> f64 {
        match self {
            Category::FileRead => 0.99,
            Category::Debugging => 0.87,
            Category::DataAnalysis => 0.82,
            Category::Refactor => 0.79,
            Category::Feature => 0.71,
        }
    }
}

/// A fact the answer or a file must hold: one text, or any one of several alternatives.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(untagged)]
pub enum Fact {
    One(String),
    Any(Vec<String>),
}

impl Fact {
    pub fn alternatives(&self) -> &[String] {
        match self {
            Fact::One(text) => std::slice::from_ref(text),
            Fact::Any(list) => list,
        }
    }

    /// For messages: `"42"` or `"42" or "forty-two"`.
    pub fn describe(&self) -> String {
        self.alternatives()
            .iter()
            .map(|a| format!("{a:?}"))
            .collect::<Vec<_>>()
            .join(" or ")
    }
}

/// One checker; a task succeeds only when all of its checkers hold.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum Check {
    /// Every fact occurs in the answer (case-insensitive, not inside a longer word or number),
    /// and none of the `absent` ones does: the distractors, so an answer that lists every
    /// candidate fails.
    AnswerContains {
        facts: Vec<Fact>,
        #[serde(default)]
        absent: Vec<Fact>,
    },
    /// The regular expression matches somewhere in the answer.
    AnswerMatches {
        pattern: String,
    },
    /// Every fact occurs in the file (case-sensitive: code).
    FileContains {
        path: String,
        text: Vec<Fact>,
    },
    /// None of the texts occurs in the file, which must exist.
    FileLacks {
        path: String,
        text: Vec<String>,
    },
    /// The file holds exactly this text, or the text of `same_as` (a path in the task's
    /// directory, usually under `check/`); line ends and trailing newlines are not compared.
    FileEquals {
        path: String,
        #[serde(default)]
        text: Option<String>,
        #[serde(default)]
        same_as: Option<String>,
    },
    FileAbsent {
        path: String,
    },
    FileExists {
        path: String,
    },
    /// These files (or directories, recursively) are as the workspace had them.
    Unchanged {
        paths: Vec<String>,
    },
    /// The task's tests, run in a sandbox by cairn's own runner over a clean copy of the
    /// harness: the workspace as the task gave it, only the paths of `changes` taken from the
    /// result, `check/` laid over them. The runner's report must show exactly `count` tests run
    /// and passed (none failed, errored or skipped); exit status alone proves nothing.
    Tests {
        runner: Runner,
        /// Where the test files lie (unittest: the package of the tests; go: the directory whose
        /// packages `go test` runs, `.` for the whole module).
        #[serde(default = "default_start")]
        start: String,
        count: u32,
    },
}

/// The test runners the `tests` checker drives, each in its own sandbox runtime.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Runner {
    /// Python's unittest, isolated (`-I -S`: no site hooks, no user site, the workspace last
    /// on `sys.path` so it cannot shadow the standard library).
    Unittest,
    /// Node: `*.test.js` files calling the `test(name, fn)` cairn's runner passes in.
    Node,
    /// Go: `go test -json` over the module, only the task's `*_test.go` files kept.
    Go,
}

impl Runner {
    /// The sandbox runtime (and image) the runner needs.
    pub fn runtime(self) -> &'static str {
        match self {
            Runner::Unittest => "python",
            Runner::Node => "node",
            Runner::Go => "go",
        }
    }
}

fn default_start() -> String {
    "tests".into()
}

impl Check {
    /// The checker's name, as `task.toml` spells its kind.
    pub fn kind(&self) -> &'static str {
        match self {
            Check::AnswerContains { .. } => "answer_contains",
            Check::AnswerMatches { .. } => "answer_matches",
            Check::FileContains { .. } => "file_contains",
            Check::FileLacks { .. } => "file_lacks",
            Check::FileEquals { .. } => "file_equals",
            Check::FileAbsent { .. } => "file_absent",
            Check::FileExists { .. } => "file_exists",
            Check::Unchanged { .. } => "unchanged",
            Check::Tests { .. } => "tests",
        }
    }
}

/// `task.toml` as written.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct TaskFile {
    id: String,
    category: Category,
    instruction: String,
    #[serde(default)]
    reference_answer: Option<String>,
    #[serde(default)]
    reference_removes: Vec<String>,
    /// Globs of the workspace paths the task may change (create, edit, delete); required, so
    /// every task says it, `[]` for one that changes nothing.
    changes: Vec<String>,
    /// The longest answer that can pass (in characters), when the task has answer checkers.
    #[serde(default)]
    max_answer_chars: Option<usize>,
    #[serde(default, rename = "check")]
    checks: Vec<Check>,
}

/// An answer longer than this fails a task with answer checkers, unless the task sets its own
/// `max_answer_chars`: a dump of the workspace should not pass for an answer.
pub const DEFAULT_MAX_ANSWER_CHARS: usize = 1200;

/// One task of the suite.
#[derive(Debug, Clone)]
pub struct Task {
    pub id: String,
    pub category: Category,
    pub instruction: String,
    pub checks: Vec<Check>,
    /// The paths the task may change; any other change fails it.
    pub changes: globset::GlobSet,
    /// `changes` as written, for messages.
    pub changes_shown: Vec<String>,
    pub max_answer_chars: usize,
    /// An answer that passes the answer checkers, for the suite's own tests (only they read it).
    #[cfg_attr(not(test), allow(dead_code))]
    pub reference_answer: Option<String>,
    /// Paths the reference solution deletes (after laying `reference/` over the workspace).
    #[cfg_attr(not(test), allow(dead_code))]
    pub reference_removes: Vec<String>,
    /// The task's directory (holding `task.toml`, `workspace/`, `check/`, `reference/`).
    pub dir: PathBuf,
}

impl Task {
    pub fn workspace(&self) -> PathBuf {
        self.dir.join("workspace")
    }

    /// `category/id`, how reports name a task.
    pub fn name(&self) -> String {
        format!("{}/{}", self.category.id(), self.id)
    }
}

/// Why a suite could not be loaded.
#[derive(Debug, thiserror::Error)]
pub enum SuiteError {
    #[error("{path}: {message}")]
    Bad { path: PathBuf, message: String },
    #[error("{}: cannot read: {source}", path.display())]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
}

fn bad(path: &Path, message: impl Into<String>) -> SuiteError {
    SuiteError::Bad {
        path: path.to_path_buf(),
        message: message.into(),
    }
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> SuiteError + '_ {
    move |source| SuiteError::Io {
        path: path.to_path_buf(),
        source,
    }
}

/// Every task under `suite`, sorted by category, then id.
pub fn load_suite(suite: &Path) -> Result<Vec<Task>, SuiteError> {
    let mut tasks = Vec::new();
    for entry in sorted_dir(suite)? {
        let name = entry.file_name().unwrap_or_default().to_string_lossy();
        if !entry.is_dir() {
            continue;
        }
        let Some(category) = Category::parse(&name) else {
            return Err(bad(
                &entry,
                format!("not a category of the suite (known: {})", Category::known()),
            ));
        };
        for task_dir in sorted_dir(&entry)? {
            if task_dir.is_dir() {
                let task = load_task(&task_dir)?;
                if task.category != category {
                    return Err(bad(
                        &task_dir.join("task.toml"),
                        format!(
                            "category `{}` but the task lies under `{}`",
                            task.category.id(),
                            category.id()
                        ),
                    ));
                }
                tasks.push(task);
            }
        }
    }
    let mut seen = BTreeSet::new();
    for task in &tasks {
        if !seen.insert(task.id.clone()) {
            return Err(bad(
                &task.dir.join("task.toml"),
                format!("id `{}` is used by another task", task.id),
            ));
        }
    }
    tasks.sort_by(|a, b| (a.category, &a.id).cmp(&(b.category, &b.id)));
    Ok(tasks)
}

fn sorted_dir(dir: &Path) -> Result<Vec<PathBuf>, SuiteError> {
    let mut entries = std::fs::read_dir(dir)
        .map_err(io(dir))?
        .map(|e| e.map(|e| e.path()))
        .collect::<Result<Vec<_>, _>>()
        .map_err(io(dir))?;
    entries.sort();
    Ok(entries)
}

/// One task from its directory.
pub fn load_task(dir: &Path) -> Result<Task, SuiteError> {
    let path = dir.join("task.toml");
    let text = std::fs::read_to_string(&path).map_err(io(&path))?;
    let file: TaskFile = toml::from_str(&text).map_err(|e| bad(&path, e.to_string()))?;
    let dir_name = dir.file_name().unwrap_or_default().to_string_lossy();
    if file.id != dir_name {
        return Err(bad(
            &path,
            format!("id `{}` differs from its directory `{dir_name}`", file.id),
        ));
    }
    if file.id.is_empty()
        || !file
            .id
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
    {
        return Err(bad(&path, "an id is lowercase letters, digits and `-`"));
    }
    if file.instruction.trim().is_empty() {
        return Err(bad(&path, "the instruction is empty"));
    }
    if file.checks.is_empty() {
        return Err(bad(&path, "a task needs at least one [[check]]"));
    }
    if !dir.join("workspace").is_dir() {
        return Err(bad(
            &dir.join("workspace"),
            "missing: a task's workspace is a directory (it may be empty but must exist)",
        ));
    }
    for path in &file.reference_removes {
        relative(path).map_err(|m| bad(&path_of_toml(dir), format!("reference_removes: {m}")))?;
    }
    for (i, check) in file.checks.iter().enumerate() {
        validate(check, dir)
            .map_err(|m| bad(&path, format!("check {} ({}): {m}", i + 1, check.kind())))?;
    }
    let mut globs = globset::GlobSetBuilder::new();
    for glob in &file.changes {
        relative(glob.trim_start_matches("**/"))
            .map_err(|m| bad(&path, format!("changes: {m}")))?;
        let parsed = globset::GlobBuilder::new(glob)
            .literal_separator(true)
            .build()
            .map_err(|e| bad(&path, format!("changes: `{glob}`: {e}")))?;
        globs.add(parsed);
    }
    let changes = globs
        .build()
        .map_err(|e| bad(&path, format!("changes: {e}")))?;
    if file.max_answer_chars == Some(0) {
        return Err(bad(&path, "max_answer_chars is 0: no answer could pass"));
    }
    Ok(Task {
        id: file.id,
        category: file.category,
        instruction: file.instruction,
        checks: file.checks,
        changes,
        changes_shown: file.changes,
        max_answer_chars: file.max_answer_chars.unwrap_or(DEFAULT_MAX_ANSWER_CHARS),
        reference_answer: file.reference_answer,
        reference_removes: file.reference_removes,
        dir: dir.to_path_buf(),
    })
}

fn path_of_toml(dir: &Path) -> PathBuf {
    dir.join("task.toml")
}

/// A path a checker may name: relative, without `..`, not empty.
pub fn relative(path: &str) -> Result<&Path, String> {
    let p = Path::new(path);
    let ok = !path.is_empty()
        && p.components()
            .all(|c| matches!(c, Component::Normal(_) | Component::CurDir));
    if ok {
        Ok(p)
    } else {
        Err(format!(
            "path `{path}` must be relative to the workspace, without `..`"
        ))
    }
}

fn validate(check: &Check, dir: &Path) -> Result<(), String> {
    let facts_ok = |facts: &[Fact]| {
        !facts.is_empty()
            && facts.iter().all(|f| {
                !f.alternatives().is_empty()
                    && f.alternatives().iter().all(|a| !a.trim().is_empty())
            })
    };
    match check {
        Check::AnswerContains { facts, absent } => {
            if !facts_ok(facts) {
                return Err("`facts` must list at least one fact, none empty".into());
            }
            if !absent.is_empty() && !facts_ok(absent) {
                return Err("`absent` lists an empty fact".into());
            }
            let needed: Vec<String> = facts
                .iter()
                .flat_map(|f| f.alternatives().to_vec())
                .collect();
            if let Some(both) = absent
                .iter()
                .flat_map(Fact::alternatives)
                .find(|a| needed.iter().any(|n| n.eq_ignore_ascii_case(a)))
            {
                return Err(format!("`{both}` is both needed and absent"));
            }
        }
        Check::AnswerMatches { pattern } => {
            let re = regex::Regex::new(pattern).map_err(|e| format!("bad `pattern`: {e}"))?;
            if re.is_match("") {
                return Err("`pattern` matches an empty answer".into());
            }
        }
        Check::FileContains { path, text } => {
            relative(path)?;
            if !facts_ok(text) {
                return Err("`text` must list at least one text, none empty".into());
            }
        }
        Check::FileLacks { path, text } => {
            relative(path)?;
            if text.is_empty() || text.iter().any(|t| t.is_empty()) {
                return Err("`text` must list at least one text, none empty".into());
            }
        }
        Check::FileEquals {
            path,
            text,
            same_as,
        } => {
            relative(path)?;
            match (text, same_as) {
                (Some(_), None) => {}
                (None, Some(other)) => {
                    let p = dir.join(relative(other)?);
                    if !p.is_file() {
                        return Err(format!("`same_as` {} is not a file", p.display()));
                    }
                }
                _ => return Err("give exactly one of `text` and `same_as`".into()),
            }
        }
        Check::FileAbsent { path } | Check::FileExists { path } => {
            relative(path)?;
        }
        Check::Unchanged { paths } => {
            if paths.is_empty() {
                return Err("`paths` is empty".into());
            }
            for path in paths {
                let p = dir.join("workspace").join(relative(path)?);
                if !p.exists() {
                    return Err(format!("`{path}` is not in the workspace"));
                }
            }
        }
        Check::Tests { start, count, .. } => {
            relative(start)?;
            if *count == 0 {
                return Err("`count` is 0: a run of no tests proves nothing".into());
            }
        }
    }
    Ok(())
}
