//! Data-driven tests of resolution, reading, writing, listing and walking, on temp dirs.
//!
//! Every denial also checks its post-condition: the file outside is unchanged or not created.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::fs;
use std::os::unix::fs::{PermissionsExt, symlink};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use futures::future::BoxFuture;

use super::*;

/// A temp dir holding the root `ws` and, beside it, things the workspace must not reach.
struct Fixture {
    _tmp: tempfile::TempDir,
    base: PathBuf,
    ws: Workspace,
}

impl Fixture {
    fn root(&self) -> PathBuf {
        self.base.join("ws")
    }
}

/// Files are `path => content`; a path ending in `/` is a directory; `path -> target` a symlink.
fn fixture(spec: &[&str]) -> Fixture {
    let tmp = tempfile::tempdir().unwrap();
    let base = fs::canonicalize(tmp.path()).unwrap();
    fs::create_dir(base.join("ws")).unwrap();
    for line in spec {
        if let Some((link, target)) = line.split_once(" -> ") {
            let link = base.join(link);
            fs::create_dir_all(link.parent().unwrap()).unwrap();
            let target = target.replace("$BASE", base.to_str().unwrap());
            symlink(target, link).unwrap();
        } else if let Some((file, content)) = line.split_once(" => ") {
            let file = base.join(file);
            fs::create_dir_all(file.parent().unwrap()).unwrap();
            fs::write(file, content).unwrap();
        } else {
            fs::create_dir_all(base.join(line)).unwrap();
        }
    }
    let ws = Workspace::new(vec![base.join("ws")]).unwrap();
    Fixture {
        _tmp: tmp,
        base,
        ws,
    }
}

fn standard() -> Fixture {
    fixture(&[
        "ws/a/b.txt => inside",
        "ws/src/",
        "ws_evil/secret => evil",
        "ws-2/x => two",
        "outside/dir/f => outside",
        "ws/link_etc -> /etc",
        "ws/link_passwd -> /etc/passwd",
        "ws/link_out -> $BASE/outside/dir",
        "ws/rel_up -> ../outside/dir/f",
        "ws/chain1 -> chain2",
        "ws/chain2 -> $BASE/outside",
        "ws/dangling_out -> $BASE/outside/new.txt",
        "ws/dangling_in -> missing.txt",
        "ws/link_in -> a",
    ])
}

fn kind(e: &ScopeError) -> &'static str {
    match e {
        ScopeError::InvalidPath { .. } => "invalid",
        ScopeError::OutsideWorkspace { .. } => "outside",
        ScopeError::SymlinkEscape { .. } => "symlink",
        ScopeError::NotFound { .. } => "notfound",
        ScopeError::NotRegularFile { .. } => "notregular",
        ScopeError::IsADirectory { .. } => "isdir",
        ScopeError::NotADirectory { .. } => "notdir",
        ScopeError::TooLarge { .. } => "toolarge",
        ScopeError::Binary { .. } => "binary",
        ScopeError::InvalidUtf8 { .. } => "utf8",
        _ => "other",
    }
}

/// `expected` is `ok:REL` (the path relative to the root) or the kind of the error.
#[track_caller]
fn check_resolve(f: &Fixture, requested: &str, expected: &str) {
    let requested = requested.replace("$BASE", f.base.to_str().unwrap());
    let got = match f.ws.resolve(&requested) {
        Ok(p) => {
            assert!(p.as_path().starts_with(f.root()), "{requested}: {p:?}");
            format!("ok:{}", p.relative().display())
        }
        Err(e) => {
            // The message names what was asked.
            assert!(e.to_string().contains(&requested), "{e}");
            kind(&e).to_owned()
        }
    };
    assert_eq!(got, expected, "resolve({requested:?})");
}

#[test]
fn resolution_table() {
    let f = standard();
    for (requested, expected) in [
        ("a/b.txt", "ok:a/b.txt"),
        ("./a/b.txt", "ok:a/b.txt"),
        ("a/../a/b.txt", "ok:a/b.txt"),
        ("src/../a", "ok:a"),
        (".", "ok:"),
        ("new/dir/file.rs", "ok:new/dir/file.rs"),
        ("$BASE/ws/a/b.txt", "ok:a/b.txt"),
        ("$BASE/ws", "ok:"),
        ("link_in/b.txt", "ok:a/b.txt"),
        ("link_in/new.txt", "ok:a/new.txt"),
        // `..` is lexical: `link_etc/..` is the root, not `/`.
        ("link_etc/../a", "ok:a"),
        ("..", "outside"),
        ("../ws_evil/secret", "outside"),
        ("a/../../ws_evil/secret", "outside"),
        ("../../../../../../etc/passwd", "outside"),
        ("/etc/passwd", "outside"),
        ("$BASE/ws_evil/secret", "outside"),
        ("$BASE/ws_evil", "outside"),
        ("$BASE/ws-2/x", "outside"),
        ("$BASE/ws/../ws_evil/secret", "outside"),
        ("a/b\0.txt", "invalid"),
        ("~/.ssh/id_rsa", "invalid"),
        ("~", "invalid"),
        ("", "invalid"),
        ("link_etc/passwd", "symlink"),
        ("link_passwd", "symlink"),
        ("link_out/f", "symlink"),
        ("link_out/new.txt", "symlink"),
        ("link_out", "symlink"),
        ("rel_up", "symlink"),
        ("chain1/dir/f", "symlink"),
        ("dangling_out", "symlink"),
        ("dangling_in", "invalid"),
        ("dangling_in/x", "invalid"),
    ] {
        check_resolve(&f, requested, expected);
    }
}

/// Writing through each refused path fails, and nothing outside the root changes.
#[test]
fn write_denials_leave_outside_untouched() {
    let f = standard();
    for (requested, expected) in [
        ("../ws_evil/secret", "outside"),
        ("$BASE/ws_evil/secret", "outside"),
        ("link_out/f", "symlink"),
        ("link_out/new.txt", "symlink"),
        ("rel_up", "symlink"),
        ("dangling_out", "symlink"),
        ("chain1/dir/new.txt", "symlink"),
    ] {
        let requested = requested.replace("$BASE", f.base.to_str().unwrap());
        let err =
            f.ws.resolve(&requested)
                .and_then(|p| f.ws.write_text_atomic(&p, "pwned"));
        assert_eq!(err.map_err(|e| kind(&e)), Err(expected), "{requested}");
    }
    assert_eq!(
        fs::read_to_string(f.base.join("ws_evil/secret")).unwrap(),
        "evil"
    );
    assert_eq!(
        fs::read_to_string(f.base.join("outside/dir/f")).unwrap(),
        "outside"
    );
    assert!(!f.base.join("outside/dir/new.txt").exists());
    assert!(!f.base.join("outside/new.txt").exists());
    assert!(!f.base.join("outside/dir/new.txt").exists());
    assert_eq!(fs::read_dir(f.base.join("outside")).unwrap().count(), 1);
}

#[test]
fn nested_and_multiple_roots() {
    let f = fixture(&["ws/f => 1", "other/g => 2"]);
    let ws = Workspace::new(vec![f.root(), f.base.join("other")]).unwrap();
    let other = format!("{}/other/g", f.base.display());
    let p = ws.resolve(&other).unwrap();
    assert_eq!(p.root(), f.base.join("other"));
    // Not in the first root: shown absolute so that it resolves back.
    assert_eq!(p.display_path(), other);
    assert_eq!(ws.resolve("f").unwrap().display_path(), "f");
    assert_eq!(ws.resolve(".").unwrap().display_path(), ".");
    assert!(matches!(Workspace::new(vec![]), Err(ScopeError::NoRoots)));
    assert!(Workspace::new(vec![f.base.join("ws/f")]).is_err());
}

#[test]
fn root_through_a_symlink_is_canonical() {
    let f = fixture(&["real/f => 1", "alias -> real"]);
    let ws = Workspace::new(vec![f.base.join("alias")]).unwrap();
    assert_eq!(ws.roots(), [f.base.join("real")]);
    // The non-canonical spelling of the root is accepted too.
    let p = ws
        .resolve(&format!("{}/alias/f", f.base.display()))
        .unwrap();
    assert_eq!(p.as_path(), f.base.join("real/f"));
    assert_eq!(p.uri(), format!("file://{}/real/f", f.base.display()));
}

/// `expected` is `ok:TEXT` or the kind of the error.
#[track_caller]
fn check_read(ws: &Workspace, path: &str, expected: &str) {
    let got = match ws.resolve(path).and_then(|p| ws.read_text(&p)) {
        Ok((text, _)) => format!("ok:{text}"),
        Err(e) => kind(&e).to_owned(),
    };
    assert_eq!(got, expected, "read {path}");
}

#[test]
fn read_table() {
    let f = fixture(&["ws/t.txt => hello", "ws/d/", "ws/big => 0123456789ABCDEF"]);
    let root = f.root();
    fs::write(root.join("bin"), b"abc\0def").unwrap();
    fs::write(root.join("latin1"), b"caf\xe9").unwrap();
    let status = std::process::Command::new("mkfifo")
        .arg(root.join("fifo"))
        .status()
        .unwrap();
    assert!(status.success());
    let ws = Workspace::new(vec![root]).unwrap().with_max_file_size(10);
    check_read(&ws, "t.txt", "ok:hello");
    check_read(&ws, "d", "isdir");
    check_read(&ws, "big", "toolarge");
    check_read(&ws, "bin", "binary");
    check_read(&ws, "latin1", "utf8");
    // Would block forever if opened blocking with no writer; must be refused at once.
    check_read(&ws, "fifo", "notregular");
    check_read(&ws, "missing", "notfound");
    check_read(&ws, "/dev/zero", "outside");
}

#[derive(Default)]
struct FakeOverlay {
    docs: Mutex<Vec<(PathBuf, OpenDocument)>>,
    applied: Mutex<Vec<(PathBuf, i32, Vec<ByteEdit>)>>,
}

impl DocumentOverlay for FakeOverlay {
    fn open_document(&self, path: &Path) -> Option<OpenDocument> {
        let docs = self.docs.lock().unwrap();
        docs.iter().find(|(p, _)| p == path).map(|(_, d)| d.clone())
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
        Box::pin(async { Ok(()) })
    }
}

#[tokio::test]
async fn overlay_text_wins_and_edits_go_to_the_editor() {
    let f = fixture(&["ws/open.rs => on disk"]);
    let overlay = Arc::new(FakeOverlay::default());
    overlay.docs.lock().unwrap().push((
        f.root().join("open.rs"),
        OpenDocument {
            text: "unsaved".to_owned(),
            version: 7,
        },
    ));
    let ws = Workspace::new(vec![f.root()])
        .unwrap()
        .with_overlay(overlay.clone());
    let p = ws.resolve("open.rs").unwrap();
    assert_eq!(ws.read_text(&p).unwrap(), ("unsaved".to_owned(), Some(7)));
    let edit = ByteEdit {
        start: 0,
        end: 2,
        new_text: "re".to_owned(),
    };
    ws.apply_edits_in_editor(&p, 7, vec![edit.clone()])
        .await
        .unwrap();
    assert_eq!(
        *overlay.applied.lock().unwrap(),
        vec![(f.root().join("open.rs"), 7, vec![edit])]
    );
    assert_eq!(
        fs::read_to_string(f.root().join("open.rs")).unwrap(),
        "on disk"
    );
    // Without an overlay, nothing is open.
    let plain = Workspace::new(vec![f.root()]).unwrap();
    assert_eq!(plain.read_text(&p).unwrap(), ("on disk".to_owned(), None));
    let err = plain.apply_edits_in_editor(&p, 7, vec![]).await;
    assert_eq!(err, Err(OverlayError::Closed));
}

#[test]
fn atomic_write_preserves_mode_and_creates_parents() {
    let f = fixture(&["ws/script.sh => #!/bin/sh\r\necho hi\r\n"]);
    let script = f.root().join("script.sh");
    fs::set_permissions(&script, fs::Permissions::from_mode(0o751)).unwrap();
    let p = f.ws.resolve("script.sh").unwrap();
    f.ws.write_text_atomic(&p, "#!/bin/sh\r\necho bye\r\n")
        .unwrap();
    assert_eq!(fs::read(&script).unwrap(), b"#!/bin/sh\r\necho bye\r\n");
    assert_eq!(
        fs::metadata(&script).unwrap().permissions().mode() & 0o7777,
        0o751
    );

    let p = f.ws.resolve("new/deep/file.txt").unwrap();
    f.ws.write_text_atomic(&p, "fresh").unwrap();
    let created = f.root().join("new/deep/file.txt");
    assert_eq!(fs::read_to_string(&created).unwrap(), "fresh");
    let mode = fs::metadata(&created).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode & 0o600, 0o600, "{mode:o}");
    // No temp files are left behind.
    let names: Vec<_> = fs::read_dir(f.root())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names.len(), 2, "{names:?}");
}

#[test]
fn write_from_streams_a_reader_into_place_without_clobbering() {
    let f = fixture(&["ws/kept.txt => mine", "outside/target => outside"]);
    let big: Vec<u8> = (0..3_000_000u32).map(|i| (i % 251) as u8).collect();
    let p = f.ws.resolve("dl/big.bin").unwrap();
    f.ws.write_from(&p, &mut &big[..], false).unwrap();
    assert!(fs::read(f.root().join("dl/big.bin")).unwrap() == big);
    // An existing file is not replaced unless asked, and then it is.
    let kept = f.ws.resolve("kept.txt").unwrap();
    let err = f.ws.write_from(&kept, &mut &b"new"[..], false).unwrap_err();
    assert!(matches!(err, ScopeError::AlreadyExists { .. }), "{err}");
    assert_eq!(
        fs::read_to_string(f.root().join("kept.txt")).unwrap(),
        "mine"
    );
    f.ws.write_from(&kept, &mut &b"new"[..], true).unwrap();
    assert_eq!(
        fs::read_to_string(f.root().join("kept.txt")).unwrap(),
        "new"
    );
    // A symlink swapped in after resolution is not followed.
    fs::remove_file(f.root().join("kept.txt")).unwrap();
    symlink(f.base.join("outside/target"), f.root().join("kept.txt")).unwrap();
    assert!(f.ws.write_from(&kept, &mut &b"pwned"[..], true).is_err());
    assert_eq!(
        fs::read_to_string(f.base.join("outside/target")).unwrap(),
        "outside"
    );
}

#[test]
fn write_never_follows_a_symlink_swapped_in_after_resolution() {
    let f = fixture(&["ws/f.txt => mine", "outside/target => outside"]);
    let p = f.ws.resolve("f.txt").unwrap();
    fs::remove_file(f.root().join("f.txt")).unwrap();
    symlink(f.base.join("outside/target"), f.root().join("f.txt")).unwrap();
    let err = f.ws.write_text_atomic(&p, "pwned").unwrap_err();
    assert_eq!(kind(&err), "invalid");
    assert_eq!(
        fs::read_to_string(f.base.join("outside/target")).unwrap(),
        "outside"
    );
    // Reading through the swapped link is refused too (O_NOFOLLOW).
    assert!(f.ws.read_text(&p).is_err());
}

#[test]
fn write_refuses_directories_and_fifos() {
    let f = fixture(&["ws/d/"]);
    let status = std::process::Command::new("mkfifo")
        .arg(f.root().join("p"))
        .status()
        .unwrap();
    assert!(status.success());
    for (path, expected) in [("d", "isdir"), ("p", "notregular"), (".", "isdir")] {
        let p = f.ws.resolve(path).unwrap();
        let err = f.ws.write_text_atomic(&p, "x").unwrap_err();
        assert_eq!(kind(&err), expected, "{path}");
    }
}

#[test]
fn list_dir_marks_kinds_and_sorts() {
    let f = fixture(&["ws/b.txt => b", "ws/a/", "ws/.hidden => h", "ws/l -> /etc"]);
    let p = f.ws.resolve(".").unwrap();
    let got: Vec<_> =
        f.ws.list_dir(&p)
            .unwrap()
            .into_iter()
            .map(|e| (e.name, e.kind))
            .collect();
    assert_eq!(
        got,
        vec![
            (".hidden".to_owned(), EntryKind::File),
            ("a".to_owned(), EntryKind::Dir),
            ("b.txt".to_owned(), EntryKind::File),
            ("l".to_owned(), EntryKind::Symlink),
        ]
    );
    let err = f.ws.list_dir(&f.ws.resolve("b.txt").unwrap()).unwrap_err();
    assert_eq!(kind(&err), "notdir");
}

#[track_caller]
fn check_walk(f: &Fixture, start: &str, options: WalkOptions, expected: &[&str]) {
    let p = f.ws.resolve(start).unwrap();
    let mut got: Vec<String> =
        f.ws.walk(&p, &options)
            .unwrap()
            .map(|r| r.unwrap().relative().display().to_string())
            .collect();
    // The parallel walk yields the same files, in the same order.
    let parallel: Vec<String> =
        f.ws.walk_sorted(&p, &options, &|| false)
            .unwrap()
            .files
            .iter()
            .map(|p| p.relative().display().to_string())
            .collect();
    assert_eq!(parallel, got, "walk_sorted {start} {options:?}");
    got.sort();
    assert_eq!(got, expected, "walk {start} {options:?}");
}

#[test]
fn walk_table() {
    // Not a git repository: `.gitignore` applies anyway (`require_git(false)`).
    let f = fixture(&[
        "ws/.gitignore => target/\n*.log\n",
        "ws/src/main.rs => fn main() {}",
        "ws/src/lib.rs => ",
        "ws/src/.gitignore => gen.rs\n",
        "ws/src/gen.rs => generated",
        "ws/src/sub/x.log => log",
        "ws/src/sub/y.rs => y",
        "ws/target/out.rs => built",
        "ws/debug.log => log",
        "ws/.env => SECRET=1",
        "ws/.git/config => [core]",
        "ws/notes.md => notes",
        "ws/out -> $BASE/outside",
        "outside/secret.rs => outside",
    ]);
    let all = WalkOptions::default();
    check_walk(
        &f,
        ".",
        all.clone(),
        &["notes.md", "src/lib.rs", "src/main.rs", "src/sub/y.rs"],
    );
    // Ignore files between the root and the start directory still apply.
    check_walk(
        &f,
        "src",
        all.clone(),
        &["src/lib.rs", "src/main.rs", "src/sub/y.rs"],
    );
    check_walk(&f, "src/sub", all.clone(), &["src/sub/y.rs"]);
    // An explicitly named file or directory is walked even when ignored.
    check_walk(&f, "debug.log", all.clone(), &["debug.log"]);
    check_walk(&f, "target", all.clone(), &["target/out.rs"]);
    let rs = WalkOptions {
        glob: Some("*.rs".to_owned()),
        ..Default::default()
    };
    check_walk(
        &f,
        ".",
        rs.clone(),
        &["src/lib.rs", "src/main.rs", "src/sub/y.rs"],
    );
    check_walk(
        &f,
        "src",
        rs,
        &["src/lib.rs", "src/main.rs", "src/sub/y.rs"],
    );
    let anchored = WalkOptions {
        glob: Some("src/m*.rs".to_owned()),
        ..Default::default()
    };
    check_walk(&f, ".", anchored.clone(), &["src/main.rs"]);
    // Relative to the walked directory: `src/m*.rs` under `src` is `src/src/m*.rs`.
    check_walk(&f, "src", anchored, &[]);
    let dir = WalkOptions {
        glob: Some("src/".to_owned()),
        ..Default::default()
    };
    check_walk(&f, ".", dir, &["src/lib.rs", "src/main.rs", "src/sub/y.rs"]);
    let hidden = WalkOptions {
        include_hidden: true,
        ..Default::default()
    };
    check_walk(
        &f,
        ".",
        hidden,
        &[
            ".env",
            ".gitignore",
            "notes.md",
            "src/.gitignore",
            "src/lib.rs",
            "src/main.rs",
            "src/sub/y.rs",
        ],
    );
    let bad = WalkOptions {
        glob: Some("a{".to_owned()),
        ..Default::default()
    };
    let err = f.ws.walk(&f.ws.resolve(".").unwrap(), &bad).err().unwrap();
    assert!(matches!(err, ScopeError::InvalidGlob { .. }), "{err}");
}

#[test]
fn new_operations_table() {
    let f = standard();
    let ws = &f.ws;
    let r = |p: &str| ws.resolve(p).unwrap();
    // Exclusive create: creates parents, refuses anything already there.
    ws.create_text_exclusive(&r("new/dir/n.txt"), "hi").unwrap();
    assert_eq!(
        fs::read_to_string(f.root().join("new/dir/n.txt")).unwrap(),
        "hi"
    );
    assert_eq!(
        kind_or_ok(ws.create_text_exclusive(&r("a/b.txt"), "x")),
        "exists"
    );
    assert_eq!(
        fs::read_to_string(f.root().join("a/b.txt")).unwrap(),
        "inside"
    );
    assert_eq!(kind_or_ok(ws.create_text_exclusive(&r("a"), "x")), "exists");
    // Copy: bytes and mode, never onto an existing file.
    fs::set_permissions(f.root().join("a/b.txt"), fs::Permissions::from_mode(0o640)).unwrap();
    assert_eq!(ws.copy_file(&r("a/b.txt"), &r("c/copy.txt")).unwrap(), 6);
    let copied = f.root().join("c/copy.txt");
    assert_eq!(fs::read_to_string(&copied).unwrap(), "inside");
    assert_eq!(
        fs::metadata(&copied).unwrap().permissions().mode() & 0o777,
        0o640
    );
    assert_eq!(
        kind_or_ok(ws.copy_file(&r("a/b.txt"), &r("c/copy.txt")).map(drop)),
        "exists"
    );
    assert_eq!(
        kind_or_ok(ws.copy_file(&r("a"), &r("c/d")).map(drop)),
        "isdir"
    );
    // Rename: files and directories, never clobbering, not into itself, not the root.
    ws.rename(&r("c/copy.txt"), &r("moved/m.txt")).unwrap();
    assert!(!copied.exists());
    assert_eq!(
        fs::read_to_string(f.root().join("moved/m.txt")).unwrap(),
        "inside"
    );
    assert_eq!(
        kind_or_ok(ws.rename(&r("moved/m.txt"), &r("a/b.txt"))),
        "exists"
    );
    assert_eq!(
        kind_or_ok(ws.rename(&r("moved"), &r("moved/sub"))),
        "invalid"
    );
    assert_eq!(kind_or_ok(ws.rename(&r("."), &r("x"))), "invalid");
    ws.rename(&r("moved"), &r("moved2")).unwrap();
    assert!(f.root().join("moved2/m.txt").is_file());
    // Directories.
    ws.create_dir(&r("d1/d2")).unwrap();
    ws.create_dir(&r("d1/d2")).unwrap();
    assert!(f.root().join("d1/d2").is_dir());
    assert_eq!(kind_or_ok(ws.create_dir(&r("a/b.txt"))), "notdir");
    // Remove: regular files only.
    ws.remove_file(&r("moved2/m.txt")).unwrap();
    assert!(!f.root().join("moved2/m.txt").exists());
    assert_eq!(kind_or_ok(ws.remove_file(&r("moved2"))), "isdir");
    assert_eq!(kind_or_ok(ws.remove_file(&r("nope"))), "notfound");
    assert_eq!(kind_or_ok(ws.remove_file(&r("."))), "invalid");
    // Stat does not follow the final component.
    let st = ws.stat(&r("a/b.txt")).unwrap();
    assert_eq!(
        (st.kind, st.len, st.mode),
        (EntryKind::File, 6, Some(0o640))
    );
    assert_eq!(ws.stat(&r("d1")).unwrap().kind, EntryKind::Dir);
    // Targets outside never resolve; the outside files are untouched.
    for p in ["../outside/x", "link_out/new", "$BASE/outside/dir/f"] {
        let p = p.replace("$BASE", f.base.to_str().unwrap());
        assert!(ws.resolve(&p).unwrap_err().is_denial(), "{p}");
    }
    assert_eq!(
        fs::read_to_string(f.base.join("outside/dir/f")).unwrap(),
        "outside"
    );
    assert!(!f.base.join("outside/dir/new").exists());
}

#[test]
fn new_operations_refuse_fifos_and_swapped_symlinks() {
    let f = fixture(&["ws/a.txt => a", "outside/f => outside"]);
    let fifo = f.root().join("fifo");
    assert!(
        std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap()
            .success()
    );
    let p = f.ws.resolve("fifo").unwrap();
    assert_eq!(kind_or_ok(f.ws.remove_file(&p)), "notregular");
    assert_eq!(
        kind_or_ok(f.ws.copy_file(&p, &f.ws.resolve("c").unwrap()).map(drop)),
        "notregular"
    );
    assert_eq!(
        kind_or_ok(f.ws.rename(&p, &f.ws.resolve("c").unwrap())),
        "notregular"
    );
    // A symlink swapped in after resolution is neither deleted through nor copied from.
    let victim = f.ws.resolve("a.txt").unwrap();
    fs::remove_file(f.root().join("a.txt")).unwrap();
    symlink(f.base.join("outside/f"), f.root().join("a.txt")).unwrap();
    assert_eq!(kind_or_ok(f.ws.remove_file(&victim)), "notregular");
    assert_eq!(
        kind_or_ok(
            f.ws.copy_file(&victim, &f.ws.resolve("c").unwrap())
                .map(drop)
        ),
        "notregular"
    );
    assert_eq!(
        fs::read_to_string(f.base.join("outside/f")).unwrap(),
        "outside"
    );
}

fn kind_or_ok(r: Result<(), ScopeError>) -> &'static str {
    match r {
        Ok(()) => "ok",
        Err(ScopeError::AlreadyExists { .. }) => "exists",
        Err(e) => kind(&e),
    }
}

/// What the outside of the property's tree holds; nothing read through the workspace may be it.
const OUTSIDE: &str = "OUTSIDE-SENTINEL";

/// The tree of the path property: a root with files, directories and symlinks that stay inside,
/// leave it (relative, absolute, through chains and through a directory above), loop or dangle,
/// beside a sibling with the root's name as a prefix and a directory holding the sentinel.
fn escape_tree() -> Fixture {
    fixture(&[
        "ws/a/b.txt => inside",
        "ws/a/c/d.txt => inside",
        "ws/é%2e\\x => inside",
        "ws_evil/secret => OUTSIDE-SENTINEL",
        "outside/secret => OUTSIDE-SENTINEL",
        "outside/dir/secret => OUTSIDE-SENTINEL",
        "ws/in -> a",
        "ws/in_abs -> $BASE/ws/a/c",
        "ws/out -> ../outside",
        "ws/out_abs -> $BASE/outside/dir",
        "ws/out_file -> $BASE/outside/secret",
        "ws/evil -> ../ws_evil",
        "ws/a/up -> ..",
        "ws/a/upup -> ../..",
        "ws/a/c/upup_out -> ../../../outside",
        "ws/chain1 -> chain2",
        "ws/chain2 -> a/chain3",
        "ws/a/chain3 -> ../out",
        "ws/chain_in -> in/c",
        "ws/loop1 -> loop2",
        "ws/loop2 -> loop1",
        "ws/self -> self",
        "ws/dangling_out -> $BASE/outside/new",
        "ws/dangling_in -> missing",
        "ws/root -> /",
        "ws/proc -> /proc/self/cwd",
    ])
}

/// A requested path string: segments from the tree's names and traversal spellings, joined by
/// one or more slashes, maybe absolute (`/`, the base or the root) or `./`-led.
fn requested_path(base: String) -> impl proptest::strategy::Strategy<Value = String> {
    use proptest::prelude::*;
    let segment = prop_oneof![
        prop::sample::select(vec![
            "..",
            ".",
            "",
            "a",
            "b.txt",
            "c",
            "d.txt",
            "in",
            "in_abs",
            "out",
            "out_abs",
            "out_file",
            "evil",
            "up",
            "upup",
            "upup_out",
            "chain1",
            "chain_in",
            "loop1",
            "self",
            "dangling_out",
            "dangling_in",
            "root",
            "proc",
            "ws",
            "ws_evil",
            "outside",
            "secret",
            "dir",
            "new",
            "é%2e\\x",
            "%2e%2e",
            "..\\..",
            "...",
            "~",
            "\0",
            "é",
            "a\\..\\..",
            " ..",
            ".. ",
            "%00",
            "etc",
            "passwd",
        ])
        .prop_map(str::to_owned),
        "[a-z.%\\\\]{1,4}",
        "\\PC{1,3}",
    ];
    let lead = prop_oneof![
        Just(String::new()),
        Just("./".to_owned()),
        Just("/".to_owned()),
        Just(format!("{base}/")),
        Just(format!("{base}/ws/")),
        Just(format!("{base}/ws_evil/")),
        Just(format!("{base}/ws/../")),
    ];
    let sep = prop::sample::select(vec!["/", "//", "/./", "///"]);
    (lead, prop::collection::vec((segment, sep), 0..7)).prop_map(|(lead, parts)| {
        let mut out = lead;
        for (i, (segment, sep)) in parts.into_iter().enumerate() {
            if i > 0 {
                out.push_str(sep);
            }
            out.push_str(&segment);
        }
        out
    })
}

/// Whatever is asked for, a resolved path lies inside the root on the real file system (its
/// existing part canonicalised anew), reading through the workspace never returns the outside
/// sentinel, and creating a new file there leaves everything outside unchanged.
#[test]
fn fuzz_workspace_paths_never_leave_the_root() {
    use proptest::prop_assert;
    let f = escape_tree();
    let root = fs::canonicalize(f.root()).unwrap();
    let outside_before = snapshot(&f.base, &root);
    cairn_test_support::fuzz::check(
        "workspace paths stay in the root",
        requested_path(f.base.display().to_string()),
        |requested| {
            let Ok(path) = f.ws.resolve(&requested) else {
                return Ok(());
            };
            // The existing part, canonicalised by the OS now, is inside the root.
            let mut existing = path.as_path();
            let real = loop {
                match fs::canonicalize(existing) {
                    Ok(real) => break real,
                    Err(_) => match existing.parent() {
                        Some(parent) => existing = parent,
                        None => break PathBuf::from("/"),
                    },
                }
            };
            prop_assert!(
                real.starts_with(&root),
                "{requested:?} resolved to {path:?}, really {real:?}"
            );
            if let Ok((text, _)) = f.ws.read_text(&path) {
                prop_assert!(!text.contains(OUTSIDE), "{requested:?} read {text:?}");
            }
            if fs::symlink_metadata(path.as_path()).is_err()
                && f.ws.create_text_exclusive(&path, "created").is_ok()
            {
                prop_assert!(path.as_path().starts_with(&root));
                f.ws.remove_file(&path).unwrap();
            }
            prop_assert!(
                snapshot(&f.base, &root) == outside_before,
                "{requested:?} changed a file outside the root"
            );
            Ok(())
        },
    );
}

/// Every file under `base` but outside `root`, with its content.
fn snapshot(base: &Path, root: &Path) -> Vec<(PathBuf, String)> {
    let mut out = Vec::new();
    let mut stack = vec![base.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in fs::read_dir(&dir).unwrap() {
            let entry = entry.unwrap();
            let p = entry.path();
            let kind = entry.file_type().unwrap();
            if p.starts_with(root) {
                continue;
            } else if kind.is_dir() {
                stack.push(p);
            } else if kind.is_file() {
                out.push((p.clone(), fs::read_to_string(&p).unwrap()));
            } else {
                out.push((p, String::new()));
            }
        }
    }
    out.sort();
    out
}

#[test]
fn byte_edits_apply_only_when_they_fit_the_text() {
    let edit = |start, end, new: &str| ByteEdit {
        start,
        end,
        new_text: new.to_owned(),
    };
    let text = "héllo world";
    assert_eq!(
        ByteEdit::apply_all(text, &[edit(0, 1, "J"), edit(7, 12, "there")]).as_deref(),
        Some("Jéllo there")
    );
    assert_eq!(ByteEdit::apply_all(text, &[]).as_deref(), Some(text));
    // Out of range, inside a character, overlapping, reversed: refused, never a panic.
    assert_eq!(ByteEdit::apply_all(text, &[edit(0, 99, "")]), None);
    assert_eq!(ByteEdit::apply_all(text, &[edit(2, 3, "")]), None);
    assert_eq!(
        ByteEdit::apply_all(text, &[edit(0, 4, ""), edit(3, 5, "")]),
        None
    );
    assert_eq!(ByteEdit::apply_all(text, &[edit(4, 2, "")]), None);
}
