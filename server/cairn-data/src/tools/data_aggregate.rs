//! `data_aggregate`: group a data file's rows and aggregate each group (sum, mean, count...).

use cairn_toolkit::{CallContext, Category, Effect, JsonSchema, Paths, Tool};
use rmcp::model::CallToolResult;
use serde::Deserialize;

use crate::engine::ident;
use crate::tools::{failed, shown, where_clause};
use crate::{Data, DataError};

/// The `data_aggregate` tool.
pub struct DataAggregate;

/// Arguments of `data_aggregate`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// The data file, relative to the workspace.
    file: String,
    /// For a workbook, the sheet to read (default: the first).
    sheet: Option<String>,
    /// The columns to group by (none: one row over the whole file).
    group_by: Option<Vec<String>>,
    /// The aggregates, as SQL: `sum(amount)`, `avg(price) AS mean_price`, `count(*)`,
    /// `count(DISTINCT customer)`, `median(x)`, `stddev(x)`, `min(d)`, `max(d)`.
    aggregates: Vec<String>,
    /// An SQL condition on the rows first (default: all rows).
    #[serde(rename = "where")]
    filter: Option<String>,
    /// How to order the groups, as SQL: `sum(amount) DESC` (default: by the group columns).
    order_by: Option<String>,
    /// At most this many groups.
    limit: Option<usize>,
}

impl Tool for DataAggregate {
    type Host = Data;
    type Args = Args;
    const NAME: &'static str = "data_aggregate";
    const TITLE: &'static str = "Group and aggregate";
    const DESCRIPTION: &'static str = "Group a data file's rows by columns and compute aggregates for each group (sum, avg, count, count distinct, median, stddev, min, max, any SQL aggregate), optionally filtered first and ordered.";
    const CATEGORY: Category = Category::Data;
    const EFFECT: Effect = Effect::Read;
    const AGENT_ONLY: bool = false;

    fn paths(args: &Args) -> Paths {
        Paths::read(&args.file)
    }

    async fn call(data: &Data, args: Args, cx: CallContext) -> CallToolResult {
        if args.aggregates.is_empty() {
            return failed(&DataError::Query(
                "name at least one aggregate, such as `count(*)` or `sum(amount)`".to_owned(),
            ));
        }
        let session = match data
            .one(&args.file, args.sheet.as_deref(), &cx.cancel)
            .await
        {
            Ok(s) => s,
            Err(e) => return failed(&e),
        };
        let groups: Vec<String> = args
            .group_by
            .unwrap_or_default()
            .iter()
            .map(|g| ident(g))
            .collect();
        let select = groups
            .iter()
            .cloned()
            .chain(args.aggregates.iter().cloned())
            .collect::<Vec<_>>()
            .join(", ");
        let mut sql = format!(
            "SELECT {select} FROM t{}",
            where_clause(args.filter.as_deref())
        );
        if !groups.is_empty() {
            sql.push_str(&format!(" GROUP BY {}", groups.join(", ")));
        }
        match (&args.order_by, groups.is_empty()) {
            (Some(o), _) if !o.trim().is_empty() => sql.push_str(&format!(" ORDER BY {o}")),
            (_, false) => sql.push_str(&format!(" ORDER BY {}", groups.join(", "))),
            _ => {}
        }
        let max = args
            .limit
            .unwrap_or(data.limits.table.max_rows)
            .min(data.limits.table.max_rows);
        match session.rows(&sql, max).await {
            Ok(rows) => shown(
                &session,
                &rows,
                &format!("{} groups:", rows.len()),
                &data.limits,
                "group by fewer columns, or order and limit",
            ),
            Err(e) => failed(&e),
        }
    }
}
