//! Repository checks that run as ordinary tests, in the manner of rust-analyzer's `tidy.rs`.
//!
//! - every Rust module under `server/` and `tests/` opens with a `//!` module doc;
//! - no test uses `#[should_panic]` or `#[ignore]` (assert the behaviour instead; gate heavy
//!   tests with an environment variable and say so when they skip);
//! - `docs/lsp-extensions.md` records the SHA-256 of `server/cairn-lsp/src/protocol.rs`, so a
//!   change of the protocol cannot land without a look at its documentation;
//! - every `cairn/` method and `cairn.` command named in `protocol.rs` is documented there;
//! - no `.rs` or `.md` file has trailing whitespace;
//! - only the crates whose job it is reach an HTTP client, directly or through any depth of the
//!   resolved dependency graph (`cargo metadata`): tools reach the web through the web guard
//!   (`cairn-web`), never a client of their own;
//! - the code's shape (`structure`): no import cycles between files, and no function in
//!   `cairn-agent` over 80 lines.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

#[path = "tidy/structure.rs"]
mod structure;

/// Directories never searched: build output, VCS data, and third-party trees (`.peers` holds the
/// test peers `.ci/run` installs, a Python venv whose packages ship their own Markdown).
const SKIPPED_DIRS: &[&str] = &["target", ".git", "node_modules", ".peers"];

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

/// Packages outside the workspace that reach an HTTP client, the only workspace crate that may
/// depend on each (`*`: any), and why that is not a way around the web guard.
const SANCTIONED_VIA: &[(&str, &str, &str)] = &[
    (
        "rmcp",
        "*",
        "the MCP SDK: its HTTP transports are used by cairn-mcp alone; the other crates use its \
         types, and feature unification makes its client features show everywhere",
    ),
    (
        "bollard",
        "cairn-sandbox",
        "the Docker engine's API, over its socket or the configured host",
    ),
    (
        "hyper-util",
        "cairn-sandbox",
        "the client under the Docker engine's API over TLS (`tls.rs`: only the configured CA, \
         kept connections), handed to bollard as its transport; only ever to the configured engine",
    ),
    (
        "hyper-rustls",
        "cairn-sandbox",
        "the TLS connector of that same engine client (`tls.rs`)",
    ),
    (
        "bollard",
        "cairn-devops",
        "the Docker engine's API for the DevOps tools, over the sandbox's connection \
         (`Engine::docker`); never the web",
    ),
    (
        "hf-hub",
        "cairn-select",
        "the embedding model's download from the Hugging Face Hub, pinned to a revision",
    ),
];

/// For each workspace crate outside `HTTP_CLIENT_CRATES`: the paths of normal (not dev or build)
/// dependencies in `cargo metadata`'s resolve graph that reach an HTTP client, other than
/// through another workspace crate (checked on its own) or a package in `SANCTIONED_VIA`.
fn http_client_paths(metadata: &serde_json::Value) -> Vec<String> {
    use std::collections::{BTreeMap, VecDeque};
    let name_of: BTreeMap<&str, &str> = metadata["packages"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|p| Some((p["id"].as_str()?, p["name"].as_str()?)))
        .collect();
    let members: Vec<&str> = metadata["workspace_members"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|m| m.as_str())
        .collect();
    let deps: BTreeMap<&str, Vec<&str>> = metadata["resolve"]["nodes"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|node| {
            let normal = node["deps"]
                .as_array()?
                .iter()
                .filter(|d| {
                    d["dep_kinds"]
                        .as_array()
                        .is_some_and(|kinds| kinds.iter().any(|k| k["kind"].is_null()))
                })
                .filter_map(|d| d["pkg"].as_str())
                .collect();
            Some((node["id"].as_str()?, normal))
        })
        .collect();
    fn name_in<'a>(name_of: &BTreeMap<&'a str, &'a str>, id: &'a str) -> &'a str {
        name_of.get(id).copied().unwrap_or(id)
    }
    let mut found = Vec::new();
    for &member in &members {
        let crate_name = name_in(&name_of, member);
        if HTTP_CLIENT_CRATES.iter().any(|(c, _)| *c == crate_name) {
            continue;
        }
        let mut parent: BTreeMap<&str, &str> = BTreeMap::new();
        let mut queue = VecDeque::from([member]);
        while let Some(id) = queue.pop_front() {
            for &dep in deps.get(id).into_iter().flatten() {
                let dep_name = name_in(&name_of, dep);
                let sanctioned = SANCTIONED_VIA
                    .iter()
                    .any(|(via, who, _)| *via == dep_name && (*who == "*" || *who == crate_name));
                if parent.contains_key(dep) || members.contains(&dep) || sanctioned {
                    continue;
                }
                parent.insert(dep, id);
                if HTTP_CLIENTS.contains(&dep_name) {
                    let mut path = vec![dep_name];
                    let mut at = id;
                    while at != member {
                        path.push(name_in(&name_of, at));
                        at = parent.get(at).copied().unwrap_or(member);
                    }
                    path.push(crate_name);
                    path.reverse();
                    found.push(path.join(" -> "));
                }
                queue.push_back(dep);
            }
        }
    }
    found
}

#[test]
fn only_the_guard_and_the_transports_have_an_http_client() {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
    // Only the host's packages: the build fetched those, and without the filter cargo would
    // need every platform's (Windows crates a Linux build never downloads) to answer offline.
    let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".to_owned());
    let host = match std::process::Command::new(rustc).arg("-vV").output() {
        Ok(out) => String::from_utf8_lossy(&out.stdout)
            .lines()
            .find_map(|l| l.strip_prefix("host: ").map(str::to_owned))
            .unwrap_or_else(|| panic!("rustc -vV names no host")),
        Err(e) => panic!("cannot run rustc -vV: {e}"),
    };
    let out = std::process::Command::new(cargo)
        .args(["metadata", "--format-version", "1", "--locked", "--offline"])
        .args(["--filter-platform", &host])
        .current_dir(repo_root())
        .output();
    let out = match out {
        Ok(out) if out.status.success() => out,
        Ok(out) => panic!("cargo metadata: {}", String::from_utf8_lossy(&out.stderr)),
        Err(e) => panic!("cannot run cargo metadata: {e}"),
    };
    let metadata: serde_json::Value = match serde_json::from_slice(&out.stdout) {
        Ok(value) => value,
        Err(e) => panic!("cargo metadata printed something that is not JSON: {e}"),
    };
    let offenders = http_client_paths(&metadata);
    assert!(
        offenders.is_empty(),
        "tools send requests through cairn_web::WebGuard::fetch; these crates reach an HTTP \
         client other than through the guard, the transports or a package in SANCTIONED_VIA:\n{}",
        offenders.join("\n")
    );
}

#[test]
fn the_http_client_check_follows_the_resolved_graph() {
    // `cairn-tools` -> `some-sdk` -> `hyper-util` -> `hyper`: two levels down, not in any
    // manifest of ours, and found; a path through `cairn-web` or a dev-dependency is not.
    let node = |id: &str, deps: &[(&str, Option<&str>)]| {
        serde_json::json!({"id": id, "deps": deps.iter().map(|(pkg, kind)| serde_json::json!({
            "pkg": pkg, "dep_kinds": [{"kind": kind}]})).collect::<Vec<_>>()})
    };
    let packages: Vec<serde_json::Value> = [
        "cairn-tools",
        "cairn-web",
        "some-sdk",
        "hyper-util",
        "hyper",
        "reqwest",
        "mockito",
    ]
    .iter()
    .map(|n| serde_json::json!({"id": format!("{n} 1.0"), "name": n}))
    .collect();
    let metadata = serde_json::json!({
        "packages": packages,
        "workspace_members": ["cairn-tools 1.0", "cairn-web 1.0"],
        "resolve": {"nodes": [
            node("cairn-tools 1.0", &[("some-sdk 1.0", None), ("cairn-web 1.0", None), ("mockito 1.0", Some("dev"))]),
            node("cairn-web 1.0", &[("reqwest 1.0", None)]),
            node("some-sdk 1.0", &[("hyper-util 1.0", None)]),
            node("hyper-util 1.0", &[("hyper 1.0", None)]),
            node("mockito 1.0", &[("hyper 1.0", None)]),
            node("reqwest 1.0", &[("hyper 1.0", None)]),
            node("hyper 1.0", &[]),
        ]},
    });
    assert_eq!(
        http_client_paths(&metadata),
        [
            "cairn-tools -> some-sdk -> hyper-util",
            "cairn-tools -> some-sdk -> hyper-util -> hyper",
        ]
    );
}

/// ARCHITECTURE.md's "Adding a tool" example is a real tool: each block marked
/// `<!-- example: PATH -->` must equal that file, which its crate compiles.
#[test]
fn architecture_examples_are_the_files_they_name() {
    let root = repo_root();
    let doc = read(&root.join("ARCHITECTURE.md"));
    let mut found = 0;
    for (i, _) in doc.match_indices("<!-- example: ") {
        let rest = &doc[i + "<!-- example: ".len()..];
        let Some((path, rest)) = rest.split_once(" -->\n```rust\n") else {
            panic!("an example marker in ARCHITECTURE.md is not followed by a rust block");
        };
        let Some((block, _)) = rest.split_once("\n```\n") else {
            panic!("the example of {path} in ARCHITECTURE.md does not end");
        };
        let file = read(&root.join(path));
        assert_eq!(
            block,
            file.trim_end_matches('\n'),
            "ARCHITECTURE.md's example of {path} differs from the file; copy the file into it"
        );
        found += 1;
    }
    assert!(
        found >= 1,
        "ARCHITECTURE.md lost its \"Adding a tool\" example"
    );
}
