//! Writing: a query's batches encoded as CSV, TSV, JSON, JSON Lines or Parquet, and any file the
//! tools produce written through the workspace scope (refusing to replace a file unless asked),
//! reported as an edit.

use std::sync::Arc;

use cairn_agent::tools::EditReport;
use cairn_workspace::{ScopeError, Workspace, WorkspacePath, off_thread};
use datafusion::arrow::array::RecordBatch;
use datafusion::arrow::datatypes::SchemaRef;

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
    Csv(datafusion::arrow::csv::Writer<Capped>),
    JsonLines(datafusion::arrow::json::LineDelimitedWriter<Capped>),
    Json(datafusion::arrow::json::ArrayWriter<Capped>),
    Parquet(datafusion::parquet::arrow::ArrowWriter<Capped>),
}

impl Encoder {
    pub(crate) fn new(
        format: Format,
        schema: &SchemaRef,
        cap: usize,
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
            Encoder::Csv(w) => w.write(batch).map_err(|e| e.to_string()),
            Encoder::JsonLines(w) => w.write(batch).map_err(|e| e.to_string()),
            Encoder::Json(w) => w.write(batch).map_err(|e| e.to_string()),
            Encoder::Parquet(w) => w.write(batch).map_err(|e| e.to_string()),
        };
        r.map_err(DataError::Write)
    }

    pub(crate) fn finish(self) -> Result<Vec<u8>, DataError> {
        let w = |e: String| DataError::Write(e);
        Ok(match self {
            Encoder::Csv(w) => w.into_inner().bytes,
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
