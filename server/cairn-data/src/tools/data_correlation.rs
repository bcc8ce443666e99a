//! `data_correlation`: the Pearson correlation of each pair of numeric columns, as a matrix.

use cairn_toolkit::table::{Cell, Table};
use cairn_toolkit::{CallContext, Category, Effect, JsonSchema, Paths, Tool};
use rmcp::model::CallToolResult;
use serde::Deserialize;

use crate::engine::ident;
use crate::tools::{failed, where_clause};
use crate::{Data, DataError};

/// The `data_correlation` tool.
pub struct DataCorrelation;

/// Most columns one matrix covers.
const MAX_COLUMNS: usize = 30;

/// Arguments of `data_correlation`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// The data file, relative to the workspace.
    file: String,
    /// For a workbook, the sheet to read (default: the first).
    sheet: Option<String>,
    /// The numeric columns to correlate (default: every numeric column, at most 30).
    columns: Option<Vec<String>>,
    /// An SQL condition on the rows first (default: all rows).
    #[serde(rename = "where")]
    filter: Option<String>,
}

impl Tool for DataCorrelation {
    type Host = Data;
    type Args = Args;
    const NAME: &'static str = "data_correlation";
    const TITLE: &'static str = "Correlation matrix";
    const DESCRIPTION: &'static str = "Compute the Pearson correlation between each pair of numeric columns of a data file, as a matrix, and name the strongest pairs.";
    const CATEGORY: Category = Category::Data;
    const EFFECT: Effect = Effect::Read;
    const AGENT_ONLY: bool = false;

    fn paths(args: &Args) -> Paths {
        Paths::read(&args.file)
    }

    async fn call(data: &Data, args: Args, cx: CallContext) -> CallToolResult {
        match correlate(data, &args, &cx).await {
            Ok(r) => r,
            Err(e) => failed(&e),
        }
    }
}

async fn correlate(
    data: &Data,
    args: &Args,
    cx: &CallContext,
) -> Result<CallToolResult, DataError> {
    let session = data
        .one(&args.file, args.sheet.as_deref(), &cx.cancel)
        .await?;
    let all = session.columns("t").await?;
    let names: Vec<String> = match &args.columns {
        Some(c) => c.clone(),
        None => all
            .iter()
            .filter(|(_, t)| t.is_numeric())
            .map(|(n, _)| n.clone())
            .take(MAX_COLUMNS)
            .collect(),
    };
    if names.len() < 2 {
        return Err(DataError::Query(
            "a correlation needs at least two numeric columns".to_owned(),
        ));
    }
    if names.len() > MAX_COLUMNS {
        return Err(DataError::Query(format!(
            "at most {MAX_COLUMNS} columns at once"
        )));
    }
    let mut pairs = Vec::new();
    for i in 0..names.len() {
        for j in i + 1..names.len() {
            pairs.push((i, j));
        }
    }
    let select = pairs
        .iter()
        .map(|(i, j)| {
            format!(
                "corr(CAST({} AS DOUBLE), CAST({} AS DOUBLE))",
                ident(&names[*i]),
                ident(&names[*j])
            )
        })
        .collect::<Vec<_>>()
        .join(", ");
    let rows = session
        .rows(
            &format!(
                "SELECT {select} FROM t{}",
                where_clause(args.filter.as_deref())
            ),
            1,
        )
        .await?;
    let values: Vec<Option<f64>> = (0..pairs.len())
        .map(|k| rows.numbers(k).into_iter().next().flatten())
        .collect();
    let n = names.len();
    let mut matrix = vec![vec![Cell::Text("1".to_owned()); n]; n];
    for ((i, j), v) in pairs.iter().zip(&values) {
        let cell = v.map_or(Cell::Null, |v| Cell::Text(format!("{v:.3}")));
        matrix[*i][*j] = cell.clone();
        matrix[*j][*i] = cell;
    }
    let table = Table {
        columns: std::iter::once(String::new())
            .chain(names.iter().cloned())
            .collect(),
        rows: names
            .iter()
            .zip(matrix)
            .map(|(name, row)| {
                std::iter::once(Cell::Text(name.clone()))
                    .chain(row)
                    .collect()
            })
            .collect(),
        more: false,
    };
    let mut strongest: Vec<_> = pairs
        .iter()
        .zip(&values)
        .filter_map(|(p, v)| v.map(|v| (p, v)))
        .collect();
    strongest.sort_by(|a, b| b.1.abs().total_cmp(&a.1.abs()));
    let mut heading = format!("Pearson correlation ({}):", args.file);
    if !strongest.is_empty() {
        heading.push_str("\nStrongest: ");
        heading.push_str(
            &strongest
                .iter()
                .take(3)
                .map(|((i, j), v)| format!("{} ~ {} {v:.3}", names[*i], names[*j]))
                .collect::<Vec<_>>()
                .join("; "),
        );
    }
    Ok(table.result_hinting(&heading, &data.limits.table, "pass fewer columns"))
}
