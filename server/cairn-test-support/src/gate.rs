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
    decide(
        &test_name(),
        var,
        value.as_deref(),
        how,
        skip_log().as_deref(),
    )
}

/// The value of `var`, the address of a peer a setup script exports only when it started that
/// peer (the Pub/Sub emulator where the machine has the Google Cloud SDK), or `None` after
/// logging `skipped TEST: set VAR HOW` as [`gate`] does: a test that needs the peer never
/// returns silently.
pub fn peer(var: &str, how: &str) -> Option<String> {
    let value = std::env::var(var).ok();
    found(&test_name(), var, value, how, skip_log().as_deref())
}

/// Logs that the calling test skipped because of `why`, a condition no variable turns on (no
/// process of another user to signal, say), as [`gate`] logs its skips: CI fails on it.
pub fn skip(why: &str) {
    append(
        &format!("skipped {}: {why}", test_name()),
        skip_log().as_deref(),
    );
}

/// The calling test's name (the harness names each test's thread after it).
fn test_name() -> String {
    std::thread::current().name().unwrap_or("a test").to_owned()
}

/// `$CAIRN_SKIP_LOG`, when set.
fn skip_log() -> Option<std::path::PathBuf> {
    std::env::var_os(SKIP_LOG)
        .filter(|p| !p.is_empty())
        .map(Into::into)
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

/// [`peer`] with its inputs given; an empty value counts as unset.
fn found(
    test: &str,
    var: &str,
    value: Option<String>,
    how: &str,
    log: Option<&std::path::Path>,
) -> Option<String> {
    let value = value.filter(|v| !v.is_empty());
    if value.is_none() {
        append(&format!("skipped {test}: set {var} {how}"), log);
    }
    value
}

/// Prints `line` and appends it to `log` when there is one.
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

    #[test]
    fn a_missing_peer_is_logged_and_a_present_one_is_returned() {
        let dir = std::env::temp_dir().join(format!("cairn-peer-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let log = dir.join("skips");
        let _ = std::fs::remove_file(&log);
        let at = found(
            "m::on",
            "CAIRN_X_URL",
            Some("http://127.0.0.1:1".into()),
            "(a script)",
            Some(&log),
        );
        assert_eq!(at.as_deref(), Some("http://127.0.0.1:1"));
        assert!(!log.exists(), "a test with its peer logs nothing");
        assert_eq!(
            found("m::off", "CAIRN_X_URL", None, "(a script)", Some(&log)),
            None
        );
        assert_eq!(
            found(
                "m::empty",
                "CAIRN_X_URL",
                Some(String::new()),
                "(a script)",
                Some(&log)
            ),
            None
        );
        assert_eq!(
            std::fs::read_to_string(&log).unwrap(),
            "skipped m::off: set CAIRN_X_URL (a script)\n\
             skipped m::empty: set CAIRN_X_URL (a script)\n"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
