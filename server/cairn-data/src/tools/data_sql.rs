//! `data_sql`: one read-only SQL query over one or more data files, each a table by name.

use std::collections::BTreeMap;

use cairn_toolkit::{CallContext, Category, Effect, JsonSchema, Paths, Tool};
use rmcp::model::CallToolResult;
use serde::Deserialize;

use crate::engine::{TableRef, table_name};
use crate::tools::{failed, shown};
use crate::{Data, DataError};

/// The `data_sql` tool.
pub struct DataSql;

/// Arguments of `data_sql`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// The tables the query names, each a data file in the workspace: `{"sales": "data/sales.csv",
    /// "regions": "ref/regions.parquet"}`. A workbook's sheet is `"book.xlsx#Sheet2"`.
    tables: BTreeMap<String, String>,
    /// One SQL query (PostgreSQL-like dialect: SELECT, WITH, JOIN, GROUP BY, window functions,
    /// date_trunc, ...). It only reads.
    sql: String,
}

impl Tool for DataSql {
    type Host = Data;
    type Args = Args;
    const NAME: &'static str = "data_sql";
    const TITLE: &'static str = "SQL over data files";
    const DESCRIPTION: &'static str = "Run one read-only SQL query over CSV, TSV, JSON, JSON Lines, Parquet or Excel files in the workspace, each registered as a table under the name you give; joins across files work. Rows are shown as a table (capped).";
    const CATEGORY: Category = Category::Data;
    const EFFECT: Effect = Effect::Read;
    const AGENT_ONLY: bool = false;

    fn paths(args: &Args) -> Paths {
        Paths::read_all(args.tables.values().map(|f| split_sheet(f).0))
    }

    async fn call(data: &Data, args: Args, cx: CallContext) -> CallToolResult {
        if args.tables.is_empty() {
            return failed(&DataError::Query(
                "name at least one table: {\"name\": \"path/to/file.csv\"}".to_owned(),
            ));
        }
        let tables: Vec<TableRef> = args
            .tables
            .iter()
            .map(|(name, file)| {
                let (file, sheet) = split_sheet(file);
                let name = if name.trim().is_empty() {
                    table_name(file)
                } else {
                    name.clone()
                };
                TableRef::new(&name, file, sheet)
            })
            .collect();
        let session = match data.session(&tables, &cx.cancel).await {
            Ok(s) => s,
            Err(e) => return failed(&e),
        };
        match session.rows(&args.sql, data.limits.table.max_rows).await {
            Ok(rows) => shown(
                &session,
                &rows,
                "Result:",
                &data.limits,
                "add a WHERE or LIMIT, or aggregate",
            ),
            Err(e) => failed(&e),
        }
    }
}

/// `book.xlsx#Sheet2` → (`book.xlsx`, `Sheet2`); a `#` in any other file name is kept.
pub(crate) fn split_sheet(file: &str) -> (&str, Option<&str>) {
    match file.rsplit_once('#') {
        Some((f, sheet))
            if crate::source::Format::from_name(f) == Some(crate::source::Format::Xlsx)
                && !sheet.is_empty() =>
        {
            (f, Some(sheet))
        }
        _ => (file, None),
    }
}
