//! `data_inspect`: what a data file holds: its format, columns with their inferred types, row
//! count, and the first rows.

use cairn_toolkit::{CallContext, Category, Effect, JsonSchema, Paths, Tool};
use rmcp::model::CallToolResult;
use serde::Deserialize;

use crate::Data;
use crate::engine::ident;
use crate::tools::{failed, shown};

/// The `data_inspect` tool.
pub struct DataInspect;

/// Arguments of `data_inspect`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// The data file (CSV, TSV, JSON, JSON Lines, Parquet or .xlsx), relative to the workspace.
    file: String,
    /// For a workbook, the sheet to read (default: the first).
    sheet: Option<String>,
    /// How many first rows to show (default 10, at most 100).
    rows: Option<usize>,
}

impl Tool for DataInspect {
    type Host = Data;
    type Args = Args;
    const NAME: &'static str = "data_inspect";
    const TITLE: &'static str = "Inspect a data file";
    const DESCRIPTION: &'static str = "Show what a CSV, TSV, JSON, JSON Lines, Parquet or Excel file in the workspace holds: its columns with their inferred types, how many rows it has, and the first rows. Start here before querying a file.";
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
        let columns = match session.columns("t").await {
            Ok(c) => c,
            Err(e) => return failed(&e),
        };
        let count = match session.rows("SELECT count(*) FROM t", 1).await {
            Ok(r) => r.texts(0).into_iter().next().flatten().unwrap_or_default(),
            Err(e) => return failed(&e),
        };
        let n = args.rows.unwrap_or(10).min(100);
        let projection = columns
            .iter()
            .map(|(c, _)| ident(c))
            .collect::<Vec<_>>()
            .join(", ");
        let first = match session
            .rows(&format!("SELECT {projection} FROM t LIMIT {n}"), n)
            .await
        {
            Ok(r) => r,
            Err(e) => return failed(&e),
        };
        let format = session.formats.first().map_or("data", |(_, f)| f.name());
        let mut heading = format!(
            "{} ({format}): {count} rows, {} columns\n\nColumns:\n",
            args.file,
            columns.len()
        );
        for (name, ty) in &columns {
            heading.push_str(&format!("- {name}: {}\n", type_name(ty)));
        }
        heading.push_str(&format!("\nFirst {} rows:", first.len()));
        shown(
            &session,
            &first,
            &heading,
            &data.limits,
            "ask for fewer rows",
        )
    }
}

/// A type as a person says it.
pub(crate) fn type_name(t: &datafusion::arrow::datatypes::DataType) -> String {
    use datafusion::arrow::datatypes::DataType as T;
    match t {
        T::Int8 | T::Int16 | T::Int32 | T::Int64 => "integer".to_owned(),
        T::UInt8 | T::UInt16 | T::UInt32 | T::UInt64 => "unsigned integer".to_owned(),
        T::Float16 | T::Float32 | T::Float64 => "float".to_owned(),
        T::Decimal128(p, s) | T::Decimal256(p, s) => format!("decimal({p},{s})"),
        T::Utf8 | T::LargeUtf8 | T::Utf8View => "text".to_owned(),
        T::Boolean => "boolean".to_owned(),
        T::Date32 | T::Date64 => "date".to_owned(),
        T::Timestamp(_, None) => "timestamp".to_owned(),
        T::Timestamp(_, Some(tz)) => format!("timestamp ({tz})"),
        T::Null => "empty (no values)".to_owned(),
        other => other.to_string().to_lowercase(),
    }
}
