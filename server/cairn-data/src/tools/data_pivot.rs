//! `data_pivot`: a pivot table: one row per value of the index column, one column per value of
//! the pivoted column, each cell an aggregate of the values column.

use cairn_toolkit::{CallContext, Category, Effect, JsonSchema, Paths, Tool};
use rmcp::model::CallToolResult;
use serde::Deserialize;

use crate::engine::{ident, literal};
use crate::tools::{failed, shown, where_clause};
use crate::{Data, DataError};

/// The `data_pivot` tool.
pub struct DataPivot;

/// Most distinct values a pivoted column may have (each becomes a column).
const MAX_PIVOT_COLUMNS: usize = 50;

/// How the values of one cell are combined.
#[derive(Debug, Clone, Copy, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Aggregate {
    Sum,
    Avg,
    Count,
    Min,
    Max,
}

/// Arguments of `data_pivot`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// The data file, relative to the workspace.
    file: String,
    /// For a workbook, the sheet to read (default: the first).
    sheet: Option<String>,
    /// The column whose values become the rows.
    index: String,
    /// The column whose values become the columns (at most 50 distinct values).
    columns: String,
    /// The column aggregated in each cell.
    values: String,
    /// sum (default), avg, count, min or max.
    aggregate: Option<Aggregate>,
    /// An SQL condition on the rows first (default: all rows).
    #[serde(rename = "where")]
    filter: Option<String>,
}

impl Tool for DataPivot {
    type Host = Data;
    type Args = Args;
    const NAME: &'static str = "data_pivot";
    const TITLE: &'static str = "Pivot table";
    const DESCRIPTION: &'static str = "Make a pivot table of a data file: one row per value of the index column, one column per value of another column, each cell the sum, average, count, min or max of a values column.";
    const CATEGORY: Category = Category::Data;
    const EFFECT: Effect = Effect::Read;
    const AGENT_ONLY: bool = false;

    fn paths(args: &Args) -> Paths {
        Paths::read(&args.file)
    }

    async fn call(data: &Data, args: Args, cx: CallContext) -> CallToolResult {
        let session = match data
            .one(&args.file, args.sheet.as_deref(), &cx.cancel)
            .await
        {
            Ok(s) => s,
            Err(e) => return failed(&e),
        };
        let filter = where_clause(args.filter.as_deref());
        let (index, pivot, values) = (
            ident(&args.index),
            ident(&args.columns),
            ident(&args.values),
        );
        let distinct = match session
            .rows(
                &format!(
                    "SELECT DISTINCT CAST({pivot} AS VARCHAR) AS v FROM t{filter} ORDER BY v NULLS LAST"
                ),
                MAX_PIVOT_COLUMNS,
            )
            .await
        {
            Ok(r) if r.more => {
                return failed(&DataError::Query(format!(
                    "{} has more than {MAX_PIVOT_COLUMNS} distinct values, too many columns for a pivot; filter first or use data_aggregate",
                    args.columns
                )));
            }
            Ok(r) => r.texts(0),
            Err(e) => return failed(&e),
        };
        let func = match args.aggregate.unwrap_or(Aggregate::Sum) {
            Aggregate::Sum => "sum",
            Aggregate::Avg => "avg",
            Aggregate::Count => "count",
            Aggregate::Min => "min",
            Aggregate::Max => "max",
        };
        let cells = distinct
            .iter()
            .map(|v| {
                let (cond, name) = match v {
                    Some(v) => (
                        format!("CAST({pivot} AS VARCHAR) = {}", literal(v)),
                        v.clone(),
                    ),
                    None => (format!("{pivot} IS NULL"), "NULL".to_owned()),
                };
                format!(
                    "{func}(CASE WHEN {cond} THEN {values} END) AS {}",
                    ident(&name)
                )
            })
            .collect::<Vec<_>>();
        if cells.is_empty() {
            return failed(&DataError::Query("no rows to pivot".to_owned()));
        }
        let sql = format!(
            "SELECT {index}, {} FROM t{filter} GROUP BY {index} ORDER BY {index} NULLS LAST",
            cells.join(", ")
        );
        match session.rows(&sql, data.limits.table.max_rows).await {
            Ok(rows) => shown(
                &session,
                &rows,
                &format!(
                    "{func} of {} by {} (rows) and {} (columns):",
                    args.values, args.index, args.columns
                ),
                &data.limits,
                "filter the rows first",
            ),
            Err(e) => failed(&e),
        }
    }
}
