//! `chart_histogram`: the distribution of a numeric column: equal-width bins counted by the
//! engine (so any file size works), written as an SVG and PNG histogram, with the bin counts
//! as a table.

use cairn_toolkit::table::{Cell, Table};
use cairn_toolkit::{CallContext, Category, Effect, JsonSchema, Paths, Tool};
use rmcp::model::CallToolResult;
use serde::Deserialize;

use crate::chart::{Axis, Chart, Kind, Series};
use crate::engine::ident;
use crate::tools::charts::{outputs, write};
use crate::tools::{failed, where_clause};
use crate::{Data, DataError};

/// The `chart_histogram` tool.
pub struct ChartHistogram;

/// Most bins one histogram has.
const MAX_BINS: usize = 200;

/// Arguments of `chart_histogram`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// The data file, relative to the workspace.
    file: String,
    /// For a workbook, the sheet to read (default: the first).
    sheet: Option<String>,
    /// The numeric column whose distribution is drawn.
    column: String,
    /// How many equal-width bins (default 20, at most 200).
    bins: Option<usize>,
    /// An SQL condition on the rows first.
    #[serde(rename = "where")]
    filter: Option<String>,
    /// The chart's title (default: from the column).
    title: Option<String>,
    /// The files to write, without extension or with .svg/.png: `charts/ages` writes
    /// charts/ages.svg and charts/ages.png.
    output: String,
    /// Replace the files if they exist (default false).
    overwrite: Option<bool>,
}

impl Tool for ChartHistogram {
    type Host = Data;
    type Args = Args;
    const NAME: &'static str = "chart_histogram";
    const TITLE: &'static str = "Histogram";
    const DESCRIPTION: &'static str = "Draw the distribution of a numeric column of a data file as a histogram of equal-width bins, written as SVG and PNG in the workspace (the picture is shown in the chat), with the bin counts as a table.";
    const CATEGORY: Category = Category::Data;
    const EFFECT: Effect = Effect::Write;
    const AGENT_ONLY: bool = true;
    const NEEDS_WORKSPACE: bool = true;

    fn paths(args: &Args) -> Paths {
        let (svg, png) = outputs(&args.output);
        Paths::read(&args.file).and_write(svg).and_write(png)
    }

    async fn call(data: &Data, args: Args, cx: CallContext) -> CallToolResult {
        match histogram(data, &args, &cx).await {
            Ok(r) => r,
            Err(e) => failed(&e),
        }
    }
}

async fn histogram(
    data: &Data,
    args: &Args,
    cx: &CallContext,
) -> Result<CallToolResult, DataError> {
    let session = data
        .one(&args.file, args.sheet.as_deref(), &cx.cancel)
        .await?;
    let v = format!("CAST({} AS DOUBLE)", ident(&args.column));
    let filter = where_clause(args.filter.as_deref());
    let range = session
        .rows(
            &format!("SELECT min({v}), max({v}), count({v}) FROM t{filter}"),
            1,
        )
        .await?;
    let (Some(lo), Some(hi)) = (
        range.numbers(0).into_iter().next().flatten(),
        range.numbers(1).into_iter().next().flatten(),
    ) else {
        return Err(DataError::Query(format!(
            "{} has no numeric values to draw",
            args.column
        )));
    };
    let bins = args.bins.unwrap_or(20).clamp(1, MAX_BINS);
    let (lo, hi) = if hi > lo {
        (lo, hi)
    } else {
        (lo - 0.5, lo + 0.5)
    };
    let width = (hi - lo) / bins as f64;
    // The top edge belongs to the last bin.
    let sql = format!(
        "SELECT least(CAST(floor(({v} - {lo}) / {width}) AS BIGINT), {last}) AS bin, count(*) FROM t{filter}{and} {v} IS NOT NULL GROUP BY 1",
        last = bins - 1,
        and = if filter.is_empty() { " WHERE" } else { " AND" },
    );
    let counted = session.rows(&sql, MAX_BINS + 1).await?;
    let mut counts = vec![0f64; bins];
    for (b, n) in counted.numbers(0).into_iter().zip(counted.numbers(1)) {
        if let (Some(b), Some(n)) = (b, n)
            && b >= 0.0
            && (b as usize) < bins
        {
            counts[b as usize] += n;
        }
    }
    let edges: Vec<f64> = (0..=bins).map(|i| lo + width * i as f64).collect();
    let chart = Chart {
        kind: Kind::Histogram,
        title: args
            .title
            .clone()
            .unwrap_or_else(|| format!("Distribution of {}", args.column)),
        x_label: args.column.clone(),
        y_label: "count".to_owned(),
        x: Axis::Numbers(edges.clone()),
        series: vec![Series {
            name: "count".to_owned(),
            values: counts.clone(),
        }],
    };
    let mut result = write(
        data,
        &session,
        &chart,
        &args.output,
        args.overwrite.unwrap_or(false),
        "",
    )
    .await?;
    let table = Table {
        columns: vec!["from".into(), "to".into(), "count".into()],
        rows: (0..bins)
            .map(|i| {
                vec![
                    Cell::Text(format!("{:.4}", edges[i])),
                    Cell::Text(format!("{:.4}", edges[i + 1])),
                    Cell::Text(format!("{}", counts[i])),
                ]
            })
            .collect(),
        more: false,
    };
    let (markdown, _) = table.markdown(&data.limits.table);
    result.content.insert(
        1,
        rmcp::model::ContentBlock::text(format!("Bins:\n\n{markdown}")),
    );
    Ok(result)
}
