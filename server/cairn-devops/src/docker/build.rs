//! `docker_build`: an image from a Dockerfile in the workspace. The context is a tar built here
//! through the workspace scope, so protected files (`.env`, keys) and `.git` never enter it;
//! the build has no network unless the call grants it, the sandbox's memory and CPU limits, a
//! time limit and the run's cancellation; the image is labelled as cairn's.

use std::collections::{HashMap, VecDeque};
use std::io::Read as _;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use bollard::query_parameters::BuildImageOptions;
use cairn_toolkit::reply::{error, text};
use cairn_toolkit::table::cut;
use cairn_toolkit::{CallContext, Category, Effect, JsonSchema, Paths, Tool};
use cairn_workspace::{EntryKind, ScopeError, WalkOptions, Workspace, WorkspacePath};
use futures::StreamExt;
use ignore::gitignore::{Gitignore, GitignoreBuilder};
use rmcp::model::CallToolResult;
use serde::Deserialize;
use tokio_util::sync::CancellationToken;

use super::{BUILT_LABEL, docker, engine_error, short_id};
use crate::DevOps;

/// The largest build context sent, in bytes (it is held in memory while sent).
pub(crate) const MAX_CONTEXT_BYTES: u64 = 128 * 1024 * 1024;
/// The most files a context may have.
pub(crate) const MAX_CONTEXT_FILES: usize = 20_000;
/// Build log lines kept (the last ones).
const LOG_LINES: usize = 60;
/// Default and longest build time.
const DEFAULT_TIMEOUT_SECS: u64 = 600;
const MAX_TIMEOUT_SECS: u64 = 1800;

/// The `docker_build` tool.
pub struct DockerBuild;

/// Arguments of `docker_build`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// The build context: a workspace directory (default: the workspace root).
    #[serde(default = "dot")]
    context: String,
    /// The Dockerfile, relative to the context (default `Dockerfile`).
    #[serde(default = "dockerfile")]
    dockerfile: String,
    /// The image's `name:tag`.
    #[serde(default)]
    tag: Option<String>,
    /// Build arguments (`ARG` values).
    #[serde(default)]
    build_args: HashMap<String, String>,
    /// The Dockerfile stage to build (`--target`).
    #[serde(default)]
    target: Option<String>,
    /// Let `RUN` steps reach the network (downloads, package installs). Off by default: the
    /// build runs with no network.
    #[serde(default)]
    network: bool,
    /// Build without the layer cache.
    #[serde(default)]
    no_cache: bool,
    /// Seconds the build may take (default 600, at most 1800).
    #[serde(default)]
    timeout_secs: Option<u64>,
}

fn dot() -> String {
    ".".to_owned()
}

fn dockerfile() -> String {
    "Dockerfile".to_owned()
}

impl Tool for DockerBuild {
    type Host = DevOps;
    type Args = Args;
    const NAME: &'static str = "docker_build";
    const TITLE: &'static str = "Build a Docker image";
    const DESCRIPTION: &'static str = "Build a Docker image from a Dockerfile in the workspace (context: a workspace folder; protected files such as .env and .git are left out of it). No network during the build unless `network: true`; memory, CPU and time limited. Returns the image id and the last lines of the build log.";
    const CATEGORY: Category = Category::Devops;
    const EFFECT: Effect = Effect::Write;
    const AGENT_ONLY: bool = true;
    const NEEDS_WORKSPACE: bool = true;

    /// The walk of the context skips what may not be read; the Dockerfile itself is named.
    fn paths(args: &Args) -> Paths {
        Paths::walks().and_read(join(&args.context, &args.dockerfile))
    }

    async fn call(host: &DevOps, args: Args, cx: CallContext) -> CallToolResult {
        match build(host, &args, &cx).await {
            Ok(t) => text(t),
            Err(e) => error(e),
        }
    }
}

/// `dockerfile` under `context`, as a workspace path string.
fn join(context: &str, dockerfile: &str) -> String {
    let context = context.trim_end_matches('/');
    if context.is_empty() || context == "." {
        dockerfile.to_owned()
    } else {
        format!("{context}/{dockerfile}")
    }
}

/// The context as sent, and what was left out of it.
pub(crate) struct Context {
    pub(crate) tar: Vec<u8>,
    pub(crate) files: usize,
    /// Files the workspace's rules kept out (protected, unreadable), relative to the context.
    pub(crate) left_out: Vec<String>,
}

/// Tars the regular files under `context` through the workspace scope. Protected and unreadable
/// files are left out and named; `.git` is never walked; symlinks are not followed.
pub(crate) fn context_tar(
    ws: &Workspace,
    context: &str,
    dockerfile: &str,
    cancel: &CancellationToken,
) -> Result<Context, String> {
    let start = ws.resolve(context).map_err(|e| e.to_string())?;
    match ws.kind_of(&start) {
        Ok(EntryKind::Dir) => {}
        Ok(_) => return Err(format!("the context {context} is not a directory")),
        Err(e) => return Err(format!("the context {context}: {e}")),
    }
    let base: PathBuf = start.as_path().to_path_buf();
    let options = WalkOptions {
        glob: None,
        include_hidden: true,
        // Docker sends what .gitignore names too (only .dockerignore filters a context).
        include_ignored: true,
    };
    let ignore = dockerignore(ws, &start, &base);
    let kept = AtomicUsize::new(0);
    let keep = |rel: &Path| {
        // Docker sends the Dockerfile and .dockerignore even when they are ignored.
        let keep = rel == Path::new(dockerfile)
            || rel == Path::new(".dockerignore")
            || !ignore.matched_path_or_any_parents(rel, false).is_ignore();
        if keep {
            kept.fetch_add(1, Ordering::Relaxed);
        }
        keep
    };
    // The walk ends early once the context is too large to send, or the run is cancelled.
    let stop = || kept.load(Ordering::Relaxed) > MAX_CONTEXT_FILES || cancel.is_cancelled();
    // The sorted walk keeps files over the workspace's size cap, which a context needs.
    let walked = ws
        .walk_sorted_where(&start, &options, &stop, &keep)
        .map_err(|e| e.to_string())?;
    if cancel.is_cancelled() {
        return Err("cancelled".into());
    }
    if walked.files.len() > MAX_CONTEXT_FILES {
        return Err(format!(
            "refused: the context {context} has over {MAX_CONTEXT_FILES} files; build from a \
             smaller folder, or leave folders out with a .dockerignore"
        ));
    }
    let mut tar = Vec::new();
    let mut files = 0;
    let mut left_out = Vec::new();
    let mut has_dockerfile = false;
    for path in walked.files {
        let rel = path
            .as_path()
            .strip_prefix(&base)
            .unwrap_or(path.relative())
            .to_string_lossy()
            .into_owned();
        let mut file = match ws.open_read(&path) {
            Ok(f) => f,
            Err(ScopeError::Protected { .. } | ScopeError::NotGranted { .. }) => {
                left_out.push(rel);
                continue;
            }
            Err(e) => {
                left_out.push(format!("{rel} ({e})"));
                continue;
            }
        };
        let meta = file.metadata().map_err(|e| format!("{rel}: {e}"))?;
        if tar.len() as u64 + meta.len() > MAX_CONTEXT_BYTES {
            return Err(format!(
                "refused: the context {context} is over {} MiB; build from a smaller folder or \
                 leave what the image does not need out with a .dockerignore",
                MAX_CONTEXT_BYTES / (1024 * 1024)
            ));
        }
        files += 1;
        // Read at most the size seen, so a file growing meanwhile cannot break the header.
        let mut data = Vec::with_capacity(usize::try_from(meta.len()).unwrap_or(0));
        file.by_ref()
            .take(meta.len())
            .read_to_end(&mut data)
            .map_err(|e| format!("reading {rel}: {e}"))?;
        use std::os::unix::fs::PermissionsExt;
        let mode = if meta.permissions().mode() & 0o111 != 0 {
            0o755
        } else {
            0o644
        };
        if rel == dockerfile {
            has_dockerfile = true;
        }
        append(&mut tar, &rel, mode, &data);
    }
    if !has_dockerfile {
        return Err(format!(
            "no Dockerfile {} in the context {context} (or it may not be read)",
            dockerfile
        ));
    }
    // Two zero blocks end the archive.
    tar.extend_from_slice(&[0; 1024]);
    Ok(Context {
        tar,
        files,
        left_out,
    })
}

/// The context's `.dockerignore` as ignore rules; none when it is missing or may not be read.
/// Docker's patterns are relative to the context root, so each is anchored there.
fn dockerignore(ws: &Workspace, start: &WorkspacePath, base: &Path) -> Gitignore {
    let mut builder = GitignoreBuilder::new(base);
    let text = start
        .as_path()
        .join(".dockerignore")
        .to_str()
        .and_then(|p| ws.resolve(p).ok())
        .and_then(|p| ws.read_text(&p).ok())
        .map(|(text, _)| text)
        .unwrap_or_default();
    for line in text.lines() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let (negated, pattern) = match line.strip_prefix('!') {
            Some(p) => (true, p),
            None => (false, line),
        };
        let pattern = pattern.trim_start_matches("./").trim_start_matches('/');
        let anchored = format!("{}/{pattern}", if negated { "!" } else { "" });
        let _ = builder.add_line(None, &anchored);
    }
    builder.build().unwrap_or_else(|_| Gitignore::empty())
}

/// Appends one regular file to a tar archive (ustar; GNU long names past 100 bytes).
pub(crate) fn append(tar: &mut Vec<u8>, name: &str, mode: u32, data: &[u8]) {
    if name.len() > 100 {
        let mut long = name.as_bytes().to_vec();
        long.push(0);
        tar.extend_from_slice(&header("././@LongLink", 0o644, long.len() as u64, b'L'));
        pad(tar, &long);
    }
    tar.extend_from_slice(&header(name, mode, data.len() as u64, b'0'));
    pad(tar, data);
}

fn pad(tar: &mut Vec<u8>, data: &[u8]) {
    tar.extend_from_slice(data);
    let rest = data.len() % 512;
    if rest != 0 {
        tar.extend(std::iter::repeat_n(0, 512 - rest));
    }
}

fn header(name: &str, mode: u32, size: u64, kind: u8) -> [u8; 512] {
    let mut h = [0u8; 512];
    let put = |h: &mut [u8; 512], at: usize, len: usize, value: &[u8]| {
        let n = value.len().min(len);
        h[at..at + n].copy_from_slice(&value[..n]);
    };
    put(&mut h, 0, 100, name.as_bytes());
    put(&mut h, 100, 8, format!("{mode:07o}\0").as_bytes());
    put(&mut h, 108, 8, b"0000000\0");
    put(&mut h, 116, 8, b"0000000\0");
    put(&mut h, 124, 12, format!("{size:011o}\0").as_bytes());
    put(&mut h, 136, 12, b"00000000000\0");
    h[156] = kind;
    put(&mut h, 257, 8, b"ustar\x0000");
    // The checksum is computed with its own field as spaces.
    h[148..156].copy_from_slice(b"        ");
    let sum: u32 = h.iter().map(|b| u32::from(*b)).sum();
    put(&mut h, 148, 8, format!("{sum:06o}\0 ").as_bytes());
    h
}

async fn build(host: &DevOps, args: &Args, cx: &CallContext) -> Result<String, String> {
    let Some(ws) = host.workspace.clone() else {
        return Err("docker_build needs a workspace folder open".into());
    };
    if let Some(tag) = &args.tag
        && (tag.is_empty() || tag.chars().any(|c| c.is_whitespace()))
    {
        return Err(format!("`{tag}` is not an image name:tag"));
    }
    let dockerfile = args.dockerfile.trim_start_matches("./").to_owned();
    if dockerfile.starts_with('/') || dockerfile.split('/').any(|p| p == "..") {
        return Err("`dockerfile` must be a path inside the context".into());
    }
    let context = args.context.clone();
    let tar_ws: Arc<Workspace> = ws;
    let df = dockerfile.clone();
    let cancel = cx.cancel.clone();
    let ctx = tokio::task::spawn_blocking(move || context_tar(&tar_ws, &context, &df, &cancel))
        .await
        .map_err(|e| format!("building the context failed: {e}"))??;
    let docker = docker(host).await?;
    let limits = host.sandbox.limits();
    let cpu_period: i32 = 100_000;
    let options = BuildImageOptions {
        dockerfile: dockerfile.clone(),
        t: args.tag.clone(),
        rm: true,
        forcerm: true,
        nocache: args.no_cache,
        buildargs: Some(args.build_args.clone()),
        labels: Some(HashMap::from([(BUILT_LABEL.to_owned(), "1".to_owned())])),
        // No network unless granted: a RUN that downloads fails, and says so below.
        networkmode: Some(if args.network { "default" } else { "none" }.to_owned()),
        memory: Some(i32::try_from(limits.memory_bytes).unwrap_or(i32::MAX)),
        memswap: Some(-1),
        cpuperiod: Some(cpu_period),
        cpuquota: Some((limits.cpus * f64::from(cpu_period)) as i32),
        target: args.target.clone().unwrap_or_default(),
        ..Default::default()
    };
    let timeout = Duration::from_secs(
        args.timeout_secs
            .unwrap_or(DEFAULT_TIMEOUT_SECS)
            .clamp(1, MAX_TIMEOUT_SECS),
    );
    let body = bollard::body_full(bytes::Bytes::from(ctx.tar));
    let mut stream = docker.build_image(options, None, Some(body));
    let mut lines: VecDeque<String> = VecDeque::new();
    let mut image_id: Option<String> = None;
    let mut failure: Option<String> = None;
    let deadline = tokio::time::Instant::now() + timeout;
    loop {
        // Dropping the stream closes the connection, which ends the build on the engine.
        let next = tokio::select! {
            () = cx.cancel.cancelled() => {
                failure = Some("cancelled; the build was stopped".into());
                break;
            }
            () = tokio::time::sleep_until(deadline) => {
                failure = Some(format!(
                    "the build took over {} s and was stopped (`timeout_secs` allows up to {MAX_TIMEOUT_SECS})",
                    timeout.as_secs()
                ));
                break;
            }
            next = stream.next() => next,
        };
        let Some(item) = next else { break };
        match item {
            Ok(info) => {
                if let Some(s) = info.stream.as_deref().or(info.status.as_deref()) {
                    for line in s.lines().filter(|l| !l.trim().is_empty()) {
                        if lines.len() == LOG_LINES {
                            lines.pop_front();
                        }
                        lines.push_back(cut(line.trim_end(), 500));
                    }
                }
                if let Some(id) = info.aux.and_then(|a| a.id) {
                    image_id = Some(id);
                }
                if let Some(e) = info.error_detail.and_then(|d| d.message) {
                    failure = Some(e);
                }
            }
            Err(e) => {
                failure = Some(engine_error(&e));
                break;
            }
        }
    }
    drop(stream);
    let mut out = String::new();
    match (&failure, &image_id) {
        (None, Some(id)) => {
            out.push_str(&format!("built image {}", short_id(id)));
            if let Some(tag) = &args.tag {
                out.push_str(&format!(" tagged {tag}"));
            }
            out.push_str(&format!(" ({id}), labelled {BUILT_LABEL}\n"));
        }
        (None, None) => out.push_str("the build ended without an image id\n"),
        (Some(why), _) => {
            out.push_str(&format!("the build failed: {why}\n"));
            if !args.network {
                out.push_str(
                    "(it ran with no network: a step that downloads fails; `network: true` \
                     allows the network, after the user approves)\n",
                );
            }
        }
    }
    out.push_str(&format!(
        "context: {} file(s) from {}",
        ctx.files, args.context
    ));
    if !ctx.left_out.is_empty() {
        let shown: Vec<&str> = ctx.left_out.iter().take(10).map(String::as_str).collect();
        out.push_str(&format!(
            "; left out (protected or unreadable, never sent): {}{}",
            shown.join(", "),
            if ctx.left_out.len() > 10 {
                format!(" and {} more", ctx.left_out.len() - 10)
            } else {
                String::new()
            }
        ));
    }
    out.push_str("\nlast lines of the build log:\n");
    for l in &lines {
        out.push_str(l);
        out.push('\n');
    }
    if failure.is_some() || image_id.is_none() {
        return Err(out);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn tar_headers_are_valid_ustar_with_long_names() {
        let mut tar = Vec::new();
        append(&mut tar, "a.txt", 0o644, b"hello");
        let long = format!("{}/b.txt", "d".repeat(120));
        append(&mut tar, &long, 0o755, b"x");
        // a.txt: header + one data block; the long name: its header, its name, then the file.
        assert_eq!(tar.len(), 512 * 2 + 512 * 2 + 512 * 2);
        assert_eq!(&tar[0..5], b"a.txt");
        assert_eq!(&tar[257..262], b"ustar");
        assert_eq!(&tar[124..135], b"00000000005");
        // The checksum counts the header with its field as spaces.
        let mut h = tar[0..512].to_vec();
        let stored = u32::from_str_radix(std::str::from_utf8(&h[148..154]).unwrap(), 8).unwrap();
        h[148..156].copy_from_slice(b"        ");
        assert_eq!(stored, h.iter().map(|b| u32::from(*b)).sum::<u32>());
        assert_eq!(tar[1024 + 156], b'L');
        assert_eq!(&tar[1536..1536 + 120], "d".repeat(120).as_bytes());
        assert_eq!(tar[2048 + 156], b'0');
    }

    #[test]
    fn the_dockerfile_path_joins_the_context() {
        assert_eq!(join(".", "Dockerfile"), "Dockerfile");
        assert_eq!(join("app/", "Dockerfile"), "app/Dockerfile");
        assert_eq!(join("", "x/D"), "x/D");
    }
}
