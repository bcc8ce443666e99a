//! Gated tests: a test that needs something heavy (a Docker engine, the embedding model, real MCP
//! peers, an editor) runs only when its variable is `1`, and otherwise says that it skipped.
//!
//! The test harness captures what a passing test prints, so the skip line alone would never reach
//! a CI log. [`gate`] therefore also appends it to the file named by `CAIRN_SKIP_LOG` when that
//! is set; `.ci/run` sets it before `cargo test`, prints the file afterwards, and fails when it
//! is not empty (in CI every gate is on).

use std::io::Write;

/// The variable naming the file skip lines are appended to.
pub const SKIP_LOG: &str = "CAIRN_SKIP_LOG";

/// Whether the calling test runs: `true` when `var` is `1`. Otherwise prints
/// `skipped TEST: set VAR=1 HOW` (the test's name is the harness thread's) and appends that line
/// to `$CAIRN_SKIP_LOG`.
pub fn gate(var: &str, how: &str) -> bool {
    let value = std::env::var(var).ok();
    let log = std::env::var_os(SKIP_LOG).filter(|p| !p.is_empty());
    let thread = std::thread::current();
    decide(
        thread.name().unwrap_or("a test"),
        var,
        value.as_deref(),
        how,
        log.as_deref().map(std::path::Path::new),
    )
}

/// The value of `var`, the address of a peer a setup script exports only when it started that
/// peer (the Pub/Sub emulator where the machine has the Google Cloud SDK), or `None` after
/// logging `skipped TEST: set VAR HOW` as [`gate`] does: a test that needs the peer never
/// returns silently.
pub fn peer(var: &str, how: &str) -> Option<String> {
    let value = std::env::var(var).ok().filter(|v| !v.is_empty());
    if value.is_none() {
        record(&format!("skipped {}: set {var} {how}", test_name()));
    }
    value
}

/// Logs that the calling test skipped because of `why`, a condition no variable turns on (no
/// process of another user to signal, say), as [`gate`] logs its skips: CI fails on it.
pub fn skip(why: &str) {
    record(&format!("skipped {}: {why}", test_name()));
}

fn test_name() -> String {
    std::thread::current().name().unwrap_or("a test").to_owned()
}

/// Prints `line` and appends it to `$CAIRN_SKIP_LOG` when that is set.
fn record(line: &str) {
    let log = std::env::var_os(SKIP_LOG).filter(|p| !p.is_empty());
    append(line, log.as_deref().map(std::path::Path::new));
}

/// [`gate`] with its inputs given: the test's name, the variable and its value, and the log.
fn decide(
    test: &str,
    var: &str,
    value: Option<&str>,
    how: &str,
    log: Option<&std::path::Path>,
) -> bool {
    if value == Some("1") {
        return true;
    }
    append(&format!("skipped {test}: set {var}=1 {how}"), log);
    false
}

fn append(line: &str, log: Option<&std::path::Path>) {
    eprintln!("{line}");
    if let Some(path) = log {
        // One write of one line with O_APPEND: lines of concurrent tests do not interleave.
        let written = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .and_then(|mut f| f.write_all(format!("{line}\n").as_bytes()));
        if let Err(e) = written {
            eprintln!("cannot append to {SKIP_LOG} {}: {e}", path.display());
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn an_unset_gate_skips_and_logs_the_test_by_name() {
        let dir = std::env::temp_dir().join(format!("cairn-gate-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let log = dir.join("skips");
        let _ = std::fs::remove_file(&log);
        assert!(decide(
            "m::on",
            "CAIRN_X_TESTS",
            Some("1"),
            "to run it",
            Some(&log)
        ));
        assert!(!log.exists(), "a test that runs logs nothing");
        assert!(!decide(
            "m::off",
            "CAIRN_X_TESTS",
            None,
            "to run it",
            Some(&log)
        ));
        assert!(!decide(
            "m::zero",
            "CAIRN_X_TESTS",
            Some("0"),
            "(.ci/run does)",
            Some(&log)
        ));
        assert_eq!(
            std::fs::read_to_string(&log).unwrap(),
            "skipped m::off: set CAIRN_X_TESTS=1 to run it\n\
             skipped m::zero: set CAIRN_X_TESTS=1 (.ci/run does)\n"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
