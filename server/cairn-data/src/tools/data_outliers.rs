//! `data_outliers`: the rows whose value in a numeric column lies far from the rest, by the
//! interquartile-range rule (Tukey's fences) or by z-score.

use cairn_toolkit::{CallContext, Category, Effect, JsonSchema, Paths, Tool};
use rmcp::model::CallToolResult;
use serde::Deserialize;

use crate::engine::ident;
use crate::tools::{failed, shown, where_clause};
use crate::{Data, DataError};

/// The `data_outliers` tool.
pub struct DataOutliers;

/// How far is far.
#[derive(Debug, Clone, Copy, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Method {
    /// Outside [Q1 - k·IQR, Q3 + k·IQR], k = 1.5 by default.
    Iqr,
    /// More than k standard deviations from the mean, k = 3 by default.
    Zscore,
}

/// Arguments of `data_outliers`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// The data file, relative to the workspace.
    file: String,
    /// For a workbook, the sheet to read (default: the first).
    sheet: Option<String>,
    /// The numeric column to check.
    column: String,
    /// iqr (default) or zscore.
    method: Option<Method>,
    /// The factor k (default 1.5 for iqr, 3 for zscore).
    threshold: Option<f64>,
    /// An SQL condition on the rows first (default: all rows).
    #[serde(rename = "where")]
    filter: Option<String>,
    /// At most this many outlier rows shown, most extreme first (default 20).
    limit: Option<usize>,
}

impl Tool for DataOutliers {
    type Host = Data;
    type Args = Args;
    const NAME: &'static str = "data_outliers";
    const TITLE: &'static str = "Find outliers";
    const DESCRIPTION: &'static str = "Find the rows of a data file whose value in a numeric column is an outlier, by the IQR rule (Tukey's fences) or by z-score; shows the bounds used, how many rows are outside them, and the most extreme rows.";
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
        let v = format!("CAST({c} AS DOUBLE)");
        let filter = where_clause(args.filter.as_deref());
        let method = args.method.unwrap_or(Method::Iqr);
        let stats_sql = match method {
            Method::Iqr => format!(
                "SELECT approx_percentile_cont(0.25) WITHIN GROUP (ORDER BY {v}), approx_percentile_cont(0.75) WITHIN GROUP (ORDER BY {v}) FROM t{filter}"
            ),
            Method::Zscore => format!("SELECT avg({v}), stddev({v}) FROM t{filter}"),
        };
        let stats = match session.rows(&stats_sql, 1).await {
            Ok(r) => r,
            Err(e) => return failed(&e),
        };
        let (Some(a), Some(b)) = (
            stats.numbers(0).into_iter().next().flatten(),
            stats.numbers(1).into_iter().next().flatten(),
        ) else {
            return failed(&DataError::Query(format!(
                "{} has no numeric values to judge",
                args.column
            )));
        };
        let (low, high, center, rule) = match method {
            Method::Iqr => {
                let k = args.threshold.unwrap_or(1.5);
                let iqr = b - a;
                (
                    a - k * iqr,
                    b + k * iqr,
                    f64::midpoint(a, b),
                    format!("IQR rule: Q1 {a:.4}, Q3 {b:.4}, k {k}"),
                )
            }
            Method::Zscore => {
                let k = args.threshold.unwrap_or(3.0);
                (
                    a - k * b,
                    a + k * b,
                    a,
                    format!("z-score: mean {a:.4}, std {b:.4}, k {k}"),
                )
            }
        };
        let outside = format!("({v} < {low} OR {v} > {high})");
        let cond = if filter.is_empty() {
            format!(" WHERE {outside}")
        } else {
            format!("{filter} AND {outside}")
        };
        let count = match session
            .rows(&format!("SELECT count(*) FROM t{cond}"), 1)
            .await
        {
            Ok(r) => r.texts(0).into_iter().next().flatten().unwrap_or_default(),
            Err(e) => return failed(&e),
        };
        let n = args.limit.unwrap_or(20).min(data.limits.table.max_rows);
        let sql = format!("SELECT * FROM t{cond} ORDER BY abs({v} - {center}) DESC LIMIT {n}");
        match session.rows(&sql, n).await {
            Ok(rows) => shown(
                &session,
                &rows,
                &format!(
                    "{count} outliers in {} outside [{low:.4}, {high:.4}] ({rule}); the most extreme:",
                    args.column
                ),
                &data.limits,
                "lower the limit",
            ),
            Err(e) => failed(&e),
        }
    }
}
