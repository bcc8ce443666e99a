//! What each test runner of the `tests` checker needs: which files are its tests, cairn's own
//! runner files laid into the harness, the command the sandbox runs, and how its output becomes
//! one report. Python (`unittest`) and Node print a report line stamped with a nonce from stdin;
//! Go's `go test -json` events are judged per test, and a `TestMain` cairn adds to each test
//! package prints the nonce only once every test of the package has run, so a package that exits
//! early (an `init` that prints a passing summary and exits) reports nothing.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::task::Runner;

/// The directory of cairn's runner inside a harness; the task's files never reach it.
pub const RUNNER_DIR: &str = ".cairn-eval";

/// cairn's runner files, laid into [`RUNNER_DIR`] of every harness.
pub const RUNNER_FILES: [(&str, &str); 2] = [
    ("unittest_runner.py", include_str!("unittest_runner.py")),
    ("node_runner.js", include_str!("node_runner.js")),
];

/// The file cairn adds to each Go test package; a task's own file of that name is replaced.
pub const GO_MAIN: &str = "cairn_eval_main_test.go";

/// The report every runner's output comes to.
#[derive(Debug, Default, serde::Deserialize)]
pub struct Report {
    pub passed: Vec<String>,
    pub failed: Vec<(String, String)>,
    pub skipped: Vec<(String, String)>,
    pub error: Option<String>,
}

impl Runner {
    /// Whether `name` (a file name) is one of this runner's test files.
    pub fn is_test_file(self, name: &str) -> bool {
        match self {
            Runner::Unittest => name.starts_with("test") && name.ends_with(".py"),
            Runner::Node => name.ends_with(".test.js"),
            Runner::Go => name.ends_with("_test.go"),
        }
    }

    /// The command that runs `tests` (paths relative to the harness's root, all under `start`)
    /// and what it reads on stdin.
    pub fn command(
        self,
        start: &str,
        tests: &[PathBuf],
        nonce: &str,
    ) -> (Vec<String>, Option<Vec<u8>>) {
        let stamp = Some(format!("{nonce}\n").into_bytes());
        let owned = |args: &[&str]| args.iter().map(|a| (*a).to_owned()).collect::<Vec<_>>();
        match self {
            Runner::Unittest => {
                let script = format!("{RUNNER_DIR}/unittest_runner.py");
                let mut argv = owned(&["python3", "-I", "-S", "-B", &script, "."]);
                argv.extend(tests.iter().map(|t| dotted(t)));
                (argv, stamp)
            }
            Runner::Node => {
                let script = format!("{RUNNER_DIR}/node_runner.js");
                let mut argv = owned(&[
                    "node",
                    "--disallow-code-generation-from-strings",
                    &script,
                    ".",
                ]);
                argv.extend(tests.iter().map(|t| t.to_string_lossy().into_owned()));
                (argv, stamp)
            }
            // `go test` gives its test binaries no stdin, so the nonce goes by the environment
            // (`env` execs go, so no process keeps it in its arguments). No module proxy, no
            // toolchain switch, no cgo: the standard library only, offline.
            Runner::Go => {
                let nonce_var = format!("CAIRN_EVAL_NONCE={nonce}");
                let pattern = format!("./{}", Path::new(start).join("...").display());
                let argv = owned(&[
                    "env",
                    &nonce_var,
                    "GOCACHE=/tmp/go-cache",
                    "GOPATH=/tmp/go",
                    "GOPROXY=off",
                    "GOFLAGS=-mod=readonly",
                    "GOTOOLCHAIN=local",
                    "GOWORK=off",
                    "CGO_ENABLED=0",
                    "go",
                    "test",
                    "-count=1",
                    "-vet=off",
                    "-json",
                    &pattern,
                ]);
                (argv, None)
            }
        }
    }
}

/// A unittest module's dotted name: `tests/test_x.py` -> `tests.test_x`.
fn dotted(rel: &Path) -> String {
    let parts: Vec<String> = rel
        .with_extension("")
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    parts.join(".")
}

/// Lays cairn's `TestMain` into each directory holding Go tests, in the package its first test
/// file declares; returns those directories.
pub fn lay_go_main(stage: &Path, tests: &[PathBuf]) -> Result<Vec<PathBuf>, String> {
    let mut dirs: BTreeMap<PathBuf, String> = BTreeMap::new();
    for rel in tests {
        let dir = rel.parent().unwrap_or(Path::new("")).to_path_buf();
        if dirs.contains_key(&dir) {
            continue;
        }
        let text = std::fs::read_to_string(stage.join(rel))
            .map_err(|e| format!("{}: {e}", rel.display()))?;
        let package = text
            .lines()
            .find_map(|l| l.trim().strip_prefix("package "))
            .map(|p| p.split_whitespace().next().unwrap_or("").to_owned())
            .filter(|p| !p.is_empty() && p.chars().all(|c| c.is_alphanumeric() || c == '_'))
            .ok_or_else(|| format!("{}: no package clause", rel.display()))?;
        dirs.insert(dir, package);
    }
    for (dir, package) in &dirs {
        let main = format!(
            "package {package}\n\n\
             import (\n\t\"fmt\"\n\t\"os\"\n\t\"testing\"\n)\n\n\
             // cairn eval: the nonce is printed only after every test of the package has run.\n\
             func TestMain(m *testing.M) {{\n\
             \tnonce := os.Getenv(\"CAIRN_EVAL_NONCE\")\n\
             \tos.Unsetenv(\"CAIRN_EVAL_NONCE\")\n\
             \tcode := m.Run()\n\
             \tfmt.Printf(\"\\n%s done %d\\n\", nonce, code)\n\
             \tos.Exit(code)\n\
             }}\n"
        );
        std::fs::write(stage.join(dir).join(GO_MAIN), main)
            .map_err(|e| format!("{}: {e}", dir.display()))?;
    }
    Ok(dirs.into_keys().collect())
}

/// One event of `go test -json`.
#[derive(serde::Deserialize)]
#[serde(rename_all = "PascalCase")]
struct GoEvent {
    action: String,
    #[serde(default)]
    package: String,
    #[serde(default)]
    test: Option<String>,
    #[serde(default)]
    output: Option<String>,
}

/// The report of a `go test -json` run over `packages` test packages: each top-level test by
/// its last verdict; an error when fewer packages than that printed the nonce (one did not build,
/// or exited before its tests had all run).
pub fn go_report(stdout: &str, nonce: &str, packages: usize) -> Report {
    let mut verdicts: BTreeMap<String, String> = BTreeMap::new();
    let mut output: BTreeMap<String, String> = BTreeMap::new();
    let mut done = BTreeMap::new();
    let mark = format!("{nonce} done ");
    for line in stdout.lines() {
        let Ok(event) = serde_json::from_str::<GoEvent>(line) else {
            continue;
        };
        // Subtests (`TestA/sub`) are judged through their parent.
        let top = event.test.as_deref().map(|t| !t.contains('/'));
        let key = event
            .test
            .as_deref()
            .map(|t| format!("{} {t}", event.package));
        match (event.action.as_str(), key) {
            ("output", key) => {
                let text = event.output.unwrap_or_default();
                if let Some(code) = text.trim().strip_prefix(&mark) {
                    done.insert(event.package.clone(), code.trim().to_owned());
                }
                let slot = output
                    .entry(key.unwrap_or_else(|| event.package.clone()))
                    .or_default();
                if slot.len() < 4000 {
                    slot.push_str(&text);
                }
            }
            ("pass" | "fail" | "skip", Some(key)) if top == Some(true) => {
                verdicts.insert(key, event.action);
            }
            _ => {}
        }
    }
    let mut report = Report::default();
    for (key, action) in verdicts {
        let said = output.get(&key).cloned().unwrap_or_default();
        match action.as_str() {
            "pass" => report.passed.push(key),
            "fail" => report.failed.push((key, said)),
            _ => report.skipped.push((key, said)),
        }
    }
    if done.len() < packages {
        let said: String = output
            .iter()
            .filter(|(k, _)| !k.contains(' '))
            .map(|(_, v)| v.as_str())
            .collect();
        report.error = Some(format!(
            "{} of {packages} test packages ran to the end: {}",
            done.len(),
            said.chars()
                .rev()
                .take(600)
                .collect::<String>()
                .chars()
                .rev()
                .collect::<String>()
        ));
    }
    report
}

#[cfg(test)]
mod tests {
    use super::*;

    fn event(action: &str, test: Option<&str>, output: Option<&str>) -> String {
        serde_json::json!({"Action": action, "Package": "example.com/m/p", "Test": test, "Output": output})
            .to_string()
    }

    #[test]
    fn go_events_become_a_report_only_with_the_nonce() {
        let run = [
            event("run", Some("TestA"), None),
            event("pass", Some("TestA/sub"), None),
            event("pass", Some("TestA"), None),
            event("output", Some("TestB"), Some("b.go:3: wrong\n")),
            event("fail", Some("TestB"), None),
            event("skip", Some("TestC"), None),
        ]
        .join("\n");
        let ended = format!("{run}\n{}", event("output", None, Some("n0 done 1\n")));
        let report = go_report(&ended, "n0", 1);
        assert_eq!(report.passed, ["example.com/m/p TestA"]);
        assert_eq!(report.failed.len(), 1);
        assert!(report.failed[0].1.contains("wrong"), "{report:?}");
        assert_eq!(report.skipped.len(), 1);
        assert!(report.error.is_none());
        // A forged summary without the nonce, or with another one, is an early end.
        let forged = format!("{run}\n{}", event("output", None, Some("other done 0\n")));
        assert!(go_report(&forged, "n0", 1).error.is_some());
        let early = go_report(&run, "n0", 1).error.unwrap_or_default();
        assert!(early.contains("0 of 1"), "{early}");
    }
}
