//! `storage_upload`: a workspace file into an object.
//!
//! The file is read through the workspace's scope ([`Paths::read`]: a protected file such as
//! `.env` is refused before anything is read, unless the user approves that path), at most
//! [`MAX_UPLOAD`] bytes, and sent in one request. An existing object is replaced only with
//! `overwrite`.

use std::io::Read;

use cairn_toolkit::reply::{error, text};
use cairn_toolkit::{CallContext, Category, Effect, JsonSchema, Paths, Tool};
use rmcp::model::CallToolResult;
use serde::Deserialize;

use super::names::{check_bucket, check_key, shown, size_text};
use crate::cloud::Cloud;

/// The `storage_upload` tool.
pub struct StorageUpload;

/// Arguments of `storage_upload`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// The `[cloud.NAME]` account; needed only when several fit.
    #[serde(default)]
    account: Option<String>,
    /// The workspace file to upload (relative to the workspace root).
    path: String,
    /// The bucket (Azure: container).
    bucket: String,
    /// The object's key.
    key: String,
    /// The object's content type; default guessed from the file name (else `application/octet-stream`).
    #[serde(default)]
    content_type: Option<String>,
    /// Replace the object if it exists (default false).
    #[serde(default)]
    overwrite: bool,
}

/// The largest file sent (one request, held in memory while it is signed and sent).
pub(crate) const MAX_UPLOAD: u64 = 64 * 1024 * 1024;

impl Tool for StorageUpload {
    type Host = Cloud;
    type Args = Args;
    const NAME: &'static str = "storage_upload";
    const TITLE: &'static str = "Upload a workspace file as an object";
    const DESCRIPTION: &'static str = "Upload a workspace file to S3, Azure Blob or Google Cloud Storage as one object (at most 64 MiB). An existing object is replaced only with overwrite: true; protected files (.env, keys, ...) are read only with the user's approval of that path.";
    const CATEGORY: Category = Category::Cloud;
    const EFFECT: Effect = Effect::Write;
    const AGENT_ONLY: bool = true;
    const NEEDS_WORKSPACE: bool = true;

    fn paths(args: &Args) -> Paths {
        Paths::read(&args.path)
    }

    async fn call(cloud: &Cloud, args: Args, cx: CallContext) -> CallToolResult {
        upload(cloud, args, &cx).await.unwrap_or_else(error)
    }
}

async fn upload(cloud: &Cloud, a: Args, cx: &CallContext) -> Result<CallToolResult, String> {
    let ws = cloud
        .workspace
        .clone()
        .ok_or("storage_upload needs a workspace to read from; open a folder first")?;
    let store = super::open::store(cloud, a.account.as_deref(), cx).map_err(|e| e.to_string())?;
    let bucket = check_bucket(&a.bucket).map_err(|e| e.to_string())?;
    let key = check_key(&a.key).map_err(|e| e.to_string())?;
    let what = shown(&store.account.name, bucket, key);
    let requested = a.path.clone();
    let (shown_path, body) = cairn_workspace::off_thread(&ws, move |ws| {
        let path = ws.resolve(&requested).map_err(|e| e.to_string())?;
        let file = ws.open_read(&path).map_err(|e| e.to_string())?;
        let mut body = Vec::new();
        // The file may grow after any check: never read past the cap.
        file.take(MAX_UPLOAD + 1)
            .read_to_end(&mut body)
            .map_err(|e| e.to_string())?;
        if body.len() as u64 > MAX_UPLOAD {
            return Err(format!(
                "{} is larger than {}, the most storage_upload sends in one request",
                path.display_path(),
                size_text(MAX_UPLOAD)
            ));
        }
        Ok((path.display_path(), body))
    })
    .await
    .and_then(|r| r)
    .map_err(|e| format!("nothing was uploaded: {e}"))?;
    if !a.overwrite {
        match store.head(bucket, key).await {
            Ok(_) => {
                return Err(format!(
                    "nothing was uploaded: {what} exists; pass overwrite: true to replace it, or choose another key"
                ));
            }
            Err(e) if e.is_not_found() => {}
            Err(e) => return Err(format!("nothing was uploaded: {e}")),
        }
    }
    let content_type = a
        .content_type
        .clone()
        .unwrap_or_else(|| guess_type(&shown_path).to_owned());
    let size = body.len() as u64;
    store
        .upload(bucket, key, body, &content_type)
        .await
        .map_err(|e| format!("nothing was uploaded: {e}"))?;
    Ok(text(format!(
        "uploaded {shown_path} ({}, {content_type}) to {what}",
        size_text(size)
    )))
}

/// A content type from the file name's extension, for the common cases.
fn guess_type(name: &str) -> &'static str {
    let ext = name.rsplit_once('.').map(|(_, e)| e.to_ascii_lowercase());
    match ext.as_deref() {
        Some("txt" | "log" | "md") => "text/plain; charset=utf-8",
        Some("html" | "htm") => "text/html; charset=utf-8",
        Some("css") => "text/css",
        Some("csv") => "text/csv",
        Some("js") => "text/javascript",
        Some("json") => "application/json",
        Some("xml") => "application/xml",
        Some("yaml" | "yml") => "application/yaml",
        Some("pdf") => "application/pdf",
        Some("zip") => "application/zip",
        Some("gz" | "tgz") => "application/gzip",
        Some("tar") => "application/x-tar",
        Some("png") => "image/png",
        Some("jpg" | "jpeg") => "image/jpeg",
        Some("gif") => "image/gif",
        Some("svg") => "image/svg+xml",
        Some("webp") => "image/webp",
        _ => "application/octet-stream",
    }
}
