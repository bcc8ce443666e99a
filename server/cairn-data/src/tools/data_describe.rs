//! `data_describe`: summary statistics per column, as pandas' `describe` gives them: count,
//! nulls, distinct values, and for numbers mean, standard deviation, min, quartiles and max.

use cairn_toolkit::table::{Cell, Table};
use cairn_toolkit::{CallContext, Category, Effect, JsonSchema, Paths, Tool};
use rmcp::model::CallToolResult;
use serde::Deserialize;

use crate::engine::ident;
use crate::tools::failed;
use crate::{Data, DataError};

/// The `data_describe` tool.
pub struct DataDescribe;

/// Above this many rows quartiles are estimated (t-digest), so memory stays bounded.
const EXACT_QUANTILES_UP_TO: u64 = 5_000_000;

/// Arguments of `data_describe`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// The data file (CSV, TSV, JSON, JSON Lines, Parquet or .xlsx), relative to the workspace.
    file: String,
    /// For a workbook, the sheet to read (default: the first).
    sheet: Option<String>,
    /// Only these columns (default: all).
    columns: Option<Vec<String>>,
    /// An SQL condition on the rows to describe, such as `region = 'EU'` (default: all rows).
    #[serde(rename = "where")]
    filter: Option<String>,
}

impl Tool for DataDescribe {
    type Host = Data;
    type Args = Args;
    const NAME: &'static str = "data_describe";
    const TITLE: &'static str = "Describe a data file's columns";
    const DESCRIPTION: &'static str = "Summary statistics of each column of a data file: count, nulls, distinct values, and for numeric columns mean, standard deviation, min, 25%/50%/75% quantiles and max; min and max for other columns.";
    const CATEGORY: Category = Category::Data;
    const EFFECT: Effect = Effect::Read;
    const AGENT_ONLY: bool = false;

    fn paths(args: &Args) -> Paths {
        Paths::read(&args.file)
    }

    async fn call(data: &Data, args: Args, cx: CallContext) -> CallToolResult {
        match describe(data, &args, &cx).await {
            Ok(r) => r,
            Err(e) => failed(&e),
        }
    }
}

async fn describe(data: &Data, args: &Args, cx: &CallContext) -> Result<CallToolResult, DataError> {
    let session = data
        .one(&args.file, args.sheet.as_deref(), &cx.cancel)
        .await?;
    let all = session.columns("t").await?;
    let columns: Vec<_> = match &args.columns {
        Some(wanted) => {
            let mut picked = Vec::new();
            for w in wanted {
                let Some(c) = all.iter().find(|(n, _)| n == w) else {
                    return Err(DataError::Query(format!(
                        "no column {w:?}; the columns are {:?}",
                        all.iter().map(|(n, _)| n).collect::<Vec<_>>()
                    )));
                };
                picked.push(c.clone());
            }
            picked
        }
        None => all,
    };
    let filter = crate::tools::where_clause(args.filter.as_deref());
    let total: u64 = session
        .rows(&format!("SELECT count(*) FROM t{filter}"), 1)
        .await?
        .texts(0)
        .into_iter()
        .next()
        .flatten()
        .and_then(|t| t.parse().ok())
        .unwrap_or(0);
    let exact = total <= EXACT_QUANTILES_UP_TO;
    let quantile = |q: f64, c: &str| {
        if exact {
            format!("percentile_cont({q}) WITHIN GROUP (ORDER BY CAST({c} AS DOUBLE))")
        } else {
            format!("approx_percentile_cont({q}) WITHIN GROUP (ORDER BY CAST({c} AS DOUBLE))")
        }
    };
    const STATS: [&str; 10] = [
        "count", "nulls", "distinct", "mean", "std", "min", "25%", "50%", "75%", "max",
    ];
    let mut select = Vec::new();
    for (name, ty) in &columns {
        let c = ident(name);
        select.push(format!("count({c})"));
        select.push(format!("count(*) - count({c})"));
        select.push(format!("count(DISTINCT {c})"));
        if ty.is_numeric() {
            select.push(format!("avg(CAST({c} AS DOUBLE))"));
            select.push(format!("stddev(CAST({c} AS DOUBLE))"));
            select.push(format!("min({c})"));
            select.push(quantile(0.25, &c));
            select.push(quantile(0.5, &c));
            select.push(quantile(0.75, &c));
            select.push(format!("max({c})"));
        } else {
            select.push("NULL".to_owned());
            select.push("NULL".to_owned());
            select.push(format!("min(CAST({c} AS VARCHAR))"));
            select.push("NULL".to_owned());
            select.push("NULL".to_owned());
            select.push("NULL".to_owned());
            select.push(format!("max(CAST({c} AS VARCHAR))"));
        }
    }
    if select.is_empty() {
        return Err(DataError::Query("the file has no columns".to_owned()));
    }
    let row = session
        .rows(
            &format!(
                "SELECT {} FROM t{filter}",
                select
                    .iter()
                    .enumerate()
                    .map(|(k, e)| format!("{e} AS s{k}"))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            1,
        )
        .await?
        .table();
    let values = row.rows.into_iter().next().unwrap_or_default();
    let mut table = Table {
        columns: std::iter::once("column".to_owned())
            .chain(STATS.iter().map(|s| (*s).to_owned()))
            .collect(),
        rows: Vec::new(),
        more: false,
    };
    for (i, (name, _)) in columns.iter().enumerate() {
        let mut r = vec![Cell::Text(name.clone())];
        r.extend(
            values
                .iter()
                .skip(i * STATS.len())
                .take(STATS.len())
                .cloned(),
        );
        table.rows.push(r);
    }
    let mut heading = format!("{}: {total} rows", args.file);
    if !filter.is_empty() {
        heading.push_str(" matching the condition");
    }
    if !exact {
        heading.push_str(" (quartiles estimated: more than 5 million rows)");
    }
    for note in &session.notes {
        heading.push_str(&format!("\nNote: {note}."));
    }
    Ok(table.result_hinting(&heading, &data.limits.table, "pass fewer columns"))
}
