//! `web_download`: save a URL's body into the workspace, through the workspace's file scope.
//!
//! The path is resolved by [`Workspace::resolve`] (never outside a root, never through a
//! symlink) and written by [`Workspace::create_bytes_exclusive`] or
//! [`Workspace::write_bytes_atomic`], which apply the user's write grants and the deny list.
//! The path is checked before anything is fetched, so a refused path costs no request.
//!
//! Decisions:
//! - The path is declared to the kit as written ([`Paths::write`]), so a protected path
//!   (`.git/`, `.env`, shell start-up files, ...) is refused before anything is fetched, naming
//!   it, and the agent asks the user about that exact path, as for `write_file`: content from
//!   the network lands where it is run or read as secrets only with that approval.
//! - A body cut at the guard's size cap (`web.max_bytes`) is not written: a truncated archive
//!   or binary is worse than none, and the model could not tell.
//! - An error status (4xx, 5xx) is not written either: the error page is not the file asked for.
//! - An existing file is replaced only with `overwrite: true`, and never one open in the
//!   editor (its unsaved text would be lost without the editor knowing).
//! - A vault secret in the body, in any encoding the redactor knows, is replaced with
//!   `[REDACTED:name]` before the bytes are written (the rest byte for byte), and the result
//!   says so: a file is read later by tools, the sandbox and the model, so it must not carry
//!   what the model may not read. What the guard itself sent is already scrubbed from the body.

use cairn_toolkit::reply::{error, text, with_edit};
use cairn_toolkit::{CallContext, Category, Effect, JsonSchema, Paths, Tool};
use rmcp::model::CallToolResult;
use serde::Deserialize;

use super::report::content_type;
use super::{WebTools, cancellable};
use cairn_web::Method;

/// The `web_download` tool.
pub struct WebDownload;

/// Arguments of `web_download`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// An http or https URL.
    url: String,
    /// Where to save it, relative to the workspace root (or absolute inside it); missing directories are created.
    path: String,
    /// Replace the file if it exists (default false).
    #[serde(default)]
    overwrite: bool,
}

impl Tool for WebDownload {
    type Host = WebTools;
    type Args = Args;
    const NAME: &'static str = "web_download";
    const TITLE: &'static str = "Download into the workspace";
    const DESCRIPTION: &'static str = "Download a URL into a file of the workspace (any content: text, images, archives), up to the web size cap (1 MiB by default; a larger download is not saved). Refuses paths outside the workspace and an existing file unless overwrite is true; a protected path (.git, .env, ...) is written only if the user approves that very path.";
    const CATEGORY: Category = Category::Web;
    // It writes files, so it is `Write` (asked by default) and offered in agent mode only, like
    // the built-in writing tools.
    const EFFECT: Effect = Effect::Write;
    const AGENT_ONLY: bool = true;
    // What it writes comes from the network.
    const OPEN_WORLD: bool = true;
    const NEEDS_WORKSPACE: bool = true;

    fn paths(args: &Args) -> Paths {
        Paths::write(&args.path)
    }

    async fn call(web: &WebTools, args: Args, cx: CallContext) -> CallToolResult {
        cancellable(&cx, download(web, args)).await
    }
}

async fn download(web: &WebTools, a: Args) -> CallToolResult {
    let Some(ws) = web.workspace.clone() else {
        return error("web_download needs a workspace to save into; open a folder first");
    };
    let requested = a.path.clone();
    let overwrite = a.overwrite;
    let checked =
        cairn_workspace::off_thread(&ws, move |ws| ws.download_target(&requested, overwrite)).await;
    let target = match checked {
        Ok(Ok(target)) => target,
        Ok(Err(message)) | Err(message) => return error(message),
    };
    let response = match web.get(&a.url, Method::GET).await {
        Ok(r) => r,
        Err(message) => return error(format!("nothing was saved: {message}")),
    };
    let (path, existed) = target;
    let shown = path.display_path();
    if !response.status.is_success() {
        return error(format!(
            "nothing was saved to {shown}: {} answered {}",
            response.final_url, response.status
        ));
    }
    if response.truncated {
        return error(format!(
            "nothing was saved to {shown}: {} is larger than the web size cap of {} bytes (web.max_bytes in your user config), and a cut-off file would be corrupt",
            response.final_url,
            response.body.len()
        ));
    }
    let ct = content_type(&response);
    let body = response.body;
    let redactor = web.redactor.clone();
    let written_path = path.clone();
    let written = cairn_workspace::off_thread(&ws, move |ws| {
        // Redacting reads the whole body in up to four decoded views: off the executor too.
        let (body, redacted) = match redactor.as_deref().and_then(|r| r.redact_file(&body)) {
            Some(clean) => (clean, true),
            None => (body, false),
        };
        if existed {
            ws.write_bytes_atomic(&written_path, &body)
        } else {
            // Exclusive: a file that appeared since the check is not clobbered.
            ws.create_bytes_exclusive(&written_path, &body)
        }
        .map(|()| (body.len(), redacted))
        .map_err(|e| e.to_string())
    })
    .await;
    match written {
        Ok(Ok((size, redacted))) => {
            let verb = if existed { "replaced" } else { "saved" };
            let mut message = format!("{verb} {shown} ({size} bytes");
            if !ct.is_empty() {
                message.push_str(&format!(", {ct}"));
            }
            message.push_str(&format!(") from {}", response.final_url));
            if response.redirects > 0 {
                message.push_str(&format!(" after {} redirects", response.redirects));
            }
            if redacted {
                message.push_str(
                    "; it carried a secret from your vault, saved as [REDACTED:…] in its place",
                );
            }
            with_edit(text(message), &path, None)
        }
        Ok(Err(reason)) | Err(reason) => {
            let message = format!("nothing was saved to {shown}: {reason}");
            with_edit(error(message.clone()), &path, Some(message))
        }
    }
}
