//! Writing: a query's batches encoded as CSV, TSV, JSON, JSON Lines or Parquet, and any file the
//! tools produce written through the workspace scope (refusing to replace a file unless asked),
//! reported as an edit. CSV and TSV text cells a spreadsheet would run as formulas are written
//! escaped (see [`cairn_toolkit::cells`]) unless the caller turns it off.

use std::sync::Arc;

use cairn_agent::tools::EditReport;
use cairn_toolkit::cells::formula_safe;
use cairn_workspace::{ScopeError, Workspace, WorkspacePath, off_thread};
use datafusion::arrow::array::{Array, ArrayRef, AsArray, RecordBatch, StringArray};
use datafusion::arrow::datatypes::{DataType, Field, Schema, SchemaRef};

use crate::DataError;
use crate::source::Format;

/// A growing file's bytes, refusing to pass the cap.
pub(crate) struct Capped {
    bytes: Vec<u8>,
    cap: usize,
}

impl std::io::Write for Capped {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        if self.bytes.len() + buf.len() > self.cap {
            return Err(std::io::Error::other(format!(
                "the output would pass {} MiB, the data tools' cap for one file; filter or aggregate first",
                self.cap / (1024 * 1024)
            )));
        }
        self.bytes.extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// An encoder fed batch by batch.
pub(crate) enum Encoder {
    /// With whether formula-like text cells (and header names) are escaped.
    Csv(datafusion::arrow::csv::Writer<Capped>, bool),
    JsonLines(datafusion::arrow::json::LineDelimitedWriter<Capped>),
    Json(datafusion::arrow::json::ArrayWriter<Capped>),
    Parquet(datafusion::parquet::arrow::ArrowWriter<Capped>),
}

impl Encoder {
    pub(crate) fn new(
        format: Format,
        schema: &SchemaRef,
        cap: usize,
        escape_formulas: bool,
    ) -> Result<Encoder, DataError> {
        let sink = Capped {
            bytes: Vec::new(),
            cap,
        };
        Ok(match format {
            Format::Delimited(d) => Encoder::Csv(
                datafusion::arrow::csv::WriterBuilder::new()
                    .with_header(true)
                    .with_delimiter(d)
                    .build(sink),
                escape_formulas,
            ),
            Format::JsonLines => {
                Encoder::JsonLines(datafusion::arrow::json::LineDelimitedWriter::new(sink))
            }
            Format::Json => Encoder::Json(datafusion::arrow::json::ArrayWriter::new(sink)),
            Format::Parquet => Encoder::Parquet(
                datafusion::parquet::arrow::ArrowWriter::try_new(sink, schema.clone(), None)
                    .map_err(|e| DataError::Write(e.to_string()))?,
            ),
            Format::Xlsx => {
                return Err(DataError::Write(
                    "the data tools read Excel workbooks but do not write them; write CSV or Parquet, which Excel opens"
                        .to_owned(),
                ));
            }
        })
    }

    pub(crate) fn write(&mut self, batch: &RecordBatch) -> Result<(), DataError> {
        let r = match self {
            Encoder::Csv(w, true) => formula_safe_batch(batch)
                .and_then(|b| w.write(&b))
                .map_err(|e| e.to_string()),
            Encoder::Csv(w, false) => w.write(batch).map_err(|e| e.to_string()),
            Encoder::JsonLines(w) => w.write(batch).map_err(|e| e.to_string()),
            Encoder::Json(w) => w.write(batch).map_err(|e| e.to_string()),
            Encoder::Parquet(w) => w.write(batch).map_err(|e| e.to_string()),
        };
        r.map_err(DataError::Write)
    }

    pub(crate) fn finish(self) -> Result<Vec<u8>, DataError> {
        let w = |e: String| DataError::Write(e);
        Ok(match self {
            Encoder::Csv(w, _) => w.into_inner().bytes,
            Encoder::JsonLines(mut x) => {
                x.finish().map_err(|e| w(e.to_string()))?;
                x.into_inner().bytes
            }
            Encoder::Json(mut x) => {
                x.finish().map_err(|e| w(e.to_string()))?;
                x.into_inner().bytes
            }
            Encoder::Parquet(x) => x.into_inner().map_err(|e| w(e.to_string()))?.bytes,
        })
    }
}

/// `batch` with every text cell, and every column name (the header row is cells too), a
/// spreadsheet would run as a formula escaped. Text of any encoding (large, view, dictionary) is
/// cast to plain UTF-8 first: the CSV writer prints them alike, and one arm escapes them all.
fn formula_safe_batch(
    batch: &RecordBatch,
) -> Result<RecordBatch, datafusion::arrow::error::ArrowError> {
    let is_text =
        |t: &DataType| matches!(t, DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View);
    let schema = batch.schema();
    let mut fields = Vec::with_capacity(schema.fields().len());
    let mut columns = Vec::with_capacity(batch.num_columns());
    for (field, column) in schema.fields().iter().zip(batch.columns()) {
        let text = match column.data_type() {
            DataType::Dictionary(_, v) => is_text(v),
            t => is_text(t),
        };
        let column: ArrayRef = if text {
            let plain = datafusion::arrow::compute::cast(column, &DataType::Utf8)?;
            Arc::new(
                plain
                    .as_string::<i32>()
                    .iter()
                    .map(|c| c.map(formula_safe))
                    .collect::<StringArray>(),
            )
        } else {
            column.clone()
        };
        fields.push(
            Field::new(
                formula_safe(field.name()),
                column.data_type().clone(),
                field.is_nullable(),
            )
            .with_metadata(field.metadata().clone()),
        );
        columns.push(column);
    }
    RecordBatch::try_new(Arc::new(Schema::new(fields)), columns)
}

/// Writes `bytes` to `requested` through the scope; an existing file is replaced only when
/// `overwrite`.
pub(crate) async fn write_file(
    ws: &Arc<Workspace>,
    requested: &str,
    bytes: Vec<u8>,
    overwrite: bool,
) -> Result<WorkspacePath, DataError> {
    let requested = requested.to_owned();
    let written = off_thread(ws, move |ws| {
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
        ws.write_bytes_atomic(&path, &bytes)?;
        Ok::<_, ScopeError>(Ok(path))
    })
    .await
    .map_err(DataError::Write)?;
    written?.map_err(DataError::Write)
}

/// The edit report for a file a tool wrote.
pub(crate) fn report(path: &WorkspacePath) -> EditReport {
    EditReport {
        uri: path.uri(),
        applied: true,
        reason: None,
    }
}
