//! Escape attempts against the workspace jail: SECURITY.md §7 (b) rows B1–B5 and B8.
//!
//! Each test builds a temp dir holding the root `ws` and, beside it, directories the workspace
//! must not reach (`outside`, `ws_evil`, `ws-2`), whose files hold a unique sentinel text. Every
//! test asserts the typed denial and the post-condition: no sentinel text appears in anything
//! the workspace returned, and nothing outside the root changed (same entries, contents and
//! modification times, directories included, so a temp file created and removed would show).

#![cfg(unix)]
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeMap;
use std::fs;
use std::os::unix::fs::{MetadataExt, symlink};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Barrier, mpsc};
use std::time::{Duration, Instant};

use cairn_workspace::{EntryKind, ScopeError, WalkOptions, Workspace, WorkspacePath};

/// What one entry outside the root looks like: content (or link target) and times.
#[derive(Debug, PartialEq, Eq)]
struct Seen {
    content: Vec<u8>,
    mtime: (i64, i64),
    ctime: (i64, i64),
}

struct Fixture {
    _tmp: tempfile::TempDir,
    base: PathBuf,
    ws: Workspace,
    sentinel: String,
    before: BTreeMap<PathBuf, Seen>,
}

/// `path => content` files (`$SENTINEL` is replaced), `path/` directories, `path -> target`
/// symlinks (`$BASE` is replaced); all relative to the temp dir, the root being `ws`.
fn fixture(spec: &[&str]) -> Fixture {
    let tmp = tempfile::tempdir().unwrap();
    let base = fs::canonicalize(tmp.path()).unwrap();
    let sentinel = format!(
        "SENTINEL-{}-{}",
        std::process::id(),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_nanos()
    );
    let standard = [
        "ws/",
        "ws/inside.txt => inside",
        "outside/f => $SENTINEL",
        "outside/dir/secret => $SENTINEL",
        "ws_evil/secret => $SENTINEL",
        "ws-2/x => $SENTINEL",
    ];
    for line in standard.iter().chain(spec) {
        if let Some((link, target)) = line.split_once(" -> ") {
            let link = base.join(link);
            fs::create_dir_all(link.parent().unwrap()).unwrap();
            symlink(target.replace("$BASE", base.to_str().unwrap()), link).unwrap();
        } else if let Some((file, content)) = line.split_once(" => ") {
            let file = base.join(file);
            fs::create_dir_all(file.parent().unwrap()).unwrap();
            fs::write(file, content.replace("$SENTINEL", &sentinel)).unwrap();
        } else {
            fs::create_dir_all(base.join(line)).unwrap();
        }
    }
    let ws = Workspace::new(vec![base.join("ws")]).unwrap();
    let before = snapshot(&base);
    Fixture {
        _tmp: tmp,
        base,
        ws,
        sentinel,
        before,
    }
}

/// Everything under `base` except the root `ws` (the base directory itself included).
fn snapshot(base: &Path) -> BTreeMap<PathBuf, Seen> {
    fn visit(path: &Path, ws: &Path, out: &mut BTreeMap<PathBuf, Seen>) {
        let meta = fs::symlink_metadata(path).unwrap();
        let content = if meta.file_type().is_symlink() {
            fs::read_link(path)
                .unwrap()
                .into_os_string()
                .into_encoded_bytes()
        } else if meta.is_file() {
            fs::read(path).unwrap()
        } else {
            Vec::new()
        };
        out.insert(
            path.to_owned(),
            Seen {
                content,
                mtime: (meta.mtime(), meta.mtime_nsec()),
                ctime: (meta.ctime(), meta.ctime_nsec()),
            },
        );
        if meta.is_dir() {
            for entry in fs::read_dir(path).unwrap() {
                let child = entry.unwrap().path();
                if child != ws {
                    visit(&child, ws, out);
                }
            }
        }
    }
    let mut out = BTreeMap::new();
    visit(base, &base.join("ws"), &mut out);
    out
}

impl Fixture {
    fn root(&self) -> PathBuf {
        self.base.join("ws")
    }

    fn expand(&self, requested: &str) -> String {
        requested.replace("$BASE", self.base.to_str().unwrap())
    }

    /// Nothing outside the root was written, created, removed or touched.
    #[track_caller]
    fn assert_outside_untouched(&self) {
        let after = snapshot(&self.base);
        assert_eq!(
            after.keys().collect::<Vec<_>>(),
            self.before.keys().collect::<Vec<_>>(),
            "entries outside the root changed"
        );
        for (path, seen) in &self.before {
            assert_eq!(after.get(path), Some(seen), "{} changed", path.display());
        }
    }

    /// The sentinel text is not in anything the workspace returned.
    #[track_caller]
    fn assert_not_leaked(&self, returned: &str) {
        assert!(
            !returned.contains(&self.sentinel),
            "the sentinel leaked: {returned}"
        );
    }

    /// Every operation on `requested` (read, write, create, copy to and from, move, delete,
    /// make directory, list, walk, stat) is refused with a denial, nothing leaks, and
    /// `denied` accepts each error.
    #[track_caller]
    fn assert_every_operation_denied(&self, requested: &str, denied: fn(&ScopeError) -> bool) {
        let requested = self.expand(requested);
        let ws = &self.ws;
        let inside = ws.resolve("inside.txt").unwrap();
        let fresh = ws.resolve("fresh.txt").unwrap();
        let results: Vec<(&str, Result<String, ScopeError>)> = vec![
            ("resolve", ws.resolve(&requested).map(|p| p.display_path())),
            (
                "read",
                with(ws, &requested, |p| ws.read_text(p).map(|t| t.0)),
            ),
            (
                "write",
                with(ws, &requested, |p| {
                    ws.write_text_atomic(p, "x").map(|()| String::new())
                }),
            ),
            (
                "create",
                with(ws, &requested, |p| {
                    ws.create_text_exclusive(p, "x").map(|()| String::new())
                }),
            ),
            (
                "copy from",
                with(ws, &requested, |p| {
                    ws.copy_file(p, &fresh).map(|n| n.to_string())
                }),
            ),
            (
                "copy to",
                with(ws, &requested, |p| {
                    ws.copy_file(&inside, p).map(|n| n.to_string())
                }),
            ),
            (
                "move to",
                with(ws, &requested, |p| {
                    ws.rename(&inside, p).map(|()| String::new())
                }),
            ),
            (
                "delete",
                with(ws, &requested, |p| {
                    ws.remove_file(p).map(|()| String::new())
                }),
            ),
            (
                "mkdir",
                with(ws, &requested, |p| ws.create_dir(p).map(|()| String::new())),
            ),
            (
                "stat",
                with(ws, &requested, |p| ws.stat(p).map(|s| format!("{s:?}"))),
            ),
            (
                "list",
                with(ws, &requested, |p| ws.list_dir(p).map(|l| format!("{l:?}"))),
            ),
            (
                "walk",
                with(ws, &requested, |p| walk(ws, p).map(|l| l.join("\n"))),
            ),
        ];
        for (op, result) in results {
            match result {
                Ok(got) => panic!("{op} `{requested}` was allowed: {got}"),
                Err(e) => {
                    assert!(e.is_denial() && denied(&e), "{op} `{requested}`: {e:?}");
                    self.assert_not_leaked(&e.to_string());
                }
            }
        }
        assert_eq!(
            fs::read_to_string(self.root().join("inside.txt")).unwrap(),
            "inside"
        );
        assert!(!self.root().join("fresh.txt").exists());
        self.assert_outside_untouched();
    }
}

fn with<T>(
    ws: &Workspace,
    requested: &str,
    op: impl FnOnce(&WorkspacePath) -> Result<T, ScopeError>,
) -> Result<T, ScopeError> {
    ws.resolve(requested).and_then(|p| op(&p))
}

/// The files a walk yields, relative to the root; an error in the walk fails the walk.
fn walk(ws: &Workspace, start: &WorkspacePath) -> Result<Vec<String>, ScopeError> {
    let mut out = Vec::new();
    for path in ws.walk(start, &WalkOptions::default())? {
        out.push(path?.relative().display().to_string());
    }
    Ok(out)
}

fn outside(e: &ScopeError) -> bool {
    matches!(e, ScopeError::OutsideWorkspace { .. })
}

fn symlink_escape(e: &ScopeError) -> bool {
    matches!(e, ScopeError::SymlinkEscape { .. })
}

fn invalid(e: &ScopeError) -> bool {
    matches!(e, ScopeError::InvalidPath { .. })
}

// B1: traversal and encoding.

#[test]
fn b1_dotdot_to_etc_passwd() {
    fixture(&[]).assert_every_operation_denied("../../etc/passwd", outside);
}

#[test]
fn b1_dotdot_after_a_real_directory() {
    fixture(&["ws/src/"]).assert_every_operation_denied("src/../../x", outside);
}

#[test]
fn b1_dotdot_to_the_sibling_sentinel() {
    fixture(&[]).assert_every_operation_denied("../outside/f", outside);
}

#[test]
fn b1_absolute_etc_passwd() {
    fixture(&[]).assert_every_operation_denied("/etc/passwd", outside);
}

#[test]
fn b1_absolute_sentinel() {
    fixture(&[]).assert_every_operation_denied("$BASE/outside/f", outside);
}

#[test]
fn b1_tilde_is_not_expanded() {
    fixture(&[]).assert_every_operation_denied("~/.ssh/id_rsa", invalid);
}

#[test]
fn b1_nul_byte() {
    let f = fixture(&[]);
    f.assert_every_operation_denied("inside.txt\0../../outside/f", invalid);
    f.assert_every_operation_denied("../outside/f\0", invalid);
}

/// A string that is a name on Unix: it stays one literal name inside the root. Reading finds
/// nothing, writing creates that one file inside the root, nothing outside changes.
#[track_caller]
fn check_literal_name(f: &Fixture, requested: &str) {
    let p = f.ws.resolve(requested).unwrap();
    assert!(p.as_path().starts_with(f.root()), "{requested}: {p:?}");
    assert_eq!(p.as_path(), f.root().join(requested), "{requested}");
    let read = f.ws.read_text(&p).unwrap_err();
    assert!(
        matches!(read, ScopeError::NotFound { .. }),
        "{requested}: {read:?}"
    );
    f.ws.write_text_atomic(&p, "literal").unwrap();
    assert_eq!(
        fs::read_to_string(f.root().join(requested)).unwrap(),
        "literal"
    );
    assert_eq!(f.ws.read_text(&p).unwrap().0, "literal");
    f.ws.remove_file(&p).unwrap();
    f.assert_outside_untouched();
}

#[test]
fn b1_windows_drive_path_is_a_literal_name() {
    check_literal_name(&fixture(&[]), r"C:\Windows\win.ini");
}

#[test]
fn b1_windows_verbatim_path_is_a_literal_name() {
    check_literal_name(&fixture(&[]), r"\\?\C:\x");
}

#[test]
fn b1_unc_path_is_a_literal_name() {
    check_literal_name(&fixture(&[]), r"\\server\share\x");
}

#[test]
fn b1_backslash_dotdot_is_a_literal_name() {
    check_literal_name(&fixture(&[]), r"..\..\outside\f");
}

#[test]
fn b1_percent_encoded_dotdot_is_a_literal_name() {
    let f = fixture(&["ws/%2e%2e/"]);
    let p = f.ws.resolve("%2e%2e/outside/f").unwrap();
    assert_eq!(p.as_path(), f.root().join("%2e%2e/outside/f"));
    let read = f.ws.read_text(&p).unwrap_err();
    assert!(matches!(read, ScopeError::NotFound { .. }), "{read:?}");
    f.ws.write_text_atomic(&p, "literal").unwrap();
    assert!(f.root().join("%2e%2e/outside/f").is_file());
    check_literal_name(&f, "%2e%2e%2foutside%2ff");
}

#[test]
fn b1_dot_names_that_are_not_dotdot() {
    let f = fixture(&[]);
    check_literal_name(&f, "...");
    check_literal_name(&f, ".. ");
    check_literal_name(&f, "..\t");
}

#[test]
fn b1_nfd_and_nfc_names_are_distinct_and_inside() {
    let f = fixture(&["ws/caf\u{e9}.txt => nfc"]);
    // On file systems that do not normalise (ext4, tmpfs) the NFD spelling is another name.
    let nfd = f.ws.resolve("cafe\u{301}.txt").unwrap();
    assert!(nfd.as_path().starts_with(f.root()));
    match f.ws.read_text(&nfd) {
        Ok((text, _)) => assert_eq!(text, "nfc"),
        Err(e) => assert!(matches!(e, ScopeError::NotFound { .. }), "{e:?}"),
    }
    let nfc = f.ws.resolve("caf\u{e9}.txt").unwrap();
    assert_eq!(f.ws.read_text(&nfc).unwrap().0, "nfc");
    // A decomposed `..` does not exist: `.\u{301}.` is a plain name.
    check_literal_name(&f, ".\u{301}.");
    f.assert_outside_untouched();
}

#[test]
fn b1_trailing_dot_and_space_are_other_names() {
    let f = fixture(&[]);
    check_literal_name(&f, "inside.txt.");
    check_literal_name(&f, "inside.txt ");
    assert_eq!(
        fs::read_to_string(f.root().join("inside.txt")).unwrap(),
        "inside"
    );
}

#[test]
fn b1_alternate_data_stream_is_a_literal_name() {
    check_literal_name(&fixture(&[]), "inside.txt::$DATA");
}

#[test]
fn b1_overlong_path_is_a_clear_error() {
    let f = fixture(&[]);
    for (requested, reason) in [
        (
            "a/".repeat(2500),
            "bytes long once joined to the root, over the 4095-byte limit",
        ),
        ("x".repeat(5000), "over the 4095-byte limit"),
        (
            format!("{}/f", "y".repeat(300)),
            "a name in it is 300 bytes long",
        ),
    ] {
        for result in [
            f.ws.resolve(&requested)
                .and_then(|p| f.ws.write_text_atomic(&p, "x")),
            f.ws.resolve(&requested).and_then(|p| f.ws.create_dir(&p)),
        ] {
            match result {
                Err(e @ ScopeError::InvalidPath { .. }) => {
                    assert!(e.to_string().contains(reason), "{e}");
                }
                other => panic!("{}…: {other:?}", &requested[..20]),
            }
        }
    }
    assert_eq!(fs::read_dir(f.root()).unwrap().count(), 1);
    f.assert_outside_untouched();
}

// B2: prefix twins of the root.

#[test]
fn b2_prefix_twin_with_underscore() {
    let f = fixture(&[]);
    f.assert_every_operation_denied("$BASE/ws_evil/secret", outside);
    f.assert_every_operation_denied("$BASE/ws_evil", outside);
    f.assert_every_operation_denied("../ws_evil/secret", outside);
}

#[test]
fn b2_prefix_twin_with_dash() {
    let f = fixture(&[]);
    f.assert_every_operation_denied("$BASE/ws-2/x", outside);
    f.assert_every_operation_denied("$BASE/ws/../ws-2/x", outside);
}

// B3: symlinks out of the root, for read, write, list and walk.

/// A walk from the root yields only regular files inside it and never descends into a link.
#[track_caller]
fn assert_walk_stays_inside(f: &Fixture) {
    let root = f.ws.resolve(".").unwrap();
    let files = walk(&f.ws, &root).unwrap();
    for file in &files {
        let abs = f.root().join(file);
        assert!(fs::symlink_metadata(&abs).unwrap().is_file(), "{file}");
        f.assert_not_leaked(&f.ws.read_text(&f.ws.resolve(file).unwrap()).unwrap().0);
    }
    assert!(files.contains(&"inside.txt".to_owned()), "{files:?}");
    let listing = f.ws.list_dir(&root).unwrap();
    f.assert_not_leaked(&format!("{listing:?}"));
}

#[test]
fn b3_link_to_the_sentinel_file() {
    let f = fixture(&["ws/link -> $BASE/outside/f"]);
    f.assert_every_operation_denied("link", symlink_escape);
    assert_walk_stays_inside(&f);
    let root = f.ws.resolve(".").unwrap();
    let listed = f.ws.list_dir(&root).unwrap();
    assert!(
        listed
            .iter()
            .any(|e| e.name == "link" && e.kind == EntryKind::Symlink)
    );
}

#[test]
fn b3_link_to_the_filesystem_root() {
    let f = fixture(&["ws/dir -> /"]);
    f.assert_every_operation_denied("dir", symlink_escape);
    f.assert_every_operation_denied("dir/etc/passwd", symlink_escape);
    let sentinel = format!("dir{}/outside/f", f.base.display());
    f.assert_every_operation_denied(&sentinel, symlink_escape);
    f.assert_every_operation_denied("dir/tmp/new.txt", symlink_escape);
    assert_walk_stays_inside(&f);
}

#[test]
fn b3_chain_of_links_out() {
    let f = fixture(&["ws/a -> b", "ws/b -> $BASE/outside"]);
    f.assert_every_operation_denied("a", symlink_escape);
    f.assert_every_operation_denied("a/f", symlink_escape);
    f.assert_every_operation_denied("a/dir/secret", symlink_escape);
    f.assert_every_operation_denied("a/new.txt", symlink_escape);
    assert_walk_stays_inside(&f);
}

#[test]
fn b3_dangling_link_as_a_write_target() {
    let f = fixture(&[
        "ws/dangling_out -> $BASE/outside/new.txt",
        "ws/dangling_in -> missing.txt",
    ]);
    f.assert_every_operation_denied("dangling_out", symlink_escape);
    f.assert_every_operation_denied("dangling_in", invalid);
    f.assert_every_operation_denied("dangling_in/x", invalid);
    assert!(!f.base.join("outside/new.txt").exists());
    assert!(!f.root().join("missing.txt").exists());
    assert_walk_stays_inside(&f);
}

#[test]
fn b3_relative_dotdot_link() {
    let f = fixture(&[
        "ws/sub/rel -> ../../outside/f",
        "ws/sub/reldir -> ../../outside",
    ]);
    f.assert_every_operation_denied("sub/rel", symlink_escape);
    f.assert_every_operation_denied("sub/reldir/f", symlink_escape);
    f.assert_every_operation_denied("sub/reldir/new.txt", symlink_escape);
    assert_walk_stays_inside(&f);
}

// B4: a directory on the path flips between a real directory and a link out.

/// Swap the names `a` and `b` atomically, so `ws/d` is never missing.
fn exchange(a: &Path, b: &Path) {
    #[cfg(any(target_os = "linux", target_os = "android"))]
    {
        use rustix::fs::{CWD, RenameFlags, renameat_with};
        if renameat_with(CWD, a, CWD, b, RenameFlags::EXCHANGE).is_ok() {
            return;
        }
    }
    let tmp = a.with_extension("swap");
    fs::rename(a, &tmp).unwrap();
    fs::rename(b, a).unwrap();
    fs::rename(&tmp, b).unwrap();
}

#[test]
fn b4_race_between_check_and_open_never_leaves_the_root() {
    const FLIPS: usize = 10_000;
    let f = fixture(&["ws/d/f => inside-0", "ws/link -> $BASE/outside"]);
    let d = f.root().join("d");
    let link = f.root().join("link");
    // Resolved while `d` is a real directory: the window the race attacks.
    let early = f.ws.resolve("d/f").unwrap();
    let early_new = f.ws.resolve("d/new.txt").unwrap();
    let early_dir = f.ws.resolve("d").unwrap();

    let done = Arc::new(AtomicBool::new(false));
    let start = Arc::new(Barrier::new(2));
    let flipper = {
        let (done, start) = (done.clone(), start.clone());
        std::thread::spawn(move || {
            start.wait();
            for _ in 0..FLIPS {
                exchange(&d, &link);
            }
            done.store(true, Ordering::SeqCst);
        })
    };
    start.wait();
    let (mut ok, mut refused, mut i) = (0usize, 0usize, 0usize);
    let mut returned = Vec::new();
    while !done.load(Ordering::SeqCst) {
        i += 1;
        let late = f.ws.resolve("d/f");
        for p in [Ok(early.clone()), late] {
            let read = p.and_then(|p| f.ws.read_text(&p).map(|(t, _)| (p, t)));
            match read {
                Ok((p, text)) => {
                    ok += 1;
                    assert!(text.starts_with("inside-"), "{text}");
                    returned.push(text);
                    if let Err(e) = f.ws.write_text_atomic(&p, &format!("inside-{i}")) {
                        returned.push(e.to_string());
                    }
                }
                Err(e) => {
                    refused += 1;
                    returned.push(e.to_string());
                }
            }
        }
        for result in [
            f.ws.create_text_exclusive(&early_new, "new")
                .map(|()| String::new()),
            f.ws.remove_file(&early_new).map(|()| String::new()),
            f.ws.list_dir(&early_dir).map(|l| format!("{l:?}")),
            f.ws.stat(&early).map(|s| format!("{s:?}")),
        ] {
            returned.push(match result {
                Ok(s) => s,
                Err(e) => e.to_string(),
            });
        }
    }
    flipper.join().unwrap();
    for r in &returned {
        f.assert_not_leaked(r);
    }
    assert!(ok + refused > 0, "nothing ran during the race");
    // The flips came in pairs, so `d` is the real directory again, with our last write.
    assert!(
        fs::read_to_string(f.root().join("d/f"))
            .unwrap()
            .starts_with("inside-")
    );
    assert_eq!(
        fs::read_to_string(f.base.join("outside/f")).unwrap(),
        f.sentinel
    );
    assert!(!f.base.join("outside/new.txt").exists());
    f.assert_outside_untouched();
}

// B5: creating below a directory link that leaves the root.

#[test]
fn b5_create_through_a_link_to_an_outside_directory() {
    let f = fixture(&["ws/link_to_outside_dir -> $BASE/outside"]);
    f.assert_every_operation_denied("link_to_outside_dir/new.txt", symlink_escape);
    f.assert_every_operation_denied("link_to_outside_dir/deeper/new.txt", symlink_escape);
    f.assert_every_operation_denied("link_to_outside_dir/dir/new.txt", symlink_escape);
    assert!(!f.base.join("outside/new.txt").exists());
}

#[test]
fn b5_create_below_a_directory_swapped_after_resolution() {
    let f = fixture(&["ws/sub/", "ws/keep/kept.txt => kept"]);
    let new_file = f.ws.resolve("sub/new.txt").unwrap();
    let deep = f.ws.resolve("sub/a/b/new.txt").unwrap();
    let new_dir = f.ws.resolve("sub/made").unwrap();
    let kept = f.ws.resolve("keep/kept.txt").unwrap();
    fs::remove_dir(f.root().join("sub")).unwrap();
    symlink(f.base.join("outside"), f.root().join("sub")).unwrap();
    let swapped = |e: &ScopeError| matches!(e, ScopeError::InvalidPath { reason, .. } if reason.contains("symlink appeared"));
    for result in [
        f.ws.write_text_atomic(&new_file, "x"),
        f.ws.create_text_exclusive(&new_file, "x"),
        f.ws.write_text_atomic(&deep, "x"),
        f.ws.create_dir(&new_dir),
        f.ws.copy_file(&kept, &new_file).map(drop),
        f.ws.rename(&kept, &new_file),
    ] {
        let e = result.unwrap_err();
        assert!(e.is_denial() && swapped(&e), "{e:?}");
    }
    assert_eq!(
        fs::read_to_string(f.root().join("keep/kept.txt")).unwrap(),
        "kept"
    );
    assert!(!f.base.join("outside/new.txt").exists());
    assert!(!f.base.join("outside/made").exists());
    assert!(!f.base.join("outside/a").exists());
    f.assert_outside_untouched();
}

// B8: non-regular and huge files.

/// Run `op` on a thread; it must finish within five seconds (a blocked open would not).
fn within_timeout<T: Send + 'static>(op: impl FnOnce() -> T + Send + 'static) -> T {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(op());
    });
    rx.recv_timeout(Duration::from_secs(5))
        .expect("the operation blocked (a FIFO or device was opened blocking)")
}

#[test]
fn b8_fifo_is_refused_without_blocking() {
    let f = fixture(&[]);
    rustix::fs::mkfifoat(rustix::fs::CWD, f.root().join("p"), rustix::fs::Mode::RWXU).unwrap();
    let ws = Arc::new(Workspace::new(vec![f.root()]).unwrap());
    let p = ws.resolve("p").unwrap();
    let results = within_timeout({
        let (ws, p) = (ws.clone(), p.clone());
        move || {
            let fresh = ws.resolve("copy.txt").unwrap();
            vec![
                ws.read_text(&p).map(drop),
                ws.copy_file(&p, &fresh).map(drop),
                ws.write_text_atomic(&p, "x"),
                ws.remove_file(&p),
            ]
        }
    });
    for result in results {
        match result {
            Err(ScopeError::NotRegularFile { kind, .. }) => assert_eq!(kind, "FIFO"),
            other => panic!("{other:?}"),
        }
    }
    assert_eq!(ws.kind_of(&p).unwrap(), EntryKind::Other);
    // A walk does not yield it.
    let files = walk(&ws, &ws.resolve(".").unwrap()).unwrap();
    assert_eq!(files, ["inside.txt"]);
    f.assert_outside_untouched();
}

#[test]
fn b8_link_to_dev_zero_is_refused_without_reading() {
    let f = fixture(&["ws/z -> /dev/zero"]);
    let ws = Arc::new(Workspace::new(vec![f.root()]).unwrap());
    let result = within_timeout({
        let ws = ws.clone();
        move || ws.resolve("z").and_then(|p| ws.read_text(&p))
    });
    assert!(
        matches!(result, Err(ScopeError::SymlinkEscape { .. })),
        "{result:?}"
    );
    f.assert_every_operation_denied("z", symlink_escape);
    f.assert_every_operation_denied("/dev/zero", outside);
}

#[test]
fn b8_huge_sparse_file_is_refused_from_its_size() {
    const SIZE: u64 = 5 * 1024 * 1024 * 1024;
    let f = fixture(&[]);
    fs::File::create(f.root().join("huge"))
        .unwrap()
        .set_len(SIZE)
        .unwrap();
    let p = f.ws.resolve("huge").unwrap();
    let fresh = f.ws.resolve("copy").unwrap();
    let started = Instant::now();
    for result in [
        f.ws.read_text(&p).map(drop),
        f.ws.copy_file(&p, &fresh).map(drop),
    ] {
        match result {
            Err(ScopeError::TooLarge { size, limit, .. }) => {
                assert_eq!(
                    (size, limit),
                    (SIZE, cairn_workspace::DEFAULT_MAX_FILE_SIZE)
                );
            }
            other => panic!("{other:?}"),
        }
    }
    // Reading 5 GB of zeros would take far longer: the size came from `stat`.
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "{:?}",
        started.elapsed()
    );
    assert!(!f.root().join("copy").exists());
    let files = walk(&f.ws, &f.ws.resolve(".").unwrap()).unwrap();
    assert_eq!(files, ["inside.txt"]);
    f.assert_outside_untouched();
}

#[test]
fn b8_binary_blob_is_detected() {
    let f = fixture(&[]);
    let mut blob = b"\x7fELF\x02\x01\x01".to_vec();
    blob.extend([0u8; 64]);
    blob.extend(b"text after the header");
    fs::write(f.root().join("blob.bin"), &blob).unwrap();
    let p = f.ws.resolve("blob.bin").unwrap();
    let e = f.ws.read_text(&p).unwrap_err();
    assert!(matches!(e, ScopeError::Binary { .. }), "{e:?}");
    assert!(e.to_string().contains("looks like a binary file"), "{e}");
    // Copying is byte-for-byte and does not care.
    let copy = f.ws.resolve("copy.bin").unwrap();
    assert_eq!(f.ws.copy_file(&p, &copy).unwrap(), blob.len() as u64);
    assert_eq!(fs::read(f.root().join("copy.bin")).unwrap(), blob);
    f.assert_outside_untouched();
}
