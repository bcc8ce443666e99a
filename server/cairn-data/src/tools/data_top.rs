//! `data_top`: a data file sorted, its first rows (top-n).

use cairn_toolkit::{CallContext, Category, Effect, JsonSchema, Paths, Tool};
use rmcp::model::CallToolResult;
use serde::Deserialize;

use crate::engine::ident;
use crate::tools::data_filter::projection;
use crate::tools::{failed, shown, where_clause};
use crate::{Data, DataError};

/// The `data_top` tool.
pub struct DataTop;

/// One sort key.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Key {
    /// The column.
    column: String,
    /// Largest first (default false: smallest first).
    descending: Option<bool>,
}

/// Arguments of `data_top`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// The data file, relative to the workspace.
    file: String,
    /// For a workbook, the sheet to read (default: the first).
    sheet: Option<String>,
    /// The sort keys, most significant first. NULLs sort last.
    order_by: Vec<Key>,
    /// How many rows (default 10).
    n: Option<usize>,
    /// The columns to show (default: all).
    columns: Option<Vec<String>>,
    /// An SQL condition on the rows first (default: all rows).
    #[serde(rename = "where")]
    filter: Option<String>,
}

impl Tool for DataTop {
    type Host = Data;
    type Args = Args;
    const NAME: &'static str = "data_top";
    const TITLE: &'static str = "Sort, top n rows";
    const DESCRIPTION: &'static str = "Sort a data file by one or more columns (ascending or descending) and show the first n rows: the largest orders, the latest events, the cheapest items.";
    const CATEGORY: Category = Category::Data;
    const EFFECT: Effect = Effect::Read;
    const AGENT_ONLY: bool = false;

    fn paths(args: &Args) -> Paths {
        Paths::read(&args.file)
    }

    async fn call(data: &Data, args: Args, cx: CallContext) -> CallToolResult {
        if args.order_by.is_empty() {
            return failed(&DataError::Query(
                "name at least one column to sort by".to_owned(),
            ));
        }
        let session = match data
            .one(&args.file, args.sheet.as_deref(), &cx.cancel)
            .await
        {
            Ok(s) => s,
            Err(e) => return failed(&e),
        };
        let keys = args
            .order_by
            .iter()
            .map(|k| {
                let dir = if k.descending.unwrap_or(false) {
                    "DESC"
                } else {
                    "ASC"
                };
                format!("{} {dir} NULLS LAST", ident(&k.column))
            })
            .collect::<Vec<_>>()
            .join(", ");
        let n = args.n.unwrap_or(10).min(data.limits.table.max_rows);
        let sql = format!(
            "SELECT {} FROM t{} ORDER BY {keys} LIMIT {n}",
            projection(args.columns.as_deref()),
            where_clause(args.filter.as_deref())
        );
        match session.rows(&sql, n).await {
            Ok(rows) => shown(
                &session,
                &rows,
                &format!("Top {} rows by {keys}:", rows.len()),
                &data.limits,
                "ask for fewer rows or columns",
            ),
            Err(e) => failed(&e),
        }
    }
}
