//! The file tools beyond the first four: what the model sees, what lands on disk or in the
//! editor, and that denials leave everything outside the root untouched.

use super::*;

fn read(f: &Fixture, rel: &str) -> Option<String> {
    fs::read_to_string(f.root().join(rel)).ok()
}

#[tokio::test]
async fn read_only_tools_table() {
    let f = fixture(&[
        "ws/.gitignore => target/\\n",
        "ws/src/main.rs => fn main() {}\\n",
        "ws/src/lib.rs => pub mod a;\\npub mod b;\\n",
        "ws/src/deep/er/x_test.rs => // x\\n",
        "ws/target/out.rs => built",
        "ws/notes.txt => one two\\nthree\\n",
        "ws/long.txt => 1\\n2\\n3\\n4\\n5\\n6\\n7\\n",
        "ws/v1.txt => a\\nb\\nc\\n",
        "ws/v2.txt => a\\nB\\nc\\nd\\n",
        "ws/empty/",
    ]);
    for (name, args, expected) in [
        (
            "read_many",
            json!({"paths": ["notes.txt", "missing.txt", "src/lib.rs"], "max_lines_per_file": 1}),
            "==> notes.txt <==\n    1\tone two\n[showed lines 1-1 of 2; call read_file with offset=2 to read on]\n==> missing.txt <==\nerror: $BASE/ws/missing.txt does not exist\n==> src/lib.rs <==\n    1\tpub mod a;\n[showed lines 1-1 of 2; call read_file with offset=2 to read on]",
        ),
        (
            "read_many",
            json!({"paths": ["nope"]}),
            "ERR ==> nope <==\nerror: $BASE/ws/nope does not exist",
        ),
        (
            "read_many",
            json!({"paths": []}),
            "ERR invalid argument `paths` for read_many: give 1 to 20 paths",
        ),
        (
            "tree",
            json!({}),
            "./ (7 files)\n  src/\n    deep/\n      er/ (1 files)\n    lib.rs\n    main.rs\n  long.txt\n  notes.txt\n  v1.txt\n  v2.txt",
        ),
        (
            "tree",
            json!({"path": "src", "depth": 1}),
            "src/ (3 files)\n  deep/ (1 files)\n  lib.rs\n  main.rs",
        ),
        (
            "tree",
            json!({"depth": 0}),
            "ERR invalid argument `depth` for tree: it must be between 1 and 20",
        ),
        (
            "glob",
            json!({"pattern": "src/**/*.rs"}),
            "src/deep/er/x_test.rs\nsrc/lib.rs\nsrc/main.rs",
        ),
        (
            "glob",
            json!({"pattern": "*.rs"}),
            "no files match `*.rs` under .",
        ),
        (
            "glob",
            json!({"pattern": "*.rs", "path": "src"}),
            "src/lib.rs\nsrc/main.rs",
        ),
        (
            "glob",
            json!({"pattern": "a{"}),
            "ERR invalid argument `pattern` for glob: …",
        ),
        ("find_files", json!({"name": "MAIN"}), "src/main.rs"),
        (
            "find_files",
            json!({"name": "*_test.rs"}),
            "src/deep/er/x_test.rs",
        ),
        (
            "find_files",
            json!({"name": "out.rs"}),
            "no files match the name `out.rs` under .",
        ),
        (
            "stat",
            json!({"path": "notes.txt"}),
            "notes.txt: file, 14 bytes, mode 644, modified …",
        ),
        ("stat", json!({"path": "empty"}), "empty: directory, …"),
        ("stat", json!({"path": "nope"}), "nope does not exist"),
        (
            "head_tail",
            json!({"path": "long.txt", "head": 2}),
            "    1\t1\n    2\t2\n[7 lines in all]",
        ),
        (
            "head_tail",
            json!({"path": "long.txt", "tail": 2}),
            "  ...\t[5 lines skipped]\n    6\t6\n    7\t7\n[7 lines in all]",
        ),
        (
            "head_tail",
            json!({"path": "long.txt", "head": 1, "tail": 1}),
            "    1\t1\n  ...\t[5 lines skipped]\n    7\t7\n[7 lines in all]",
        ),
        (
            "head_tail",
            json!({"path": "long.txt", "head": 5, "tail": 5}),
            "    1\t1\n    2\t2\n    3\t3\n    4\t4\n    5\t5\n    6\t6\n    7\t7\n[7 lines in all]",
        ),
        (
            "count",
            json!({"paths": ["notes.txt", "src"]}),
            "lines\twords\tbytes\tfile\n2\t3\t14\tnotes.txt\n1\t2\t5\tsrc/deep/er/x_test.rs\n2\t6\t22\tsrc/lib.rs\n1\t3\t13\tsrc/main.rs\n6\t14\t54\ttotal (4 files)",
        ),
        (
            "diff_files",
            json!({"a": "v1.txt", "b": "v2.txt"}),
            "--- v1.txt\n+++ v2.txt\n@@ -1,3 +1,4 @@\n a\n-b\n+B\n c\n+d\n",
        ),
        (
            "diff_files",
            json!({"a": "v1.txt", "b": "v1.txt"}),
            "v1.txt and v1.txt have the same lines",
        ),
        (
            "diff_files",
            json!({"a": "v1.txt", "c": "v1.txt"}),
            "ERR invalid argument `c` for diff_files: unknown field `c`…",
        ),
    ] {
        run(&f, name, args, expected).await;
    }
}

/// A step: tool, arguments, output, and files after (`None` for absent).
type Step = (
    &'static str,
    Value,
    &'static str,
    &'static [(&'static str, Option<&'static str>)],
);

#[tokio::test]
async fn writing_tools_on_disk() {
    let f = fixture(&[
        "ws/a.txt => one\\ntwo\\nthree\\n",
        "ws/crlf.txt => x\\r\\ny\\r\\n",
        "ws/src/",
    ]);
    // (tool, args, output, files after as `path=content` or `path=!` for absent)
    let steps: &[Step] = &[
        (
            "write_file",
            json!({"path": "a.txt", "content": "new\n"}),
            "wrote a.txt (1 line)",
            &[("a.txt", Some("new\n"))],
        ),
        (
            "write_file",
            json!({"path": "d/n.txt", "content": "x\ny"}),
            "created d/n.txt (2 lines)",
            &[("d/n.txt", Some("x\ny"))],
        ),
        (
            "write_file",
            json!({"path": "src", "content": "x"}),
            "ERR $BASE/ws/src is a directory, not a file",
            &[],
        ),
        (
            "create_file",
            json!({"path": "c.txt", "content": "c\n"}),
            "created c.txt (1 line)",
            &[("c.txt", Some("c\n"))],
        ),
        (
            "create_file",
            json!({"path": "c.txt", "content": "again"}),
            "ERR $BASE/ws/c.txt already exists",
            &[("c.txt", Some("c\n"))],
        ),
        (
            "multi_edit",
            json!({"path": "a.txt", "edits": [{"old_string": "new", "new_string": "newer"}, {"old_string": "newer\n", "new_string": "newer\nlast\n"}]}),
            "edited a.txt: 2 edits applied, 2 occurrences replaced",
            &[("a.txt", Some("newer\nlast\n"))],
        ),
        (
            "multi_edit",
            json!({"path": "a.txt", "edits": [{"old_string": "newer", "new_string": "X"}, {"old_string": "absent", "new_string": "Y"}]}),
            "ERR edit 2 of 2 failed, so no edit was applied: old_string was not found in a.txt…",
            &[("a.txt", Some("newer\nlast\n"))],
        ),
        (
            "multi_edit",
            json!({"path": "a.txt", "edits": [{"old_string": "a", "new_text": "b"}]}),
            "ERR invalid argument `edits[0].new_text` for multi_edit: unknown field `new_text`…",
            &[],
        ),
        (
            "insert_at_line",
            json!({"path": "a.txt", "line": 2, "text": "mid"}),
            "inserted 1 line at line 2 of a.txt",
            &[("a.txt", Some("newer\nmid\nlast\n"))],
        ),
        (
            "insert_at_line",
            json!({"path": "a.txt", "line": 4, "text": "end\n"}),
            "inserted 1 line at line 4 of a.txt",
            &[("a.txt", Some("newer\nmid\nlast\nend\n"))],
        ),
        (
            "insert_at_line",
            json!({"path": "crlf.txt", "line": 1, "text": "w\nv"}),
            "inserted 2 lines at line 1 of crlf.txt",
            &[("crlf.txt", Some("w\r\nv\r\nx\r\ny\r\n"))],
        ),
        (
            "insert_at_line",
            json!({"path": "a.txt", "line": 9, "text": "x"}),
            "ERR a.txt: line 9 is out of range: the file has 4 lines, so use 1 to 5",
            &[],
        ),
        (
            "copy_file",
            json!({"from": "c.txt", "to": "src/c2.txt"}),
            "copied c.txt to src/c2.txt (2 bytes)",
            &[("c.txt", Some("c\n")), ("src/c2.txt", Some("c\n"))],
        ),
        (
            "copy_file",
            json!({"from": "c.txt", "to": "a.txt"}),
            "ERR $BASE/ws/a.txt already exists",
            &[("a.txt", Some("newer\nmid\nlast\nend\n"))],
        ),
        (
            "move_file",
            json!({"from": "src/c2.txt", "to": "moved/c3.txt"}),
            "moved src/c2.txt to moved/c3.txt",
            &[("src/c2.txt", None), ("moved/c3.txt", Some("c\n"))],
        ),
        (
            "move_file",
            json!({"from": "moved", "to": "moved2"}),
            "moved moved to moved2",
            &[("moved2/c3.txt", Some("c\n"))],
        ),
        (
            "move_file",
            json!({"from": "c.txt", "to": "a.txt"}),
            "ERR $BASE/ws/a.txt already exists",
            &[("c.txt", Some("c\n"))],
        ),
        (
            "delete_file",
            json!({"path": "c.txt"}),
            "deleted c.txt",
            &[("c.txt", None)],
        ),
        (
            "delete_file",
            json!({"path": "src"}),
            "ERR $BASE/ws/src is a directory, not a file",
            &[],
        ),
        (
            "delete_file",
            json!({"path": "c.txt"}),
            "ERR $BASE/ws/c.txt does not exist",
            &[],
        ),
        (
            "make_directory",
            json!({"path": "m/n"}),
            "created directory m/n",
            &[],
        ),
        (
            "make_directory",
            json!({"path": "a.txt"}),
            "ERR $BASE/ws/a.txt is not a directory",
            &[],
        ),
    ];
    for (name, args, expected, after) in steps {
        let out = call(&f, name, args.clone()).await;
        check(&out, &f, expected);
        // Every resolved write reports its edits, applied or not (argument errors have none).
        if !expected.starts_with("ERR invalid") && *name != "make_directory" {
            let edits = out.edits.expect("edit report");
            assert!(
                edits.iter().all(|e| e.applied != out.is_error),
                "{name} {args}"
            );
        }
        for (path, content) in *after {
            assert_eq!(read(&f, path).as_deref(), *content, "{name} {args}: {path}");
        }
    }
    assert!(f.root().join("m/n").is_dir());
}

const PATCH: &str = "--- a/a.txt
+++ b/a.txt
@@ -1,3 +1,3 @@
 one
-two
+TWO
 three
@@ -5,2 +5,3 @@
 five
 six
+seven
--- /dev/null
+++ b/new/n.txt
@@ -0,0 +1,2 @@
+hello
+world
--- a/gone.txt
+++ /dev/null
@@ -1 +0,0 @@
-bye
";

#[tokio::test]
async fn apply_patch_all_or_nothing() {
    let spec = [
        "ws/a.txt => one\\ntwo\\nthree\\nfour\\nfive\\nsix\\n",
        "ws/b.txt => b\\n",
        "ws/gone.txt => bye\\n",
    ];
    // A bad hunk in the last file: nothing is changed, and the error names the hunk.
    let f = fixture(&spec);
    let bad = format!("{PATCH}--- a/b.txt\n+++ b/b.txt\n@@ -1,1 +1,1 @@\n-not b\n+c\n");
    run(&f, "apply_patch", json!({"patch": bad}), "ERR hunk 1 of b.txt (`@@ -1,1 +1,1 @@`) does not apply: its 1 old lines (starting `not b`) were not found in the file; read the file again and make the patch from its current text\nNo file was changed.").await;
    assert_eq!(
        read(&f, "a.txt").as_deref(),
        Some("one\ntwo\nthree\nfour\nfive\nsix\n")
    );
    assert_eq!(read(&f, "gone.txt").as_deref(), Some("bye\n"));
    assert!(read(&f, "new/n.txt").is_none());
    // Malformed patches and creating over an existing file are refused up front too.
    for (patch, expected) in [
        (
            "nothing here",
            "ERR the patch could not be read: no file headers…",
        ),
        (
            "--- a/b.txt\n+++ b/b.txt\n@@ -1,2 +1,1 @@\n b\n",
            "ERR the patch could not be read: hunk `@@ -1,2 +1,1 @@` ends early…",
        ),
        (
            "--- /dev/null\n+++ b/b.txt\n@@ -0,0 +1 @@\n+x\n",
            "ERR the patch creates b.txt, which already exists\nNo file was changed.",
        ),
        (
            "--- a/../outside/s\n+++ b/../outside/s\n@@ -1 +1 @@\n-s\n+p\n",
            "ERR refused path `../outside/s`…",
        ),
    ] {
        run(&f, "apply_patch", json!({"patch": patch}), expected).await;
    }
    assert_eq!(read(&f, "b.txt").as_deref(), Some("b\n"));

    // The good patch: an update (hunks shifted by one line), a creation, a deletion.
    let shifted = PATCH.replace("@@ -5,2 +5,3 @@", "@@ -4,2 +4,3 @@");
    let out = call(&f, "apply_patch", json!({"patch": shifted})).await;
    check(
        &out,
        &f,
        "applied the patch to 3 files:\npatched a.txt\ncreated new/n.txt\ndeleted gone.txt",
    );
    assert_eq!(out.edits.unwrap().len(), 3);
    assert_eq!(
        read(&f, "a.txt").as_deref(),
        Some("one\nTWO\nthree\nfour\nfive\nsix\nseven\n")
    );
    assert_eq!(read(&f, "new/n.txt").as_deref(), Some("hello\nworld\n"));
    assert!(read(&f, "gone.txt").is_none());
}

#[tokio::test]
async fn replace_in_files_previews_then_writes() {
    let f = fixture(&[
        "ws/.gitignore => ignored.rs\\n",
        "ws/src/a.rs => let foo = foo();\\n",
        "ws/src/b.rs => // foo\\nbar\\n",
        "ws/src/c.txt => foo\\n",
        "ws/ignored.rs => foo\\n",
    ]);
    let preview = json!({"pattern": "foo", "replacement": "qux", "glob": "*.rs"});
    let out = call(&f, "replace_in_files", preview.clone()).await;
    check(
        &out,
        &f,
        "preview, nothing written: 3 replacements in 2 files\n--- src/a.rs\n+++ src/a.rs\n@@ -1,1 +1,1 @@\n-let foo = foo();\n+let qux = qux();\n--- src/b.rs\n+++ src/b.rs\n@@ -1,2 +1,2 @@\n-// foo\n+// qux\n bar\nCall again with preview: false to write these changes.",
    );
    assert!(out.edits.is_none());
    assert_eq!(read(&f, "src/a.rs").as_deref(), Some("let foo = foo();\n"));
    assert_eq!(read(&f, "src/b.rs").as_deref(), Some("// foo\nbar\n"));
    // Regex with groups; a literal `$1` stays literal without `regex`.
    run(
        &f,
        "replace_in_files",
        json!({"pattern": "(f)oo\\(", "replacement": "${1}n(", "glob": "*.rs", "regex": true}),
        "preview, nothing written: 1 replacement in 1 file\n…",
    )
    .await;
    run(
        &f,
        "replace_in_files",
        json!({"pattern": "(", "replacement": "$1", "glob": "*.rs", "regex": true}),
        "ERR invalid argument `pattern` for replace_in_files: …",
    )
    .await;
    run(
        &f,
        "replace_in_files",
        json!({"pattern": "nope", "replacement": "x", "glob": "*.rs"}),
        "`nope` was not found in files matching `*.rs`; nothing to change",
    )
    .await;

    let mut write = preview;
    write["preview"] = json!(false);
    let out = call(&f, "replace_in_files", write).await;
    check(
        &out,
        &f,
        "replaced: 3 replacements in 2 files\nsrc/a.rs: 2 replacements\nsrc/b.rs: 1 replacement",
    );
    assert_eq!(out.edits.unwrap().len(), 2);
    assert_eq!(read(&f, "src/a.rs").as_deref(), Some("let qux = qux();\n"));
    assert_eq!(read(&f, "src/b.rs").as_deref(), Some("// qux\nbar\n"));
    assert_eq!(read(&f, "src/c.txt").as_deref(), Some("foo\n"));
    assert_eq!(read(&f, "ignored.rs").as_deref(), Some("foo\n"));
}

#[tokio::test]
async fn writes_to_open_documents_go_through_the_editor() {
    let tmp = tempfile::tempdir().unwrap();
    let base = fs::canonicalize(tmp.path()).unwrap();
    let root = base.join("ws");
    fs::create_dir(&root).unwrap();
    fs::write(root.join("open.rs"), "on disk\n").unwrap();
    let unsaved = "fn a() { foo }\n";
    let editor = Arc::new(FakeEditor {
        docs: vec![(
            root.join("open.rs"),
            OpenDocument {
                text: unsaved.to_owned(),
                version: 7,
            },
        )],
        answer: Ok(()),
        applied: Mutex::new(Vec::new()),
    });
    let ws = Workspace::new(vec![root.clone()])
        .unwrap()
        .with_overlay(editor.clone());
    let f = Fixture {
        _tmp: tmp,
        base,
        tools: file_tools(Arc::new(ws)),
    };
    let whole = |text: &str| ByteEdit {
        start: 0,
        end: unsaved.len(),
        new_text: text.to_owned(),
    };
    let cases: Vec<(&str, Value, &str, ByteEdit)> = vec![
        (
            "write_file",
            json!({"path": "open.rs", "content": "new\n"}),
            "wrote open.rs (1 line), in the editor (not saved yet)",
            whole("new\n"),
        ),
        (
            "multi_edit",
            json!({"path": "open.rs", "edits": [{"old_string": "a()", "new_string": "b()"}, {"old_string": "foo", "new_string": "bar"}]}),
            "edited open.rs: 2 edits applied, 2 occurrences replaced, in the editor (not saved yet)",
            whole("fn b() { bar }\n"),
        ),
        (
            "insert_at_line",
            json!({"path": "open.rs", "line": 1, "text": "use x;"}),
            "inserted 1 line at line 1 of open.rs, in the editor (not saved yet)",
            whole("use x;\nfn a() { foo }\n"),
        ),
        (
            "apply_patch",
            json!({"patch": "--- a/open.rs\n+++ b/open.rs\n@@ -1 +1 @@\n-fn a() { foo }\n+fn a() { baz }\n"}),
            "applied the patch to 1 file:\npatched in the editor (not saved yet) open.rs",
            whole("fn a() { baz }\n"),
        ),
        (
            "replace_in_files",
            json!({"pattern": "foo", "replacement": "zz", "glob": "*.rs", "preview": false}),
            "replaced: 1 replacement in 1 file\nopen.rs: 1 replacement, in the editor (not saved yet)",
            whole("fn a() { zz }\n"),
        ),
    ];
    for (name, args, expected, edit) in cases {
        let out = call(&f, name, args).await;
        check(&out, &f, expected);
        assert!(out.edits.unwrap().iter().all(|e| e.applied));
        let applied = editor.applied.lock().unwrap().pop().unwrap();
        assert_eq!(applied, (root.join("open.rs"), 7, vec![edit]), "{name}");
        // The file on disk is left to the editor.
        assert_eq!(
            fs::read_to_string(root.join("open.rs")).unwrap(),
            "on disk\n"
        );
    }
    // Reads see the unsaved text; create_file refuses an open document.
    run(
        &f,
        "head_tail",
        json!({"path": "open.rs"}),
        "    1\tfn a() { foo }\n[1 lines in all]",
    )
    .await;
    run(
        &f,
        "stat",
        json!({"path": "open.rs"}),
        "open.rs: file, 8 bytes, mode…",
    )
    .await;
    run(
        &f,
        "create_file",
        json!({"path": "open.rs", "content": "x"}),
        "ERR open.rs is open in the editor; use write_file or edit_file",
    )
    .await;
}

#[tokio::test]
async fn write_denials_leave_outside_untouched() {
    let f = fixture(&[
        "ws/a.txt => a",
        "outside/secret => s",
        "ws/out -> $BASE/outside",
    ]);
    let abs = format!("{}/outside/secret", f.base.display());
    let abs_new = format!("{}/outside/new.txt", f.base.display());
    let cases: Vec<(&str, Value)> = vec![
        (
            "write_file",
            json!({"path": "../outside/secret", "content": "p"}),
        ),
        ("write_file", json!({"path": "out/secret", "content": "p"})),
        ("write_file", json!({"path": "out/new.txt", "content": "p"})),
        ("write_file", json!({"path": abs, "content": "p"})),
        (
            "create_file",
            json!({"path": "../outside/new.txt", "content": "p"}),
        ),
        (
            "create_file",
            json!({"path": "out/new.txt", "content": "p"}),
        ),
        ("create_file", json!({"path": abs_new, "content": "p"})),
        (
            "multi_edit",
            json!({"path": "out/secret", "edits": [{"old_string": "s", "new_string": "p"}]}),
        ),
        (
            "insert_at_line",
            json!({"path": "../outside/secret", "line": 1, "text": "p"}),
        ),
        ("delete_file", json!({"path": "out/secret"})),
        ("delete_file", json!({"path": "../outside/secret"})),
        (
            "move_file",
            json!({"from": "out/secret", "to": "stolen.txt"}),
        ),
        ("move_file", json!({"from": "a.txt", "to": "out/new.txt"})),
        (
            "move_file",
            json!({"from": "a.txt", "to": "../outside/new.txt"}),
        ),
        (
            "copy_file",
            json!({"from": "out/secret", "to": "stolen.txt"}),
        ),
        ("copy_file", json!({"from": "a.txt", "to": "out/new.txt"})),
        ("copy_file", json!({"from": "a.txt", "to": abs_new})),
        ("make_directory", json!({"path": "out/newdir"})),
        ("make_directory", json!({"path": "../outside/newdir"})),
        (
            "apply_patch",
            json!({"patch": "--- a/out/secret\n+++ b/out/secret\n@@ -1 +1 @@\n-s\n+p\n"}),
        ),
        (
            "apply_patch",
            json!({"patch": "--- /dev/null\n+++ b/../outside/new.txt\n@@ -0,0 +1 @@\n+p\n"}),
        ),
        (
            "replace_in_files",
            json!({"pattern": "s", "replacement": "p", "glob": "*", "path": "out", "preview": false}),
        ),
        (
            "replace_in_files",
            json!({"pattern": "s", "replacement": "p", "glob": "*", "path": "..", "preview": false}),
        ),
        ("read_many", json!({"paths": ["out/secret"]})),
        ("head_tail", json!({"path": "../outside/secret"})),
        ("diff_files", json!({"a": "a.txt", "b": "out/secret"})),
        ("count", json!({"paths": ["out"]})),
        ("tree", json!({"path": ".."})),
        ("glob", json!({"pattern": "*", "path": "out"})),
        ("find_files", json!({"name": "secret", "path": "out"})),
        ("stat", json!({"path": "out/secret"})),
    ];
    for (name, args) in cases {
        let out = call(&f, name, args.clone()).await;
        assert!(out.is_error, "{name} {args}: {}", out.text);
        assert!(
            out.text.contains("refused path") && !out.text.contains("s\n"),
            "{name} {args}: {}",
            out.text
        );
        // A refused path has no workspace URI: no edit report.
        assert!(out.edits.is_none(), "{name} {args}");
        assert_eq!(
            fs::read_to_string(f.base.join("outside/secret")).unwrap(),
            "s",
            "{name}"
        );
        assert!(!f.base.join("outside/new.txt").exists(), "{name}");
        assert!(!f.base.join("outside/newdir").exists(), "{name}");
        assert!(!f.root().join("stolen.txt").exists(), "{name}");
        assert_eq!(read(&f, "a.txt").as_deref(), Some("a"), "{name}");
    }
}
