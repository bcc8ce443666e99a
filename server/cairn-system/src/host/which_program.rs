//! `which_program`: where a program is on `PATH`, every match, and the version the first one
//! reports.
//!
//! The effect is `Execute`: finding the program only reads directories, but asking its version
//! runs it on the host (not in a sandbox), and `--version` is a convention a program is free to
//! ignore. So the policy asks by default; the run gets an empty environment except `PATH`, no
//! stdin, a 5 s limit and capped output, which keeps an honest program's answer cheap and a
//! dishonest one's damage to what it could do in 5 s without cairn's secrets.

use std::ffi::OsString;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use cairn_toolkit::reply::{error, text};
use cairn_toolkit::table::cut;
use cairn_toolkit::{CallContext, Category, Effect, JsonSchema, Paths, Tool};
use rmcp::model::CallToolResult;
use serde::Deserialize;
use tokio::io::{AsyncRead, AsyncReadExt};
use tokio_util::sync::CancellationToken;

use crate::system::System;

/// The `which_program` tool.
pub struct WhichProgram;

/// Arguments of `which_program`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// A bare program name (`git`, `python3`), never a path.
    name: String,
    /// Run the first match with `--version` (then `-V`) to report its version (default true).
    #[serde(default = "yes")]
    version: bool,
}

fn yes() -> bool {
    true
}

/// How long a version query may take.
const TIME_LIMIT: Duration = Duration::from_secs(5);
/// Bytes of its output kept; the rest is read and dropped so the program never blocks.
const OUTPUT_CAP: usize = 4096;

impl Tool for WhichProgram {
    type Host = System;
    type Args = Args;
    const NAME: &'static str = "which_program";
    const TITLE: &'static str = "Find a program";
    const DESCRIPTION: &'static str = "Find where a program is on cairn's PATH (every match, in order) and its version, by running the first match on the host with `--version` (or `-V`) with no environment but PATH, no input and a 5 s limit. Takes a bare name only.";
    const CATEGORY: Category = Category::System;
    const EFFECT: Effect = Effect::Execute;
    // It changes nothing by intent, so it is offered in chat too; the policy asks (Execute).
    const AGENT_ONLY: bool = false;

    fn paths(_: &Args) -> Paths {
        Paths::none()
    }

    async fn call(system: &System, args: Args, cx: CallContext) -> CallToolResult {
        let name = args.name.trim();
        if !bare_name(name) {
            return error(format!(
                "refused: {name:?} is not a bare program name (letters, digits, `.`, `_`, `+`, `-`; no `/`, not starting with `-` or `.`); give the name as you would type it in a shell"
            ));
        }
        let path_var = std::env::var_os("PATH").unwrap_or_default();
        let (found, skipped) = find(name, &path_var);
        let Some(first) = found.first().cloned() else {
            return error(format!(
                "{name} is not on cairn's PATH ({} directories searched){}",
                std::env::split_paths(&path_var).count(),
                skipped_note(&skipped)
            ));
        };
        let mut out = format!("{name} on PATH (first one runs):\n");
        for (i, p) in found.iter().enumerate() {
            let real = std::fs::canonicalize(p).ok().filter(|r| r != p);
            out.push_str(&format!(
                "{}. {}{}\n",
                i + 1,
                p.display(),
                real.map_or(String::new(), |r| format!(" -> {}", r.display()))
            ));
        }
        out.push_str(&skipped_note(&skipped));
        if args.version {
            out.push_str(&version(&first, &path_var, &cx.cancel).await);
        }
        text(system.shown(&out))
    }
}

fn skipped_note(skipped: &[String]) -> String {
    if skipped.is_empty() {
        String::new()
    } else {
        format!(
            "\n(relative PATH entries skipped, as they depend on the current directory: {})\n",
            skipped.join(", ")
        )
    }
}

/// Whether `name` is a program name and nothing else.
pub(crate) fn bare_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 128
        && !name.starts_with(['-', '.'])
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'+' | b'-'))
}

/// The executable files called `name` in the absolute directories of `path_var`, in order, and
/// the relative entries skipped.
fn find(name: &str, path_var: &OsString) -> (Vec<PathBuf>, Vec<String>) {
    let mut found: Vec<PathBuf> = Vec::new();
    let mut skipped = Vec::new();
    for dir in std::env::split_paths(path_var) {
        if !dir.is_absolute() {
            skipped.push(format!("{:?}", dir.display().to_string()));
            continue;
        }
        let candidate = dir.join(name);
        let executable = std::fs::metadata(&candidate)
            .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0);
        if executable && !found.contains(&candidate) {
            found.push(candidate);
        }
    }
    (found, skipped)
}

/// The version line(s) `program` reports, or why there is none.
async fn version(program: &Path, path_var: &OsString, cancel: &CancellationToken) -> String {
    let mut last = String::new();
    for flag in ["--version", "-V"] {
        match run(program, flag, path_var, cancel).await {
            Ok((true, output)) if !output.trim().is_empty() => {
                return format!(
                    "\nversion (`{} {flag}`, run on the host):\n{}\n",
                    program.display(),
                    first_lines(&output)
                );
            }
            Ok((_, output)) => {
                last = format!(
                    "`{flag}` gave no version{}",
                    if output.trim().is_empty() {
                        String::new()
                    } else {
                        format!(": {}", first_lines(&output))
                    }
                );
            }
            Err(e) => {
                last = e;
                if last.contains("cancelled") || last.contains("limit") {
                    break;
                }
            }
        }
    }
    format!("\nversion: unknown ({last})\n")
}

fn first_lines(output: &str) -> String {
    let lines: Vec<&str> = output
        .lines()
        .filter(|l| !l.trim().is_empty())
        .take(5)
        .collect();
    cut(&lines.join("\n"), 600)
}

/// Reads all of `pipe`, keeping the first [`OUTPUT_CAP`] bytes.
async fn read_capped(pipe: Option<impl AsyncRead + Unpin>) -> Vec<u8> {
    let mut kept = Vec::new();
    let Some(mut pipe) = pipe else {
        return kept;
    };
    let mut buf = [0u8; 4096];
    loop {
        match pipe.read(&mut buf).await {
            Ok(0) | Err(_) => return kept,
            Ok(n) => {
                let room = OUTPUT_CAP.saturating_sub(kept.len());
                kept.extend_from_slice(&buf[..n.min(room)]);
            }
        }
    }
}

/// Runs `program flag` as described in the module docs: whether it succeeded, and its output
/// (stdout, else stderr, which some programs print their version to).
async fn run(
    program: &Path,
    flag: &str,
    path_var: &OsString,
    cancel: &CancellationToken,
) -> Result<(bool, String), String> {
    let mut child = tokio::process::Command::new(program)
        .arg(flag)
        .env_clear()
        .env("PATH", path_var)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        // Its own process group, so a timeout ends whatever it started too.
        .process_group(0)
        .kill_on_drop(true)
        .spawn()
        .map_err(|e| format!("it could not be started: {e}"))?;
    let pid = child.id();
    let (stdout, stderr) = (child.stdout.take(), child.stderr.take());
    let work = async {
        let (out, err) = tokio::join!(read_capped(stdout), read_capped(stderr));
        let status = child.wait().await;
        (out, err, status)
    };
    let outcome = tokio::select! {
        () = cancel.cancelled() => Err("cancelled".to_owned()),
        r = tokio::time::timeout(TIME_LIMIT, work) => r.map_err(|_| {
            format!("`{flag}` did not finish within the {} s limit; it was stopped", TIME_LIMIT.as_secs())
        }),
    };
    let (out, err, status) = match outcome {
        Ok(r) => r,
        Err(e) => {
            if let Some(pid) = pid.and_then(|p| i32::try_from(p).ok()) {
                let _ = nix::sys::signal::killpg(
                    nix::unistd::Pid::from_raw(pid),
                    nix::sys::signal::Signal::SIGKILL,
                );
            }
            return Err(e);
        }
    };
    let ok = status.is_ok_and(|s| s.success());
    let shown = if out.iter().any(|b| !b.is_ascii_whitespace()) {
        out
    } else {
        err
    };
    Ok((ok, String::from_utf8_lossy(&shown).into_owned()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_bare_names_pass() {
        for ok in ["git", "python3", "g++", "clang-format", "node_modules.bin"] {
            assert!(bare_name(ok), "{ok}");
        }
        for bad in [
            "", "/bin/sh", "../sh", "./x", "-rf", ".hidden", "a b", "sh;rm", "a/b",
        ] {
            assert!(!bare_name(bad), "{bad}");
        }
    }
}
