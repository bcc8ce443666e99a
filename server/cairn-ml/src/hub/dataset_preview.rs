//! `hf_dataset_preview`: a Hub dataset's configurations and splits, and the first rows of one
//! split as a table, from the dataset viewer's API (`/splits`, `/rows`).

use cairn_toolkit::reply::error;
use cairn_toolkit::table::{Cell, Limits, Table};
use cairn_toolkit::{CallContext, Category, Effect, JsonSchema, Paths, Tool};
use rmcp::model::CallToolResult;
use serde::Deserialize;
use serde_json::Value;

use super::{Service, encode, get, json, repo_id};
use crate::ml::Ml;

/// Rows shown when `rows` is not given.
const DEFAULT_ROWS: usize = 10;
/// Most rows one call shows (the viewer's own page is at most 100).
const MAX_ROWS: usize = 100;
/// Columns shown; the rest are named.
const MAX_COLUMNS: usize = 20;
/// Splits listed.
const MAX_SPLITS: usize = 30;
/// Characters of one cell.
const MAX_CELL: usize = 300;
/// The longest configuration or split name taken.
const MAX_NAME: usize = 200;

/// The `hf_dataset_preview` tool.
pub struct HfDatasetPreview;

/// Arguments of `hf_dataset_preview`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// The dataset's id, `owner/name` (e.g. `stanfordnlp/imdb`).
    dataset: String,
    /// The configuration (subset); default the first the viewer lists.
    config: Option<String>,
    /// The split; default `train` when there is one, else the first listed.
    split: Option<String>,
    /// Rows to show, at most 100; default 10.
    rows: Option<usize>,
    /// The first row's index; default 0.
    offset: Option<u64>,
}

impl Tool for HfDatasetPreview {
    type Host = Ml;
    type Args = Args;
    const NAME: &'static str = "hf_dataset_preview";
    const TITLE: &'static str = "Preview a Hugging Face dataset";
    const DESCRIPTION: &'static str = "A Hugging Face Hub dataset's configurations and splits, and the first rows of one split as a table, from the dataset viewer.";
    const CATEGORY: Category = Category::Ai;
    const EFFECT: Effect = Effect::Network;
    const AGENT_ONLY: bool = false;
    const READ_ONLY: bool = true;

    fn paths(_: &Args) -> Paths {
        Paths::none()
    }

    async fn call(ml: &Ml, args: Args, cx: CallContext) -> CallToolResult {
        match preview(ml, args, &cx).await {
            Ok(r) => r,
            Err(e) => error(e),
        }
    }
}

/// One split the viewer lists.
struct Split {
    config: String,
    split: String,
}

fn name(value: Option<&str>, field: &str) -> Result<Option<String>, String> {
    match value.map(str::trim).filter(|v| !v.is_empty()) {
        Some(v) if v.chars().count() > MAX_NAME || v.chars().any(char::is_control) => {
            Err(format!("`{field}` is not a name the viewer could have"))
        }
        other => Ok(other.map(str::to_owned)),
    }
}

async fn preview(ml: &Ml, args: Args, cx: &CallContext) -> Result<CallToolResult, String> {
    let id = repo_id(&args.dataset, "dataset")?;
    let want_config = name(args.config.as_deref(), "config")?;
    let want_split = name(args.split.as_deref(), "split")?;
    let rows = args.rows.unwrap_or(DEFAULT_ROWS);
    if rows == 0 || rows > MAX_ROWS {
        return Err(format!("`rows` is {rows}; give 1 to {MAX_ROWS}"));
    }
    let offset = args.offset.unwrap_or(0);
    let what = format!("dataset {id}");
    let answer = get(
        ml,
        Service::Viewer,
        "/splits",
        &[("dataset", encode(&id))],
        &what,
        cx,
    )
    .await?;
    let value = json(&answer, &what, ml)?;
    let splits: Vec<Split> = value["splits"]
        .as_array()
        .ok_or_else(|| format!("{what}: the viewer's answer lists no splits"))?
        .iter()
        .filter_map(|s| {
            Some(Split {
                config: s["config"].as_str()?.to_owned(),
                split: s["split"].as_str()?.to_owned(),
            })
        })
        .collect();
    if splits.is_empty() {
        return Err(format!(
            "{what}: the viewer lists no splits yet (it may still be processing the dataset); try again later"
        ));
    }
    let listing = listing(&splits);
    let config = match &want_config {
        Some(c) if splits.iter().any(|s| &s.config == c) => c.clone(),
        Some(c) => {
            return Err(format!(
                "{what} has no configuration `{c}`; it has:\n{listing}"
            ));
        }
        None => splits[0].config.clone(),
    };
    let in_config: Vec<&Split> = splits.iter().filter(|s| s.config == config).collect();
    let split = match &want_split {
        Some(s) if in_config.iter().any(|x| &x.split == s) => s.clone(),
        Some(s) => {
            return Err(format!(
                "{what} has no split `{s}` in configuration `{config}`; it has:\n{listing}"
            ));
        }
        None => in_config
            .iter()
            .find(|s| s.split == "train")
            .unwrap_or(&in_config[0])
            .split
            .clone(),
    };
    let rows_what = format!("the rows of {what} ({config}/{split})");
    let answer = get(
        ml,
        Service::Viewer,
        "/rows",
        &[
            ("dataset", encode(&id)),
            ("config", encode(&config)),
            ("split", encode(&split)),
            ("offset", offset.to_string()),
            ("length", rows.to_string()),
        ],
        &rows_what,
        cx,
    )
    .await?;
    let page = json(&answer, &rows_what, ml)?;
    let features: Vec<String> = page["features"]
        .as_array()
        .map(|f| {
            f.iter()
                .filter_map(|f| f["name"].as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default();
    let items = page["rows"]
        .as_array()
        .ok_or_else(|| format!("{rows_what}: the viewer's answer has no rows"))?;
    let mut columns = features.clone();
    if columns.is_empty() {
        // No features listed: the first row's keys, in order.
        if let Some(Value::Object(first)) = items.first().map(|r| &r["row"]) {
            columns = first.keys().cloned().collect();
        }
    }
    let hidden = columns.len().saturating_sub(MAX_COLUMNS);
    columns.truncate(MAX_COLUMNS);
    let mut table_columns = vec!["row".to_owned()];
    table_columns.extend(columns.iter().cloned());
    let mut table = Table {
        columns: table_columns,
        rows: Vec::new(),
        more: false,
    };
    for item in items.iter().take(rows) {
        let mut row = vec![Cell::Text(
            item["row_idx"]
                .as_u64()
                .map_or_else(|| "?".to_owned(), |i| i.to_string()),
        )];
        for c in &columns {
            row.push(cell(&item["row"][c]));
        }
        table.rows.push(row);
    }
    let total = page["num_rows_total"].as_u64();
    table.more = total.is_some_and(|t| offset + (table.rows.len() as u64) < t);
    let mut heading = format!("Dataset {id}, configuration `{config}`, split `{split}`");
    match total {
        Some(t) => heading.push_str(&format!(
            ": rows {}–{} of {t}",
            offset,
            offset + (table.rows.len() as u64).saturating_sub(1)
        )),
        None => heading.push_str(&format!(": from row {offset}")),
    }
    if page["partial"] == Value::Bool(true) {
        heading.push_str(" (the viewer read only part of the dataset)");
    }
    if hidden > 0 {
        heading.push_str(&format!(
            "; {hidden} more columns not shown: {}",
            features
                .iter()
                .skip(MAX_COLUMNS)
                .take(20)
                .cloned()
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    heading.push_str(&format!("\nSplits:\n{listing}"));
    if table.rows.is_empty() {
        return Ok(cairn_toolkit::reply::text(format!(
            "{heading}\n\nNo rows at offset {offset}."
        )));
    }
    let limits = Limits {
        max_rows: MAX_ROWS,
        max_bytes: 48 * 1024,
        max_cell_chars: MAX_CELL,
    };
    // Rows past the byte cap are left out too: the next page starts after those shown.
    let (_, shown) = table.markdown(&limits);
    if shown < table.rows.len() {
        table.more = true;
    }
    Ok(table.result_hinting(
        &heading,
        &limits,
        &format!("see the next rows with `offset` {}", offset + shown as u64),
    ))
}

/// The configurations and their splits, one line each, capped.
fn listing(splits: &[Split]) -> String {
    let mut configs: Vec<(&str, Vec<&str>)> = Vec::new();
    for s in splits.iter().take(MAX_SPLITS) {
        match configs.iter_mut().find(|(c, _)| *c == s.config) {
            Some((_, list)) => list.push(&s.split),
            None => configs.push((&s.config, vec![&s.split])),
        }
    }
    let mut out: Vec<String> = configs
        .iter()
        .map(|(c, list)| format!("  {c}: {}", list.join(", ")))
        .collect();
    if splits.len() > MAX_SPLITS {
        out.push(format!("  … {} more splits", splits.len() - MAX_SPLITS));
    }
    out.join("\n")
}

/// A row's value as a cell: text as it is, an image or audio as what it is, anything else as
/// compact JSON.
fn cell(v: &Value) -> Cell {
    match v {
        Value::Null => Cell::Null,
        Value::String(s) => Cell::Text(s.clone()),
        Value::Object(o) if o.contains_key("src") && o.contains_key("width") => {
            Cell::Text(format!(
                "<image {}×{}>",
                o["width"],
                o.get("height").unwrap_or(&Value::Null)
            ))
        }
        Value::Array(a)
            if a.first().is_some_and(|x| {
                x.get("src").is_some()
                    && x.get("type")
                        .is_some_and(|t| t.as_str().is_some_and(|t| t.starts_with("audio")))
            }) =>
        {
            Cell::Text("<audio>".to_owned())
        }
        other => Cell::Text(other.to_string()),
    }
}
