//! Reading for search (what is refused, unsaved buffers, the directory handle kept between
//! files) and the ordered parallel search (order, early stop, panics).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::fs;
use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::AtomicUsize;

use futures::future::BoxFuture;

use super::*;
use crate::{AccessRules, ByteEdit, DocumentOverlay, ExactApprovals, OpenDocument, OverlayError};

/// Files are `path => content` under a temp dir whose `ws` is the root.
fn fixture(spec: &[(&str, &[u8])]) -> (tempfile::TempDir, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let base = fs::canonicalize(tmp.path()).unwrap();
    fs::create_dir(base.join("ws")).unwrap();
    for (rel, bytes) in spec {
        let file = base.join(rel);
        fs::create_dir_all(file.parent().unwrap()).unwrap();
        fs::write(file, bytes).unwrap();
    }
    (tmp, base)
}

/// An editor with one document open.
struct Editor {
    path: PathBuf,
    text: &'static str,
}

impl DocumentOverlay for Editor {
    fn open_document(&self, path: &Path) -> Option<OpenDocument> {
        (path == self.path).then(|| OpenDocument {
            text: self.text.to_owned(),
            version: 1,
        })
    }
    fn apply_edits(
        &self,
        _: &Path,
        _: i32,
        _: Vec<ByteEdit>,
    ) -> BoxFuture<'_, Result<(), OverlayError>> {
        Box::pin(async { Err(OverlayError::Closed) })
    }
}

/// What reading gives, as text or as the kind of refusal.
fn outcome(result: Result<&str, ScopeError>) -> String {
    match result {
        Ok(text) => text.to_owned(),
        Err(ScopeError::Binary { .. }) => "ERR binary".to_owned(),
        Err(ScopeError::TooLarge { size, .. }) => format!("ERR too large ({size})"),
        Err(ScopeError::InvalidUtf8 { valid_up_to, .. }) => format!("ERR utf-8 at {valid_up_to}"),
        Err(ScopeError::NotRegularFile { kind, .. }) => format!("ERR {kind}"),
        Err(ScopeError::NotGranted { .. }) => "ERR not granted".to_owned(),
        Err(ScopeError::NotFound { .. }) => "ERR not found".to_owned(),
        Err(e) => format!("ERR {e}"),
    }
}

#[test]
fn read_for_search_table() {
    let (_tmp, base) = fixture(&[
        ("ws/a/text.txt", b"hello\n"),
        ("ws/a/binary.bin", b"hel\0lo"),
        ("ws/a/latin1.txt", b"caf\xe9\n"),
        ("ws/a/big.txt", &[b'x'; 100]),
        ("ws/b/open.txt", b"on disk\0binary"),
        ("ws/b/other.txt", b"other\n"),
        ("ws/secret/pay.txt", b"salary\n"),
        ("outside.txt", b"outside\n"),
    ]);
    let root = base.join("ws");
    let editor = Arc::new(Editor {
        path: root.join("b/open.txt"),
        text: "unsaved\n",
    });
    let policy =
        crate::AccessPolicy::from_toml_str("[default]\nread = [\"a/**\", \"b/**\"]\n", "p.toml")
            .unwrap();
    let ws = Workspace::new(vec![root.clone()])
        .unwrap()
        .with_max_file_size(50)
        .with_overlay(editor)
        .with_access(
            |_| AccessRules::new("eve", Some(&policy), None),
            ExactApprovals::new(),
        );
    // One buffer throughout, moving between directories and back: the kept directory handle
    // must always be the right one.
    let mut buf = SearchBuf::new();
    for (rel, expected) in [
        ("a/text.txt", "hello\n"),
        ("a/binary.bin", "ERR binary"),
        ("a/latin1.txt", "ERR utf-8 at 3"),
        ("a/big.txt", "ERR too large (100)"),
        ("b/open.txt", "unsaved\n"),
        ("b/other.txt", "other\n"),
        ("a/text.txt", "hello\n"),
        ("secret/pay.txt", "ERR not granted"),
        ("b/other.txt", "other\n"),
    ] {
        let path = ws.resolve(rel).unwrap();
        assert_eq!(
            outcome(ws.read_for_search(&path, &mut buf)),
            expected,
            "{rel}"
        );
    }
    // A path resolved before its file became a symlink: refused, never followed out.
    let path = ws.resolve("a/text.txt").unwrap();
    fs::remove_file(root.join("a/text.txt")).unwrap();
    symlink(base.join("outside.txt"), root.join("a/text.txt")).unwrap();
    assert_eq!(outcome(ws.read_for_search(&path, &mut buf)), "ERR symlink");
    fs::remove_file(root.join("a/text.txt")).unwrap();
    assert_eq!(
        outcome(ws.read_for_search(&path, &mut buf)),
        "ERR not found"
    );
}

/// Many files in many directories, each holding its own path.
fn many_files(count: usize) -> (tempfile::TempDir, Workspace, Vec<WorkspacePath>) {
    let tmp = tempfile::tempdir().unwrap();
    let root = fs::canonicalize(tmp.path()).unwrap();
    for i in 0..count {
        let rel = format!("d{}/f{i}.txt", i % 7);
        fs::create_dir_all(root.join(format!("d{}", i % 7))).unwrap();
        fs::write(root.join(&rel), &rel).unwrap();
    }
    let ws = Workspace::new(vec![root]).unwrap();
    let start = ws.resolve(".").unwrap();
    let files = ws
        .walk_sorted(&start, &crate::WalkOptions::default(), &|| false)
        .unwrap()
        .files;
    assert_eq!(files.len(), count);
    (tmp, ws, files)
}

#[test]
fn search_in_order_hands_outcomes_back_in_order() {
    let (_tmp, ws, files) = many_files(CHUNK * 9 + 5);
    for _ in 0..3 {
        let mut seen = Vec::new();
        ws.search_in_order(
            &files,
            |_, text| text.map(str::to_owned).map_err(|e| e.to_string()),
            |file, text| {
                // Each outcome is paired with its own file.
                assert_eq!(text.as_deref(), Ok(file.display_path().as_str()));
                seen.push(file.clone());
                ControlFlow::Continue(())
            },
        );
        assert_eq!(seen, files);
    }
}

#[test]
fn search_in_order_stops_when_consume_breaks() {
    let (_tmp, ws, files) = many_files(CHUNK * 20);
    let searched = AtomicUsize::new(0);
    let mut consumed = 0;
    ws.search_in_order(
        &files,
        |_, _| searched.fetch_add(1, Ordering::Relaxed),
        |_, _| {
            consumed += 1;
            if consumed == 10 {
                ControlFlow::Break(())
            } else {
                ControlFlow::Continue(())
            }
        },
    );
    assert_eq!(consumed, 10);
    // The threads stopped within their window, far short of every file.
    let searched = searched.into_inner();
    let bound = (threads() * LOOKAHEAD_PER_THREAD + threads()) * CHUNK;
    assert!(searched <= bound, "searched {searched} files");
}

#[test]
fn search_in_order_passes_a_panic_on_without_hanging() {
    let (_tmp, ws, files) = many_files(CHUNK * 6);
    let in_search = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        ws.search_in_order(
            &files,
            |file, _| {
                assert!(!file.display_path().ends_with("f100.txt"), "search failed");
            },
            |_, ()| ControlFlow::Continue(()),
        );
    }));
    assert!(in_search.is_err());
    let in_consume = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        ws.search_in_order(
            &files,
            |_, _| (),
            |file, ()| {
                assert!(!file.display_path().ends_with("f100.txt"), "consume failed");
                ControlFlow::Continue(())
            },
        );
    }));
    assert!(in_consume.is_err());
}
