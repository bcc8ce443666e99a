//! `archive_create`: workspace files and directories packed into a tar, tar.gz, tar.zst or zip
//! (or one file into .gz/.zst), written through the workspace scope.
//!
//! Protected files: those named explicitly are declared by `paths()`, so the user is asked about
//! exactly them; those met while walking a directory (a `.env` in a folder) are left out and
//! listed as left out, never packed silently: packing a secret into a file that gets shared is
//! what the protection exists to stop, and one question per walked secret would be noise.

use std::io::{self, Read, Write};

use cairn_toolkit::reply::{error, text};
use cairn_toolkit::{CallContext, Category, Effect, JsonSchema, Paths, Tool};
use cairn_workspace::{EntryKind, ScopeError, WalkOptions, Workspace, WorkspacePath};
use rmcp::model::CallToolResult;
use serde::Deserialize;

use crate::system::System;
use crate::util::archive::Kind;
use crate::util::with_workspace;

/// Bytes of the files packed (the archive is built in memory before it is written).
const MAX_INPUT: u64 = 256 << 20;
/// Files packed.
const MAX_FILES: usize = 10_000;
/// Names listed as left out.
const MAX_LISTED: usize = 30;

/// The `archive_create` tool.
pub struct ArchiveCreate;

/// Arguments of `archive_create`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// The archive to write in the workspace; its name says the kind: .tar, .tar.gz/.tgz,
    /// .tar.zst, .zip, or .gz/.zst for a single file.
    archive: String,
    /// Workspace files and directories to pack (directories recursively; entries are named by
    /// their path from the workspace root).
    sources: Vec<String>,
    /// Also pack files that .gitignore leaves out (default false; `.git` is never packed).
    #[serde(default)]
    include_ignored: bool,
    /// Replace the archive if it exists (default false).
    #[serde(default)]
    overwrite: bool,
}

/// What was gathered to pack.
struct Gathered {
    files: Vec<(WorkspacePath, u64)>,
    excluded: Vec<String>,
    total: u64,
}

fn gather(
    ws: &Workspace,
    args: &Args,
    archive: &WorkspacePath,
    cancel: &tokio_util::sync::CancellationToken,
) -> Result<Gathered, String> {
    let mut g = Gathered {
        files: Vec::new(),
        excluded: Vec::new(),
        total: 0,
    };
    let options = WalkOptions {
        glob: None,
        include_hidden: true,
        include_ignored: args.include_ignored,
    };
    for s in &args.sources {
        let start = ws.resolve(s).map_err(|e| e.to_string())?;
        let kind = ws.kind_of(&start).map_err(|e| e.to_string())?;
        let paths: Vec<WorkspacePath> = match kind {
            EntryKind::Dir => {
                ws.walk_sorted(&start, &options, &|| cancel.is_cancelled())
                    .map_err(|e| e.to_string())?
                    .files
            }
            EntryKind::File => vec![start],
            _ => {
                return Err(format!(
                    "{s} is not a regular file or directory (links are not packed)"
                ));
            }
        };
        for p in paths {
            if p.as_path() == archive.as_path()
                || g.files.iter().any(|(f, _)| f.as_path() == p.as_path())
            {
                continue;
            }
            match ws.check(&p, cairn_workspace::Operation::Read) {
                Err(ScopeError::Protected { .. }) => {
                    g.excluded.push(p.display_path());
                    continue;
                }
                Err(e) => return Err(e.to_string()),
                Ok(()) => {}
            }
            let len = ws.stat(&p).map_err(|e| e.to_string())?.len;
            g.total = g.total.saturating_add(len);
            if g.total > MAX_INPUT {
                return Err(format!(
                    "the files add up to more than {MAX_INPUT} bytes (the cap): pack fewer or smaller ones"
                ));
            }
            g.files.push((p, len));
            if g.files.len() > MAX_FILES {
                return Err(format!("more than {MAX_FILES} files (the cap): pack fewer"));
            }
        }
    }
    Ok(g)
}

/// The entry name of `p`: its path from the workspace root, with `/`.
fn entry_name(p: &WorkspacePath) -> String {
    p.relative().to_string_lossy().replace('\\', "/")
}

fn build(
    ws: &Workspace,
    kind: Kind,
    files: &[(WorkspacePath, u64)],
    cx: &CallContext,
) -> Result<Vec<u8>, String> {
    let io_err = |e: io::Error| e.to_string();
    let open = |p: &WorkspacePath| ws.open_read(p).map_err(|e| e.to_string());
    let cancelled = || {
        if cx.cancel.is_cancelled() {
            Err("cancelled".to_owned())
        } else {
            Ok(())
        }
    };
    match kind {
        Kind::Tar | Kind::TarGz | Kind::TarZst => {
            fn pack<W: Write>(
                mut b: tar::Builder<W>,
                files: &[(WorkspacePath, u64)],
                ws: &Workspace,
                open: &dyn Fn(&WorkspacePath) -> Result<std::fs::File, String>,
                cancelled: &dyn Fn() -> Result<(), String>,
            ) -> Result<W, String> {
                for (p, _) in files {
                    cancelled()?;
                    let mut f = open(p)?;
                    let len = f.metadata().map_err(|e| e.to_string())?.len();
                    let mut h = tar::Header::new_gnu();
                    h.set_size(len);
                    h.set_mode(ws.stat(p).ok().and_then(|s| s.mode).unwrap_or(0o644) & 0o777);
                    h.set_mtime(ws.stat(p).ok().and_then(|s| s.modified_unix).unwrap_or(0));
                    h.set_entry_type(tar::EntryType::Regular);
                    // A file that grows while packed is cut at the size in its header.
                    b.append_data(&mut h, entry_name(p), (&mut f).take(len))
                        .map_err(|e| format!("{}: {e}", p.display_path()))?;
                }
                b.into_inner().map_err(|e| e.to_string())
            }
            match kind {
                Kind::Tar => pack(tar::Builder::new(Vec::new()), files, ws, &open, &cancelled),
                Kind::TarGz => pack(
                    tar::Builder::new(flate2::write::GzEncoder::new(
                        Vec::new(),
                        flate2::Compression::default(),
                    )),
                    files,
                    ws,
                    &open,
                    &cancelled,
                )?
                .finish()
                .map_err(io_err),
                _ => pack(
                    tar::Builder::new(
                        zstd::stream::write::Encoder::new(Vec::new(), 3).map_err(io_err)?,
                    ),
                    files,
                    ws,
                    &open,
                    &cancelled,
                )?
                .finish()
                .map_err(io_err),
            }
        }
        Kind::Zip => {
            let mut w = zip::ZipWriter::new(io::Cursor::new(Vec::new()));
            let opts = zip::write::SimpleFileOptions::default()
                .compression_method(zip::CompressionMethod::Deflated)
                .large_file(true);
            for (p, _) in files {
                cancelled()?;
                let mut f = open(p)?;
                w.start_file(entry_name(p), opts)
                    .map_err(|e| e.to_string())?;
                io::copy(&mut f, &mut w).map_err(io_err)?;
            }
            Ok(w.finish().map_err(|e| e.to_string())?.into_inner())
        }
        Kind::Gz | Kind::Zst => {
            let [(p, _)] = files else {
                return Err(format!(
                    "a .gz or .zst holds exactly one file ({} given): use .tar.gz, .tar.zst or .zip for several",
                    files.len()
                ));
            };
            let mut f = open(p)?;
            if kind == Kind::Gz {
                let mut e =
                    flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
                io::copy(&mut f, &mut e).map_err(io_err)?;
                e.finish().map_err(io_err)
            } else {
                let mut e = zstd::stream::write::Encoder::new(Vec::new(), 3).map_err(io_err)?;
                io::copy(&mut f, &mut e).map_err(io_err)?;
                e.finish().map_err(io_err)
            }
        }
    }
}

impl Tool for ArchiveCreate {
    type Host = System;
    type Args = Args;
    const NAME: &'static str = "archive_create";
    const TITLE: &'static str = "Create an archive";
    const DESCRIPTION: &'static str = "Pack workspace files and directories into a .tar, .tar.gz, .tar.zst or .zip (or one file into .gz/.zst) in the workspace, up to 256 MiB of input; protected files met in directories (like .env) are left out and listed; never overwrites unless asked.";
    const CATEGORY: Category = Category::System;
    const EFFECT: Effect = Effect::Write;
    const AGENT_ONLY: bool = true;

    fn paths(args: &Args) -> Paths {
        Paths::read_all(args.sources.iter().cloned()).and_write(&args.archive)
    }

    async fn call(host: &System, args: Args, cx: CallContext) -> CallToolResult {
        let Some(kind) = Kind::of(&args.archive) else {
            return error(Kind::unknown(&args.archive));
        };
        if args.sources.is_empty() {
            return error("no sources: list the workspace files or directories to pack");
        }
        with_workspace(host, Self::NAME, move |ws| {
            let archive = match ws.resolve(&args.archive) {
                Ok(p) => p,
                Err(e) => return error(e.to_string()),
            };
            if !args.overwrite && ws.stat(&archive).is_ok() {
                return error(format!(
                    "{} already exists: pass overwrite: true to replace it, or pick another name",
                    archive.display_path()
                ));
            }
            let g = match gather(ws, &args, &archive, &cx.cancel) {
                Ok(g) => g,
                Err(e) => return error(format!("nothing was written: {e}")),
            };
            if g.files.is_empty() {
                return error(format!(
                    "nothing to pack: the sources hold no files that may be read{}",
                    if g.excluded.is_empty() { String::new() } else { format!(" (left out as protected: {})", g.excluded.join(", ")) }
                ));
            }
            let bytes = match build(ws, kind, &g.files, &cx) {
                Ok(b) => b,
                Err(e) => return error(format!("nothing was written: {e}")),
            };
            let written = if args.overwrite {
                ws.write_bytes_atomic(&archive, &bytes)
            } else {
                ws.create_bytes_exclusive(&archive, &bytes)
            };
            if let Err(e) = written {
                return error(format!("the archive was not written: {e}"));
            }
            let mut out = format!(
                "wrote {} ({}, {} bytes) with {} file{} ({} bytes)",
                archive.display_path(),
                kind.name(),
                bytes.len(),
                g.files.len(),
                if g.files.len() == 1 { "" } else { "s" },
                g.total
            );
            if !g.excluded.is_empty() {
                out.push_str(&format!(
                    "\nleft out {} protected file{} (ask the user to approve reading them and name them explicitly to include them): {}",
                    g.excluded.len(),
                    if g.excluded.len() == 1 { "" } else { "s" },
                    g.excluded.iter().take(MAX_LISTED).cloned().collect::<Vec<_>>().join(", ")
                ));
            }
            text(out)
        })
        .await
    }
}
