//! `db_export`: a query's rows written to a CSV, JSON, JSON Lines or Parquet file in the
//! workspace.

use cairn_agent::tools::EditReport;
use cairn_toolkit::reply::{error, text, with_edits};
use cairn_toolkit::{CallContext, Category, Effect, JsonSchema, Paths, Tool};
use cairn_workspace::{ScopeError, off_thread};
use rmcp::model::CallToolResult;
use serde::Deserialize;
use serde_json::{Map, Value};

use crate::db::Db;
use crate::table::Limits;
use crate::table::{Cell, Table};
use crate::tools::failed;

/// The `db_export` tool.
pub struct DbExport;

/// Most rows one export writes.
const MAX_EXPORT_ROWS: usize = 100_000;

/// The file format (plain variants: the schema is a compact `enum`).
#[derive(Debug, Clone, Copy, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Format {
    Csv,
    Json,
    Jsonl,
    Parquet,
}

/// Arguments of `db_export`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// The connection's name, as db_connections lists it.
    connection: String,
    /// One read-only SQL statement whose rows are written.
    sql: String,
    /// The file to write, relative to the workspace root.
    path: String,
    /// `csv` (a header row, then one record a row; NULL is an empty field), `json` (one array
    /// of objects), `jsonl` (one object a line) or `parquet` (text columns, NULL kept).
    format: Format,
    /// Replace the file if it exists (default false).
    overwrite: Option<bool>,
    /// In CSV, write a text cell starting with `=`, `+`, `-`, `@`, a tab or a carriage return
    /// (other than a plain number) with a leading `'`, because a spreadsheet opening the file
    /// would run it as a formula (default true; false writes the cells exactly).
    escape_formulas: Option<bool>,
}

impl Tool for DbExport {
    type Host = Db;
    type Args = Args;
    const NAME: &'static str = "db_export";
    const TITLE: &'static str = "Export query rows to a file";
    const DESCRIPTION: &'static str = "Run one read-only SQL statement on a configured database and write its rows (up to 100,000) to a CSV, JSON, JSON Lines or Parquet file in the workspace; values are written as the database shows them as text.";
    const CATEGORY: Category = Category::Database;
    const EFFECT: Effect = Effect::Write;
    const AGENT_ONLY: bool = false;
    const NEEDS_WORKSPACE: bool = true;

    fn paths(args: &Args) -> Paths {
        Paths::write(&args.path)
    }

    async fn call(db: &Db, args: Args, cx: CallContext) -> CallToolResult {
        let Some(ws) = db.workspace.clone() else {
            return error("db_export writes into the workspace; open a folder first");
        };
        let limits = Limits {
            max_rows: MAX_EXPORT_ROWS,
            ..db.limits
        };
        let mut table = match db
            .read_limited(&args.connection, &args.sql, limits, &cx.cancel)
            .await
        {
            Ok(t) => t,
            Err(e) => return failed(&e),
        };
        let redacted = db
            .redactor
            .as_deref()
            .is_some_and(|r| redact_cells(&mut table, r));
        let escape = args.escape_formulas.unwrap_or(true);
        let body = match render(&table, args.format, escape) {
            Ok(b) => b,
            Err(e) => return error(format!("could not encode the rows: {e}")),
        };
        let overwrite = args.overwrite.unwrap_or(false);
        let requested = args.path.clone();
        let written = off_thread(&ws, move |ws| {
            let path = ws.resolve(&requested)?;
            match ws.stat(&path) {
                Ok(_) if !overwrite => {
                    return Ok(Err(format!(
                        "{} already exists; pass overwrite: true to replace it",
                        path.display_path()
                    )));
                }
                Ok(_) | Err(ScopeError::NotFound { .. }) => {}
                Err(e) => return Err(e),
            }
            ws.write_bytes_atomic(&path, &body)?;
            Ok::<_, ScopeError>(Ok(path))
        })
        .await;
        let path = match written {
            Ok(Ok(Ok(path))) => path,
            Ok(Ok(Err(refused))) => return error(refused),
            Ok(Err(e)) => return error(e.to_string()),
            Err(e) => return error(e),
        };
        let mut note = format!(
            "wrote {} row{} to {}",
            table.rows.len(),
            if table.rows.len() == 1 { "" } else { "s" },
            path.display_path()
        );
        if redacted {
            note.push_str(
                "; values holding a secret from your vault were written as [REDACTED:…] in its place",
            );
        }
        if table.more {
            note.push_str(&format!(
                " (only the first {MAX_EXPORT_ROWS}: the result had more; narrow the query or export in parts)"
            ));
        }
        let report = EditReport {
            uri: path.uri(),
            applied: true,
            reason: None,
        };
        with_edits(text(note), &[report])
    }
}

/// Each text cell through the redactor, cell by cell so a marker never breaks the file's
/// format (a Parquet file is not text); whether any cell changed.
fn redact_cells(t: &mut Table, redactor: &dyn cairn_agent::redact::Redact) -> bool {
    let mut any = false;
    for cell in t.rows.iter_mut().flatten() {
        if let Cell::Text(value) = cell
            && let Some(clean) = redactor.redact_file(value.as_bytes())
        {
            *value = String::from_utf8_lossy(&clean).into_owned();
            any = true;
        }
    }
    any
}

fn render(t: &Table, format: Format, escape_formulas: bool) -> Result<Vec<u8>, String> {
    if let Format::Parquet = format {
        return parquet(t);
    }
    Ok(render_text(t, format, escape_formulas).into_bytes())
}

/// The rows as a Parquet file of nullable text columns (the values as the database shows them).
fn parquet(t: &Table) -> Result<Vec<u8>, String> {
    use std::sync::Arc;
    let schema = Arc::new(arrow_schema::Schema::new(
        t.columns
            .iter()
            .map(|c| arrow_schema::Field::new(c, arrow_schema::DataType::Utf8, true))
            .collect::<Vec<_>>(),
    ));
    let columns: Vec<arrow_array::ArrayRef> = (0..t.columns.len())
        .map(|i| {
            let values: arrow_array::StringArray = t
                .rows
                .iter()
                .map(|r| match r.get(i) {
                    Some(Cell::Text(v)) => Some(v.clone()),
                    Some(Cell::Bytes(n)) => Some(format!("<{n} bytes>")),
                    Some(Cell::Null) | None => None,
                })
                .collect();
            Arc::new(values) as arrow_array::ArrayRef
        })
        .collect();
    let batch =
        arrow_array::RecordBatch::try_new(schema.clone(), columns).map_err(|e| e.to_string())?;
    let mut out = Vec::new();
    let mut writer =
        parquet::arrow::ArrowWriter::try_new(&mut out, schema, None).map_err(|e| e.to_string())?;
    writer.write(&batch).map_err(|e| e.to_string())?;
    writer.close().map_err(|e| e.to_string())?;
    Ok(out)
}

fn render_text(t: &Table, format: Format, escape_formulas: bool) -> String {
    let value = |c: &Cell| match c {
        Cell::Null => Value::Null,
        Cell::Text(t) => Value::String(t.clone()),
        Cell::Bytes(n) => Value::String(format!("<{n} bytes>")),
    };
    let object = |row: &Vec<Cell>| {
        let map: Map<String, Value> = t
            .columns
            .iter()
            .cloned()
            .zip(row.iter().map(value))
            .collect();
        Value::Object(map)
    };
    match format {
        Format::Csv => {
            let mut out = csv_line(t.columns.iter().map(String::as_str), escape_formulas);
            for row in &t.rows {
                let fields: Vec<String> = row
                    .iter()
                    .map(|c| match c {
                        Cell::Null => String::new(),
                        Cell::Text(t) => t.clone(),
                        Cell::Bytes(n) => format!("<{n} bytes>"),
                    })
                    .collect();
                out.push_str(&csv_line(
                    fields.iter().map(String::as_str),
                    escape_formulas,
                ));
            }
            out
        }
        Format::Json => {
            let rows: Vec<Value> = t.rows.iter().map(object).collect();
            let mut s = serde_json::to_string_pretty(&rows).unwrap_or_default();
            s.push('\n');
            s
        }
        Format::Jsonl => t.rows.iter().map(|r| format!("{}\n", object(r))).collect(),
        Format::Parquet => String::new(),
    }
}

/// One CSV record (RFC 4180): a field with a comma, quote or line break is quoted; with
/// `escape_formulas`, a field a spreadsheet would run is written as text first.
fn csv_line<'a>(fields: impl Iterator<Item = &'a str>, escape_formulas: bool) -> String {
    let quoted: Vec<String> = fields
        .map(|f| {
            let f = if escape_formulas {
                cairn_toolkit::cells::formula_safe(f)
            } else {
                std::borrow::Cow::Borrowed(f)
            };
            if f.contains([',', '"', '\n', '\r']) {
                format!("\"{}\"", f.replace('"', "\"\""))
            } else {
                f.into_owned()
            }
        })
        .collect();
    format!("{}\r\n", quoted.join(","))
}
