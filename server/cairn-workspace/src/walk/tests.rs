//! The parallel walk against the sequential one: the same files in the same order, on a tree
//! with many directories, awkward names, ignore files and symlinks in and out of the root.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::fs;
use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};

use super::*;

/// A temp dir holding the root `ws` and, beside it, `outside` (which must never be walked).
fn tree() -> (tempfile::TempDir, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let base = fs::canonicalize(tmp.path()).unwrap();
    let root = base.join("ws");
    let write = |rel: &str, text: &str| {
        let file = base.join(rel);
        fs::create_dir_all(file.parent().unwrap()).unwrap();
        fs::write(file, text).unwrap();
    };
    // Names whose byte order differs from their order as paths: `-`, `.` and ` ` sort before `/`.
    for dir in ["a", "a-b", "a.b", "a b", "A", "é", "a/b", "a/b/c", "z"] {
        for i in 0..40 {
            write(&format!("ws/{dir}/f{i:02}.txt"), "text\n");
        }
        write(&format!("ws/{dir}.txt"), "beside\n");
    }
    write("ws/.gitignore", "ignored/\n*.log\n");
    write("ws/ignored/x.txt", "ignored\n");
    write("ws/a/debug.log", "ignored\n");
    write("ws/a/b/.ignore", "c/\n");
    write("ws/.hidden/x.txt", "hidden\n");
    write("ws/.git/config", "[core]\n");
    write("outside/secret.txt", "outside\n");
    symlink(base.join("outside"), root.join("out")).unwrap();
    symlink(base.join("outside/secret.txt"), root.join("secret.txt")).unwrap();
    symlink(&root, root.join("a/loop")).unwrap();
    symlink(root.join("a/f00.txt"), root.join("z/link.txt")).unwrap();
    (tmp, root)
}

fn relative(files: &[WorkspacePath]) -> Vec<String> {
    files
        .iter()
        .map(|p| p.relative().display().to_string())
        .collect()
}

#[test]
fn walk_sorted_yields_what_walk_yields_in_its_order() {
    let (_tmp, root) = tree();
    let ws = Workspace::new(vec![root.clone()]).unwrap();
    for (start, options) in [
        (".", WalkOptions::default()),
        ("a", WalkOptions::default()),
        (
            ".",
            WalkOptions {
                include_hidden: true,
                ..WalkOptions::default()
            },
        ),
        (
            ".",
            WalkOptions {
                glob: Some("f0*.txt".to_owned()),
                ..WalkOptions::default()
            },
        ),
        ("ignored", WalkOptions::default()),
        (
            ".",
            WalkOptions {
                include_ignored: true,
                ..WalkOptions::default()
            },
        ),
        (
            "a",
            WalkOptions {
                include_ignored: true,
                include_hidden: true,
                glob: Some("*.log".to_owned()),
            },
        ),
        ("a/f00.txt", WalkOptions::default()),
    ] {
        let start = ws.resolve(start).unwrap();
        let sequential: Vec<WorkspacePath> = ws
            .walk(&start, &options)
            .unwrap()
            .map(Result::unwrap)
            .collect();
        assert!(!sequential.is_empty());
        // Several runs: the threads' scheduling must not show in the result.
        for _ in 0..3 {
            let parallel = ws.walk_sorted(&start, &options, &|| false).unwrap();
            assert_eq!(parallel.errors, 0);
            assert_eq!(
                relative(&parallel.files),
                relative(&sequential),
                "{start:?} {options:?}"
            );
            assert_eq!(parallel.files, sequential);
        }
    }
    let all = ws
        .walk_sorted(&ws.resolve(".").unwrap(), &WalkOptions::default(), &|| {
            false
        })
        .unwrap();
    let names = relative(&all.files);
    assert_eq!(names.len(), 9 * 41 - 40, "a/b/c is ignored by a/b/.ignore");
    for absent in [
        "ignored/x.txt",
        "a/debug.log",
        "a/b/c/f00.txt",
        ".hidden/x.txt",
        ".git/config",
        "out/secret.txt",
        "secret.txt",
        "a/loop/a.txt",
        "z/link.txt",
    ] {
        assert!(!names.iter().any(|n| n == absent), "{absent} was walked");
    }
    assert!(all.files.iter().all(|p| p.as_path().starts_with(&root)));
    let everything = ws
        .walk_sorted(
            &ws.resolve(".").unwrap(),
            &WalkOptions {
                include_hidden: true,
                include_ignored: true,
                ..WalkOptions::default()
            },
            &|| false,
        )
        .unwrap();
    let names = relative(&everything.files);
    for present in [
        "ignored/x.txt",
        "a/debug.log",
        "a/b/c/f00.txt",
        ".hidden/x.txt",
    ] {
        assert!(
            names.iter().any(|n| n == present),
            "{present} was not walked"
        );
    }
    for absent in [".git/config", "out/secret.txt", "secret.txt", "z/link.txt"] {
        assert!(!names.iter().any(|n| n == absent), "{absent} was walked");
    }
}

#[test]
fn walk_sorted_stops_when_told() {
    let (_tmp, root) = tree();
    let ws = Workspace::new(vec![root]).unwrap();
    let start = ws.resolve(".").unwrap();
    let walked = ws
        .walk_sorted(&start, &WalkOptions::default(), &|| true)
        .unwrap();
    assert!(walked.files.is_empty(), "{:?}", relative(&walked.files));
}

#[test]
fn walk_order_is_path_order() {
    let paths = [
        "/r/a", "/r/a b", "/r/a-b", "/r/a.b", "/r/a/b", "/r/a/b/c", "/r/aa", "/r/b", "/r/é",
        "/r/A", "/r/a/b.c", "/r/a/b-c",
    ];
    for a in paths {
        for b in paths {
            let (a, b) = (Path::new(a), Path::new(b));
            assert_eq!(
                walk_order(a, b),
                a.cmp(b),
                "{} vs {}",
                a.display(),
                b.display()
            );
        }
    }
}

#[test]
fn walk_sorted_where_keeps_what_the_filter_says() {
    let (_tmp, root) = tree();
    let ws = Workspace::new(vec![root]).unwrap();
    let options = WalkOptions::default();
    for (start, keep_names) in [(".", "a b/f0"), ("a", "b/f1"), ("a/b", "f2")] {
        let start = ws.resolve(start).unwrap();
        let all = ws.walk_sorted(&start, &options, &|| false).unwrap();
        let keep = |rel: &Path| rel.to_str().is_some_and(|r| r.starts_with(keep_names));
        let kept = ws
            .walk_sorted_where(&start, &options, &|| false, &keep)
            .unwrap();
        let expected: Vec<WorkspacePath> = all
            .files
            .into_iter()
            .filter(|f| keep(f.as_path().strip_prefix(start.as_path()).unwrap()))
            .collect();
        assert!(!expected.is_empty(), "{keep_names}");
        assert_eq!(kept.files, expected, "{keep_names}");
    }
    // A named file is judged by an empty relative path.
    let file = ws.resolve("a/f00.txt").unwrap();
    let seen = Mutex::new(Vec::new());
    let keep = |rel: &Path| {
        seen.lock().unwrap().push(rel.to_path_buf());
        false
    };
    let kept = ws
        .walk_sorted_where(&file, &options, &|| false, &keep)
        .unwrap();
    assert!(kept.files.is_empty());
    assert_eq!(seen.into_inner().unwrap(), vec![PathBuf::new()]);
}
