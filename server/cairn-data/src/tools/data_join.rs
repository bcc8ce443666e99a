//! `data_join`: two data files joined on key columns.

use cairn_toolkit::{CallContext, Category, Effect, JsonSchema, Paths, Tool};
use rmcp::model::CallToolResult;
use serde::Deserialize;

use crate::engine::{TableRef, ident};
use crate::tools::data_sql::split_sheet;
use crate::tools::{failed, shown, where_clause};
use crate::{Data, DataError};

/// The `data_join` tool.
pub struct DataJoin;

/// Which rows a join keeps.
#[derive(Debug, Clone, Copy, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum How {
    Inner,
    Left,
    Right,
    Full,
    /// Left rows with no match on the right.
    Anti,
}

/// Arguments of `data_join`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// The left data file (table `l`); a workbook's sheet as `book.xlsx#Sheet`.
    left: String,
    /// The right data file (table `r`).
    right: String,
    /// The key columns, named the same in both files.
    on: Option<Vec<String>>,
    /// The left file's key columns, when the names differ (with `right_on`).
    left_on: Option<Vec<String>>,
    /// The right file's key columns, in the same order as `left_on`.
    right_on: Option<Vec<String>>,
    /// inner (default), left, right, full, or anti (left rows without a match).
    how: Option<How>,
    /// The columns to show, as SQL over `l` and `r`: `["l.id", "r.name AS customer"]`
    /// (default: all of both).
    columns: Option<Vec<String>>,
    /// An SQL condition on the joined rows.
    #[serde(rename = "where")]
    filter: Option<String>,
    /// At most this many rows.
    limit: Option<usize>,
}

impl Tool for DataJoin {
    type Host = Data;
    type Args = Args;
    const NAME: &'static str = "data_join";
    const TITLE: &'static str = "Join two data files";
    const DESCRIPTION: &'static str = "Join two data files (any of CSV, JSON, Parquet, Excel) on key columns: inner, left, right, full or anti join (rows without a match), with the matched row count and the joined rows.";
    const CATEGORY: Category = Category::Data;
    const EFFECT: Effect = Effect::Read;
    const AGENT_ONLY: bool = false;

    fn paths(args: &Args) -> Paths {
        Paths::read(split_sheet(&args.left).0).and_read(split_sheet(&args.right).0)
    }

    async fn call(data: &Data, args: Args, cx: CallContext) -> CallToolResult {
        let (left_keys, right_keys) = match (&args.on, &args.left_on, &args.right_on) {
            (Some(on), None, None) if !on.is_empty() => (on.clone(), on.clone()),
            (None, Some(l), Some(r)) if !l.is_empty() && l.len() == r.len() => {
                (l.clone(), r.clone())
            }
            _ => {
                return failed(&DataError::Query(
                    "give the keys as `on` (same names in both files) or as `left_on` and `right_on` of the same length".to_owned(),
                ));
            }
        };
        let (lf, ls) = split_sheet(&args.left);
        let (rf, rs) = split_sheet(&args.right);
        let tables = [TableRef::new("l", lf, ls), TableRef::new("r", rf, rs)];
        let session = match data.session(&tables, &cx.cancel).await {
            Ok(s) => s,
            Err(e) => return failed(&e),
        };
        let on = left_keys
            .iter()
            .zip(&right_keys)
            .map(|(a, b)| format!("l.{} = r.{}", ident(a), ident(b)))
            .collect::<Vec<_>>()
            .join(" AND ");
        let how = args.how.unwrap_or(How::Inner);
        let (join, default_columns) = match how {
            How::Inner => ("INNER JOIN", "*"),
            How::Left => ("LEFT JOIN", "*"),
            How::Right => ("RIGHT JOIN", "*"),
            How::Full => ("FULL JOIN", "*"),
            How::Anti => ("LEFT ANTI JOIN", "l.*"),
        };
        let columns = match &args.columns {
            Some(c) if !c.is_empty() => c.join(", "),
            _ => default_columns.to_owned(),
        };
        let from = format!(
            "FROM l {join} r ON {on}{}",
            where_clause(args.filter.as_deref())
        );
        let count = match session.rows(&format!("SELECT count(*) {from}"), 1).await {
            Ok(r) => r.texts(0).into_iter().next().flatten().unwrap_or_default(),
            Err(e) => return failed(&e),
        };
        let max = args
            .limit
            .unwrap_or(data.limits.table.max_rows)
            .min(data.limits.table.max_rows);
        match session.rows(&format!("SELECT {columns} {from}"), max).await {
            Ok(rows) => shown(
                &session,
                &rows,
                &format!("{count} joined rows:"),
                &data.limits,
                "pick columns, filter, or aggregate with data_sql",
            ),
            Err(e) => failed(&e),
        }
    }
}
