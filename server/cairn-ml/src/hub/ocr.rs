//! `ocr_image`: the text of an image in the workspace, read by Tesseract in a fresh sandbox
//! container of the OCR image (`[sandbox] images.ocr`), the workspace mounted read-only and no
//! network, as cairn-devops runs its linters. The file is checked to be an image (its magic
//! bytes) and not too large before any container starts.

use std::io::Read;

use cairn_sandbox::engine::WORKSPACE_DIR;
use cairn_sandbox::{Ending, RunOptions};
use cairn_toolkit::reply::{error, text};
use cairn_toolkit::{CallContext, Category, Effect, JsonSchema, Paths, Tool};
use cairn_workspace::EntryKind;
use rmcp::model::CallToolResult;
use serde::Deserialize;

use crate::ml::Ml;

/// The image OCR runs in when `[sandbox] images.ocr` is not set: Tesseract with English, built
/// by `scripts/sandbox-images`.
pub const DEFAULT_IMAGE: &str = "cairn-test/ocr:1";
/// Largest image read, in bytes.
const MAX_IMAGE_BYTES: u64 = 25 * 1024 * 1024;
/// Most characters of text returned.
const MAX_TEXT: usize = 60_000;
/// Marks the version line the script prints first.
const VERSION_MARK: &str = "@@version ";
/// The script: Tesseract's version, then the text of `$1` in language `$2` with page
/// segmentation `$3`; a language that is not installed lists those that are. One thread, so
/// a small process limit is enough.
const SCRIPT: &str = "export OMP_THREAD_LIMIT=1 HOME=/tmp; printf '@@version %s\\n' \"$(tesseract --version 2>&1 | head -n 1)\"; tesseract \"$1\" stdout -l \"$2\" --psm \"$3\" 2>/tmp/err; rc=$?; if [ $rc -ne 0 ]; then cat /tmp/err >&2; printf '@@langs %s\\n' \"$(tesseract --list-langs 2>/dev/null | tail -n +2 | tr '\\n' ' ')\" >&2; fi; exit $rc";

/// The `ocr_image` tool.
pub struct OcrImage;

/// Arguments of `ocr_image`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// The image, a workspace path (PNG, JPEG, TIFF, GIF, BMP, WebP, PNM).
    path: String,
    /// Tesseract's language code(s): `eng` (the default), `deu`, `fra`, or several joined by `+` (`eng+deu`); only those installed in the OCR image work.
    language: Option<String>,
    /// Tesseract's page segmentation mode, 0 to 13: 3 (the default) is a full page; 6 one block of text; 7 one line; 11 sparse text.
    psm: Option<u8>,
}

impl Tool for OcrImage {
    type Host = Ml;
    type Args = Args;
    const NAME: &'static str = "ocr_image";
    const TITLE: &'static str = "Read the text of an image (OCR)";
    const DESCRIPTION: &'static str = "The text in an image file of the workspace (a scan, screenshot or photo of text: PNG, JPEG, TIFF, ...), read by Tesseract OCR in a sandbox.";
    const CATEGORY: Category = Category::Ai;
    const EFFECT: Effect = Effect::Read;
    const AGENT_ONLY: bool = false;

    fn paths(args: &Args) -> Paths {
        Paths::none().and_read(&args.path)
    }

    async fn call(ml: &Ml, args: Args, cx: CallContext) -> CallToolResult {
        match ocr(ml, args, &cx).await {
            Ok(t) => text(t),
            Err(e) => error(e),
        }
    }
}

/// The image format `head` starts with, if it is one Tesseract reads.
fn image_format(head: &[u8]) -> Option<&'static str> {
    let starts = |m: &[u8]| head.starts_with(m);
    if starts(b"\x89PNG\r\n\x1a\n") {
        Some("PNG")
    } else if starts(b"\xff\xd8\xff") {
        Some("JPEG")
    } else if starts(b"II*\0") || starts(b"MM\0*") {
        Some("TIFF")
    } else if starts(b"GIF87a") || starts(b"GIF89a") {
        Some("GIF")
    } else if starts(b"BM") && head.len() >= 14 {
        Some("BMP")
    } else if starts(b"RIFF") && head.get(8..12) == Some(b"WEBP") {
        Some("WebP")
    } else if head.len() >= 3
        && head[0] == b'P'
        && (b'1'..=b'6').contains(&head[1])
        && head[2].is_ascii_whitespace()
    {
        Some("PNM")
    } else if starts(b"\0\0\0\x0cjP  \r\n\x87\n") || starts(b"\xff\x4f\xff\x51") {
        Some("JPEG 2000")
    } else {
        None
    }
}

/// A language argument checked: codes of letters, digits and `_` (`chi_sim`), joined by `+`.
fn language(value: Option<&str>) -> Result<String, String> {
    let lang = value
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .unwrap_or("eng");
    let ok = lang.len() <= 100
        && lang.split('+').all(|code| {
            (2..=20).contains(&code.len())
                && code.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        });
    if ok {
        Ok(lang.to_owned())
    } else {
        Err(format!(
            "`{lang}` is not a Tesseract language: give codes like `eng`, `deu`, `chi_sim`, joined by `+`"
        ))
    }
}

/// The path as the container sees it (relative to the workspace, its working directory), the
/// image's format, and its size, after checking it is a regular image file within the cap in
/// the first workspace folder (the one mounted).
async fn checked_image(ml: &Ml, asked: &str) -> Result<(String, &'static str, u64), String> {
    let ws = ml
        .workspace
        .as_ref()
        .ok_or("no workspace folder is open, so there is no image to read")?;
    let asked = asked.to_owned();
    cairn_workspace::off_thread(ws, move |ws| {
        let root = ws.resolve(".").map_err(|e| e.to_string())?;
        let path = ws.resolve(&asked).map_err(|e| e.to_string())?;
        if path.root() != root.as_path() {
            return Err(format!(
                "{asked} is in another workspace folder than the first one ({}); only the first \
                 is mounted for OCR",
                root.as_path().display()
            ));
        }
        let stat = ws.stat(&path).map_err(|e| format!("{asked}: {e}"))?;
        if stat.kind != EntryKind::File {
            return Err(format!("{asked} is not a regular file"));
        }
        if stat.len > MAX_IMAGE_BYTES {
            return Err(format!(
                "{asked} is {} MB; OCR reads images up to {} MB: scale it down or crop it",
                stat.len / (1024 * 1024),
                MAX_IMAGE_BYTES / (1024 * 1024)
            ));
        }
        let mut head = [0u8; 16];
        let mut file = ws.open_read(&path).map_err(|e| format!("{asked}: {e}"))?;
        let mut n = 0;
        while n < head.len() {
            match file.read(&mut head[n..]) {
                Ok(0) => break,
                Ok(k) => n += k,
                Err(e) => return Err(format!("{asked}: {e}")),
            }
        }
        let format = image_format(&head[..n]).ok_or_else(|| {
            format!(
                "{asked} is not an image OCR reads (its first bytes are no PNG, JPEG, TIFF, GIF, \
                 BMP, WebP or PNM signature); for a PDF, render its pages to images first"
            )
        })?;
        Ok((path.relative().display().to_string(), format, stat.len))
    })
    .await?
}

async fn ocr(ml: &Ml, args: Args, cx: &CallContext) -> Result<String, String> {
    let lang = language(args.language.as_deref())?;
    let psm = args.psm.unwrap_or(3);
    if psm > 13 {
        return Err(format!(
            "`psm` is {psm}; Tesseract's page segmentation modes are 0 to 13 (3: a page, 6: a block, 7: a line)"
        ));
    }
    let (rel, format, bytes) = checked_image(ml, &args.path).await?;
    let sandbox = ml
        .sandbox
        .as_ref()
        .ok_or("OCR runs in the sandbox, and no sandbox service is set up here")?;
    let ws = ml
        .workspace
        .as_ref()
        .ok_or("no workspace folder is open, so there is no image to read")?;
    let image = sandbox
        .config()
        .images
        .get("ocr")
        .cloned()
        .unwrap_or_else(|| DEFAULT_IMAGE.to_owned());
    let engine = sandbox.engine().await.map_err(|e| e.to_string())?;
    // The engine's message already says how to get the image (`scripts/sandbox-images`, or
    // `sandbox.images.ocr`).
    engine
        .check_image("ocr", &image)
        .await
        .map_err(|e| e.to_string())?;
    let mount = sandbox.workspace_mount(ws, false).await?;
    let argv = vec![
        "sh".to_owned(),
        "-c".to_owned(),
        SCRIPT.to_owned(),
        "ocr".to_owned(),
        // `./` keeps a name starting with `-` from reading as an option.
        format!("./{rel}"),
        lang.clone(),
        psm.to_string(),
    ];
    let options = RunOptions {
        network: false,
        workspace: Some(mount),
        working_dir: Some(WORKSPACE_DIR.to_owned()),
    };
    let report = sandbox
        .run_program(&image, argv, None, options, &cx.cancel)
        .await
        .map_err(|e| e.to_string())?;
    let limits = sandbox.limits();
    let exit = match report.ending {
        Ending::Exited(code) => code,
        Ending::Timeout => {
            return Err(format!(
                "OCR was stopped at the {} s time limit (sandbox.timeout_secs); a smaller or \
                 cropped image reads faster",
                limits.timeout.as_secs()
            ));
        }
        Ending::OutOfMemory => {
            return Err(format!(
                "OCR used more than the {} MiB memory limit (sandbox.memory_mib); scale the \
                 image down",
                limits.memory_bytes / (1024 * 1024)
            ));
        }
        Ending::ProcessLimit => {
            return Err("OCR reached the sandbox's process limit and was stopped".into());
        }
        Ending::Cancelled => return Err("cancelled".into()),
    };
    let (version, out) = match report.stdout.strip_prefix(VERSION_MARK) {
        Some(rest) => match rest.split_once('\n') {
            Some((v, out)) => (v.trim().to_owned(), out.to_owned()),
            None => (rest.trim().to_owned(), String::new()),
        },
        None => ("tesseract".to_owned(), report.stdout.clone()),
    };
    if exit != 0 {
        let (said, langs) = match report.stderr.split_once("@@langs ") {
            Some((said, langs)) => (said.trim().to_owned(), langs.trim().to_owned()),
            None => (report.stderr.trim().to_owned(), String::new()),
        };
        if said.contains("Failed loading language") || said.contains("Could not initialize") {
            return Err(format!(
                "language `{lang}` is not installed in the OCR image ({image}); installed: {}",
                if langs.is_empty() {
                    "none listed"
                } else {
                    &langs
                }
            ));
        }
        return Err(format!(
            "{version} could not read {rel} (exit {exit}): {}",
            cairn_toolkit::table::cut(&said, 1500)
        ));
    }
    let found = out.trim();
    let heading = format!(
        "Text of {rel} ({format}, {} KB; {version}, language {lang}, psm {psm})",
        bytes.div_ceil(1024)
    );
    if found.is_empty() {
        return Ok(format!(
            "{heading}: no text found. For a single line try psm 7, for scattered text psm 11; \
             small or blurred text reads better scaled up."
        ));
    }
    let total = found.chars().count();
    let mut shown: String = found.chars().take(MAX_TEXT).collect();
    if total > MAX_TEXT || report.truncated {
        shown.push_str(&format!(
            "\n… (the text was cut: {} characters shown)",
            MAX_TEXT.min(total)
        ));
    }
    Ok(format!("{heading}:\n\n{shown}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_are_known_by_their_first_bytes() {
        assert_eq!(image_format(b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR"), Some("PNG"));
        assert_eq!(image_format(b"\xff\xd8\xff\xe0\0\x10JFIF"), Some("JPEG"));
        assert_eq!(image_format(b"II*\0\x08\0\0\0"), Some("TIFF"));
        assert_eq!(image_format(b"P6\n640 480\n255\n"), Some("PNM"));
        assert_eq!(image_format(b"RIFF\0\0\0\0WEBPVP8 "), Some("WebP"));
        assert_eq!(image_format(b"%PDF-1.7\n"), None);
        assert_eq!(image_format(b"hello world"), None);
        assert_eq!(image_format(b""), None);
    }

    #[test]
    fn languages_are_codes() {
        assert_eq!(language(None).as_deref(), Ok("eng"));
        assert_eq!(language(Some("eng+deu")).as_deref(), Ok("eng+deu"));
        assert_eq!(language(Some("chi_sim")).as_deref(), Ok("chi_sim"));
        assert!(language(Some("eng; rm -rf /")).is_err());
        assert!(language(Some("../x")).is_err());
    }
}
