//! `data_value_counts`: how often each value of a column occurs, most frequent first.

use cairn_toolkit::{CallContext, Category, Effect, JsonSchema, Paths, Tool};
use rmcp::model::CallToolResult;
use serde::Deserialize;

use crate::Data;
use crate::engine::ident;
use crate::tools::{failed, where_clause};

/// The `data_value_counts` tool.
pub struct DataValueCounts;

/// Arguments of `data_value_counts`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// The data file, relative to the workspace.
    file: String,
    /// For a workbook, the sheet to read (default: the first).
    sheet: Option<String>,
    /// The column whose values are counted.
    column: String,
    /// How many of the most frequent values (default 20).
    top: Option<usize>,
    /// An SQL condition on the rows first (default: all rows).
    #[serde(rename = "where")]
    filter: Option<String>,
}

impl Tool for DataValueCounts {
    type Host = Data;
    type Args = Args;
    const NAME: &'static str = "data_value_counts";
    const TITLE: &'static str = "Count a column's values";
    const DESCRIPTION: &'static str = "Count how often each value of a column occurs in a data file (NULL included), most frequent first, with its share of the rows and how many distinct values there are.";
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
        let c = ident(&args.column);
        let top = args.top.unwrap_or(20).min(data.limits.table.max_rows);
        let sql = format!(
            "SELECT {c}, count(*) AS count, round(100.0 * count(*) / sum(count(*)) OVER (), 2) AS percent, count(*) OVER () AS distinct_values \
             FROM t{} GROUP BY {c} ORDER BY count DESC, {c} NULLS LAST LIMIT {top}",
            where_clause(args.filter.as_deref())
        );
        let rows = match session.rows(&sql, top).await {
            Ok(r) => r,
            Err(e) => return failed(&e),
        };
        let distinct = rows
            .texts(3)
            .into_iter()
            .next()
            .flatten()
            .unwrap_or_default();
        let mut table = rows.table();
        table.columns.truncate(3);
        for r in &mut table.rows {
            r.truncate(3);
        }
        let mut heading = format!("{distinct} distinct values of {}", args.column);
        if rows.len() < distinct.parse().unwrap_or(0) {
            heading.push_str(&format!("; the {} most frequent:", rows.len()));
        } else {
            heading.push(':');
        }
        for note in &session.notes {
            heading.push_str(&format!("\nNote: {note}."));
        }
        table.result_hinting(&heading, &data.limits.table, "ask for fewer values")
    }
}
