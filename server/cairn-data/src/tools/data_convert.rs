//! `data_convert`: a data file (or a query over it) written in another format: CSV, TSV, JSON,
//! JSON Lines or Parquet.

use cairn_toolkit::reply::{text, with_edits};
use cairn_toolkit::{CallContext, Category, Effect, JsonSchema, Paths, Tool};
use rmcp::model::CallToolResult;
use serde::Deserialize;

use crate::engine::Flow;
use crate::output::{Encoder, report, write_file};
use crate::source::Format;
use crate::tools::failed;
use crate::{Data, DataError};

/// The `data_convert` tool.
pub struct DataConvert;

/// The format written.
#[derive(Debug, Clone, Copy, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum To {
    Csv,
    Tsv,
    Json,
    Jsonl,
    Parquet,
}

/// Arguments of `data_convert`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// The data file read (table `t` in `sql`), relative to the workspace.
    file: String,
    /// For a workbook, the sheet to read (default: the first).
    sheet: Option<String>,
    /// The file written, relative to the workspace.
    output: String,
    /// csv, tsv, json (one array), jsonl or parquet (default: from the output's extension).
    format: Option<To>,
    /// A query over table `t` whose rows are written instead of the whole file:
    /// `SELECT id, total FROM t WHERE total > 0`.
    sql: Option<String>,
    /// Replace the output if it exists (default false).
    overwrite: Option<bool>,
    /// In CSV and TSV, write a text cell (or column name) starting with `=`, `+`, `-`, `@`, a
    /// tab or a carriage return, other than a plain number, with a leading `'`, because a
    /// spreadsheet opening the file would run it as a formula (default true; false writes the
    /// cells exactly). JSON, JSON Lines and Parquet are written as they are either way.
    escape_formulas: Option<bool>,
}

impl Tool for DataConvert {
    type Host = Data;
    type Args = Args;
    const NAME: &'static str = "data_convert";
    const TITLE: &'static str = "Convert a data file";
    const DESCRIPTION: &'static str = "Write a data file (CSV, TSV, JSON, JSON Lines, Parquet or Excel), or the result of an SQL query over it, to a new file in the workspace as CSV, TSV, JSON, JSON Lines or Parquet.";
    const CATEGORY: Category = Category::Data;
    const EFFECT: Effect = Effect::Write;
    const AGENT_ONLY: bool = true;
    const NEEDS_WORKSPACE: bool = true;

    fn paths(args: &Args) -> Paths {
        Paths::read(&args.file).and_write(&args.output)
    }

    async fn call(data: &Data, args: Args, cx: CallContext) -> CallToolResult {
        match convert(data, &args, &cx).await {
            Ok(r) => r,
            Err(e) => failed(&e),
        }
    }
}

async fn convert(data: &Data, args: &Args, cx: &CallContext) -> Result<CallToolResult, DataError> {
    let format = match args.format {
        Some(To::Csv) => Format::Delimited(b','),
        Some(To::Tsv) => Format::Delimited(b'\t'),
        Some(To::Json) => Format::Json,
        Some(To::Jsonl) => Format::JsonLines,
        Some(To::Parquet) => Format::Parquet,
        None => Format::from_name(&args.output).ok_or_else(|| {
            DataError::Query(format!(
                "say the format: {} has no extension the tools know (csv, tsv, json, jsonl, parquet)",
                args.output
            ))
        })?,
    };
    let ws = data.ws()?.clone();
    let session = data
        .one(&args.file, args.sheet.as_deref(), &cx.cancel)
        .await?;
    let sql = args.sql.as_deref().unwrap_or("SELECT * FROM t");
    let df = session.plan(sql).await?;
    let schema = std::sync::Arc::new(df.schema().as_arrow().clone());
    let mut encoder = Encoder::new(
        format,
        &schema,
        data.limits.max_output_bytes,
        args.escape_formulas.unwrap_or(true),
    )?;
    let mut rows = 0usize;
    session
        .each_batch(df, |b| {
            rows += b.num_rows();
            encoder.write(b).map(|()| Flow::More)
        })
        .await?;
    let bytes = encoder.finish()?;
    let size = bytes.len();
    let path = write_file(&ws, &args.output, bytes, args.overwrite.unwrap_or(false)).await?;
    Ok(with_edits(
        text(format!(
            "wrote {rows} rows ({size} bytes, {}) to {}",
            format.name(),
            path.display_path()
        )),
        &[report(&path)],
    ))
}
