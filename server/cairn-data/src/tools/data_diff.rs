//! `data_diff`: how two versions of a dataset differ: rows only in one, and, matched by key
//! columns, the rows whose values changed (per column counts and examples). Without a key, the
//! rows are compared whole, as multisets.

use cairn_toolkit::{CallContext, Category, Effect, JsonSchema, Paths, Tool};
use rmcp::model::CallToolResult;
use serde::Deserialize;
use serde_json::json;

use crate::engine::{Session, TableRef, ident};
use crate::tools::data_sql::split_sheet;
use crate::tools::{failed, shown};
use crate::{Data, DataError};

/// The `data_diff` tool.
pub struct DataDiff;

/// Arguments of `data_diff`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// The old (left) data file; a workbook's sheet as `book.xlsx#Sheet`.
    left: String,
    /// The new (right) data file.
    right: String,
    /// The key columns that identify a row in both (default: none, rows compared whole).
    key: Option<Vec<String>>,
    /// The columns compared (default: every column both files have, besides the key).
    columns: Option<Vec<String>>,
    /// At most this many changed rows shown (default 20).
    limit: Option<usize>,
}

impl Tool for DataDiff {
    type Host = Data;
    type Args = Args;
    const NAME: &'static str = "data_diff";
    const TITLE: &'static str = "Diff two datasets";
    const DESCRIPTION: &'static str = "Compare two data files (such as last month's export and this month's): rows only in one, and with key columns, the rows whose values changed, with per-column change counts and examples of old and new values.";
    const CATEGORY: Category = Category::Data;
    const EFFECT: Effect = Effect::Read;
    const AGENT_ONLY: bool = false;

    fn paths(args: &Args) -> Paths {
        Paths::read(split_sheet(&args.left).0).and_read(split_sheet(&args.right).0)
    }

    async fn call(data: &Data, args: Args, cx: CallContext) -> CallToolResult {
        match diff(data, &args, &cx).await {
            Ok(r) => r,
            Err(e) => failed(&e),
        }
    }
}

async fn count(session: &Session, sql: &str) -> Result<u64, DataError> {
    Ok(session
        .rows(sql, 1)
        .await?
        .numbers(0)
        .into_iter()
        .next()
        .flatten()
        .map_or(0, |v| v as u64))
}

async fn diff(data: &Data, args: &Args, cx: &CallContext) -> Result<CallToolResult, DataError> {
    let (lf, ls) = split_sheet(&args.left);
    let (rf, rs) = split_sheet(&args.right);
    let session = data
        .session(
            &[TableRef::new("l", lf, ls), TableRef::new("r", rf, rs)],
            &cx.cancel,
        )
        .await?;
    let left: Vec<String> = session
        .columns("l")
        .await?
        .into_iter()
        .map(|c| c.0)
        .collect();
    let right: Vec<String> = session
        .columns("r")
        .await?
        .into_iter()
        .map(|c| c.0)
        .collect();
    let key = args.key.clone().unwrap_or_default();
    for k in &key {
        if !left.contains(k) || !right.contains(k) {
            return Err(DataError::Query(format!(
                "key column {k:?} must be in both files"
            )));
        }
    }
    let compared: Vec<String> = match &args.columns {
        Some(c) => c.clone(),
        None => left
            .iter()
            .filter(|c| right.contains(c) && !key.contains(c))
            .cloned()
            .collect(),
    };
    let only_left_cols: Vec<&String> = left.iter().filter(|c| !right.contains(c)).collect();
    let only_right_cols: Vec<&String> = right.iter().filter(|c| !left.contains(c)).collect();
    let mut summary = format!("{} → {}", args.left, args.right);
    if !only_left_cols.is_empty() {
        summary.push_str(&format!("\nColumns only in the left: {only_left_cols:?}"));
    }
    if !only_right_cols.is_empty() {
        summary.push_str(&format!("\nColumns only in the right: {only_right_cols:?}"));
    }
    let max = args.limit.unwrap_or(20).min(data.limits.table.max_rows);
    if key.is_empty() {
        let cols = compared
            .iter()
            .map(|c| ident(c))
            .collect::<Vec<_>>()
            .join(", ");
        if cols.is_empty() {
            return Err(DataError::Query("the files share no columns".to_owned()));
        }
        let gone = format!("SELECT {cols} FROM l EXCEPT ALL SELECT {cols} FROM r");
        let new = format!("SELECT {cols} FROM r EXCEPT ALL SELECT {cols} FROM l");
        let (n_gone, n_new) = (
            count(&session, &format!("SELECT count(*) FROM ({gone})")).await?,
            count(&session, &format!("SELECT count(*) FROM ({new})")).await?,
        );
        summary.push_str(&format!(
            "\nCompared whole rows (no key): {n_gone} rows only in the left, {n_new} only in the right."
        ));
        let rows = session
            .rows(
                &format!("SELECT 'left only' AS side, * FROM ({gone}) UNION ALL SELECT 'right only' AS side, * FROM ({new})"),
                max,
            )
            .await?;
        let mut result = shown(&session, &rows, &summary, &data.limits, "lower the limit");
        if let Some(s) = result.structured_content.as_mut() {
            s["only_left"] = json!(n_gone);
            s["only_right"] = json!(n_new);
        }
        return Ok(result);
    }
    let on = key
        .iter()
        .map(|k| format!("l.{0} = r.{0}", ident(k)))
        .collect::<Vec<_>>()
        .join(" AND ");
    let only_left = count(
        &session,
        &format!("SELECT count(*) FROM l LEFT ANTI JOIN r ON {on}"),
    )
    .await?;
    let only_right = count(
        &session,
        &format!("SELECT count(*) FROM r LEFT ANTI JOIN l ON {on}"),
    )
    .await?;
    let differs = |c: &str| format!("(l.{0} IS DISTINCT FROM r.{0})", ident(c));
    let any_change = if compared.is_empty() {
        "FALSE".to_owned()
    } else {
        compared
            .iter()
            .map(|c| differs(c))
            .collect::<Vec<_>>()
            .join(" OR ")
    };
    let per_column = if compared.is_empty() {
        Vec::new()
    } else {
        let select = compared
            .iter()
            .map(|c| format!("sum(CASE WHEN {} THEN 1 ELSE 0 END)", differs(c)))
            .collect::<Vec<_>>()
            .join(", ");
        let rows = session
            .rows(&format!("SELECT {select} FROM l JOIN r ON {on}"), 1)
            .await?;
        (0..compared.len())
            .map(|i| {
                rows.numbers(i)
                    .into_iter()
                    .next()
                    .flatten()
                    .map_or(0, |v| v as u64)
            })
            .collect()
    };
    let changed = count(
        &session,
        &format!("SELECT count(*) FROM l JOIN r ON {on} WHERE {any_change}"),
    )
    .await?;
    summary.push_str(&format!(
        "\nBy key {key:?}: {only_left} rows only in the left (removed), {only_right} only in the right (added), {changed} changed."
    ));
    let changed_columns: Vec<&String> = compared
        .iter()
        .zip(&per_column)
        .filter(|(_, n)| **n > 0)
        .map(|(c, _)| c)
        .collect();
    if !changed_columns.is_empty() {
        summary.push_str("\nChanges per column: ");
        summary.push_str(
            &compared
                .iter()
                .zip(&per_column)
                .filter(|(_, n)| **n > 0)
                .map(|(c, n)| format!("{c} {n}"))
                .collect::<Vec<_>>()
                .join(", "),
        );
    }
    let mut select: Vec<String> = key.iter().map(|k| format!("l.{}", ident(k))).collect();
    for c in &changed_columns {
        select.push(format!(
            "l.{} AS {}",
            ident(c),
            ident(&format!("{c} (left)"))
        ));
        select.push(format!(
            "r.{} AS {}",
            ident(c),
            ident(&format!("{c} (right)"))
        ));
    }
    let rows = session
        .rows(
            &format!(
                "SELECT {} FROM l JOIN r ON {on} WHERE {any_change}",
                select.join(", ")
            ),
            max,
        )
        .await?;
    summary.push_str("\nChanged rows:");
    let mut result = shown(&session, &rows, &summary, &data.limits, "lower the limit");
    if let Some(s) = result.structured_content.as_mut() {
        s["only_left"] = json!(only_left);
        s["only_right"] = json!(only_right);
        s["changed"] = json!(changed);
    }
    Ok(result)
}
