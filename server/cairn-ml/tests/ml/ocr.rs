//! `ocr_image` against the real Tesseract of the OCR image in a real Docker engine: a PNG
//! drawn here with known words (DejaVu Sans, the font cairn-data embeds) reads back as those
//! words; an image with no text, a language not installed. And, with no engine at all, what is
//! refused before any container: a file that is not an image, a bad language or mode, a path
//! outside the workspace.
//!
//! The engine tests are gated by `CAIRN_DOCKER_TESTS=1` (`.ci/run` sets it after
//! `scripts/sandbox-images` built the images); the image is `CAIRN_OCR_IMAGE`, default
//! `cairn-test/ocr:1`.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::sync::Arc;

use cairn_config::SandboxConfig;
use cairn_ml::{Ml, ml_tools};
use cairn_sandbox::Sandbox;
use cairn_select::embed::ModelSpec;
use cairn_test_support::tools::call;
use cairn_toolkit::ToolSet;
use cairn_workspace::{AccessRules, ExactApprovals, Workspace};
use plotters::prelude::*;
use plotters::style::FontStyle;
use serde_json::json;

static FONT: &[u8] = include_bytes!("../../../cairn-data/fonts/DejaVuSans.ttf");

fn enabled() -> bool {
    cairn_test_support::gate(
        "CAIRN_DOCKER_TESTS",
        "with a Docker engine (scripts/sandbox-images)",
    )
}

fn image() -> String {
    std::env::var("CAIRN_OCR_IMAGE").unwrap_or_else(|_| "cairn-test/ocr:1".to_owned())
}

/// The sandbox as a user would configure it, a little tighter; `engine` false points it at an
/// engine that does not exist, so any container it tried to start would fail the call.
fn sandbox(engine: bool) -> Arc<Sandbox> {
    let mut config = SandboxConfig {
        timeout_secs: 60,
        memory_mib: 512,
        tmpfs_mib: 64,
        pids_limit: 64,
        pool_size: 0,
        ..SandboxConfig::default()
    };
    if !engine {
        config.engine = Some("unix:///nonexistent/docker.sock".into());
    }
    config.images.insert("ocr".into(), image());
    Sandbox::new(config)
}

struct Fixture {
    dir: tempfile::TempDir,
    tools: ToolSet<Ml>,
}

fn fixture(engine: bool) -> Fixture {
    let dir = tempfile::tempdir().unwrap();
    let ws = Workspace::new(vec![dir.path().to_path_buf()])
        .unwrap()
        .with_access(
            |_| AccessRules::new("ada@example.com", None, None),
            ExactApprovals::new(),
        );
    let tools =
        ml_tools(Ml::new(Some(Arc::new(ws)), ModelSpec::default()).with_sandbox(sandbox(engine)));
    Fixture { dir, tools }
}

/// Draws `lines` in black on white, 40 px DejaVu Sans, into a PNG at `path`.
fn draw(path: &Path, lines: &[&str]) {
    plotters::style::register_font("sans-serif", FontStyle::Normal, FONT)
        .map_err(|_| "font")
        .unwrap();
    let height = 60 + 70 * u32::try_from(lines.len()).unwrap();
    let root = BitMapBackend::new(path, (1100, height)).into_drawing_area();
    root.fill(&WHITE).unwrap();
    let style = TextStyle::from(("sans-serif", 40).into_font()).color(&BLACK);
    for (i, line) in lines.iter().enumerate() {
        let y = 30 + 70 * i32::try_from(i).unwrap();
        root.draw_text(line, &style, (40, y)).unwrap();
    }
    root.present().unwrap();
}

/// The words of `text`, lower-case, without punctuation.
fn words(text: &str) -> Vec<String> {
    text.split(|c: char| !c.is_alphanumeric() && c != '.')
        .map(|w| w.trim_matches('.').to_lowercase())
        .filter(|w| !w.is_empty())
        .collect()
}

#[tokio::test]
async fn the_words_drawn_in_a_png_come_back() {
    if !enabled() {
        return;
    }
    let f = fixture(true);
    std::fs::create_dir_all(f.dir.path().join("scans")).unwrap();
    draw(
        &f.dir.path().join("scans/note.png"),
        &[
            "The quick brown fox jumps over the lazy dog",
            "Invoice 4521 total 38.50 EUR",
        ],
    );
    let seen = call(&f.tools, "ocr_image", json!({"path": "scans/note.png"})).await;
    assert!(!seen.is_error, "{}", seen.text);
    assert!(
        seen.text.starts_with("Text of scans/note.png (PNG, "),
        "{}",
        seen.text
    );
    assert!(seen.text.contains("tesseract 5"), "{}", seen.text);
    assert!(seen.text.contains("language eng, psm 3"), "{}", seen.text);
    let body = seen.text.split_once(":\n\n").unwrap().1;
    let got = words(body);
    let want = words("The quick brown fox jumps over the lazy dog Invoice 4521 total 38.50 EUR");
    assert_eq!(got, want, "read: {body:?}");
    // One line, read as one line.
    draw(&f.dir.path().join("line.png"), &["Cairn reads this line"]);
    let seen = call(&f.tools, "ocr_image", json!({"path": "line.png", "psm": 7})).await;
    assert!(!seen.is_error, "{}", seen.text);
    assert!(seen.text.contains("psm 7"), "{}", seen.text);
    assert_eq!(
        words(seen.text.split_once(":\n\n").unwrap().1),
        ["cairn", "reads", "this", "line"]
    );
}

#[tokio::test]
async fn a_blank_image_and_a_missing_language_are_said() {
    if !enabled() {
        return;
    }
    let f = fixture(true);
    draw(&f.dir.path().join("blank.png"), &[]);
    let seen = call(&f.tools, "ocr_image", json!({"path": "blank.png"})).await;
    assert!(!seen.is_error, "{}", seen.text);
    assert!(seen.text.contains(": no text found."), "{}", seen.text);
    draw(&f.dir.path().join("words.png"), &["Guten Tag"]);
    let seen = call(
        &f.tools,
        "ocr_image",
        json!({"path": "words.png", "language": "deu"}),
    )
    .await;
    assert!(seen.is_error, "{}", seen.text);
    assert!(
        seen.text
            .contains("language `deu` is not installed in the OCR image"),
        "{}",
        seen.text
    );
    assert!(seen.text.contains("eng"), "{}", seen.text);
}

#[tokio::test]
async fn what_is_not_an_image_is_refused_before_any_container() {
    // No engine: a call that reached the sandbox would fail on the missing socket instead.
    let f = fixture(false);
    std::fs::write(
        f.dir.path().join("report.pdf"),
        b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n",
    )
    .unwrap();
    std::fs::write(f.dir.path().join("photo.png"), b"not really a png").unwrap();
    std::fs::write(f.dir.path().join("empty.png"), b"").unwrap();
    for path in ["report.pdf", "photo.png", "empty.png"] {
        let seen = call(&f.tools, "ocr_image", json!({"path": path})).await;
        assert!(seen.is_error, "{path}: {}", seen.text);
        assert!(
            seen.text
                .starts_with(&format!("{path} is not an image OCR reads")),
            "{path}: {}",
            seen.text
        );
    }
    draw(&f.dir.path().join("ok.png"), &["x"]);
    let seen = call(&f.tools, "ocr_image", json!({"path": "ok.png", "psm": 14})).await;
    assert!(
        seen.is_error && seen.text.contains("0 to 13"),
        "{}",
        seen.text
    );
    let seen = call(
        &f.tools,
        "ocr_image",
        json!({"path": "ok.png", "language": "eng;id"}),
    )
    .await;
    assert!(
        seen.is_error && seen.text.contains("is not a Tesseract language"),
        "{}",
        seen.text
    );
    let seen = call(&f.tools, "ocr_image", json!({"path": "../outside.png"})).await;
    assert!(seen.is_error, "{}", seen.text);
    let seen = call(&f.tools, "ocr_image", json!({"path": "missing.png"})).await;
    assert!(
        seen.is_error && seen.text.contains("missing.png"),
        "{}",
        seen.text
    );
    std::fs::create_dir(f.dir.path().join("dir.png")).unwrap();
    let seen = call(&f.tools, "ocr_image", json!({"path": "dir.png"})).await;
    assert!(
        seen.is_error && seen.text.contains("not a regular file"),
        "{}",
        seen.text
    );
    // A real PNG passes every check and only then needs the engine, which is not there.
    let seen = call(&f.tools, "ocr_image", json!({"path": "ok.png"})).await;
    assert!(seen.is_error, "{}", seen.text);
    assert!(!seen.text.contains("not an image"), "{}", seen.text);
}

#[tokio::test]
async fn an_image_over_the_size_cap_is_refused() {
    let f = fixture(false);
    let file = std::fs::File::create(f.dir.path().join("huge.png")).unwrap();
    // Sparse: 30 MB on paper, nothing on disk.
    file.set_len(30 * 1024 * 1024).unwrap();
    let seen = call(&f.tools, "ocr_image", json!({"path": "huge.png"})).await;
    assert!(seen.is_error, "{}", seen.text);
    assert!(
        seen.text
            .contains("huge.png is 30 MB; OCR reads images up to 25 MB"),
        "{}",
        seen.text
    );
}
