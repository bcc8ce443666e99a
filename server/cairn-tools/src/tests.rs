//! Data-driven tests of the file tools through the [`ToolHost`] interface, on temp dirs.
#![allow(clippy::disallowed_methods)] // Tests build fixtures on disk directly.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::fs;
use std::os::unix::fs::{PermissionsExt, symlink};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::Duration;

use cairn_agent::tools::{CallContext, EditReport, Effect, ToolHost, edits_of};
use cairn_workspace::{ByteEdit, DocumentOverlay, OpenDocument, OverlayError};
use futures::future::BoxFuture;
use serde_json::{Value, json};

use super::*;

struct Fixture {
    _tmp: tempfile::TempDir,
    base: PathBuf,
    tools: ToolSet<Files>,
}

impl Fixture {
    fn root(&self) -> PathBuf {
        self.base.join("ws")
    }
}

/// `path => content` files, `path/` directories and `path -> target` symlinks, under a temp
/// dir whose `ws` is the root.
fn fixture(spec: &[&str]) -> Fixture {
    let tmp = tempfile::tempdir().unwrap();
    let base = fs::canonicalize(tmp.path()).unwrap();
    fs::create_dir(base.join("ws")).unwrap();
    for line in spec {
        if let Some((link, target)) = line.split_once(" -> ") {
            let target = target.replace("$BASE", base.to_str().unwrap());
            symlink(target, base.join(link)).unwrap();
        } else if let Some((file, content)) = line.split_once(" => ") {
            let file = base.join(file);
            fs::create_dir_all(file.parent().unwrap()).unwrap();
            fs::write(file, content.replace("\\n", "\n").replace("\\r", "\r")).unwrap();
        } else {
            fs::create_dir_all(base.join(line)).unwrap();
        }
    }
    let ws = Workspace::new(vec![base.join("ws")]).unwrap();
    Fixture {
        _tmp: tmp,
        base,
        tools: file_tools(Arc::new(ws)),
    }
}

fn ctx() -> CallContext {
    CallContext {
        session_id: String::new(),
        run_id: "run".to_owned(),
        call_id: "call".to_owned(),
        cancel: tokio_util::sync::CancellationToken::new(),
    }
}

struct Outcome {
    is_error: bool,
    text: String,
    edits: Option<Vec<EditReport>>,
}

async fn call(f: &Fixture, name: &str, args: Value) -> Outcome {
    let Value::Object(args) = args else {
        panic!("arguments must be an object")
    };
    let fut = f.tools.call(name, args, ctx());
    // A blocked tool (a FIFO read, say) fails the test instead of hanging it.
    let result = tokio::time::timeout(Duration::from_secs(10), fut)
        .await
        .expect("tool hung");
    let text = result
        .content
        .iter()
        .filter_map(|c| c.as_text().map(|t| t.text.clone()))
        .collect::<Vec<_>>()
        .join("\n");
    let edits = Some(edits_of(&result)).filter(|e| !e.is_empty());
    Outcome {
        is_error: result.is_error == Some(true),
        text,
        edits,
    }
}

/// `expected` is the whole output; prefix it with `ERR ` for an error result, or end it with
/// `…` to compare only the start.
#[track_caller]
fn check(outcome: &Outcome, f: &Fixture, expected: &str) {
    let got = outcome.text.replace(f.base.to_str().unwrap(), "$BASE");
    let got = if outcome.is_error {
        format!("ERR {got}")
    } else {
        got
    };
    match expected.strip_suffix('…') {
        Some(prefix) => assert!(
            got.starts_with(prefix),
            "expected prefix\n{prefix}\ngot\n{got}"
        ),
        None => assert_eq!(got, expected),
    }
}

async fn run(f: &Fixture, name: &str, args: Value, expected: &str) {
    let outcome = call(f, name, args.clone()).await;
    let got = outcome.text.replace(f.base.to_str().unwrap(), "$BASE");
    let got = if outcome.is_error {
        format!("ERR {got}")
    } else {
        got
    };
    match expected.strip_suffix('…') {
        Some(prefix) => {
            assert!(
                got.starts_with(prefix),
                "{name} {args}\nexpected prefix\n{prefix}\ngot\n{got}"
            )
        }
        None => assert_eq!(got, expected, "{name} {args}"),
    }
}

/// Every file and directory under `dir`, with the files' bytes.
fn snapshot(dir: &Path) -> Vec<(PathBuf, Option<Vec<u8>>)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in fs::read_dir(&d).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path.clone());
                out.push((path, None));
            } else {
                let bytes = fs::read(&path).unwrap();
                out.push((path, Some(bytes)));
            }
        }
    }
    out.sort();
    out
}

#[test]
fn definitions() {
    let f = fixture(&[]);
    let tools = f.tools.list();
    let names: Vec<_> = tools.iter().map(|t| t.tool.name.to_string()).collect();
    assert_eq!(
        names,
        FILE_TOOLS.iter().map(Entry::name).collect::<Vec<_>>()
    );
    for info in &tools {
        let schema = &info.tool.input_schema;
        assert_eq!(
            schema.get("additionalProperties"),
            Some(&Value::Bool(false)),
            "{names:?}"
        );
        for (param, prop) in schema["properties"].as_object().unwrap() {
            assert!(
                prop.get("description").is_some(),
                "{} {param}",
                info.tool.name
            );
        }
        assert_eq!(info.category, "file");
        let annotations = info.tool.annotations.as_ref().unwrap();
        let write = [
            "edit_file",
            "write_file",
            "create_file",
            "multi_edit",
            "apply_patch",
            "insert_at_line",
            "delete_file",
            "move_file",
            "copy_file",
            "make_directory",
            "replace_in_files",
        ]
        .contains(&&*info.tool.name);
        assert_eq!(annotations.read_only_hint, Some(!write));
        assert_eq!(annotations.destructive_hint, Some(write));
        assert_eq!(info.agent_only, write);
        assert_eq!(
            info.effect,
            if write { Effect::Write } else { Effect::Read }
        );
        let description = info.tool.description.as_deref().unwrap();
        assert!(
            !description.contains('\n') && description.len() > 40,
            "{description}"
        );
    }
}

#[tokio::test]
async fn argument_errors_name_the_field() {
    let f = fixture(&["ws/a.txt => a"]);
    for (name, args, expected) in [
        (
            "read_file",
            json!({}),
            "ERR invalid arguments for read_file: missing field `path`",
        ),
        (
            "read_file",
            json!({"path": "a.txt", "lines": 3}),
            "ERR invalid argument `lines` for read_file: unknown field `lines`, expected one of `path`, `offset`, `limit`",
        ),
        (
            "read_file",
            json!({"path": "a.txt", "offset": "x"}),
            "ERR invalid argument `offset` for read_file: invalid type…",
        ),
        (
            "read_file",
            json!({"path": "a.txt", "offset": -1}),
            "ERR invalid argument `offset` for read_file…",
        ),
        (
            "read_file",
            json!({"path": "a.txt", "offset": 0}),
            "ERR invalid argument `offset` for read_file: lines are numbered from 1",
        ),
        (
            "read_file",
            json!({"path": 7}),
            "ERR invalid argument `path` for read_file…",
        ),
        (
            "grep",
            json!({"pattern": "("}),
            "ERR invalid argument `pattern` for grep: …",
        ),
        (
            "grep",
            json!({"pattern": "a", "context": 99}),
            "ERR invalid argument `context` for grep: at most 10 lines",
        ),
        (
            "grep",
            json!({"pattern": "a", "max_results": 0}),
            "ERR invalid argument `max_results` for grep…",
        ),
        (
            "grep",
            json!({"pattern": "a", "case_insensitive": "yes"}),
            "ERR invalid argument `case_insensitive` for grep…",
        ),
        (
            "edit_file",
            json!({"path": "a.txt", "old_string": "a"}),
            "ERR invalid arguments for edit_file: missing field `new_string`",
        ),
        (
            "list_directory",
            json!({"recursive": true}),
            "ERR invalid argument `recursive` for list_directory: unknown field `recursive`…",
        ),
        (
            "nuke_file",
            json!({}),
            "ERR unknown tool `nuke_file`; the tools here are read_file, list_directory, grep, edit_file, read_many…",
        ),
    ] {
        run(&f, name, args, expected).await;
    }
}

#[tokio::test]
async fn scope_denials_say_what_and_why() {
    let f = fixture(&[
        "ws/a.txt => a",
        "outside/secret => s",
        "ws/out -> $BASE/outside",
        "ws_evil/x => x",
    ]);
    for (name, args, expected) in [
        (
            "read_file",
            json!({"path": "../outside/secret"}),
            "ERR refused path `../outside/secret`: it resolves to $BASE/outside/secret, which is outside the workspace",
        ),
        (
            "read_file",
            json!({"path": "/etc/passwd"}),
            "ERR refused path `/etc/passwd`: it resolves to /etc/passwd, which is outside the workspace",
        ),
        (
            "read_file",
            json!({"path": "out/secret"}),
            "ERR refused path `out/secret`: a symlink on it leads to $BASE/outside/secret, outside the workspace",
        ),
        (
            "read_file",
            json!({"path": "~/.ssh/id_rsa"}),
            "ERR refused path `~/.ssh/id_rsa`: `~` is not expanded…",
        ),
        (
            "list_directory",
            json!({"path": "out"}),
            "ERR refused path `out`: a symlink on it…",
        ),
        (
            "list_directory",
            json!({"path": format!("{}/ws_evil", f.base.display())}),
            "ERR refused path `$BASE/ws_evil`: it resolves to $BASE/ws_evil, which is outside the workspace",
        ),
        (
            "grep",
            json!({"pattern": "s", "path": "out"}),
            "ERR refused path `out`: a symlink on it…",
        ),
        (
            "grep",
            json!({"pattern": "s", "path": ".."}),
            "ERR refused path `..`…",
        ),
        (
            "edit_file",
            json!({"path": "out/secret", "old_string": "s", "new_string": "pwned"}),
            "ERR refused path `out/secret`: a symlink on it…",
        ),
        (
            "edit_file",
            json!({"path": "out/new.txt", "old_string": "", "new_string": "pwned"}),
            "ERR refused path `out/new.txt`: a symlink on it…",
        ),
        (
            "edit_file",
            json!({"path": "../ws_evil/x", "old_string": "x", "new_string": "pwned"}),
            "ERR refused path `../ws_evil/x`…",
        ),
    ] {
        run(&f, name, args, expected).await;
    }
    // The denied edits changed nothing outside, and carry no edit report (no workspace URI).
    assert_eq!(
        fs::read_to_string(f.base.join("outside/secret")).unwrap(),
        "s"
    );
    assert_eq!(fs::read_to_string(f.base.join("ws_evil/x")).unwrap(), "x");
    assert!(!f.base.join("outside/new.txt").exists());
    let denied = call(
        &f,
        "edit_file",
        json!({"path": "out/secret", "old_string": "s", "new_string": "p"}),
    )
    .await;
    assert!(denied.is_error && denied.edits.is_none());
}

#[test]
fn read_render_table() {
    #[track_caller]
    fn check(text: &str, offset: usize, limit: usize, expected: &str) {
        let got = match numbered::render(text, offset, limit) {
            Ok(out) => out,
            Err(e) => format!("ERR {e}"),
        };
        assert_eq!(got, expected);
    }
    check("a\nb\nc\n", 1, 10, "    1\ta\n    2\tb\n    3\tc\n");
    check("a\r\nb\r\n", 1, 10, "    1\ta\n    2\tb\n");
    check(
        "a\nb\nc",
        2,
        1,
        "    2\tb\n[showed lines 2-2 of 3; call read_file with offset=3 to read on]",
    );
    check("a\nb\nc", 3, 5, "    3\tc\n");
    check(
        "a\nb\nc",
        4,
        5,
        "ERR offset 4 is past the end of the file, which has 3 lines",
    );
    check("", 1, 5, "(empty file)");
    let long = "x".repeat(2500);
    let got = numbered::render(&long, 1, 1).unwrap();
    assert!(
        got.ends_with("… [line cut]\n\n[lines longer than 2000 characters were cut]"),
        "{got}"
    );
}

#[tokio::test]
async fn read_file_table() {
    let f = fixture(&["ws/a.txt => one\\ntwo\\nthree\\n", "ws/d/", "ws/empty => "]);
    let big: String = (1..=5000)
        .map(|i| format!("line number {i} with some padding text\n"))
        .collect();
    fs::write(f.root().join("big.txt"), &big).unwrap();
    fs::write(f.root().join("blob.bin"), b"\x7fELF\0\0\x01").unwrap();
    let status = std::process::Command::new("mkfifo")
        .arg(f.root().join("pipe"))
        .status()
        .unwrap();
    assert!(status.success());
    for (args, expected) in [
        (
            json!({"path": "a.txt"}),
            "    1\tone\n    2\ttwo\n    3\tthree\n",
        ),
        (
            json!({"path": "a.txt", "offset": 2}),
            "    2\ttwo\n    3\tthree\n",
        ),
        (
            json!({"path": "a.txt", "offset": 2, "limit": 1}),
            "    2\ttwo\n[showed lines 2-2 of 3; call read_file with offset=3 to read on]",
        ),
        (
            json!({"path": "./d/../a.txt", "limit": 1}),
            "    1\tone\n[showed lines 1-1 of 3; call read_file with offset=2 to read on]",
        ),
        (json!({"path": "empty"}), "(empty file)"),
        (
            json!({"path": "d"}),
            "ERR $BASE/ws/d is a directory, not a file",
        ),
        (
            json!({"path": "missing.txt"}),
            "ERR $BASE/ws/missing.txt does not exist",
        ),
        (
            json!({"path": "blob.bin"}),
            "ERR $BASE/ws/blob.bin looks like a binary file; it was not read",
        ),
        // Must come back at once: the FIFO has no writer.
        (
            json!({"path": "pipe"}),
            "ERR refused $BASE/ws/pipe: it is a FIFO, not a regular file",
        ),
    ] {
        run(&f, "read_file", args, expected).await;
    }
    // The byte cap stops well before the 2000-line default and says how to go on.
    let out = call(&f, "read_file", json!({"path": "big.txt"})).await;
    assert!(!out.is_error);
    assert!(
        out.text.len() <= util::MAX_OUTPUT_BYTES + 200,
        "{}",
        out.text.len()
    );
    let note = out.text.lines().last().unwrap();
    let last_shown: usize = out
        .text
        .lines()
        .rev()
        .nth(1)
        .unwrap()
        .trim()
        .split('\t')
        .next()
        .unwrap()
        .parse()
        .unwrap();
    assert_eq!(
        note,
        format!(
            "[output capped at 50000 bytes; showed lines 1-{last_shown} of 5000; call read_file with offset={} to read on]",
            last_shown + 1
        )
    );
    let next = call(
        &f,
        "read_file",
        json!({"path": "big.txt", "offset": last_shown + 1, "limit": 1}),
    )
    .await;
    assert!(
        next.text.starts_with(&format!(
            "{:>5}\tline number {} ",
            last_shown + 1,
            last_shown + 1
        )),
        "{}",
        next.text
    );
}

#[tokio::test]
async fn list_directory_table() {
    let f = fixture(&[
        "ws/b.txt => b",
        "ws/a/",
        "ws/a/inner.rs => x",
        "ws/.env => s",
        "ws/link -> /etc",
        "ws/empty/",
    ]);
    for (args, expected) in [
        (
            json!({}),
            ". (5 entries; `/` marks a directory, `@` a symlink, which is not followed)\n.env\na/\nb.txt\nempty/\nlink@\n",
        ),
        (
            json!({"path": "a"}),
            "a (1 entries; `/` marks a directory, `@` a symlink, which is not followed)\ninner.rs\n",
        ),
        (json!({"path": "empty"}), "empty is an empty directory"),
        (
            json!({"path": "b.txt"}),
            "ERR $BASE/ws/b.txt is not a directory",
        ),
        (
            json!({"path": "link"}),
            "ERR refused path `link`: a symlink on it leads to /etc, outside the workspace",
        ),
    ] {
        run(&f, "list_directory", args, expected).await;
    }
}

#[tokio::test]
async fn grep_table() {
    // Not a git repository: .gitignore applies all the same (see cairn-workspace's walk).
    let f = fixture(&[
        "ws/.gitignore => target/\\n",
        "ws/src/main.rs => fn main() {\\n    let needle = 1;\\n    println!(\"{needle}\");\\n}\\n",
        "ws/src/lib.rs => // Needle in a comment\\n",
        "ws/target/debug.rs => let needle = 2;\\n",
        "ws/notes.md => a\\nb\\nneedle\\nc\\nd\\ne\\nf\\nneedle\\n",
        "ws/out -> $BASE/outside",
        "outside/x.rs => needle outside\\n",
    ]);
    fs::write(f.root().join("bin.dat"), b"needle\0binary").unwrap();
    for (args, expected) in [
        (
            json!({"pattern": "needle"}),
            "notes.md:3:needle\nnotes.md:8:needle\nsrc/main.rs:2:    let needle = 1;\nsrc/main.rs:3:    println!(\"{needle}\");\n[1 files skipped (binary, too large, not UTF-8 or unreadable)]\n[4 matching lines in 2 files]",
        ),
        (
            json!({"pattern": "needle", "glob": "*.rs", "case_insensitive": true}),
            "src/lib.rs:1:// Needle in a comment\nsrc/main.rs:2:    let needle = 1;\nsrc/main.rs:3:    println!(\"{needle}\");\n[3 matching lines in 2 files]",
        ),
        (
            json!({"pattern": "needle", "path": "notes.md", "context": 1}),
            "notes.md-2-b\nnotes.md:3:needle\nnotes.md-4-c\n--\nnotes.md-7-f\nnotes.md:8:needle\n[2 matching lines in 1 files]",
        ),
        (
            json!({"pattern": "needle", "path": "notes.md", "context": 3}),
            "notes.md-1-a\nnotes.md-2-b\nnotes.md:3:needle\nnotes.md-4-c\nnotes.md-5-d\nnotes.md-6-e\nnotes.md-7-f\nnotes.md:8:needle\n[2 matching lines in 1 files]",
        ),
        (
            json!({"pattern": "needle", "max_results": 2}),
            "notes.md:3:needle\nnotes.md:8:needle\n[stopped at 2 matches; narrow the pattern, path or glob, or raise max_results (at most 1000)]\n[1 files skipped (binary, too large, not UTF-8 or unreadable)]\n[2 matching lines in 1 files]",
        ),
        (
            json!({"pattern": "needle", "path": "target/debug.rs"}),
            "target/debug.rs:1:let needle = 2;\n[1 matching lines in 1 files]",
        ),
        (
            json!({"pattern": "haystack", "path": "src"}),
            "no matches for `haystack` in src",
        ),
    ] {
        run(&f, "grep", args, expected).await;
    }
}

#[tokio::test]
async fn grep_stops_when_cancelled() {
    let f = fixture(&["ws/a.txt => needle"]);
    let Value::Object(args) = json!({"pattern": "needle"}) else {
        unreachable!()
    };
    let ctx = ctx();
    ctx.cancel.cancel();
    let result = f.tools.call("grep", args, ctx).await;
    let text = &result.content[0].as_text().unwrap().text;
    assert!(text.contains("cancelled"), "{text}");
}

#[track_caller]
fn check_plan(text: &str, old: &str, new: &str, all: bool, expected: Result<(&str, usize), &str>) {
    let got =
        edit::plan(text, "f", old, new, all).map(|p| (edit::apply(text, &p.edits), p.first_line));
    let got = got.map_err(|e| e.to_string());
    let got = got
        .as_ref()
        .map(|(t, l)| (t.as_str(), *l))
        .map_err(String::as_str);
    match (got, expected) {
        (Err(got), Err(prefix)) => assert!(got.starts_with(prefix), "{got}"),
        (got, expected) => assert_eq!(got, expected),
    }
}

#[test]
fn edit_plan_table() {
    check_plan("a b a", "b", "c", false, Ok(("a c a", 1)));
    check_plan("x\ny\nz", "z", "w", false, Ok(("x\ny\nw", 3)));
    check_plan(
        "a b a",
        "a",
        "c",
        false,
        Err("old_string matched 2 times in f; include more"),
    );
    check_plan("a b a", "a", "c", true, Ok(("c b c", 1)));
    check_plan(
        "a b a",
        "q",
        "c",
        false,
        Err("old_string was not found in f"),
    );
    check_plan(
        "a b a",
        "b",
        "b",
        false,
        Err("old_string and new_string are the same"),
    );
    check_plan("", "", "new", false, Ok(("new", 1)));
    check_plan(
        "x",
        "",
        "new",
        false,
        Err("old_string is empty but f already has content"),
    );
    // CRLF files keep CRLF: LF in old_string matches CRLF, LF in new_string becomes CRLF.
    check_plan(
        "a\r\nb\r\nc\r\n",
        "a\nb",
        "x\ny\nz",
        false,
        Ok(("x\r\ny\r\nz\r\nc\r\n", 1)),
    );
    check_plan("a\r\nb\r\n", "b", "b\nc", false, Ok(("a\r\nb\r\nc\r\n", 2)));
    check_plan("a\nb\n", "a\nb", "x\ny", false, Ok(("x\ny\n", 1)));
    check_plan("é=1\né=2", "é=2", "é=3", false, Ok(("é=1\né=3", 2)));
}

#[tokio::test]
async fn edit_file_on_disk() {
    let f = fixture(&[
        "ws/a.rs => let x = 1;\\nlet y = 1;\\n",
        "ws/crlf.txt => one\\r\\ntwo\\r\\n",
    ]);
    let a = f.root().join("a.rs");
    fs::set_permissions(&a, fs::Permissions::from_mode(0o640)).unwrap();
    let uri = |p: &str| format!("file://{}/ws/{p}", f.base.display());

    let out = call(
        &f,
        "edit_file",
        json!({"path": "a.rs", "old_string": "y = 1", "new_string": "y = 2"}),
    )
    .await;
    check(
        &out,
        &f,
        "edited a.rs: replaced 1 occurrence (first at line 2)",
    );
    assert_eq!(
        out.edits,
        Some(vec![EditReport {
            uri: uri("a.rs"),
            applied: true,
            reason: None
        }])
    );
    assert_eq!(fs::read_to_string(&a).unwrap(), "let x = 1;\nlet y = 2;\n");
    assert_eq!(
        fs::metadata(&a).unwrap().permissions().mode() & 0o7777,
        0o640
    );

    let out = call(
        &f,
        "edit_file",
        json!({"path": "a.rs", "old_string": "let", "new_string": "const"}),
    )
    .await;
    check(
        &out,
        &f,
        "ERR old_string matched 2 times in a.rs; include more surrounding lines so that it matches exactly once, or set replace_all to true to replace every occurrence",
    );
    let report = &out.edits.as_ref().unwrap()[0];
    assert!(!report.applied && report.reason.as_deref() == Some(out.text.as_str()));
    let out = call(
        &f,
        "edit_file",
        json!({"path": "a.rs", "old_string": "z = 1", "new_string": "z = 2"}),
    )
    .await;
    check(
        &out,
        &f,
        "ERR old_string was not found in a.rs; it must match the file exactly…",
    );
    assert!(!out.edits.unwrap()[0].applied);
    assert_eq!(fs::read_to_string(&a).unwrap(), "let x = 1;\nlet y = 2;\n");

    let out = call(
        &f,
        "edit_file",
        json!({"path": "a.rs", "old_string": "let", "new_string": "const", "replace_all": true}),
    )
    .await;
    check(
        &out,
        &f,
        "edited a.rs: replaced 2 occurrences (first at line 1)",
    );
    assert_eq!(
        fs::read_to_string(&a).unwrap(),
        "const x = 1;\nconst y = 2;\n"
    );

    let out = call(
        &f,
        "edit_file",
        json!({"path": "crlf.txt", "old_string": "one\ntwo", "new_string": "1\n2\n3"}),
    )
    .await;
    check(
        &out,
        &f,
        "edited crlf.txt: replaced 1 occurrence (first at line 1)",
    );
    assert_eq!(
        fs::read(f.root().join("crlf.txt")).unwrap(),
        b"1\r\n2\r\n3\r\n"
    );

    let out = call(
        &f,
        "edit_file",
        json!({"path": "new/mod.rs", "old_string": "", "new_string": "// new\n"}),
    )
    .await;
    check(&out, &f, "created new/mod.rs");
    assert_eq!(
        out.edits.unwrap()[0],
        EditReport {
            uri: uri("new/mod.rs"),
            applied: true,
            reason: None
        }
    );
    assert_eq!(
        fs::read_to_string(f.root().join("new/mod.rs")).unwrap(),
        "// new\n"
    );

    let out = call(
        &f,
        "edit_file",
        json!({"path": "nope.rs", "old_string": "x", "new_string": "y"}),
    )
    .await;
    check(
        &out,
        &f,
        "ERR nope.rs does not exist; to create it, call edit_file with an empty old_string",
    );
    assert!(!f.root().join("nope.rs").exists());
    assert_eq!(out.edits.unwrap()[0].uri, uri("nope.rs"));
}

/// An editor with some documents open; it records the edits it is asked to apply.
struct FakeEditor {
    docs: Vec<(PathBuf, OpenDocument)>,
    answer: Result<(), OverlayError>,
    applied: Mutex<Vec<(PathBuf, i32, Vec<ByteEdit>)>>,
}

impl DocumentOverlay for FakeEditor {
    fn open_document(&self, path: &Path) -> Option<OpenDocument> {
        self.docs
            .iter()
            .find(|(p, _)| p == path)
            .map(|(_, d)| d.clone())
    }
    fn apply_edits(
        &self,
        path: &Path,
        version: i32,
        edits: Vec<ByteEdit>,
    ) -> BoxFuture<'_, Result<(), OverlayError>> {
        self.applied
            .lock()
            .unwrap()
            .push((path.to_owned(), version, edits));
        let answer = self.answer.clone();
        Box::pin(async move { answer })
    }
}

#[tokio::test]
async fn edit_file_goes_through_the_editor_when_open() {
    let tmp = tempfile::tempdir().unwrap();
    let base = fs::canonicalize(tmp.path()).unwrap();
    let root = base.join("ws");
    fs::create_dir(&root).unwrap();
    fs::write(root.join("open.rs"), "fn a() {}\n").unwrap();
    let unsaved = "fn a() {}\nfn b() { old() }\n";
    for (answer, expected) in [
        (
            Ok(()),
            "edited open.rs: replaced 1 occurrence (first at line 2), in the editor (not saved yet)",
        ),
        (
            Err(OverlayError::Stale {
                expected: 4,
                actual: 5,
            }),
            "ERR the document changed in the editor (version 4 is now 5); read it again",
        ),
        (
            Err(OverlayError::Rejected {
                reason: "user said no".to_owned(),
            }),
            "ERR the editor did not apply the edit: user said no",
        ),
    ] {
        let editor = Arc::new(FakeEditor {
            docs: vec![(
                root.join("open.rs"),
                OpenDocument {
                    text: unsaved.to_owned(),
                    version: 4,
                },
            )],
            answer: answer.clone(),
            applied: Mutex::new(Vec::new()),
        });
        let ws = Workspace::new(vec![root.clone()])
            .unwrap()
            .with_overlay(editor.clone());
        let f = Fixture {
            _tmp: tempfile::tempdir().unwrap(),
            base: base.clone(),
            tools: file_tools(Arc::new(ws)),
        };
        // read_file sees the unsaved text.
        run(
            &f,
            "read_file",
            json!({"path": "open.rs", "offset": 2}),
            "    2\tfn b() { old() }\n",
        )
        .await;
        let out = call(
            &f,
            "edit_file",
            json!({"path": "open.rs", "old_string": "old()", "new_string": "new()"}),
        )
        .await;
        check(&out, &f, expected);
        let report = &out.edits.as_ref().unwrap()[0];
        assert_eq!(report.uri, format!("file://{}/ws/open.rs", base.display()));
        assert_eq!(report.applied, answer.is_ok());
        assert_eq!(report.reason.is_some(), answer.is_err());
        // One ByteEdit at the offsets of `old()` in the unsaved text, at the version read.
        let start = unsaved.find("old()").unwrap();
        assert_eq!(
            *editor.applied.lock().unwrap(),
            vec![(
                root.join("open.rs"),
                4,
                vec![ByteEdit {
                    start,
                    end: start + 5,
                    new_text: "new()".to_owned()
                }]
            )]
        );
        // The file on disk is never written for an open document.
        assert_eq!(
            fs::read_to_string(root.join("open.rs")).unwrap(),
            "fn a() {}\n"
        );
    }
}

mod arguments;
mod files;
mod protected;
mod search;
