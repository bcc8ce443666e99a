//! `folder_sizes`: how much space the folders of the workspace take, biggest first.

use std::collections::HashMap;
use std::path::{Component, Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use cairn_toolkit::reply::error;
use cairn_toolkit::{CallContext, Category, Effect, JsonSchema, Paths, Tool};
use cairn_workspace::WalkOptions;
use rmcp::model::CallToolResult;
use serde::Deserialize;

use super::{blocking, human, table};
use crate::system::System;

/// The `folder_sizes` tool.
pub struct FolderSizes;

/// Arguments of `folder_sizes`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// The folder to measure, relative to the workspace root (default: the root).
    #[serde(default)]
    path: Option<String>,
    /// How many levels of folders to list below it (1 to 3, default 1).
    #[serde(default)]
    #[schemars(range(min = 1, max = 3))]
    depth: Option<usize>,
}

/// Files counted at most; past it the sizes are lower bounds.
const MAX_FILES: usize = 2_000_000;
/// Time spent walking at most.
const TIME_LIMIT: Duration = Duration::from_secs(20);
/// Folders listed at most.
const MAX_ROWS: usize = 100;

impl Tool for FolderSizes {
    type Host = System;
    type Args = Args;
    const NAME: &'static str = "folder_sizes";
    const TITLE: &'static str = "Folder sizes";
    const DESCRIPTION: &'static str = "Sizes of the folders in a workspace folder (1 to 3 levels deep), biggest first, with file counts; ignored folders such as target/ and node_modules/ are counted, symlinks are not followed. Stops after 2 million files or 20 s and says so.";
    const CATEGORY: Category = Category::System;
    const EFFECT: Effect = Effect::Read;
    const AGENT_ONLY: bool = false;
    const NEEDS_WORKSPACE: bool = true;

    /// Sizes are metadata: no content is read, and the walk stays inside the roots.
    fn paths(_: &Args) -> Paths {
        Paths::metadata()
    }

    async fn call(system: &System, args: Args, cx: CallContext) -> CallToolResult {
        let Some(ws) = system.workspace.clone() else {
            return error("no workspace is open; folder_sizes measures workspace folders");
        };
        let depth = args.depth.unwrap_or(1).clamp(1, 3);
        let requested = args.path.unwrap_or_else(|| ".".to_owned());
        let cancel = cx.cancel.clone();
        let work = blocking(move || {
            let start = ws.resolve(&requested).map_err(|e| e.to_string())?;
            let base = start.as_path().to_path_buf();
            let sizes: Mutex<HashMap<PathBuf, (u64, u64)>> = Mutex::new(HashMap::new());
            let files = AtomicUsize::new(0);
            let cut_short = AtomicBool::new(false);
            let began = Instant::now();
            let stop = || {
                let stop = cancel.is_cancelled()
                    || files.load(Ordering::Relaxed) >= MAX_FILES
                    || began.elapsed() >= TIME_LIMIT;
                if stop {
                    cut_short.store(true, Ordering::Relaxed);
                }
                stop
            };
            let keep = |rel: &Path| {
                files.fetch_add(1, Ordering::Relaxed);
                let abs = base.join(rel);
                let len = ws
                    .resolve(&abs.to_string_lossy())
                    .and_then(|p| ws.stat(&p))
                    .map_or(0, |s| s.len);
                let folder: PathBuf = rel
                    .parent()
                    .map(|p| {
                        p.components()
                            .filter(|c| matches!(c, Component::Normal(_)))
                            .take(depth)
                            .collect()
                    })
                    .unwrap_or_default();
                if let Ok(mut map) = sizes.lock() {
                    let e = map.entry(folder).or_insert((0, 0));
                    e.0 += len;
                    e.1 += 1;
                }
                false
            };
            let options = WalkOptions {
                glob: None,
                include_hidden: true,
                include_ignored: true,
            };
            let walked = ws
                .walk_sorted_where(&start, &options, &stop, &keep)
                .map_err(|e| e.to_string())?;
            let map = sizes.into_inner().unwrap_or_default();
            Ok::<_, String>((
                start.display_path(),
                map,
                walked.errors,
                cut_short.into_inner() && !cancel.is_cancelled(),
                files.into_inner(),
            ))
        });
        let (shown, map, errors, cut_short, files) = match work.await {
            Ok(Ok(r)) => r,
            Ok(Err(e)) | Err(e) => return error(e),
        };
        if cx.cancel.is_cancelled() {
            return error("cancelled");
        }
        // Each listed folder totals everything below it; the walk gave sizes per deepest
        // folder, so add each up into its ancestors at the listed depths.
        let mut totals: HashMap<PathBuf, (u64, u64)> = HashMap::new();
        let mut total = (0u64, 0u64);
        for (folder, (bytes, count)) in &map {
            total.0 += bytes;
            total.1 += count;
            let mut prefix = PathBuf::new();
            for c in folder.components() {
                prefix.push(c);
                let e = totals.entry(prefix.clone()).or_insert((0, 0));
                e.0 += bytes;
                e.1 += count;
            }
            if folder.as_os_str().is_empty() {
                let e = totals
                    .entry(PathBuf::from("(files directly here)"))
                    .or_insert((0, 0));
                e.0 += bytes;
                e.1 += count;
            }
        }
        let mut rows: Vec<(PathBuf, (u64, u64))> = totals.into_iter().collect();
        rows.sort_by(|a, b| b.1.0.cmp(&a.1.0).then_with(|| a.0.cmp(&b.0)));
        let more = rows.len() > MAX_ROWS;
        rows.truncate(MAX_ROWS);
        let mut heading = format!(
            "Folder sizes under {shown}: {} in {} files",
            human(total.0),
            total.1
        );
        if cut_short {
            heading.push_str(&format!(
                " (stopped after {files} files or {} s: sizes are lower bounds)",
                TIME_LIMIT.as_secs()
            ));
        }
        if errors > 0 {
            heading.push_str(&format!(" ({errors} entries could not be read)"));
        }
        table(
            &heading,
            &["folder", "size", "bytes", "files"],
            rows.into_iter()
                .map(|(p, (bytes, count))| {
                    vec![
                        p.display().to_string(),
                        human(bytes),
                        bytes.to_string(),
                        count.to_string(),
                    ]
                })
                .collect(),
            more,
            "measure a subfolder with `path`, or lower `depth`",
        )
    }
}
