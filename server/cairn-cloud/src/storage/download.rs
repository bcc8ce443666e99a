//! `storage_download`: an object into a workspace file, through the workspace's scope.
//!
//! As `web_download` does: the path is declared as written ([`Paths::write`]), so a protected
//! path (`.env`, `.git/`, ...) is refused before anything is fetched; an existing file is
//! replaced only with `overwrite`, never one open in the editor; the edit is reported.
//!
//! Decisions:
//! - The body streams ([`cairn_web::WebGuard::fetch_to`]) into a private temp file, then is
//!   copied into place through [`cairn_workspace::Workspace::write_from`] (temp file and
//!   rename inside the workspace), so a multi-gigabyte object never sits in memory and never
//!   appears half-written.
//! - An object over 100 MiB needs the user's approval naming its size (the strict question,
//!   once); the stream is capped at the size the service announced, so what was approved is
//!   what lands.
//! - Accounts whose credential is the secret itself (a Google access token) are not streamed
//!   by the guard (an echo of the token could not be scrubbed across chunks): their downloads
//!   are capped at the web size cap (`[web] max_bytes`).
//! - A body cut short or longer than announced is not saved.

use std::path::PathBuf;

use cairn_agent::tools::EditReport;
use cairn_toolkit::reply::{approved_once, error, strict_question, text, with_edits};
use cairn_toolkit::{CallContext, Category, Effect, JsonSchema, Paths, Tool};
use cairn_web::Placement;
use cairn_workspace::{Operation, ScopeError, Workspace, WorkspacePath};
use rmcp::model::CallToolResult;
use serde::Deserialize;

use super::backend::Provider;
use super::{check_bucket, check_key, shown, size_text};
use crate::Cloud;

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

/// What the path check found.
enum Target {
    New(WorkspacePath),
    Existing(WorkspacePath),
}

/// A temp file of ours (not a model-given path), removed when dropped.
struct TempFile(PathBuf);

impl Drop for TempFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

async fn download(cloud: &Cloud, a: Args, cx: &CallContext) -> Result<CallToolResult, String> {
    let ws = cloud
        .workspace
        .clone()
        .ok_or("storage_download needs a workspace to save into; open a folder first")?;
    let store = super::store(cloud, a.account.as_deref(), cx).map_err(|e| e.to_string())?;
    let bucket = check_bucket(&a.bucket).map_err(|e| e.to_string())?;
    let key = check_key(&a.key).map_err(|e| e.to_string())?;
    let what = shown(&store.account.name, bucket, key);
    let requested = a.path.clone();
    let overwrite = a.overwrite;
    let target =
        cairn_workspace::off_thread(&ws, move |ws| check_target(ws, &requested, overwrite))
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
    let sign_as = match store.provider {
        Provider::S3 => "s3",
        Provider::Azure => "blob",
        Provider::Gcs => "storage",
    };
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
                "nothing was saved: {what} is {}, over the web size cap of {} (`[web] max_bytes`), and this account's token is not streamed (an echo of it could not be scrubbed); raise the cap, or fetch it with another tool",
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
    let temp = TempFile(
        std::env::temp_dir().join(format!("cairn-storage-{}", uuid::Uuid::new_v4().simple())),
    );
    let mut file = tokio::fs::File::create(&temp.0)
        .await
        .map_err(|e| format!("nothing was saved: a temp file could not be created: {e}"))?;
    // One more byte than announced, to tell an object that grew from one that fits.
    let got = store
        .download(bucket, key, cap.saturating_add(1), &mut file)
        .await
        .map_err(|e| format!("nothing was saved: {e}"))?;
    drop(file);
    if got.truncated || got.written > cap {
        return Err(format!(
            "nothing was saved: {what} sent more than the {} it announced (it changed meanwhile?); try again",
            size_text(cap)
        ));
    }
    if let Some(size) = size
        && got.written < size
    {
        return Err(format!(
            "nothing was saved: {what} ended after {} of {}; try again",
            size_text(got.written),
            size_text(size)
        ));
    }
    let (path, existed) = match target {
        Target::New(p) => (p, false),
        Target::Existing(p) => (p, true),
    };
    let shown_path = path.display_path();
    let written_path = path.clone();
    let source = temp.0.clone();
    let written = cairn_workspace::off_thread(&ws, move |ws| {
        let mut file = std::fs::File::open(&source).map_err(|e| e.to_string())?;
        ws.write_from(&written_path, &mut file, existed)
            .map_err(|e| e.to_string())
    })
    .await
    .and_then(|r| r);
    drop(temp);
    match written {
        Ok(()) => {
            let verb = if existed { "replaced" } else { "saved" };
            let mut message = format!("{verb} {shown_path} ({}", size_text(got.written));
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

/// Resolves and checks the target before anything is fetched (as `web_download` does).
fn check_target(ws: &Workspace, requested: &str, overwrite: bool) -> Result<Target, String> {
    let path = ws.resolve(requested).map_err(|e| e.to_string())?;
    if path.is_root() {
        return Err(format!(
            "refused path `{requested}`: it is a workspace root; name a file inside it"
        ));
    }
    ws.check(&path, Operation::Write)
        .map_err(|e| e.to_string())?;
    match ws.stat(&path) {
        Ok(stat) if stat.kind != cairn_workspace::EntryKind::File => Err(format!(
            "refused path `{}`: something other than a file is there ({:?})",
            path.display_path(),
            stat.kind
        )),
        Ok(_) if !overwrite => Err(format!(
            "{} already exists; pass overwrite: true to replace it, or choose another path",
            path.display_path()
        )),
        Ok(_) if ws.open_buffer(&path).is_some() => Err(format!(
            "{} is open in the editor; close it first, so its unsaved text is not lost",
            path.display_path()
        )),
        Ok(_) => Ok(Target::Existing(path)),
        Err(ScopeError::NotFound { .. }) => Ok(Target::New(path)),
        Err(e) => Err(e.to_string()),
    }
}

/// The result with the edit reported for the editor, as the built-in file tools do.
fn with_edit(
    result: CallToolResult,
    path: &WorkspacePath,
    reason: Option<String>,
) -> CallToolResult {
    let report = EditReport {
        uri: path.uri(),
        applied: reason.is_none(),
        reason,
    };
    with_edits(result, &[report])
}
