//! How code of each language is run inside a container.
//!
//! The code travels in the environment variable `CAIRN_CODE` (never on a command line the
//! shell parses, so quoting cannot go wrong), is written to the scratch tmpfs, and run there.

/// A language cairn can run; its image comes from `sandbox.images.<name>`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Runtime {
    pub name: &'static str,
    /// The file the code is written to, in `/tmp`.
    pub file: &'static str,
    /// The shell command that runs `/tmp/<file>` (after `cd`).
    pub run: &'static str,
    /// File extensions `run_file` maps to this runtime.
    pub extensions: &'static [&'static str],
}

/// Python 3, for `run_python`.
pub const PYTHON: Runtime = Runtime {
    name: "python",
    file: "main.py",
    run: "python3 /tmp/main.py",
    extensions: &["py"],
};

/// JavaScript (Node.js), for `run_node`.
pub const NODE: Runtime = Runtime {
    name: "node",
    file: "main.js",
    run: "node /tmp/main.js",
    extensions: &["js", "mjs", "cjs"],
};

/// bash, for `run_bash`.
pub const BASH: Runtime = Runtime {
    name: "bash",
    file: "main.sh",
    run: "bash /tmp/main.sh",
    extensions: &["sh", "bash"],
};

/// Ruby, for `run_ruby`.
pub const RUBY: Runtime = Runtime {
    name: "ruby",
    file: "main.rb",
    run: "ruby /tmp/main.rb",
    extensions: &["rb"],
};

/// Go (package main), for `run_go`.
pub const GO: Runtime = Runtime {
    name: "go",
    file: "main.go",
    run: "cd /tmp && GOCACHE=/tmp/.gocache GOPATH=/tmp/.gopath GOFLAGS=-mod=mod go run /tmp/main.go",
    extensions: &["go"],
};

/// Rust (a main.rs), for `run_rust`.
pub const RUST: Runtime = Runtime {
    name: "rust",
    file: "main.rs",
    run: "rustc --edition 2021 -o /tmp/main /tmp/main.rs && /tmp/main",
    extensions: &["rs"],
};

/// Perl, for `run_perl`.
pub const PERL: Runtime = Runtime {
    name: "perl",
    file: "main.pl",
    run: "perl /tmp/main.pl",
    extensions: &["pl"],
};

/// Every runtime, in the order the tools are listed.
pub const RUNTIMES: &[Runtime] = &[PYTHON, NODE, BASH, RUBY, GO, RUST, PERL];

pub fn runtime(name: &str) -> Option<&'static Runtime> {
    RUNTIMES.iter().find(|r| r.name == name)
}

pub fn runtime_for_extension(ext: &str) -> Option<&'static Runtime> {
    let ext = ext.to_ascii_lowercase();
    RUNTIMES
        .iter()
        .find(|r| r.extensions.contains(&ext.as_str()))
}

/// The argv that writes `$CAIRN_CODE` to the runtime's file and runs it, from `dir`.
pub fn argv(rt: &Runtime, dir: &str) -> Vec<String> {
    let script = format!(
        "printf '%s' \"$CAIRN_CODE\" > /tmp/{file} && unset CAIRN_CODE && cd {dir} && {run}",
        file = rt.file,
        dir = shell_quote(dir),
        run = rt.run,
    );
    vec!["sh".to_owned(), "-c".to_owned(), script]
}

/// Single-quote `s` for `sh`.
pub fn shell_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', "'\\''"))
}

/// The test command of a project, guessed from its files (the names at its root), with the
/// runtime whose image runs it.
pub fn guess_test_command(root_files: &[String]) -> Option<(&'static str, String)> {
    let has = |n: &str| root_files.iter().any(|f| f == n);
    if has("Cargo.toml") {
        Some((
            "rust",
            "CARGO_TARGET_DIR=/tmp/target CARGO_HOME=/tmp/.cargo cargo test --offline".to_owned(),
        ))
    } else if has("package.json") {
        Some(("node", "npm test --cache /tmp/.npm".to_owned()))
    } else if has("go.mod") {
        Some((
            "go",
            "GOCACHE=/tmp/.gocache GOPATH=/tmp/.gopath go test ./...".to_owned(),
        ))
    } else if has("pyproject.toml") || has("setup.py") || has("pytest.ini") || has("tox.ini") {
        Some((
            "python",
            "python3 -m pytest -q -p no:cacheprovider".to_owned(),
        ))
    } else if has("Gemfile") || has("Rakefile") {
        Some(("ruby", "rake test".to_owned()))
    } else if has("Makefile") {
        Some(("bash", "make test".to_owned()))
    } else if has("tests") || has("test") {
        Some(("python", "python3 -m unittest discover -v".to_owned()))
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quoting_and_guessing() {
        assert_eq!(shell_quote("a'b"), "'a'\\''b'");
        let files = |names: &[&str]| names.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>();
        assert_eq!(
            guess_test_command(&files(&["Cargo.toml", "src"])).map(|g| g.0),
            Some("rust")
        );
        assert_eq!(
            guess_test_command(&files(&["pyproject.toml"])).map(|g| g.0),
            Some("python")
        );
        assert_eq!(guess_test_command(&files(&["README.md"])), None);
        assert_eq!(runtime_for_extension("PY").map(|r| r.name), Some("python"));
    }
}
