//! What the chart tools share: the rows to draw (a query over the file, or `x` and `y` columns
//! with an optional aggregate), how they become a [`Chart`], and the files written (an SVG and a
//! PNG with the same name) with the PNG in the result, so the editor shows the picture.

use std::sync::Arc;

use base64::Engine as _;
use cairn_toolkit::JsonSchema;
use cairn_toolkit::reply::{text, with_edits};
use datafusion::arrow::datatypes::DataType;
use rmcp::model::{CallToolResult, ContentBlock};
use serde::Deserialize;

use crate::chart::{self, Axis, Chart, Kind, Series};
use crate::engine::{Session, ident};
use crate::output::{report, write_file};
use crate::tools::where_clause;
use crate::{Data, DataError};

/// Most points one chart draws.
const MAX_POINTS: usize = 20_000;

/// How `y` values that share an `x` are combined.
#[derive(Debug, Clone, Copy, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Aggregate {
    Sum,
    Avg,
    Count,
    Min,
    Max,
}

/// What a bar, line or scatter chart draws and where it goes (the arguments these tools share).
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Spec {
    /// The data file (table `t` in `sql`), relative to the workspace.
    file: String,
    /// For a workbook, the sheet to read (default: the first).
    sheet: Option<String>,
    /// The column along the x axis (with `y`).
    x: Option<String>,
    /// The columns drawn as series against `x`, one colour each.
    y: Option<Vec<String>>,
    /// Combine the `y` values of rows with the same `x`: sum, avg, count, min or max (default:
    /// none, one point a row).
    aggregate: Option<Aggregate>,
    /// An SQL condition on the rows first.
    #[serde(rename = "where")]
    filter: Option<String>,
    /// Instead of `x`/`y`: a query over table `t` whose first column is x and the others the
    /// series, such as `SELECT date_trunc('month', day) AS month, sum(amount) AS sales FROM t
    /// GROUP BY 1 ORDER BY 1`.
    sql: Option<String>,
    /// The chart's title (default: from the columns).
    title: Option<String>,
    /// The files to write, without extension or with .svg/.png: `charts/sales` writes
    /// charts/sales.svg and charts/sales.png.
    output: String,
    /// Replace the files if they exist (default false).
    overwrite: Option<bool>,
}

impl Spec {
    pub(crate) fn file(&self) -> &str {
        &self.file
    }

    pub(crate) fn outputs(&self) -> (String, String) {
        outputs(&self.output)
    }
}

/// The two files a chart writes.
pub(crate) fn outputs(output: &str) -> (String, String) {
    let stem = output
        .strip_suffix(".svg")
        .or_else(|| output.strip_suffix(".png"))
        .unwrap_or(output);
    (format!("{stem}.svg"), format!("{stem}.png"))
}

/// Draws `spec` as a chart of `kind`.
pub(crate) async fn draw_spec(
    data: &Data,
    spec: &Spec,
    kind: Kind,
    cancel: &tokio_util::sync::CancellationToken,
) -> Result<CallToolResult, DataError> {
    let session = data.one(&spec.file, spec.sheet.as_deref(), cancel).await?;
    let (sql, x_name, y_names) = match (&spec.sql, &spec.x, &spec.y) {
        (Some(sql), None, None) => (sql.clone(), None, None),
        (None, Some(x), Some(y)) if !y.is_empty() => {
            let xi = ident(x);
            let filter = where_clause(spec.filter.as_deref());
            let sql = match spec.aggregate {
                Some(a) => {
                    let f = match a {
                        Aggregate::Sum => "sum",
                        Aggregate::Avg => "avg",
                        Aggregate::Count => "count",
                        Aggregate::Min => "min",
                        Aggregate::Max => "max",
                    };
                    let series = y
                        .iter()
                        .map(|c| format!("{f}({0}) AS {0}", ident(c)))
                        .collect::<Vec<_>>()
                        .join(", ");
                    format!("SELECT {xi}, {series} FROM t{filter} GROUP BY {xi} ORDER BY {xi}")
                }
                None => {
                    let series = y.iter().map(|c| ident(c)).collect::<Vec<_>>().join(", ");
                    let order = if kind == Kind::Scatter {
                        String::new()
                    } else {
                        format!(" ORDER BY {xi}")
                    };
                    format!("SELECT {xi}, {series} FROM t{filter}{order}")
                }
            };
            (sql, Some(x.clone()), Some(y.clone()))
        }
        _ => {
            return Err(DataError::Query(
                "give either `x` and `y` (columns) or `sql` (first column x, the others series)"
                    .to_owned(),
            ));
        }
    };
    let rows = session.rows(&sql, MAX_POINTS).await?;
    if rows.schema.fields().len() < 2 {
        return Err(DataError::Query(
            "a chart needs an x column and at least one series".to_owned(),
        ));
    }
    let names: Vec<String> = rows
        .schema
        .fields()
        .iter()
        .map(|f| f.name().clone())
        .collect();
    let x_type = rows.schema.field(0).data_type().clone();
    let x = match (kind, &x_type) {
        (Kind::Bar, _) => Axis::Categories(
            rows.texts(0)
                .into_iter()
                .map(|t| t.unwrap_or_else(|| "NULL".to_owned()))
                .collect(),
        ),
        (_, DataType::Date32 | DataType::Date64 | DataType::Timestamp(_, _)) => Axis::Times(
            rows.millis(0)
                .into_iter()
                .map(|v| v.unwrap_or(i64::MIN))
                .collect(),
        ),
        (_, t) if t.is_numeric() => Axis::Numbers(
            rows.numbers(0)
                .into_iter()
                .map(|v| v.unwrap_or(f64::NAN))
                .collect(),
        ),
        _ => Axis::Categories(
            rows.texts(0)
                .into_iter()
                .map(|t| t.unwrap_or_else(|| "NULL".to_owned()))
                .collect(),
        ),
    };
    let series = (1..names.len())
        .map(|i| Series {
            name: names[i].clone(),
            values: rows
                .numbers(i)
                .into_iter()
                .map(|v| v.unwrap_or(f64::NAN))
                .collect(),
        })
        .collect::<Vec<_>>();
    let x_label = x_name.unwrap_or_else(|| names[0].clone());
    let y_label = match &y_names {
        Some(y) if y.len() == 1 => y[0].clone(),
        _ if series.len() == 1 => series[0].name.clone(),
        _ => String::new(),
    };
    let title = spec.title.clone().unwrap_or_else(|| {
        let ys = series
            .iter()
            .map(|s| s.name.as_str())
            .collect::<Vec<_>>()
            .join(", ");
        format!("{ys} by {x_label}")
    });
    let chart = Chart {
        kind,
        title,
        x_label,
        y_label,
        x,
        series,
    };
    let mut note = String::new();
    if rows.more {
        note = format!(" (only the first {MAX_POINTS} rows: aggregate to draw all)");
    }
    write(
        data,
        &session,
        &chart,
        &spec.output,
        spec.overwrite.unwrap_or(false),
        &note,
    )
    .await
}

/// Renders `chart` to SVG and PNG and writes both; the PNG rides in the result as an image.
pub(crate) async fn write(
    data: &Data,
    session: &Session,
    chart: &Chart,
    output: &str,
    overwrite: bool,
    note: &str,
) -> Result<CallToolResult, DataError> {
    let ws: Arc<_> = data.ws()?.clone();
    let svg = chart::svg(chart).map_err(|e| DataError::Query(e.to_string()))?;
    let png = chart::png(chart).map_err(|e| DataError::Query(e.to_string()))?;
    let (svg_path, png_path) = outputs(output);
    let png_b64 = base64::engine::general_purpose::STANDARD.encode(&png);
    let svg_written = write_file(&ws, &svg_path, svg.into_bytes(), overwrite).await?;
    let png_written = write_file(&ws, &png_path, png, overwrite).await?;
    let mut message = format!(
        "{} chart \"{}\" written to {} and {}{note}",
        match chart.kind {
            Kind::Bar => "Bar",
            Kind::Line => "Line",
            Kind::Scatter => "Scatter",
            Kind::Histogram => "Histogram",
        },
        chart.title,
        svg_written.display_path(),
        png_written.display_path()
    );
    for n in &session.notes {
        message.push_str(&format!("\nNote: {n}."));
    }
    let mut result = with_edits(text(message), &[report(&svg_written), report(&png_written)]);
    result
        .content
        .push(ContentBlock::image(png_b64, "image/png"));
    Ok(result)
}
