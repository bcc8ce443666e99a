//! Repository checks that run as ordinary tests, in the manner of rust-analyzer's `tidy.rs`.
//!
//! - every Rust module under `server/` and `tests/` opens with a `//!` module doc;
//! - no test uses `#[should_panic]` or `#[ignore]` (assert the behaviour instead; gate heavy
//!   tests with an environment variable and say so when they skip);
//! - `docs/lsp-extensions.md` records the SHA-256 of `server/cairn-lsp/src/protocol.rs`, so a
//!   change of the protocol cannot land without a look at its documentation;
//! - every `cairn/` method and `cairn.` command named in `protocol.rs` is documented there;
//! - no `.rs` or `.md` file has trailing whitespace;
//! - only the crates whose job it is depend on an HTTP client: tools reach the web through the
//!   web guard (`cairn-web`), never a client of their own.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

/// Directories never searched: build output, VCS data, and third-party trees.
const SKIPPED_DIRS: &[&str] = &["target", ".git", "node_modules"];

const PROTOCOL: &str = "server/cairn-lsp/src/protocol.rs";
const EXTENSIONS_DOC: &str = "docs/lsp-extensions.md";
const HASH_PREFIX: &str = "<!-- protocol.rs sha256: ";
const HASH_SUFFIX: &str = " -->";

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Every file under `dir` whose name ends with one of `extensions`, sorted, relative to the root.
fn files(dir: &Path, extensions: &[&str]) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(current) = stack.pop() {
        let entries = match std::fs::read_dir(&current) {
            Ok(entries) => entries,
            Err(e) => panic!("cannot list {}: {e}", current.display()),
        };
        for entry in entries.flatten() {
            let path = entry.path();
            let name = entry.file_name().to_string_lossy().into_owned();
            let Ok(kind) = entry.file_type() else {
                continue;
            };
            if kind.is_dir() {
                if !SKIPPED_DIRS.contains(&name.as_str()) {
                    stack.push(path);
                }
            } else if kind.is_file() && extensions.iter().any(|ext| name.ends_with(ext)) {
                out.push(path);
            }
        }
    }
    out.sort();
    out
}

fn read(path: &Path) -> String {
    match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(e) => panic!("cannot read {}: {e}", path.display()),
    }
}

fn display(path: &Path) -> String {
    let root = repo_root();
    path.strip_prefix(&root)
        .unwrap_or(path)
        .display()
        .to_string()
}

fn rust_sources() -> Vec<PathBuf> {
    let root = repo_root();
    let mut all = files(&root.join("server"), &[".rs"]);
    all.extend(files(&root.join("tests"), &[".rs"]));
    all
}

#[test]
fn every_module_has_a_module_doc() {
    let missing: Vec<String> = rust_sources()
        .into_iter()
        .filter(|path| {
            let text = read(path);
            let first = text.lines().map(str::trim).find(|l| !l.is_empty());
            !first.is_some_and(|l| l.starts_with("//!"))
        })
        .map(|path| display(&path))
        .collect();
    assert!(
        missing.is_empty(),
        "these files do not start with a `//!` module doc (the first non-empty line must be one; \
         say in a sentence what the module is for):\n  {}",
        missing.join("\n  ")
    );
}

#[test]
fn no_should_panic_or_ignore() {
    // Built at run time so that this file does not trip its own check.
    let should_panic = format!("#[{}", "should_panic");
    let ignore = format!("#[{}", "ignore");
    let mut found = Vec::new();
    for path in rust_sources() {
        for (i, line) in read(&path).lines().enumerate() {
            let code = line.trim_start();
            let hit = code.starts_with(&should_panic)
                || (code.starts_with(&ignore)
                    && code[ignore.len()..]
                        .chars()
                        .next()
                        .is_some_and(|c| c == ']' || c == ' ' || c == '=' || c == '('));
            if hit {
                found.push(format!("{}:{}: {}", display(&path), i + 1, line.trim()));
            }
        }
    }
    assert!(
        found.is_empty(),
        "do not use `should_panic` or `ignore` attributes: assert the behaviour (a typed error, an \
         exit status), and gate heavy tests with an environment variable that says when it skips:\n  {}",
        found.join("\n  ")
    );
}

fn sha256_hex(bytes: &[u8]) -> String {
    let mut hex = String::with_capacity(64);
    for b in Sha256::digest(bytes) {
        let _ = write!(hex, "{b:02x}");
    }
    hex
}

#[test]
fn lsp_extensions_doc_records_the_protocol_hash() {
    let root = repo_root();
    let protocol = match std::fs::read(root.join(PROTOCOL)) {
        Ok(bytes) => bytes,
        Err(e) => panic!("cannot read {PROTOCOL}: {e}"),
    };
    let actual = sha256_hex(&protocol);
    let doc = read(&root.join(EXTENSIONS_DOC));
    let recorded: Vec<&str> = doc
        .lines()
        .filter_map(|l| {
            l.trim()
                .strip_prefix(HASH_PREFIX)?
                .strip_suffix(HASH_SUFFIX)
        })
        .collect();
    assert!(
        recorded.len() == 1,
        "{EXTENSIONS_DOC} must end with exactly one line `{HASH_PREFIX}HEX{HASH_SUFFIX}`, found {}; \
         the hash of {PROTOCOL} is {actual}",
        recorded.len()
    );
    assert!(
        recorded[0] == actual,
        "{PROTOCOL} changed: update {EXTENSIONS_DOC} to describe the change (methods, params, \
         results, commands), then set its last line to\n{HASH_PREFIX}{actual}{HASH_SUFFIX}\n\
         (recorded: {})",
        recorded[0]
    );
}

/// The `"cairn/..."` and `"cairn...."` string literals of a source text.
fn cairn_literals(source: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = source;
    while let Some(start) = rest.find("\"cairn") {
        let after = &rest[start + 1..];
        let Some(end) = after.find('"') else {
            break;
        };
        let literal = &after[..end];
        if literal.starts_with("cairn/") || literal.starts_with("cairn.") {
            out.push(literal.to_string());
        }
        rest = &after[end + 1..];
    }
    out.sort();
    out.dedup();
    out
}

#[test]
fn every_method_and_command_is_documented() {
    let root = repo_root();
    let literals = cairn_literals(&read(&root.join(PROTOCOL)));
    assert!(
        literals.iter().any(|l| l == "cairn/chat"),
        "found no `cairn/` method names in {PROTOCOL}; has the file moved? (found {literals:?})"
    );
    let doc = read(&root.join(EXTENSIONS_DOC));
    let missing: Vec<&String> = literals
        .iter()
        .filter(|l| !doc.contains(&format!("`{l}`")))
        .collect();
    assert!(
        missing.is_empty(),
        "{EXTENSIONS_DOC} does not mention these names from {PROTOCOL} (write each as `name` in \
         backticks): {missing:?}"
    );
}

#[test]
fn no_trailing_whitespace() {
    let mut found = Vec::new();
    for path in files(&repo_root(), &[".rs", ".md"]) {
        for (i, line) in read(&path).lines().enumerate() {
            if line.ends_with(' ') || line.ends_with('\t') {
                found.push(format!("{}:{}", display(&path), i + 1));
            }
        }
    }
    assert!(
        found.is_empty(),
        "trailing whitespace (Markdown line breaks: end the sentence and start a new line \
         instead):\n  {}",
        found.join("\n  ")
    );
}

#[test]
fn literal_scanner_finds_methods_and_commands() {
    let source =
        r#"const A: &str = "cairn/chat"; const B: &str = "cairn.send"; "cairnish"; "other""#;
    assert_eq!(cairn_literals(source), vec!["cairn.send", "cairn/chat"]);
}

/// The crates that may depend on an HTTP client directly, and why.
const HTTP_CLIENT_CRATES: &[(&str, &str)] = &[
    ("cairn-web", "the web guard: every request a tool makes"),
    ("cairn-llm", "the model provider the user configured"),
    (
        "cairn-mcp",
        "the MCP servers the user configured (streamable HTTP, SSE)",
    ),
    ("cairn-test-support", "test doubles only"),
];

/// HTTP client crates (and hyper, whose client a crate could use directly).
const HTTP_CLIENTS: &[&str] = &[
    "reqwest",
    "ureq",
    "hyper",
    "hyper-util",
    "isahc",
    "surf",
    "attohttpc",
    "curl",
];

/// The crates a `Cargo.toml` lists under `[dependencies]` (package names, renames resolved).
fn normal_dependencies(manifest: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut in_dependencies = false;
    for line in manifest.lines() {
        let line = line.trim();
        if line.starts_with('[') {
            in_dependencies = line == "[dependencies]";
            continue;
        }
        if !in_dependencies || line.is_empty() || line.starts_with('#') {
            continue;
        }
        let Some((key, rest)) = line.split_once('=') else {
            continue;
        };
        let key = key.trim().split('.').next().unwrap_or_default().trim();
        // `alias = { package = "reqwest", ... }`
        let package = rest
            .split_once("package")
            .and_then(|(_, p)| p.split('"').nth(1))
            .unwrap_or(key);
        out.push(package.to_string());
    }
    out
}

#[test]
fn only_the_guard_and_the_transports_have_an_http_client() {
    let root = repo_root();
    let mut offenders = Vec::new();
    for manifest in files(&root.join("server"), &["Cargo.toml"]) {
        let crate_name = manifest
            .parent()
            .and_then(|d| d.file_name())
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        if HTTP_CLIENT_CRATES.iter().any(|(c, _)| *c == crate_name) {
            continue;
        }
        for dep in normal_dependencies(&read(&manifest)) {
            if HTTP_CLIENTS.contains(&dep.as_str()) {
                offenders.push(format!("{}: {dep}", display(&manifest)));
            }
        }
    }
    assert!(
        offenders.is_empty(),
        "tools send requests through cairn_web::WebGuard::fetch; these crates depend on an HTTP \
         client directly:\n{}",
        offenders.join("\n")
    );
}

#[test]
fn dependency_scanner_sees_renamed_and_dotted_entries() {
    let manifest = "[package]\nname = \"x\"\n\n[dependencies]\nreqwest13 = { package = \"reqwest\", version = \"0.13\" }\nureq.workspace = true\nserde = \"1\"\n\n[dev-dependencies]\nhyper = \"1\"\n";
    assert_eq!(normal_dependencies(manifest), ["reqwest", "ureq", "serde"]);
}
