//! `checksum`: SHA-256 (or SHA-1, SHA-512, MD5) of workspace files, streamed, or of given text;
//! optionally compared with an expected value.

use std::io::Read;

use cairn_toolkit::reply::{error, text};
use cairn_toolkit::{CallContext, Category, Effect, JsonSchema, Paths, Tool};
use rmcp::model::CallToolResult;
use serde::Deserialize;

use crate::system::System;
use crate::util::with_workspace;

/// Files one call hashes; each is streamed, so their size is not capped.
const MAX_FILES: usize = 50;
/// Bytes of given text hashed; larger inputs belong in a file.
const MAX_TEXT: usize = 16 * 1024 * 1024;

/// The `checksum` tool.
pub struct Checksum;

/// A hash algorithm.
#[derive(Debug, Clone, Copy, Default, Deserialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum Algorithm {
    #[default]
    Sha256,
    Sha512,
    Sha1,
    Md5,
}

/// Arguments of `checksum`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// Workspace files to hash (relative to the workspace root), at most 50.
    #[serde(default)]
    files: Vec<String>,
    /// Text to hash instead of files (its UTF-8 bytes, exactly as given).
    #[serde(default)]
    text: Option<String>,
    /// sha256 (default), sha512, sha1 or md5 (sha1 and md5 are broken for security: use them
    /// only to match published sums).
    #[serde(default)]
    algorithm: Algorithm,
    /// A hex digest to compare with (case and surrounding spaces ignored); each result says
    /// whether it matches.
    #[serde(default)]
    expected: Option<String>,
}

/// One running hash; each crate keeps its own digest trait version, so no shared trait.
enum Hasher {
    Sha256(sha2::Sha256),
    Sha512(sha2::Sha512),
    Sha1(sha1::Sha1),
    Md5(md5::Md5),
}

impl Hasher {
    fn new(a: Algorithm) -> Hasher {
        use md5::Digest as _;
        match a {
            Algorithm::Sha256 => Hasher::Sha256(sha2::Digest::new()),
            Algorithm::Sha512 => Hasher::Sha512(sha2::Digest::new()),
            Algorithm::Sha1 => Hasher::Sha1(sha1::Digest::new()),
            Algorithm::Md5 => Hasher::Md5(md5::Md5::new()),
        }
    }

    fn update(&mut self, bytes: &[u8]) {
        match self {
            Hasher::Sha256(h) => sha2::Digest::update(h, bytes),
            Hasher::Sha512(h) => sha2::Digest::update(h, bytes),
            Hasher::Sha1(h) => sha1::Digest::update(h, bytes),
            Hasher::Md5(h) => md5::Digest::update(h, bytes),
        }
    }

    fn hex(self) -> String {
        match self {
            Hasher::Sha256(h) => hex::encode(sha2::Digest::finalize(h)),
            Hasher::Sha512(h) => hex::encode(sha2::Digest::finalize(h)),
            Hasher::Sha1(h) => hex::encode(sha1::Digest::finalize(h)),
            Hasher::Md5(h) => hex::encode(md5::Digest::finalize(h).as_slice()),
        }
    }
}

/// The hex digest of `bytes` with `algorithm`.
pub(crate) fn digest(algorithm: Algorithm, bytes: &[u8]) -> String {
    let mut h = Hasher::new(algorithm);
    h.update(bytes);
    h.hex()
}

fn name(a: Algorithm) -> &'static str {
    match a {
        Algorithm::Sha256 => "sha256",
        Algorithm::Sha512 => "sha512",
        Algorithm::Sha1 => "sha1",
        Algorithm::Md5 => "md5",
    }
}

fn verdict(sum: &str, expected: Option<&str>) -> &'static str {
    match expected {
        None => "",
        Some(e) if e.trim().eq_ignore_ascii_case(sum) => "  MATCHES the expected value",
        Some(_) => "  DOES NOT MATCH the expected value",
    }
}

impl Tool for Checksum {
    type Host = System;
    type Args = Args;
    const NAME: &'static str = "checksum";
    const TITLE: &'static str = "Checksum";
    const DESCRIPTION: &'static str = "Compute the SHA-256 (or SHA-512, SHA-1, MD5) of workspace files (streamed, any size) or of given text, and optionally check it against an expected hex digest; use it to verify downloads or compare files.";
    const CATEGORY: Category = Category::System;
    const EFFECT: Effect = Effect::Read;
    const AGENT_ONLY: bool = false;

    fn paths(args: &Args) -> Paths {
        Paths::read_all(args.files.iter().cloned())
    }

    async fn call(host: &System, args: Args, cx: CallContext) -> CallToolResult {
        let algo = args.algorithm;
        let expected = args.expected.clone();
        if let Some(t) = &args.text {
            if !args.files.is_empty() {
                return error("give either `text` or `files`, not both");
            }
            if t.len() > MAX_TEXT {
                return error(format!(
                    "the text is {} bytes, over the {MAX_TEXT}-byte cap: write it to a file and hash the file",
                    t.len()
                ));
            }
            let sum = digest(algo, t.as_bytes());
            return text(format!(
                "{} of the text ({} bytes): {sum}{}",
                name(algo),
                t.len(),
                verdict(&sum, expected.as_deref())
            ));
        }
        if args.files.is_empty() {
            return error("nothing to hash: give `files` (workspace paths) or `text`");
        }
        if args.files.len() > MAX_FILES {
            return error(format!(
                "{} files asked, at most {MAX_FILES} per call: split the list",
                args.files.len()
            ));
        }
        let files = args.files;
        with_workspace(host, Self::NAME, move |ws| {
            let mut lines = Vec::new();
            let mut failed = 0;
            for f in &files {
                let result = ws
                    .resolve(f)
                    .and_then(|p| ws.open_read(&p).map(|file| (p, file)))
                    .map_err(|e| e.to_string())
                    .and_then(|(p, mut file)| {
                        let mut h = Hasher::new(algo);
                        let mut buf = vec![0u8; 64 * 1024];
                        let mut total: u64 = 0;
                        loop {
                            if cx.cancel.is_cancelled() {
                                return Err("cancelled".to_owned());
                            }
                            let n = file.read(&mut buf).map_err(|e| e.to_string())?;
                            if n == 0 {
                                break;
                            }
                            total += n as u64;
                            h.update(buf.get(..n).unwrap_or_default());
                        }
                        Ok((p.display_path(), total, h.hex()))
                    });
                match result {
                    Ok((shown, size, sum)) => lines.push(format!(
                        "{sum}  {shown} ({size} bytes){}",
                        verdict(&sum, expected.as_deref())
                    )),
                    Err(e) => {
                        failed += 1;
                        lines.push(format!("{f}: not hashed: {e}"));
                    }
                }
            }
            let out = format!("{}:\n{}", name(algo), lines.join("\n"));
            if failed == files.len() {
                error(out)
            } else {
                text(out)
            }
        })
        .await
    }
}
