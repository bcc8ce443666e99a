//! `semantic_search` and `similar_code` as the model calls them, on the real local embedder
//! (all-MiniLM-L6-v2, gated by `CAIRN_MODEL_TESTS`), over small workspaces whose answers are
//! written into them: the function that retries uploads, a near-copy of a function. And what
//! the index must withstand: changed, touched and deleted files (only what changed is embedded
//! again, by the count the result reports), files the user may not read (never indexed, never
//! shown, also when they become unreadable later), binary and huge files, a damaged index file
//! (rebuilt), cancellation. Refusals that need no model run always.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::sync::Arc;

use cairn_ml::{Ml, ml_tools};
use cairn_select::embed::ModelSpec;
use cairn_test_support::tools::{Seen, call, call_with};
use cairn_workspace::{AccessPolicy, AccessRules, ExactApprovals, Workspace};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

fn model_tests() -> bool {
    cairn_test_support::gate(
        "CAIRN_MODEL_TESTS",
        "with the embedding model in the hf cache (HF_HUB_OFFLINE=1)",
    )
}

/// The workspace over `dir` with the user's rules: the default ones (secrets protected), or a
/// team policy granting reads only where `policy` says.
fn workspace(dir: &Path, policy: Option<&str>) -> Arc<Workspace> {
    let policy = policy.map(|p| AccessPolicy::from_toml_str(p, "policy.toml").unwrap());
    Arc::new(
        Workspace::new(vec![dir.to_path_buf()])
            .unwrap()
            .with_access(
                move |_| AccessRules::new("ada@example.com", policy.as_ref(), None),
                ExactApprovals::new(),
            ),
    )
}

/// The tools over `dir`, keeping their index under `cache`.
fn tools(dir: &Path, cache: &Path, policy: Option<&str>) -> cairn_toolkit::ToolSet<Ml> {
    ml_tools(
        Ml::new(Some(workspace(dir, policy)), ModelSpec::default())
            .with_index_dir(cache.to_path_buf()),
    )
}

fn write(root: &Path, rel: &str, text: &str) {
    let path = root.join(rel);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

fn ok(seen: &Seen) {
    assert!(!seen.is_error, "{}", seen.text);
}

/// The results as (path, first line, last line).
fn results(seen: &Seen) -> Vec<(String, u64, u64)> {
    let s = seen.result.structured_content.as_ref().unwrap();
    s["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["path"].as_str().unwrap().to_owned(),
                r["start_line"].as_u64().unwrap(),
                r["end_line"].as_u64().unwrap(),
            )
        })
        .collect()
}

/// What the refresh before the answer did.
fn refresh(seen: &Seen) -> Value {
    seen.result.structured_content.as_ref().unwrap()["index"]["refresh"].clone()
}

/// The 1-based number of the line of `text` holding `needle` (found here, by the test).
fn line_of(text: &str, needle: &str) -> u64 {
    text.lines().position(|l| l.contains(needle)).unwrap() as u64 + 1
}

/// The one index file under `cache`.
fn index_file(cache: &Path) -> PathBuf {
    let dirs: Vec<_> = std::fs::read_dir(cache).unwrap().collect();
    assert_eq!(dirs.len(), 1, "one directory per workspace");
    dirs[0].as_ref().unwrap().path().join("index.bin")
}

/// Filler functions about other things, so the answer has to be found among them.
fn filler(topic: &str, n: usize) -> String {
    let mut out = String::new();
    for i in 0..n {
        out.push_str(&format!(
            "/// Formats the {topic} report number {i}.\nfn {topic}_report_{i}(rows: &[Row]) -> String {{\n    let mut out = String::new();\n    for row in rows {{\n        out.push_str(&row.{topic}_{i}.to_string());\n    }}\n    out\n}}\n\n"
        ));
    }
    out
}

const UPLOAD: &str = r#"/// Sends one chunk to the storage server, waiting longer after each failed attempt and
/// giving up after five tries.
pub async fn upload_with_retry(client: &Client, chunk: &[u8]) -> Result<(), UploadError> {
    let mut delay = Duration::from_millis(200);
    for attempt in 1..=5 {
        match client.put(chunk).await {
            Ok(()) => return Ok(()),
            Err(e) if attempt < 5 => {
                warn!("upload failed (attempt {attempt}): {e}; retrying in {delay:?}");
                sleep(delay).await;
                delay *= 2;
            }
            Err(e) => return Err(UploadError::GaveUp(e)),
        }
    }
    unreachable!()
}
"#;

/// A small project: billing, parsing and docs around one upload function at a known place.
fn project(root: &Path) -> String {
    let upload = format!("{}{UPLOAD}\n{}", filler("invoice", 3), filler("ledger", 3));
    write(root, "src/storage.rs", &upload);
    write(root, "src/billing.rs", &filler("tax", 6));
    write(
        root,
        "src/parse.rs",
        "/// Parses a date written as YYYY-MM-DD.\npub fn parse_date(s: &str) -> Option<Date> {\n    let mut parts = s.split('-');\n    let y = parts.next()?.parse().ok()?;\n    let m = parts.next()?.parse().ok()?;\n    let d = parts.next()?.parse().ok()?;\n    Date::new(y, m, d)\n}\n",
    );
    write(
        root,
        "docs/colours.md",
        "# Colours\n\nThe theme uses a dark background with orange accents.\nButtons are rounded.\n",
    );
    upload
}

#[tokio::test]
async fn the_function_that_retries_uploads_ranks_first_with_its_lines() {
    if !model_tests() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let cache = tempfile::tempdir().unwrap();
    let upload = project(dir.path());
    // A binary file full of the query's words, and a secret: neither may come back.
    let mut blob = b"retry failed uploads upload_with_retry\0".to_vec();
    blob.extend_from_slice(UPLOAD.as_bytes());
    std::fs::write(dir.path().join("src/upload.bin"), blob).unwrap();
    write(dir.path(), ".env", "UPLOAD_RETRY_TOKEN=s3cret\n");
    let t = tools(dir.path(), cache.path(), None);

    let seen = call(
        &t,
        "semantic_search",
        json!({"query": "where do we retry failed uploads?"}),
    )
    .await;
    ok(&seen);
    let found = results(&seen);
    let (path, start, end) = &found[0];
    assert_eq!(path, "src/storage.rs", "{}", seen.text);
    let (fn_line, loop_line) = (
        line_of(&upload, "pub async fn upload_with_retry"),
        line_of(&upload, "for attempt in 1..=5"),
    );
    assert!(
        *start <= fn_line && *end >= loop_line + 3,
        "lines {start}-{end} should hold {fn_line}-{}: {}",
        loop_line + 3,
        seen.text
    );
    assert!(seen.text.contains("for attempt in 1..=5"), "{}", seen.text);
    assert!(
        found
            .iter()
            .all(|(p, _, _)| p != "src/upload.bin" && p != ".env"),
        "{}",
        seen.text
    );
    // Four text files indexed; the binary one is recorded as skipped, not as text.
    assert_eq!(
        seen.result.structured_content.as_ref().unwrap()["index"]["files"],
        4,
        "{}",
        seen.text
    );
    let stored = std::fs::read(index_file(cache.path())).unwrap();
    assert!(
        !contains(&stored, b".env"),
        "the secret's name is in the index"
    );
    assert!(
        !dir.path().join(".cairn").exists(),
        "nothing is written into the workspace"
    );

    // A path prefix keeps the search to a part of the workspace.
    let docs = call(
        &t,
        "semantic_search",
        json!({"query": "retry failed uploads", "path": "docs/", "limit": 3}),
    )
    .await;
    ok(&docs);
    assert!(
        results(&docs)
            .iter()
            .all(|(p, _, _)| p.starts_with("docs/")),
        "{}",
        docs.text
    );
    let glob = call(
        &t,
        "semantic_search",
        json!({"query": "parse a date", "path": "**/*.md"}),
    )
    .await;
    ok(&glob);
    assert_eq!(results(&glob)[0].0, "docs/colours.md", "{}", glob.text);
}

fn contains(hay: &[u8], needle: &[u8]) -> bool {
    hay.windows(needle.len()).any(|w| w == needle)
}

#[tokio::test]
async fn only_the_changed_file_is_embedded_again() {
    if !model_tests() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let cache = tempfile::tempdir().unwrap();
    project(dir.path());
    let t = tools(dir.path(), cache.path(), None);
    let ask = |t| async move {
        let seen = call(t, "semantic_search", json!({"query": "tax report"})).await;
        ok(&seen);
        seen
    };

    let first = ask(&t).await;
    assert_eq!(refresh(&first)["embedded_files"], 4, "{}", first.text);
    let again = ask(&t).await;
    assert_eq!(refresh(&again)["embedded_files"], 0, "{}", again.text);

    // One file changed: it alone is embedded again, and its new text is found.
    write(
        dir.path(),
        "src/parse.rs",
        "/// Reads the user's preferred colour scheme from the settings file.\npub fn theme() -> Theme { Theme::Dark }\n",
    );
    let changed = ask(&t).await;
    assert_eq!(refresh(&changed)["embedded_files"], 1, "{}", changed.text);
    assert_eq!(refresh(&changed)["removed"], 0, "{}", changed.text);

    // Written again with the same content: read and hashed, nothing embedded.
    let same = std::fs::read_to_string(dir.path().join("src/billing.rs")).unwrap();
    std::thread::sleep(std::time::Duration::from_millis(1100));
    write(dir.path(), "src/billing.rs", &same);
    let touched = ask(&t).await;
    assert_eq!(refresh(&touched)["embedded_files"], 0, "{}", touched.text);

    // Deleted: out of the index and the results.
    std::fs::remove_file(dir.path().join("docs/colours.md")).unwrap();
    let removed = ask(&t).await;
    assert_eq!(refresh(&removed)["removed"], 1, "{}", removed.text);
    assert_eq!(
        removed.result.structured_content.as_ref().unwrap()["index"]["files"],
        3
    );

    // A new host (a restarted cairn) loads the index from disk: nothing to embed.
    let t2 = tools(dir.path(), cache.path(), None);
    let reloaded = ask(&t2).await;
    assert_eq!(refresh(&reloaded)["embedded_files"], 0, "{}", reloaded.text);
    let found = call(
        &t2,
        "semantic_search",
        json!({"query": "which colour scheme does the user prefer?", "limit": 1}),
    )
    .await;
    assert_eq!(results(&found)[0].0, "src/parse.rs", "{}", found.text);
}

#[tokio::test]
async fn files_the_user_may_not_read_are_never_indexed_nor_shown() {
    if !model_tests() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let cache = tempfile::tempdir().unwrap();
    project(dir.path());
    write(
        dir.path(),
        "private/salaries.rs",
        &format!("// salaries\n{UPLOAD}"),
    );
    let policy = "[default]\nread = [\"src/**\", \"docs/**\"]\n";
    let t = tools(dir.path(), cache.path(), Some(policy));
    let seen = call(
        &t,
        "semantic_search",
        json!({"query": "retry failed uploads", "limit": 20}),
    )
    .await;
    ok(&seen);
    assert!(
        results(&seen)
            .iter()
            .all(|(p, _, _)| !p.starts_with("private/")),
        "{}",
        seen.text
    );
    assert!(!seen.text.contains("salaries"), "{}", seen.text);
    let stored = std::fs::read(index_file(cache.path())).unwrap();
    assert!(
        !contains(&stored, b"private/"),
        "an unreadable file is in the index"
    );
    // The index holds the words of the user's files: only the user may read it.
    use std::os::unix::fs::PermissionsExt;
    let mode = |p: &std::path::Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    let file = index_file(cache.path());
    assert_eq!(mode(&file), 0o600);
    assert_eq!(mode(file.parent().unwrap()), 0o700);

    // The same index, and a user who may no longer read src/: none of it comes back.
    let narrower = "[default]\nread = [\"docs/**\"]\n";
    let t2 = tools(dir.path(), cache.path(), Some(narrower));
    let seen = call(
        &t2,
        "semantic_search",
        json!({"query": "retry failed uploads", "limit": 20}),
    )
    .await;
    ok(&seen);
    let found = results(&seen);
    assert!(!found.is_empty());
    assert!(
        found.iter().all(|(p, _, _)| p.starts_with("docs/")),
        "{}",
        seen.text
    );
    assert!(!seen.text.contains("upload_with_retry"), "{}", seen.text);
    let stored = std::fs::read(index_file(cache.path())).unwrap();
    assert!(!contains(&stored, b"src/storage.rs"), "{}", seen.text);
}

#[tokio::test]
async fn a_corrupted_index_is_rebuilt_not_trusted() {
    if !model_tests() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let cache = tempfile::tempdir().unwrap();
    project(dir.path());
    let t = tools(dir.path(), cache.path(), None);
    let query = json!({"query": "where do we retry failed uploads?", "limit": 1});
    ok(&call(&t, "semantic_search", query.clone()).await);
    let file = index_file(cache.path());

    // Bytes flipped in the middle (a vector, say), and a file cut short: both caught.
    let mut bytes = std::fs::read(&file).unwrap();
    let mid = bytes.len() / 2;
    bytes[mid] ^= 0xff;
    std::fs::write(&file, &bytes).unwrap();
    let t2 = tools(dir.path(), cache.path(), None);
    let seen = call(&t2, "semantic_search", query.clone()).await;
    ok(&seen);
    assert!(seen.text.contains("was damaged"), "{}", seen.text);
    assert!(seen.text.contains("checksum"), "{}", seen.text);
    assert_eq!(
        refresh(&seen)["embedded_files"],
        4,
        "rebuilt: {}",
        seen.text
    );
    assert_eq!(results(&seen)[0].0, "src/storage.rs", "{}", seen.text);

    let bytes = std::fs::read(&file).unwrap();
    std::fs::write(&file, &bytes[..bytes.len() / 3]).unwrap();
    let t3 = tools(dir.path(), cache.path(), None);
    let seen = call(&t3, "semantic_search", query.clone()).await;
    ok(&seen);
    assert!(seen.text.contains("was damaged"), "{}", seen.text);
    assert_eq!(results(&seen)[0].0, "src/storage.rs", "{}", seen.text);

    std::fs::write(&file, b"not an index at all").unwrap();
    let t4 = tools(dir.path(), cache.path(), None);
    let seen = call(&t4, "semantic_search", query).await;
    ok(&seen);
    assert!(seen.text.contains("not a cairn index"), "{}", seen.text);
}

#[tokio::test]
async fn similar_code_finds_the_near_copy_elsewhere() {
    if !model_tests() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let cache = tempfile::tempdir().unwrap();
    project(dir.path());
    let original = "fn checksum(data: &[u8]) -> u32 {\n    let mut a: u32 = 1;\n    let mut b: u32 = 0;\n    for byte in data {\n        a = (a + u32::from(*byte)) % 65521;\n        b = (b + a) % 65521;\n    }\n    (b << 16) | a\n}\n";
    let copy = "// copied from the network code\npub fn adler(bytes: &[u8]) -> u32 {\n    let mut s1: u32 = 1;\n    let mut s2: u32 = 0;\n    for x in bytes.iter() {\n        s1 = (s1 + *x as u32) % 65521;\n        s2 = (s2 + s1) % 65521;\n    }\n    (s2 << 16) | s1\n}\n";
    write(
        dir.path(),
        "src/net.rs",
        &format!("{}{original}", filler("packet", 2)),
    );
    write(
        dir.path(),
        "src/archive.rs",
        &format!("{}{copy}{}", filler("entry", 2), filler("folder", 1)),
    );
    let t = tools(dir.path(), cache.path(), None);
    let seen = call(&t, "similar_code", json!({"snippet": original, "limit": 3})).await;
    ok(&seen);
    let found = results(&seen);
    let archive = format!("{}{copy}", filler("entry", 2));
    let at = line_of(&archive, "pub fn adler");
    assert_eq!(found[0].0, "src/archive.rs", "{}", seen.text);
    assert!(found[0].1 <= at && found[0].2 >= at + 7, "{}", seen.text);
    // Its own place is named, not returned.
    assert!(
        found
            .iter()
            .all(|(p, s, e)| !(p == "src/net.rs" && *s <= 21 && *e >= 19)),
        "{}",
        seen.text
    );
    assert!(
        seen.text
            .contains("the snippet itself stands at src/net.rs:19-27"),
        "{}",
        seen.text
    );
}

#[tokio::test]
async fn a_huge_file_is_read_in_part_and_cancellation_keeps_the_index() {
    if !model_tests() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let cache = tempfile::tempdir().unwrap();
    project(dir.path());
    // 1 GiB: a text head, then a sparse hole (no disk used); only the head is read.
    let path = dir.path().join("logs/huge.log");
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(
        &path,
        "the nightly backup of the photo archive finished\n".repeat(50),
    )
    .unwrap();
    std::fs::OpenOptions::new()
        .write(true)
        .open(&path)
        .unwrap()
        .set_len(1 << 30)
        .unwrap();
    let t = tools(dir.path(), cache.path(), None);

    let cancel = CancellationToken::new();
    cancel.cancel();
    let seen = call_with(
        &t,
        "semantic_search",
        json!({"query": "photo backup"}),
        cancel,
    )
    .await;
    assert!(
        seen.is_error && seen.text.contains("cancelled"),
        "{}",
        seen.text
    );

    let seen = call(&t, "semantic_search", json!({"query": "photo backup"})).await;
    ok(&seen);
    assert_eq!(results(&seen)[0].0, "logs/huge.log", "{}", seen.text);
    assert!(
        seen.text.contains("1 large files are indexed in part"),
        "{}",
        seen.text
    );
}

#[tokio::test]
async fn refusals_come_before_any_model_is_loaded() {
    let dir = tempfile::tempdir().unwrap();
    let cache = tempfile::tempdir().unwrap();
    let spec = ModelSpec {
        repo: "cairn-tests/no-such-model".into(),
        revision: "none".into(),
    };
    let t = ml_tools(
        Ml::new(Some(workspace(dir.path(), None)), spec.clone())
            .with_index_dir(cache.path().to_path_buf()),
    );
    let cases = [
        (
            "semantic_search",
            json!({"query": "  "}),
            "`query` is empty",
        ),
        (
            "semantic_search",
            json!({"query": "x", "limit": 0}),
            "`limit` must be from 1 to 50",
        ),
        (
            "semantic_search",
            json!({"query": "x", "path": "src/[a"}),
            "not a valid glob",
        ),
        ("similar_code", json!({"snippet": ""}), "`snippet` is empty"),
        (
            "similar_code",
            json!({"snippet": "x".repeat(9000)}),
            "over 8000 characters",
        ),
        ("semantic_search", json!({"query": "x", "page": 2}), "page"),
    ];
    for (tool, args, words) in cases {
        let seen = call(&t, tool, args).await;
        assert!(seen.is_error, "{tool}: {}", seen.text);
        assert!(seen.text.contains(words), "{words:?} not in: {}", seen.text);
    }
    // Without a workspace there is nothing to search: the tools are not offered.
    let none = ml_tools(Ml::new(None, spec));
    let seen = call(&none, "similar_code", json!({"snippet": "fn a() {}"})).await;
    assert!(
        seen.is_error && seen.text.contains("unknown tool `similar_code`"),
        "{}",
        seen.text
    );
    // No model: the error says how to get it, and nothing was written.
    let seen = call(&t, "semantic_search", json!({"query": "x"})).await;
    assert!(
        seen.is_error && seen.text.contains("cairn doctor"),
        "{}",
        seen.text
    );
    assert_eq!(std::fs::read_dir(cache.path()).unwrap().count(), 0);
}
