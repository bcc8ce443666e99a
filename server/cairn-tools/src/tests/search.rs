//! `grep`, `glob`, `tree` and `find_files` on trees large enough to use every search thread:
//! output in path order and the same on every run, unsaved buffers searched instead of the
//! disk, ignored files and symlinks left out, and files too large to search reported.

use super::*;

/// `count` files spread over nested directories whose names sort differently as bytes and as
/// paths (`a-b`, `a.b` and `a b` before `a/`); every third holds `needle` on its second line.
fn many(count: usize) -> Vec<String> {
    let dirs = ["a", "a-b", "a.b", "a b", "a/x", "b", "b/c/d", "é"];
    let mut spec = vec!["ws/.gitignore => ignored/\\n".to_owned()];
    for i in 0..count {
        let dir = dirs[i % dirs.len()];
        let text = if i % 3 == 0 {
            "one\\nneedle\\n"
        } else {
            "one\\ntwo\\n"
        };
        spec.push(format!("ws/{dir}/f{i:04}.txt => {text}"));
        if i % 50 == 0 {
            spec.push(format!("ws/ignored/f{i}.txt => needle\\n"));
        }
    }
    spec
}

/// The relative paths `files` in walk order: component by component.
fn walk_order(mut files: Vec<String>) -> Vec<String> {
    files.sort_by(|a, b| Path::new(a).cmp(Path::new(b)));
    files
}

async fn text(f: &Fixture, name: &str, args: Value) -> String {
    let out = call(f, name, args).await;
    assert!(!out.is_error, "{name}: {}", out.text);
    out.text
}

#[tokio::test]
async fn output_is_in_path_order_and_stable() {
    let spec = many(1200);
    let f = fixture(&spec.iter().map(String::as_str).collect::<Vec<_>>());
    let files: Vec<String> = spec
        .iter()
        .filter_map(|line| line.split_once(" => "))
        .map(|(file, _)| file.trim_start_matches("ws/").to_owned())
        .filter(|file| !file.starts_with("ignored/") && !file.starts_with('.'))
        .collect();
    let needles: Vec<String> = walk_order(
        files
            .iter()
            .filter(|file| {
                let i: usize = file[file.len() - 8..file.len() - 4].parse().unwrap();
                i.is_multiple_of(3)
            })
            .cloned()
            .collect(),
    );
    let all = walk_order(files.clone());

    let grep = text(
        &f,
        "grep",
        json!({"pattern": "needle", "max_results": 1000}),
    )
    .await;
    let expected: Vec<String> = needles.iter().map(|f| format!("{f}:2:needle")).collect();
    assert_eq!(
        grep,
        format!(
            "{}\n[{} matching lines in {} files]",
            expected.join("\n"),
            needles.len(),
            needles.len()
        )
    );
    // The cap cuts at the same place every time: the first matches in path order.
    let capped = text(&f, "grep", json!({"pattern": "needle", "max_results": 30})).await;
    assert!(capped.starts_with(&expected[..30].join("\n")), "{capped}");
    let glob = text(&f, "glob", json!({"pattern": "**/*.txt"})).await;
    assert!(glob.starts_with(&all[..500].join("\n")), "{glob}");
    assert!(glob.ends_with(&format!(
        "[showed 500 of {} matches; narrow the pattern]",
        all.len()
    )));
    let find = text(&f, "find_files", json!({"name": "f00"})).await;
    let f00: Vec<&String> = all.iter().filter(|f| f.contains("/f00")).collect();
    assert_eq!(find.lines().collect::<Vec<_>>(), f00);
    let tree = text(&f, "tree", json!({"depth": 2})).await;
    assert!(
        tree.starts_with(&format!(
            "./ ({} files)\n  a/\n    x/ (150 files)\n    f0000.txt",
            all.len()
        )),
        "{tree}"
    );
    for (name, args, first) in [
        (
            "grep",
            json!({"pattern": "needle", "max_results": 1000}),
            grep,
        ),
        (
            "grep",
            json!({"pattern": "needle", "max_results": 30}),
            capped,
        ),
        ("glob", json!({"pattern": "**/*.txt"}), glob),
        ("find_files", json!({"name": "f00"}), find),
        ("tree", json!({"depth": 2}), tree),
    ] {
        for _ in 0..3 {
            assert_eq!(text(&f, name, args.clone()).await, first, "{name} {args}");
        }
    }
}

#[tokio::test]
async fn grep_searches_unsaved_buffers_not_the_disk() {
    let tmp = tempfile::tempdir().unwrap();
    let base = fs::canonicalize(tmp.path()).unwrap();
    let root = base.join("ws");
    for i in 0..300 {
        let dir = root.join(format!("d{}", i % 4));
        fs::create_dir_all(&dir).unwrap();
        fs::write(dir.join(format!("f{i:03}.rs")), "fn plain() {}\n").unwrap();
    }
    // On disk: an old text, and a binary file; in the editor: the needle in both.
    fs::write(root.join("d1/f101.rs"), "fn old() {}\n").unwrap();
    fs::write(root.join("d2/f202.rs"), b"\0binary on disk").unwrap();
    let editor = Arc::new(FakeEditor {
        docs: vec![
            (
                root.join("d1/f101.rs"),
                OpenDocument {
                    text: "fn old() {}\nfn needle() {}\n".to_owned(),
                    version: 3,
                },
            ),
            (
                root.join("d2/f202.rs"),
                OpenDocument {
                    text: "needle in the buffer\n".to_owned(),
                    version: 1,
                },
            ),
        ],
        answer: Ok(()),
        applied: Mutex::new(Vec::new()),
    });
    let ws = Workspace::new(vec![root]).unwrap().with_overlay(editor);
    let f = Fixture {
        _tmp: tmp,
        base,
        tools: file_tools(Arc::new(ws)),
    };
    run(
        &f,
        "grep",
        json!({"pattern": "needle|old"}),
        "d1/f101.rs:1:fn old() {}\nd1/f101.rs:2:fn needle() {}\nd2/f202.rs:1:needle in the buffer\n[3 matching lines in 2 files]",
    )
    .await;
}

#[tokio::test]
async fn search_skips_ignored_files_symlinks_and_files_too_large() {
    let mut spec = vec![
        "ws/.gitignore => build/\\n".to_owned(),
        "outside/secret.txt => needle outside\\n".to_owned(),
    ];
    for i in 0..400 {
        spec.push(format!("ws/src/f{i:03}.txt => line\\n"));
        spec.push(format!("ws/build/f{i:03}.txt => needle built\\n"));
    }
    spec.push("ws/src/f123.txt => needle\\n".to_owned());
    for link in [
        "ws/out -> $BASE/outside",
        "ws/secret.txt -> $BASE/outside/secret.txt",
        "ws/src/loop -> $BASE/ws",
        "ws/src/same.txt -> $BASE/ws/src/f123.txt",
    ] {
        spec.push(link.to_owned());
    }
    let f = fixture(&spec.iter().map(String::as_str).collect::<Vec<_>>());
    fs::write(
        f.root().join("src/huge.txt"),
        "needle\n".repeat(2 * 1024 * 1024),
    )
    .unwrap();
    run(
        &f,
        "grep",
        json!({"pattern": "needle"}),
        "src/f123.txt:1:needle\n[1 files skipped (binary, too large, not UTF-8 or unreadable)]\n[1 matching lines in 1 files]",
    )
    .await;
    run(
        &f,
        "glob",
        json!({"pattern": "**/{secret,same,huge}*"}),
        "src/huge.txt",
    )
    .await;
    run(
        &f,
        "tree",
        json!({"depth": 1}),
        "./ (401 files)\n  src/ (401 files)",
    )
    .await;
}

#[tokio::test]
async fn grep_anchors_match_at_every_line() {
    let f = fixture(&[
        "ws/a.txt => first\\nneedle one\\r\\nsay needle\\r\\nlast\\n",
        "ws/b.txt => needle\\n",
    ]);
    for (pattern, expected) in [
        (
            "^needle",
            "a.txt:2:needle one\nb.txt:1:needle\n[2 matching lines in 2 files]",
        ),
        (
            "needle$",
            "a.txt:3:say needle\nb.txt:1:needle\n[2 matching lines in 2 files]",
        ),
        (
            r"\Aneedle",
            "a.txt:2:needle one\nb.txt:1:needle\n[2 matching lines in 2 files]",
        ),
        ("^$", "no matches for `^$` in ."),
    ] {
        run(&f, "grep", json!({"pattern": pattern}), expected).await;
    }
}

#[tokio::test]
async fn switches_bring_back_hidden_and_ignored_files() {
    let f = fixture(&[
        "ws/.gitignore => build/\\n",
        "ws/src/a.txt => needle\\n",
        "ws/build/b.txt => needle\\n",
        "ws/.cache/c.txt => needle\\n",
        "ws/.git/d.txt => needle\\n",
    ]);
    for (switches, files) in [
        (json!({}), vec!["src/a.txt"]),
        (
            json!({"include_ignored": true}),
            vec!["build/b.txt", "src/a.txt"],
        ),
        (
            json!({"include_hidden": true}),
            vec![".cache/c.txt", ".gitignore", "src/a.txt"],
        ),
        (
            json!({"include_hidden": true, "include_ignored": true}),
            vec![".cache/c.txt", ".gitignore", "build/b.txt", "src/a.txt"],
        ),
    ] {
        let with = |mut args: Value| {
            for (k, v) in switches.as_object().unwrap() {
                args[k] = v.clone();
            }
            args
        };
        let needles: Vec<&str> = files
            .iter()
            .copied()
            .filter(|f| *f != ".gitignore")
            .collect();
        let grep = needles
            .iter()
            .map(|f| format!("{f}:1:needle\n"))
            .collect::<String>();
        let grep = format!(
            "{grep}[{} matching lines in {} files]",
            needles.len(),
            needles.len()
        );
        run(&f, "grep", with(json!({"pattern": "needle"})), &grep).await;
        run(
            &f,
            "glob",
            with(json!({"pattern": "**"})),
            &files.join("\n"),
        )
        .await;
        run(
            &f,
            "find_files",
            with(json!({"name": ".txt"})),
            &needles.join("\n"),
        )
        .await;
        let tree = text(&f, "tree", with(json!({"depth": 1}))).await;
        assert!(
            tree.starts_with(&format!("./ ({} files)", files.len())),
            "{switches}: {tree}"
        );
    }
}
