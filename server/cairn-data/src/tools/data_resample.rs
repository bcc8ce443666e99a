//! `data_resample`: a time series regrouped by calendar period (hour, day, week, month,
//! quarter, year) with aggregates per period, as pandas' `resample` does.

use cairn_toolkit::{CallContext, Category, Effect, JsonSchema, Paths, Tool};
use rmcp::model::CallToolResult;
use serde::Deserialize;

use crate::engine::ident;
use crate::tools::{failed, shown, where_clause};
use crate::{Data, DataError};

/// The `data_resample` tool.
pub struct DataResample;

/// The period rows are grouped into.
#[derive(Debug, Clone, Copy, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Every {
    Minute,
    Hour,
    Day,
    Week,
    Month,
    Quarter,
    Year,
}

/// Arguments of `data_resample`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// The data file, relative to the workspace.
    file: String,
    /// For a workbook, the sheet to read (default: the first).
    sheet: Option<String>,
    /// The column holding the date or timestamp (ISO text such as `2024-03-01` works too).
    time_column: String,
    /// The period: minute, hour, day, week (from Monday), month, quarter or year.
    every: Every,
    /// The aggregates per period, as SQL: `sum(amount)`, `count(*) AS orders`, `avg(price)`.
    aggregates: Vec<String>,
    /// An SQL condition on the rows first (default: all rows).
    #[serde(rename = "where")]
    filter: Option<String>,
}

impl Tool for DataResample {
    type Host = Data;
    type Args = Args;
    const NAME: &'static str = "data_resample";
    const TITLE: &'static str = "Resample a time series";
    const DESCRIPTION: &'static str = "Group a data file's rows by calendar period of a date/time column (minute, hour, day, week, month, quarter, year) and aggregate each period (sum, count, avg...), in time order: sales by month, errors per hour.";
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
        let unit = period(args.every);
        let sql = format!(
            "SELECT date_trunc('{unit}', CAST({} AS TIMESTAMP)) AS period, {} FROM t{} GROUP BY 1 ORDER BY 1 NULLS LAST",
            ident(&args.time_column),
            args.aggregates.join(", "),
            where_clause(args.filter.as_deref())
        );
        match session.rows(&sql, data.limits.table.max_rows).await {
            Ok(rows) => shown(
                &session,
                &rows,
                &format!(
                    "{} periods of one {unit} (periods without rows are not listed):",
                    rows.len()
                ),
                &data.limits,
                "use a longer period or a narrower time range",
            ),
            Err(e) => failed(&e),
        }
    }
}

/// `date_trunc`'s name for the period.
pub(crate) fn period(every: Every) -> &'static str {
    match every {
        Every::Minute => "minute",
        Every::Hour => "hour",
        Every::Day => "day",
        Every::Week => "week",
        Every::Month => "month",
        Every::Quarter => "quarter",
        Every::Year => "year",
    }
}
