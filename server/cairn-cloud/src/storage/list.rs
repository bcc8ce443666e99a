//! `storage_list`: objects of a bucket by prefix, one page at a time.
//!
//! A page is at most `max` objects (1000 at most) asked of the service, so a bucket of a
//! million objects costs one bounded page per call; the next page starts at the continuation
//! token the result names.

use cairn_toolkit::reply::error;
use cairn_toolkit::table::{Cell, Limits, Table};
use cairn_toolkit::{CallContext, Category, Effect, JsonSchema, Paths, Tool};
use rmcp::model::CallToolResult;
use serde::Deserialize;

use super::names::check_bucket;
use crate::cloud::Cloud;

/// The `storage_list` tool.
pub struct StorageList;

/// Arguments of `storage_list`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// The `[cloud.NAME]` account; needed only when several fit.
    #[serde(default)]
    account: Option<String>,
    /// The bucket (Azure: container).
    bucket: String,
    /// Only keys starting with this (e.g. `logs/2024/`); default all.
    #[serde(default)]
    prefix: String,
    /// Group keys into folders at this character (usually `/`): keys below the next `/` after the prefix are shown as one folder row. Default: no grouping.
    #[serde(default)]
    delimiter: Option<String>,
    /// The continuation token a previous result gave, for the next page.
    #[serde(default)]
    continuation: Option<String>,
    /// Objects per page (default 100, at most 1000).
    #[serde(default)]
    #[schemars(range(min = 1, max = 1000))]
    max: Option<usize>,
}

const DEFAULT_MAX: usize = 100;
const MAX: usize = 1000;

impl Tool for StorageList {
    type Host = Cloud;
    type Args = Args;
    const NAME: &'static str = "storage_list";
    const TITLE: &'static str = "List objects in a bucket";
    const DESCRIPTION: &'static str = "List the objects of a bucket (S3, Google Cloud Storage) or Azure container by key prefix, with sizes and times; `delimiter: \"/\"` shows folders. One page of at most 100 objects by default (1000 at most); the result gives a continuation token for the next page.";
    const CATEGORY: Category = Category::Cloud;
    const EFFECT: Effect = Effect::Network;
    const READ_ONLY: bool = true;
    const AGENT_ONLY: bool = false;

    fn paths(_: &Args) -> Paths {
        Paths::none()
    }

    async fn call(cloud: &Cloud, args: Args, cx: CallContext) -> CallToolResult {
        list(cloud, args, &cx).await.unwrap_or_else(error)
    }
}

async fn list(cloud: &Cloud, args: Args, cx: &CallContext) -> Result<CallToolResult, String> {
    let store =
        super::open::store(cloud, args.account.as_deref(), cx).map_err(|e| e.to_string())?;
    let bucket = check_bucket(&args.bucket).map_err(|e| e.to_string())?;
    let max = args.max.unwrap_or(DEFAULT_MAX).clamp(1, MAX);
    let delimiter = args.delimiter.as_deref().filter(|d| !d.is_empty());
    let continuation = args.continuation.as_deref().filter(|c| !c.is_empty());
    let mut page = store
        .list(bucket, &args.prefix, delimiter, continuation, max)
        .await
        .map_err(|e| e.to_string())?;
    // A service that ignores the page size (an emulator) still shows at most `max` rows.
    let over = (page.objects.len() + page.folders.len()).saturating_sub(max);
    page.folders.truncate(max);
    page.objects.truncate(max - page.folders.len());
    let mut rows: Vec<Vec<Cell>> = page
        .folders
        .iter()
        .map(|f| {
            vec![
                Cell::Text("folder".into()),
                Cell::Text(f.clone()),
                Cell::Text(String::new()),
                Cell::Text(String::new()),
            ]
        })
        .collect();
    rows.extend(page.objects.iter().map(|o| {
        vec![
            Cell::Text("object".into()),
            Cell::Text(o.key.clone()),
            o.size.map_or(Cell::Null, |s| Cell::Text(s.to_string())),
            o.modified.clone().map_or(Cell::Null, Cell::Text),
        ]
    }));
    let shown_rows = rows.len();
    let table = Table {
        columns: vec![
            "kind".into(),
            "key".into(),
            "bytes".into(),
            "modified".into(),
        ],
        rows,
        more: false,
    };
    let (markdown, shown) = table.markdown(&Limits::default());
    let where_ = if args.prefix.is_empty() {
        format!("{bucket} (account {})", store.account.name)
    } else {
        format!("{bucket}/{}* (account {})", args.prefix, store.account.name)
    };
    let mut text = format!("{where_}\n\n{markdown}\n");
    if shown_rows == 0 {
        text = format!(
            "{where_}: no objects{}\n",
            if args.prefix.is_empty() {
                ""
            } else {
                " with this prefix"
            }
        );
    } else {
        text.push_str(&format!(
            "({shown} row{}",
            if shown == 1 { "" } else { "s" }
        ));
        if shown < shown_rows {
            text.push_str(&format!(
                "; {} more of this page left out for size: call again with a smaller max to see them, as the continuation token skips them",
                shown_rows - shown
            ));
        }
        text.push(')');
        text.push('\n');
    }
    match &page.next {
        Some(token) => text.push_str(&format!(
            "More objects follow: call again with continuation: {}\n",
            serde_json::Value::String(token.clone())
        )),
        None if over > 0 => text.push_str(&format!(
            "{over} more were left out and the service gave no continuation token: narrow the prefix\n"
        )),
        None => {}
    }
    // The same rows as the text shows, no more: the result stays as bounded as the table.
    let folders_shown = shown.min(page.folders.len());
    page.folders.truncate(folders_shown);
    page.objects.truncate(shown - folders_shown);
    let mut result = cairn_toolkit::reply::text(text);
    result.structured_content = Some(serde_json::json!({
        "folders": page.folders,
        "objects": page.objects.iter().map(|o| serde_json::json!({
            "key": o.key, "size": o.size, "modified": o.modified,
        })).collect::<Vec<_>>(),
        "continuation": page.next,
    }));
    Ok(result)
}
