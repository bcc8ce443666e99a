//! `data_filter`: the rows of a data file that meet a condition, with chosen columns.

use cairn_toolkit::{CallContext, Category, Effect, JsonSchema, Paths, Tool};
use rmcp::model::CallToolResult;
use serde::Deserialize;

use crate::Data;
use crate::engine::ident;
use crate::tools::{failed, shown, where_clause};

/// The `data_filter` tool.
pub struct DataFilter;

/// Arguments of `data_filter`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// The data file, relative to the workspace.
    file: String,
    /// For a workbook, the sheet to read (default: the first).
    sheet: Option<String>,
    /// The condition, an SQL expression over the columns: `amount > 100 AND region = 'EU'`,
    /// `name LIKE 'A%'`, `shipped IS NULL`. Quote odd column names with double quotes.
    #[serde(rename = "where")]
    filter: String,
    /// The columns to show (default: all).
    columns: Option<Vec<String>>,
    /// At most this many rows (default: as many as fit).
    limit: Option<usize>,
}

impl Tool for DataFilter {
    type Host = Data;
    type Args = Args;
    const NAME: &'static str = "data_filter";
    const TITLE: &'static str = "Filter a data file's rows";
    const DESCRIPTION: &'static str = "Show the rows of a data file that meet an SQL condition (such as `amount > 100 AND region = 'EU'`), with the columns you choose, and how many rows matched in all.";
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
        let filter = where_clause(Some(&args.filter));
        let projection = projection(args.columns.as_deref());
        let max = args
            .limit
            .unwrap_or(data.limits.table.max_rows)
            .min(data.limits.table.max_rows);
        let matched = match session
            .rows(&format!("SELECT count(*) FROM t{filter}"), 1)
            .await
        {
            Ok(r) => r.texts(0).into_iter().next().flatten().unwrap_or_default(),
            Err(e) => return failed(&e),
        };
        match session
            .rows(&format!("SELECT {projection} FROM t{filter}"), max)
            .await
        {
            Ok(rows) => shown(
                &session,
                &rows,
                &format!("{matched} rows of {} match:", args.file),
                &data.limits,
                "narrow the condition or use data_aggregate",
            ),
            Err(e) => failed(&e),
        }
    }
}

/// The SELECT list for `columns` (all when none).
pub(crate) fn projection(columns: Option<&[String]>) -> String {
    match columns {
        Some(c) if !c.is_empty() => c.iter().map(|c| ident(c)).collect::<Vec<_>>().join(", "),
        _ => "*".to_owned(),
    }
}
