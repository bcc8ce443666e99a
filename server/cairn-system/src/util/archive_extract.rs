//! `archive_extract`: a workspace archive unpacked into a workspace directory, all or nothing.
//! A first pass reads the whole archive through the caps and checks every entry; if any is
//! dangerous (`..`, an absolute path, a link out, a device or FIFO, a size or ratio bomb, an
//! existing file without `overwrite`, a protected path), nothing is written. Only then does a
//! second pass write, through the workspace scope. Links that stay inside are not created (the
//! scope writes files, never links) and are listed as skipped.

use std::collections::HashSet;

use cairn_toolkit::reply::{error, text};
use cairn_toolkit::{CallContext, Category, Effect, JsonSchema, Paths, Tool};
use cairn_workspace::{Operation, ScopeError, Workspace};
use rmcp::model::CallToolResult;
use serde::Deserialize;

use crate::system::System;
use crate::util::archive::{EntryType, Kind, LIMITS, Limits, link_inside, safe_path, walk};
use crate::util::with_workspace;

/// Problems one refusal lists.
const MAX_PROBLEMS: usize = 20;

/// The `archive_extract` tool.
pub struct ArchiveExtract;

/// Arguments of `archive_extract`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// The archive in the workspace: .tar, .tar.gz/.tgz, .tar.zst, .zip, or a single .gz/.zst
    /// file (extracted without its last extension).
    archive: String,
    /// The workspace directory to extract into (created if missing).
    target: String,
    /// Replace files that already exist (default false: an existing file refuses the whole
    /// extraction).
    #[serde(default)]
    overwrite: bool,
}

/// The destination of a safe entry path below `target`.
fn dest(target: &str, rel: &str) -> String {
    let t = target.trim_end_matches('/');
    if t.is_empty() || t == "." {
        rel.to_owned()
    } else {
        format!("{t}/{rel}")
    }
}

/// Pass 1: every problem, the internal links skipped, the protected destinations.
struct Check {
    problems: Vec<String>,
    problem_count: usize,
    skipped: Vec<String>,
    protected: Paths,
}

fn check(
    ws: &Workspace,
    args: &Args,
    kind: Kind,
    shown: &str,
    limits: Limits,
    cx: &CallContext,
) -> Result<Check, String> {
    let file = ws
        .resolve(&args.archive)
        .and_then(|p| ws.open_read(&p))
        .map_err(|e| e.to_string())?;
    let mut c = Check {
        problems: Vec::new(),
        problem_count: 0,
        skipped: Vec::new(),
        protected: Paths::none(),
    };
    let mut seen = HashSet::new();
    let problem = |c: &mut Check, p: String| {
        c.problem_count += 1;
        if c.problems.len() < MAX_PROBLEMS {
            c.problems.push(p);
        }
    };
    walk(file, kind, shown, limits, &cx.cancel, &mut |e, _| {
        let rel = match safe_path(&e.name) {
            Ok(r) => r,
            Err(why) => {
                problem(&mut c, format!("`{}`: {why}", e.name));
                return Ok(());
            }
        };
        match &e.kind {
            EntryType::Special(k) => problem(&mut c, format!("`{}`: a {k}", e.name)),
            EntryType::Symlink(t) | EntryType::Hardlink(t) => {
                if link_inside(&e.kind, &rel) == Some(true) {
                    c.skipped.push(format!("{} ({})", e.name, e.kind.label()));
                } else {
                    problem(
                        &mut c,
                        format!("`{}`: a link to `{t}`, out of the target", e.name),
                    );
                }
            }
            EntryType::Dir | EntryType::File if rel.is_empty() => {}
            EntryType::Dir | EntryType::File => {
                let to = dest(&args.target, &rel);
                if !seen.insert(rel.clone()) && e.kind == EntryType::File {
                    problem(&mut c, format!("`{}` appears twice", e.name));
                }
                match ws.resolve(&to) {
                    Err(err) => problem(&mut c, format!("`{}`: {err}", e.name)),
                    Ok(p) => {
                        match ws.check(&p, Operation::Write) {
                            Err(ScopeError::Protected { .. }) => {
                                c.protected =
                                    std::mem::take(&mut c.protected).and_write(to.clone());
                            }
                            Err(err) => problem(&mut c, format!("`{}`: {err}", e.name)),
                            Ok(()) => {}
                        }
                        if e.kind == EntryType::File && !args.overwrite && ws.stat(&p).is_ok() {
                            problem(
                                &mut c,
                                format!(
                                    "{} already exists (pass overwrite: true to replace it)",
                                    p.display_path()
                                ),
                            );
                        }
                    }
                }
            }
        }
        Ok(())
    })?;
    Ok(c)
}

/// Pass 2: writes every file and directory; how many files were written.
fn write(
    ws: &Workspace,
    args: &Args,
    kind: Kind,
    shown: &str,
    limits: Limits,
    cx: &CallContext,
) -> Result<(usize, u64), String> {
    let file = ws
        .resolve(&args.archive)
        .and_then(|p| ws.open_read(&p))
        .map_err(|e| e.to_string())?;
    let mut written = 0usize;
    let mut bytes = 0u64;
    walk(file, kind, shown, limits, &cx.cancel, &mut |e, data| {
        let Ok(rel) = safe_path(&e.name) else {
            return Err(format!(
                "`{}` changed between the check and the write",
                e.name
            ));
        };
        if rel.is_empty() {
            return Ok(());
        }
        let p = ws
            .resolve(&dest(&args.target, &rel))
            .map_err(|err| err.to_string())?;
        match e.kind {
            EntryType::Dir => ws.create_dir(&p).map_err(|err| err.to_string()),
            EntryType::File => {
                let mut buf = Vec::new();
                data.read_to_end(&mut buf).map_err(|err| err.to_string())?;
                if args.overwrite {
                    ws.write_bytes_atomic(&p, &buf)
                } else {
                    ws.create_bytes_exclusive(&p, &buf)
                }
                .map_err(|err| err.to_string())?;
                written += 1;
                bytes += buf.len() as u64;
                Ok(())
            }
            _ => Ok(()),
        }
    })
    .map_err(|e| format!("{e} (after {written} files were written)"))?;
    Ok((written, bytes))
}

impl Tool for ArchiveExtract {
    type Host = System;
    type Args = Args;
    const NAME: &'static str = "archive_extract";
    const TITLE: &'static str = "Extract an archive";
    const DESCRIPTION: &'static str = "Extract a tar, tar.gz, tar.zst or zip archive (or a single .gz/.zst file) from the workspace into a workspace directory, all or nothing: archives with `..` or absolute paths, links out, devices, over 1 GiB or 100:1 expansion, or existing files (without overwrite) are refused whole, nothing written. Internal links are skipped.";
    const CATEGORY: Category = Category::System;
    const EFFECT: Effect = Effect::Write;
    const AGENT_ONLY: bool = true;

    fn paths(args: &Args) -> Paths {
        Paths::read(&args.archive).and_write(&args.target)
    }

    async fn call(host: &System, args: Args, cx: CallContext) -> CallToolResult {
        let Some(kind) = Kind::of(&args.archive) else {
            return error(Kind::unknown(&args.archive));
        };
        with_workspace(host, Self::NAME, move |ws| {
            let shown = args.archive.clone();
            let c = match check(ws, &args, kind, &shown, LIMITS, &cx) {
                Ok(c) => c,
                Err(why) => {
                    return error(format!("refused, nothing was written: {why}"));
                }
            };
            if let Some(refusal) = c.protected.refusal(ws) {
                return refusal;
            }
            if c.problem_count > 0 {
                let mut out = format!(
                    "refused, nothing was written: {} dangerous or conflicting entr{} in {}:\n- {}",
                    c.problem_count,
                    if c.problem_count == 1 { "y" } else { "ies" },
                    args.archive,
                    c.problems.join("\n- ")
                );
                if c.problem_count > c.problems.len() {
                    out.push_str(&format!(
                        "\n({} more not listed)",
                        c.problem_count - c.problems.len()
                    ));
                }
                return error(out);
            }
            match write(ws, &args, kind, &shown, LIMITS, &cx) {
                Ok((files, bytes)) => {
                    let mut out = format!(
                        "extracted {files} file{} ({bytes} bytes) from {} into {}",
                        if files == 1 { "" } else { "s" },
                        args.archive,
                        if args.target.is_empty() {
                            "."
                        } else {
                            &args.target
                        }
                    );
                    if !c.skipped.is_empty() {
                        out.push_str(&format!(
                            "\nskipped {} link{} inside the archive (links are not created): {}",
                            c.skipped.len(),
                            if c.skipped.len() == 1 { "" } else { "s" },
                            c.skipped
                                .iter()
                                .take(20)
                                .cloned()
                                .collect::<Vec<_>>()
                                .join(", ")
                        ));
                    }
                    text(out)
                }
                Err(e) => error(format!("extraction failed part-way: {e}")),
            }
        })
        .await
    }
}
