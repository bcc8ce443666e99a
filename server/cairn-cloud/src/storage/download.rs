//! `storage_download`: an object into a workspace file, through the workspace's scope.
//!
//! As `web_download` does: the path is declared as written ([`Paths::write`]), so a protected
//! path (`.env`, `.git/`, ...) is refused before anything is fetched; an existing file is
//! replaced only with `overwrite`, never one open in the editor; the edit is reported.
//!
//! Decisions:
//! - The body streams ([`cairn_web::WebGuard::fetch_to`]) through a bounded pipe into
//!   [`cairn_workspace::Workspace::write_from`] (a temp file beside the target, renamed into
//!   place), so a multi-gigabyte object never sits in memory, no copy lands outside the
//!   workspace, and a download cut short or longer than announced never appears.
//! - An object over 100 MiB needs the user's approval naming its size (the strict question,
//!   once); the stream is capped at the size the service announced, so what was approved is
//!   what lands.
//! - Accounts whose credential is the secret itself (a Google access token) are not streamed
//!   by the guard (an echo of the token could not be scrubbed across chunks): their downloads
//!   are capped at the web size cap (`[web] max_bytes`).
//! - A body cut short or longer than announced is not saved.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use cairn_toolkit::reply::{approved_once, error, strict_question, text, with_edit};
use cairn_toolkit::{CallContext, Category, Effect, JsonSchema, Paths, Tool};
use cairn_web::Placement;
use rmcp::model::CallToolResult;
use serde::Deserialize;

use super::names::{check_bucket, check_key, shown, size_text};
use crate::cloud::Cloud;

/// The `storage_download` tool.
pub struct StorageDownload;

/// Arguments of `storage_download`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// The `[cloud.NAME]` account; needed only when several fit.
    #[serde(default)]
    account: Option<String>,
    /// The bucket (Azure: container).
    bucket: String,
    /// The object's key.
    key: String,
    /// Where to save it, relative to the workspace root (or absolute inside it); missing directories are created.
    path: String,
    /// Replace the file if it exists (default false).
    #[serde(default)]
    overwrite: bool,
}

/// Objects larger than this need the user's approval of their size.
pub(crate) const ASK_ABOVE: u64 = 100 * 1024 * 1024;

impl Tool for StorageDownload {
    type Host = Cloud;
    type Args = Args;
    const NAME: &'static str = "storage_download";
    const TITLE: &'static str = "Download an object into the workspace";
    const DESCRIPTION: &'static str = "Download an object from S3, Azure Blob or Google Cloud Storage into a workspace file, streamed to disk. Objects over 100 MiB need the user's approval of their size; an existing file is replaced only with overwrite: true; protected paths (.env, .git, ...) only with the user's approval of that path.";
    const CATEGORY: Category = Category::Cloud;
    const EFFECT: Effect = Effect::Write;
    const AGENT_ONLY: bool = true;
    const OPEN_WORLD: bool = true;
    const NEEDS_WORKSPACE: bool = true;

    fn paths(args: &Args) -> Paths {
        Paths::write(&args.path)
    }

    async fn call(cloud: &Cloud, args: Args, cx: CallContext) -> CallToolResult {
        download(cloud, args, &cx).await.unwrap_or_else(error)
    }
}

/// The pipe between the download and the file being written.
const PIPE_BYTES: usize = 256 * 1024;

/// The pipe's reading end as a blocking reader for [`Workspace::write_from`], which fails
/// (so nothing is put in place) when the body ends before the announced size or goes past
/// the cap.
struct Bridge {
    runtime: tokio::runtime::Handle,
    pipe: tokio::io::DuplexStream,
    expected: Option<u64>,
    cap: u64,
    got: u64,
    /// Set by the download when the whole body arrived: the end of the pipe without it (a
    /// failure, a cancellation, the call dropped) is not the end of the object.
    complete: Arc<AtomicBool>,
}

impl std::io::Read for Bridge {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        use tokio::io::AsyncReadExt as _;
        // A blocking thread (`off_thread`), so waiting on the runtime here is allowed.
        let n = self.runtime.block_on(self.pipe.read(buf))?;
        self.got += n as u64;
        if self.got > self.cap {
            return Err(std::io::Error::other(format!(
                "the object is larger than the {} announced",
                size_text(self.cap)
            )));
        }
        if n == 0 && !self.complete.load(Ordering::SeqCst) {
            return Err(std::io::Error::new(
                std::io::ErrorKind::UnexpectedEof,
                "the download did not finish",
            ));
        }
        if n == 0
            && let Some(expected) = self.expected
            && self.got < expected
        {
            return Err(std::io::Error::new(
                std::io::ErrorKind::UnexpectedEof,
                format!(
                    "the download ended after {} of {}",
                    size_text(self.got),
                    size_text(expected)
                ),
            ));
        }
        Ok(n)
    }
}

async fn download(cloud: &Cloud, a: Args, cx: &CallContext) -> Result<CallToolResult, String> {
    let ws = cloud
        .workspace
        .clone()
        .ok_or("storage_download needs a workspace to save into; open a folder first")?;
    let store = super::open::store(cloud, a.account.as_deref(), cx).map_err(|e| e.to_string())?;
    let bucket = check_bucket(&a.bucket).map_err(|e| e.to_string())?;
    let key = check_key(&a.key).map_err(|e| e.to_string())?;
    let what = shown(&store.account.name, bucket, key);
    let requested = a.path.clone();
    let overwrite = a.overwrite;
    let target =
        cairn_workspace::off_thread(&ws, move |ws| ws.download_target(&requested, overwrite))
            .await
            .and_then(|r| r)?;
    let head = store.head(bucket, key).await.map_err(|e| {
        if e.is_not_found() {
            format!("nothing was saved: no object {what}")
        } else {
            format!("nothing was saved: {e}")
        }
    })?;
    let guard_cap = cloud
        .guard
        .as_ref()
        .map_or(0, |g| g.config().max_bytes as u64);
    let sign_as = store.backend.signing_name();
    // The guard streams only signatures; a credential that is the secret itself is read
    // into memory, up to the web size cap.
    let buffered = store.account.credential(sign_as).is_some_and(|c| {
        !matches!(
            c.placement,
            Placement::AwsSigV4 { .. } | Placement::AzureSharedKey { .. }
        )
    });
    let size = head.size;
    let cap = match size {
        Some(size) if buffered && size > guard_cap => {
            return Err(format!(
                "nothing was saved: {what} is {}, over the web size cap of {} (`[web] max_bytes`), and this account's token is not streamed (an echo of it could not be scrubbed across chunks); raise `[web] max_bytes` above its size to download it",
                size_text(size),
                size_text(guard_cap)
            ));
        }
        Some(size) => size,
        None if buffered => guard_cap,
        None => ASK_ABOVE,
    };
    let approval = format!("storage:{}:{bucket}/{key}:download", store.account.name);
    if cap > ASK_ABOVE && !approved_once(&cloud.approvals, &approval) {
        return Ok(strict_question(
            format!(
                "refused for now: {what} is {}; downloading more than {} needs the user's approval of this size (asked once)",
                size_text(cap),
                size_text(ASK_ABOVE)
            ),
            format!("download {what}, {}", size_text(cap)),
            approval,
            "a large download: it fills the disk and takes long; approve this size once",
        ));
    }
    let (path, existed) = target;
    let shown_path = path.display_path();
    // The body flows from the guard through a bounded pipe into the workspace file, written
    // on a blocking thread: never all in memory, never half-written in place.
    let (mut tx, rx) = tokio::io::duplex(PIPE_BYTES);
    let complete = Arc::new(AtomicBool::new(false));
    let bridge = Bridge {
        runtime: tokio::runtime::Handle::current(),
        pipe: rx,
        expected: size,
        cap,
        got: 0,
        complete: complete.clone(),
    };
    let written_path = path.clone();
    let writing = cairn_workspace::off_thread(&ws, move |ws| {
        let mut bridge = bridge;
        ws.write_from(&written_path, &mut bridge, existed)
            .map(|()| bridge.got)
            .map_err(|e| e.to_string())
    });
    let fetching = async move {
        // One more byte than announced, to tell an object that grew from one that fits.
        let got = store
            .download(bucket, key, cap.saturating_add(1), &mut tx)
            .await;
        if got.as_ref().is_ok_and(|g| !g.truncated) {
            complete.store(true, Ordering::SeqCst);
        }
        // The end of the pipe: the writer sees where the body ends (or stops short).
        drop(tx);
        got
    };
    let (fetched, written) = tokio::join!(fetching, writing);
    let written = written.and_then(|r| r);
    let written = match (fetched, written) {
        // The file's side stopped first (the pipe broke because of it): its reason.
        (Err(crate::CloudError::Web(cairn_web::WebError::Write { .. })), Err(w)) => Err(w),
        // Otherwise the fetch's own error says more than the pipe's.
        (Err(e), _) => Err(e.to_string()),
        (Ok(got), _) if got.truncated || got.written > cap => Err(format!(
            "{what} sent more than the {} it announced (it changed meanwhile?); try again",
            size_text(cap)
        )),
        (Ok(_), w) => w,
    };
    match written {
        Ok(bytes) => {
            let verb = if existed { "replaced" } else { "saved" };
            let mut message = format!("{verb} {shown_path} ({}", size_text(bytes));
            if let Some(t) = &head.content_type {
                message.push_str(&format!(", {t}"));
            }
            message.push_str(&format!(") from {what}"));
            Ok(with_edit(text(message), &path, None))
        }
        Err(reason) => {
            let message = format!("nothing was saved to {shown_path}: {reason}");
            Ok(with_edit(error(message.clone()), &path, Some(message)))
        }
    }
}
