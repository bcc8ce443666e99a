//! `hf_search`: models or datasets on the Hugging Face Hub matching a query, filtered by task
//! or library, most downloaded (or liked, or recently updated) first.

use cairn_toolkit::reply::error;
use cairn_toolkit::table::{Cell, Limits, Table};
use cairn_toolkit::{CallContext, Category, Effect, JsonSchema, Paths, Tool};
use rmcp::model::CallToolResult;
use serde::Deserialize;

use super::{Service, count, date, encode, get, json};
use crate::ml::Ml;

/// Rows asked for when `limit` is not given.
const DEFAULT_LIMIT: usize = 20;
/// Most rows one call asks for.
const MAX_LIMIT: usize = 100;
/// Longest query, filter value, in characters.
const MAX_QUERY: usize = 200;

/// The `hf_search` tool.
pub struct HfSearch;

/// What to search.
#[derive(Debug, Clone, Copy, Deserialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    Model,
    Dataset,
}

/// The order of the results.
#[derive(Debug, Clone, Copy, Deserialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum Sort {
    Downloads,
    Likes,
    Updated,
}

/// Arguments of `hf_search`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// What to search: "model" (the default) or "dataset".
    kind: Option<Kind>,
    /// Words in the repository id (`bert`, `whisper`, `imdb`); empty lists the top of the Hub.
    #[serde(default)]
    query: String,
    /// A task: a pipeline tag for models (`text-classification`, `automatic-speech-recognition`), a task category for datasets.
    task: Option<String>,
    /// Models only: the library (`transformers`, `sentence-transformers`, `gguf`, `diffusers`).
    library: Option<String>,
    /// Order: "downloads" (the default), "likes", or "updated" (most recently changed first).
    sort: Option<Sort>,
    /// How many results, at most 100; default 20.
    limit: Option<usize>,
}

impl Tool for HfSearch {
    type Host = Ml;
    type Args = Args;
    const NAME: &'static str = "hf_search";
    const TITLE: &'static str = "Search the Hugging Face Hub";
    const DESCRIPTION: &'static str = "Search Hugging Face Hub models or datasets by name, task or library, sorted by downloads, likes or last update: id, downloads, likes, task, updated.";
    const CATEGORY: Category = Category::Ai;
    const EFFECT: Effect = Effect::Network;
    const AGENT_ONLY: bool = false;
    const READ_ONLY: bool = true;

    fn paths(_: &Args) -> Paths {
        Paths::none()
    }

    async fn call(ml: &Ml, args: Args, cx: CallContext) -> CallToolResult {
        match search(ml, args, &cx).await {
            Ok(result) => result,
            Err(e) => error(e),
        }
    }
}

fn checked(value: &str, field: &str) -> Result<String, String> {
    let value = value.trim();
    if value.chars().count() > MAX_QUERY {
        return Err(format!(
            "`{field}` is longer than {MAX_QUERY} characters; shorten it"
        ));
    }
    Ok(value.to_owned())
}

async fn search(ml: &Ml, args: Args, cx: &CallContext) -> Result<CallToolResult, String> {
    let kind = args.kind.unwrap_or(Kind::Model);
    let limit = args.limit.unwrap_or(DEFAULT_LIMIT);
    if limit == 0 || limit > MAX_LIMIT {
        return Err(format!(
            "`limit` is {limit}; give 1 to {MAX_LIMIT} (narrow the query for fewer, better results)"
        ));
    }
    let query = checked(&args.query, "query")?;
    let task = args
        .task
        .as_deref()
        .map(|t| checked(t, "task"))
        .transpose()?
        .filter(|t| !t.is_empty());
    let library = args
        .library
        .as_deref()
        .map(|l| checked(l, "library"))
        .transpose()?
        .filter(|l| !l.is_empty());
    if kind == Kind::Dataset && library.is_some() {
        return Err(
            "`library` filters models only; for datasets give `task` or words in `query`".into(),
        );
    }
    let sort = match args.sort.unwrap_or(Sort::Downloads) {
        Sort::Downloads => "downloads",
        Sort::Likes => "likes",
        Sort::Updated => "lastModified",
    };
    let mut q: Vec<(&str, String)> = Vec::new();
    if !query.is_empty() {
        q.push(("search", encode(&query)));
    }
    match (kind, &task) {
        (Kind::Model, Some(t)) => q.push(("pipeline_tag", encode(t))),
        (Kind::Dataset, Some(t)) => q.push(("filter", encode(&format!("task_categories:{t}")))),
        _ => {}
    }
    if let Some(l) = &library {
        q.push(("library", encode(l)));
    }
    q.push(("sort", sort.to_owned()));
    q.push(("direction", "-1".to_owned()));
    q.push(("limit", limit.to_string()));
    // Only the fields shown, so a page of results stays small.
    let fields: &[&str] = match kind {
        Kind::Model => &[
            "downloads",
            "likes",
            "pipeline_tag",
            "library_name",
            "lastModified",
        ],
        Kind::Dataset => &["downloads", "likes", "tags", "lastModified"],
    };
    for f in fields {
        q.push(("expand%5B%5D", (*f).to_owned()));
    }
    let (path, noun) = match kind {
        Kind::Model => ("/api/models", "models"),
        Kind::Dataset => ("/api/datasets", "datasets"),
    };
    let what = format!("the search of {noun}");
    let answer = get(ml, Service::Hub, path, &q, &what, cx).await?;
    let value = json(&answer, &what, ml)?;
    let items = value
        .as_array()
        .ok_or_else(|| format!("{what}: the hub's answer is not a list of {noun}"))?;
    let mut table = Table {
        columns: ["id", "downloads", "likes", "task", "library", "updated"]
            .iter()
            .map(|c| (*c).to_owned())
            .collect(),
        rows: Vec::new(),
        more: false,
    };
    if kind == Kind::Dataset {
        table.columns.remove(4);
    }
    for item in items.iter().take(limit) {
        let id = item["id"].as_str().unwrap_or("?").to_owned();
        let task = match kind {
            Kind::Model => item["pipeline_tag"].as_str().map(str::to_owned),
            Kind::Dataset => dataset_tasks(&item["tags"]),
        };
        let mut row = vec![
            Cell::Text(id),
            Cell::Text(count(&item["downloads"])),
            Cell::Text(count(&item["likes"])),
            task.map_or(Cell::Null, Cell::Text),
        ];
        if kind == Kind::Model {
            row.push(
                item["library_name"]
                    .as_str()
                    .map_or(Cell::Null, |l| Cell::Text(l.to_owned())),
            );
        }
        row.push(Cell::Text(date(&item["lastModified"])));
        table.rows.push(row);
    }
    // The hub links the next page when there are more results than `limit`.
    table.more = answer.next_page || items.len() > limit;
    let mut filters = Vec::new();
    if !query.is_empty() {
        filters.push(format!("matching \"{query}\""));
    }
    if let Some(t) = &task {
        filters.push(format!("task {t}"));
    }
    if let Some(l) = &library {
        filters.push(format!("library {l}"));
    }
    if table.rows.is_empty() {
        return Ok(cairn_toolkit::reply::text(format!(
            "No {noun} on the hub {}; try fewer or other words, or drop a filter.",
            if filters.is_empty() {
                "at all".to_owned()
            } else {
                filters.join(", ")
            }
        )));
    }
    let heading = format!(
        "Hugging Face {noun}{}{}, by {}:",
        if filters.is_empty() { "" } else { " " },
        filters.join(", "),
        match args.sort.unwrap_or(Sort::Downloads) {
            Sort::Downloads => "downloads",
            Sort::Likes => "likes",
            Sort::Updated => "last update",
        }
    );
    Ok(table.result_hinting(
        &heading,
        &Limits {
            max_rows: MAX_LIMIT,
            ..Limits::default()
        },
        "raise `limit` (at most 100) or narrow the query",
    ))
}

/// A dataset's tasks, from its `task_categories:` tags.
fn dataset_tasks(tags: &serde_json::Value) -> Option<String> {
    let tasks: Vec<&str> = tags
        .as_array()?
        .iter()
        .filter_map(|t| t.as_str()?.strip_prefix("task_categories:"))
        .collect();
    (!tasks.is_empty()).then(|| tasks.join(", "))
}
