//! Workspace files as tables: the format from the name (or the first bytes), the schema
//! inferred from a bounded prefix, and the rows streamed in batches from a handle opened through
//! the workspace scope, so a multi-gigabyte CSV is read in constant memory and a path outside the
//! workspace, or one the user protects, is never opened. JSON arrays and Excel workbooks have no
//! streaming form; they are read whole under a size cap.

use std::fs::File;
use std::io::{BufReader, Read, Seek, SeekFrom};
use std::sync::Arc;

use cairn_workspace::{Workspace, WorkspacePath};
use datafusion::arrow::array::RecordBatch;
use datafusion::arrow::datatypes::{Field, Schema, SchemaRef};
use datafusion::catalog::{Session, TableProvider};
use datafusion::datasource::MemTable;
use datafusion::datasource::TableType;
use datafusion::error::DataFusionError;
use datafusion::execution::{SendableRecordBatchStream, TaskContext};
use datafusion::logical_expr::Expr;
use datafusion::physical_expr::LexOrdering;
use datafusion::physical_plan::ExecutionPlan;
use datafusion::physical_plan::stream::RecordBatchReceiverStream;
use datafusion::physical_plan::streaming::PartitionStream;
use datafusion::physical_plan::streaming::StreamingTableExec;

use crate::DataError;
use crate::guard::{self, Checks, Guard, JsonMode, Tripped};

/// Rows read to infer a CSV's or JSON Lines file's column types.
const INFER_RECORDS: usize = 20_000;
/// Rows per batch streamed to the engine.
const BATCH_ROWS: usize = 8192;
/// Delimited files at least this large are read as several byte ranges in parallel.
const SPLIT_ABOVE: u64 = 8 * 1024 * 1024;
/// How much of a delimited file is looked at for quoted line breaks before splitting it.
const SPLIT_SAMPLE: usize = 1024 * 1024;
/// The largest JSON array or Excel workbook read whole.
const MAX_WHOLE_FILE: u64 = 256 * 1024 * 1024;

/// A file format the data tools read and write.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Format {
    /// Delimited text with a header row (`,` for CSV, `\t` for TSV, `;` or `|` when sniffed).
    Delimited(u8),
    /// One JSON array of objects.
    Json,
    /// One JSON object a line.
    JsonLines,
    Parquet,
    Xlsx,
}

impl Format {
    /// The format a file name says, if it says one.
    pub(crate) fn from_name(name: &str) -> Option<Format> {
        let lower = name.to_ascii_lowercase();
        let ext = lower.rsplit_once('.').map(|(_, e)| e)?;
        Some(match ext {
            "csv" => Format::Delimited(b','),
            "tsv" | "tab" => Format::Delimited(b'\t'),
            "json" => Format::Json,
            "jsonl" | "ndjson" => Format::JsonLines,
            "parquet" | "pq" => Format::Parquet,
            "xlsx" | "xlsm" => Format::Xlsx,
            _ => return None,
        })
    }

    /// The format the first bytes of a file show, when the name says none.
    fn sniff(head: &[u8]) -> Format {
        let text = String::from_utf8_lossy(head);
        let trimmed = text.trim_start();
        if head.starts_with(b"PAR1") {
            Format::Parquet
        } else if head.starts_with(b"PK\x03\x04") {
            Format::Xlsx
        } else if trimmed.starts_with('[') {
            Format::Json
        } else if trimmed.starts_with('{') {
            Format::JsonLines
        } else {
            let first = trimmed.lines().next().unwrap_or("");
            let delimiter = [b',', b'\t', b';', b'|']
                .into_iter()
                .max_by_key(|d| first.bytes().filter(|b| b == d).count())
                .unwrap_or(b',');
            Format::Delimited(delimiter)
        }
    }

    pub(crate) fn name(self) -> &'static str {
        match self {
            Format::Delimited(b'\t') => "TSV",
            Format::Delimited(_) => "CSV",
            Format::Json => "JSON",
            Format::JsonLines => "JSON Lines",
            Format::Parquet => "Parquet",
            Format::Xlsx => "Excel",
        }
    }
}

/// A workspace file opened as a table.
pub(crate) struct Opened {
    pub provider: Arc<dyn TableProvider>,
    pub format: Format,
    /// Things the reader did that the model should know (a merged cell filled, an error cell).
    pub notes: Vec<String>,
}

/// Opens `requested` (an Excel `sheet`, or the first) as a table. Blocking: call off the
/// runtime's workers.
pub(crate) fn open(
    ws: &Arc<Workspace>,
    requested: &str,
    sheet: Option<&str>,
    parallelism: usize,
) -> Result<Opened, DataError> {
    let path = ws.resolve(requested)?;
    let display = path.display_path();
    let mut file = ws.open_read(&path)?;
    let format = match Format::from_name(&display) {
        Some(f) => f,
        None => {
            let mut head = [0u8; 4096];
            let n = read_up_to(&mut file, &mut head).map_err(|e| io(&display, &e))?;
            file.seek(SeekFrom::Start(0))
                .map_err(|e| io(&display, &e))?;
            Format::sniff(&head[..n])
        }
    };
    let format_err = |reason: String| DataError::Format {
        path: display.clone(),
        reason,
    };
    let mut notes = Vec::new();
    let streamed = |schema: Schema,
                    kind: Kind,
                    splits: usize,
                    size: u64|
     -> Result<Arc<dyn TableProvider>, DataError> {
        Ok(Arc::new(FileTable {
            ws: ws.clone(),
            path: path.clone(),
            display: display.clone(),
            schema: Arc::new(schema),
            kind,
            splits: splits.max(1),
            size,
        }))
    };
    let provider = match format {
        Format::Delimited(delimiter) => {
            let size = file.metadata().map_err(|e| io(&display, &e))?.len();
            let mut sample = vec![0u8; SPLIT_SAMPLE];
            let n = read_up_to(&mut file, &mut sample).map_err(|e| io(&display, &e))?;
            file.seek(SeekFrom::Start(0))
                .map_err(|e| io(&display, &e))?;
            // Split a large file into byte ranges read in parallel, unless a quoted value holds
            // a line break (a range could then start inside a record).
            let splits = if size >= SPLIT_ABOVE && !quoted_line_breaks(&sample[..n]) {
                parallelism
            } else {
                1
            };
            let (input, tripped) = Guard::new(file, LINES);
            let (schema, _) = datafusion::arrow::csv::reader::Format::default()
                .with_header(true)
                .with_delimiter(delimiter)
                .infer_schema(BufReader::new(input), Some(INFER_RECORDS))
                .map_err(|e| {
                    refused(&tripped, &display)
                        .unwrap_or_else(|| format_err(csv_message(&e.to_string())))
                })?;
            if schema.fields().is_empty() {
                return Err(format_err("the file is empty".to_owned()));
            }
            streamed(dedupe(schema), Kind::Delimited(delimiter), splits, size)?
        }
        Format::JsonLines => {
            let (input, tripped) = Guard::new(file, JSON_LINES);
            let (schema, _) = datafusion::arrow::json::reader::infer_json_schema(
                BufReader::new(input),
                Some(INFER_RECORDS),
            )
            .map_err(|e| {
                refused(&tripped, &display).unwrap_or_else(|| format_err(e.to_string()))
            })?;
            streamed(schema, Kind::JsonLines, 1, 0)?
        }
        Format::Parquet => {
            let builder =
                datafusion::parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder::try_new(
                    file,
                )
                .map_err(|e| format_err(format!("not a readable Parquet file: {e}")))?;
            streamed(builder.schema().as_ref().clone(), Kind::Parquet, 1, 0)?
        }
        Format::Json => {
            let bytes = read_whole(file, &display)?;
            guard::check_json(&bytes, &display)?;
            let batch = json_array(&bytes).map_err(format_err)?;
            Arc::new(MemTable::try_new(batch.schema(), vec![vec![batch]]).map_err(DataError::from)?)
        }
        Format::Xlsx => {
            let bytes = read_whole(file, &display)?;
            let batch = crate::xlsx::read(bytes, sheet, &mut notes).map_err(format_err)?;
            Arc::new(MemTable::try_new(batch.schema(), vec![vec![batch]]).map_err(DataError::from)?)
        }
    };
    if sheet.is_some() && format != Format::Xlsx {
        notes.push(format!(
            "`sheet` was ignored: {display} is {}, not a workbook",
            format.name()
        ));
    }
    Ok(Opened {
        provider,
        format,
        notes,
    })
}

/// The guard on a delimited file: its lines are capped.
const LINES: Checks = Checks {
    json: None,
    line_cap: true,
};
/// The guard on a JSON Lines file: lines capped, and each line's nesting.
const JSON_LINES: Checks = Checks {
    json: Some(JsonMode::PerLine),
    line_cap: true,
};

/// The guard's refusal, when it is why a parser failed.
fn refused(tripped: &Tripped, display: &str) -> Option<DataError> {
    tripped.get().map(|v| guard::refusal(display, v))
}

fn io(display: &str, e: &std::io::Error) -> DataError {
    DataError::Format {
        path: display.to_owned(),
        reason: format!("could not be read: {e}"),
    }
}

fn read_up_to(file: &mut File, buf: &mut [u8]) -> std::io::Result<usize> {
    let mut n = 0;
    while n < buf.len() {
        match file.read(&mut buf[n..])? {
            0 => break,
            k => n += k,
        }
    }
    Ok(n)
}

fn read_whole(file: File, display: &str) -> Result<Vec<u8>, DataError> {
    let mut bytes = Vec::new();
    file.take(MAX_WHOLE_FILE + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| io(display, &e))?;
    if bytes.len() as u64 > MAX_WHOLE_FILE {
        return Err(DataError::Format {
            path: display.to_owned(),
            reason: format!(
                "JSON arrays and workbooks are read whole and this one is over {} MiB; convert it to JSON Lines, CSV or Parquet, which stream",
                MAX_WHOLE_FILE / (1024 * 1024)
            ),
        });
    }
    Ok(bytes)
}

/// Column names made unique (`a`, `a_2`), so a header that repeats one still makes a table.
fn dedupe(schema: Schema) -> Schema {
    let mut seen = std::collections::HashSet::new();
    let fields: Vec<Field> = schema
        .fields()
        .iter()
        .enumerate()
        .map(|(i, f)| {
            let base = if f.name().trim().is_empty() {
                format!("column_{}", i + 1)
            } else {
                f.name().clone()
            };
            let mut name = base.clone();
            let mut k = 2;
            while !seen.insert(name.clone()) {
                name = format!("{base}_{k}");
                k += 1;
            }
            f.as_ref().clone().with_name(name)
        })
        .collect();
    Schema::new(fields)
}

/// One JSON array of objects as a batch.
fn json_array(bytes: &[u8]) -> Result<RecordBatch, String> {
    let value: serde_json::Value =
        serde_json::from_slice(bytes).map_err(|e| format!("not valid JSON: {e}"))?;
    let serde_json::Value::Array(rows) = value else {
        return Err("a JSON file must hold one array of objects (or use JSON Lines)".to_owned());
    };
    if let Some(i) = rows.iter().position(|r| !r.is_object()) {
        return Err(format!("item {i} of the array is not an object"));
    }
    let schema = datafusion::arrow::json::reader::infer_json_schema_from_iterator(
        rows.iter()
            .map(Ok::<_, datafusion::arrow::error::ArrowError>),
    )
    .map_err(|e| e.to_string())?;
    let schema = Arc::new(schema);
    let mut decoder = datafusion::arrow::json::ReaderBuilder::new(schema.clone())
        .with_batch_size(rows.len().max(1))
        .build_decoder()
        .map_err(|e| e.to_string())?;
    decoder.serialize(&rows).map_err(|e| e.to_string())?;
    Ok(decoder
        .flush()
        .map_err(|e| e.to_string())?
        .unwrap_or_else(|| RecordBatch::new_empty(schema)))
}

/// An arrow-csv message (it names the line) without the crate's wording around it.
fn csv_message(message: &str) -> String {
    message
        .trim_start_matches("Csv error: ")
        .trim_start_matches("Parser error: ")
        .to_owned()
}

/// How a streamed file is decoded.
#[derive(Debug, Clone, Copy)]
enum Kind {
    Delimited(u8),
    JsonLines,
    Parquet,
}

/// A streamed file as a table: each scan reads only the columns the query uses.
struct FileTable {
    ws: Arc<Workspace>,
    path: WorkspacePath,
    display: String,
    schema: SchemaRef,
    kind: Kind,
    /// How many byte ranges a delimited file is read as (1: the whole file).
    splits: usize,
    size: u64,
}

impl std::fmt::Debug for FileTable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FileTable")
            .field("path", &self.display)
            .field("kind", &self.kind)
            .finish_non_exhaustive()
    }
}

#[async_trait::async_trait]
impl TableProvider for FileTable {
    fn schema(&self) -> SchemaRef {
        self.schema.clone()
    }

    fn table_type(&self) -> TableType {
        TableType::Base
    }

    async fn scan(
        &self,
        _state: &dyn Session,
        projection: Option<&Vec<usize>>,
        _filters: &[Expr],
        limit: Option<usize>,
    ) -> datafusion::error::Result<Arc<dyn ExecutionPlan>> {
        let columns: Vec<usize> = match projection {
            Some(p) => p.clone(),
            None => (0..self.schema.fields().len()).collect(),
        };
        let projected = Arc::new(self.schema.project(&columns)?);
        let splits = self.splits as u64;
        let partitions = (0..splits)
            .map(|k| {
                let range =
                    (splits > 1).then(|| (self.size * k / splits, self.size * (k + 1) / splits));
                Arc::new(FilePartition {
                    ws: self.ws.clone(),
                    path: self.path.clone(),
                    display: self.display.clone(),
                    file_schema: self.schema.clone(),
                    schema: projected.clone(),
                    columns: columns.clone(),
                    kind: self.kind,
                    range,
                }) as Arc<dyn PartitionStream>
            })
            .collect();
        let exec = StreamingTableExec::try_new(
            projected,
            partitions,
            None,
            Vec::<LexOrdering>::new(),
            false,
            limit,
        )?;
        Ok(Arc::new(exec))
    }
}

/// A file streamed as one partition; every execution opens it again through the scope.
struct FilePartition {
    ws: Arc<Workspace>,
    path: WorkspacePath,
    display: String,
    /// Every column of the file.
    file_schema: SchemaRef,
    /// The columns read (`columns` of `file_schema`).
    schema: SchemaRef,
    columns: Vec<usize>,
    kind: Kind,
    /// For a split delimited file, the bytes `[start, end)` whose lines this partition reads
    /// (a line belongs to the range it starts in).
    range: Option<(u64, u64)>,
}

impl std::fmt::Debug for FilePartition {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FilePartition")
            .field("path", &self.display)
            .field("kind", &self.kind)
            .finish_non_exhaustive()
    }
}

impl PartitionStream for FilePartition {
    fn schema(&self) -> &SchemaRef {
        &self.schema
    }

    fn execute(&self, _ctx: Arc<TaskContext>) -> SendableRecordBatchStream {
        let mut builder = RecordBatchReceiverStream::builder(self.schema.clone(), 2);
        let tx = builder.tx();
        let ws = self.ws.clone();
        let path = self.path.clone();
        let display = self.display.clone();
        let file_schema = self.file_schema.clone();
        let schema = self.schema.clone();
        // A query that needs no column (count(*)) still needs the rows: read the first column
        // and keep only the count.
        let count_only = self.columns.is_empty();
        let columns = if count_only {
            vec![0]
        } else {
            self.columns.clone()
        };
        let kind = self.kind;
        let range = self.range;
        builder.spawn_blocking(move || {
            let fail = |reason: String| {
                DataFusionError::External(Box::new(DataError::Format {
                    path: display.clone(),
                    reason,
                }))
            };
            let open = || {
                ws.open_read(&path)
                    .map_err(|e| DataFusionError::External(Box::new(DataError::Scope(e))))
            };
            let file = open()?;
            // Where the guard's stream starts in the file (a split range starts mid-file), and
            // what it is watching, to name the line it refuses.
            let mut base = 0u64;
            let mut guarded: Option<Tripped> = None;
            let batches: Box<dyn Iterator<Item = Result<RecordBatch, String>>> = match kind {
                Kind::Delimited(delimiter) => {
                    let (start, end) = range.unwrap_or((0, u64::MAX));
                    let lines = Lines::new(file, start, end).map_err(|e| fail(e.to_string()))?;
                    base = lines.pos;
                    let (input, tripped) = Guard::new(lines, LINES);
                    guarded = Some(tripped);
                    // Line numbers in arrow's messages count from the range's first line.
                    let from = if start > 0 {
                        format!(" (counting lines from byte {start} of the file)")
                    } else {
                        String::new()
                    };
                    Box::new(
                        datafusion::arrow::csv::ReaderBuilder::new(file_schema.clone())
                            .with_header(start == 0)
                            .with_delimiter(delimiter)
                            .with_batch_size(BATCH_ROWS)
                            .with_projection(columns.clone())
                            .build(input)
                            .map_err(|e| fail(e.to_string()))?
                            .map(move |b| b.map_err(|e| format!("{}{from}", csv_message(&e.to_string())))),
                    )
                }
                Kind::JsonLines => {
                    let (input, tripped) = Guard::new(file, JSON_LINES);
                    guarded = Some(tripped);
                    Box::new(
                        // Fields outside the schema are skipped, not built.
                        datafusion::arrow::json::ReaderBuilder::new(Arc::new(
                            file_schema
                                .project(&columns)
                                .map_err(|e| fail(e.to_string()))?,
                        ))
                        .with_batch_size(BATCH_ROWS)
                        .build(BufReader::with_capacity(1 << 20, input))
                        .map_err(|e| fail(e.to_string()))?
                        .map(|b| b.map_err(|e| e.to_string())),
                    )
                }
                Kind::Parquet => {
                    let builder = datafusion::parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder::try_new(file)
                        .map_err(|e| fail(e.to_string()))?;
                    let mask = datafusion::parquet::arrow::ProjectionMask::roots(
                        builder.parquet_schema(),
                        columns.clone(),
                    );
                    Box::new(
                        builder
                            .with_projection(mask)
                            .with_batch_size(BATCH_ROWS)
                            .build()
                            .map_err(|e| fail(e.to_string()))?
                            .map(|b| b.map_err(|e| e.to_string())),
                    )
                }
            };
            for batch in batches {
                let mut batch = match batch {
                    Ok(b) => b,
                    Err(reason) => {
                        let Some(v) = guarded.as_ref().and_then(Tripped::get) else {
                            return Err(fail(reason));
                        };
                        // A guard that started mid-file (a split range) counts the lines
                        // before it only now, on the way to the error.
                        let refusal = match v {
                            guard::Violation::LineTooLong { start, .. } if base > 0 => {
                                DataError::LineTooLong {
                                    path: display.clone(),
                                    line: guard::line_at(open()?, base + start)
                                        .map_err(|e| fail(e.to_string()))?,
                                    limit_mib: guard::MAX_LINE_BYTES / (1024 * 1024),
                                }
                            }
                            v => guard::refusal(&display, v),
                        };
                        return Err(DataFusionError::External(Box::new(refusal)));
                    }
                };
                if count_only {
                    let options = datafusion::arrow::array::RecordBatchOptions::new()
                        .with_row_count(Some(batch.num_rows()));
                    batch = RecordBatch::try_new_with_options(schema.clone(), vec![], &options)
                        .map_err(|e| fail(e.to_string()))?;
                }
                if tx.blocking_send(Ok(batch)).is_err() {
                    // The query stopped reading (a LIMIT was met, or it was cancelled).
                    break;
                }
            }
            Ok(())
        });
        builder.build()
    }
}

/// Whether a quoted value in `sample` holds a line break.
fn quoted_line_breaks(sample: &[u8]) -> bool {
    let mut quoted = false;
    for &b in sample {
        match b {
            // `""` inside a quoted value toggles twice, so it stays quoted.
            b'"' => quoted = !quoted,
            b'\n' | b'\r' if quoted => return true,
            _ => {}
        }
    }
    false
}

/// The lines of a file that start in `[start, end)`: from the first line start at or after
/// `start` to the end of the line that holds byte `end - 1`.
struct Lines {
    inner: BufReader<File>,
    pos: u64,
    end: u64,
    at_line_start: bool,
    done: bool,
}

impl Lines {
    fn new(mut file: File, start: u64, end: u64) -> std::io::Result<Lines> {
        let mut pos = 0;
        if start > 0 {
            // The line holding byte start - 1 belongs to the range before.
            file.seek(SeekFrom::Start(start - 1))?;
            pos = start - 1;
        }
        let mut inner = BufReader::with_capacity(1 << 20, file);
        let mut done = false;
        if start > 0 {
            // Skipped a buffer at a time, never held: the line may be enormous. Past the cap the
            // range before (which owns the line) refuses it, so this range reads nothing.
            use std::io::BufRead;
            let mut skipped = 0usize;
            loop {
                let avail = inner.fill_buf()?;
                if avail.is_empty() {
                    break;
                }
                let (n, found) = match avail.iter().position(|b| *b == b'\n') {
                    Some(i) => (i + 1, true),
                    None => (avail.len(), false),
                };
                inner.consume(n);
                pos += n as u64;
                skipped += n;
                if found {
                    break;
                }
                if skipped > guard::MAX_LINE_BYTES + 1 {
                    done = true;
                    break;
                }
            }
        }
        Ok(Lines {
            inner,
            pos,
            end,
            at_line_start: true,
            done,
        })
    }
}

impl Read for Lines {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        use std::io::BufRead;
        if self.done || buf.is_empty() || (self.pos >= self.end && self.at_line_start) {
            self.done = true;
            return Ok(0);
        }
        let avail = self.inner.fill_buf()?;
        if avail.is_empty() {
            self.done = true;
            return Ok(0);
        }
        let mut n = avail.len().min(buf.len());
        if self.pos >= self.end {
            // Past the range: finish the current line only.
            if let Some(i) = avail[..n].iter().position(|b| *b == b'\n') {
                n = i + 1;
            }
        } else {
            n = n.min(usize::try_from(self.end - self.pos).unwrap_or(usize::MAX));
        }
        buf[..n].copy_from_slice(&avail[..n]);
        self.inner.consume(n);
        self.pos += n as u64;
        self.at_line_start = buf[n - 1] == b'\n';
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use datafusion::arrow::datatypes::DataType;

    #[test]
    fn byte_ranges_split_a_file_at_line_starts_without_loss_or_overlap() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f.csv");
        let text: String = (0..500)
            .map(|i| format!("{i},{}\n", "x".repeat(i % 17)))
            .collect();
        std::fs::write(&path, &text).unwrap();
        let size = text.len() as u64;
        for parts in [1u64, 2, 3, 7, 64] {
            let mut joined = String::new();
            for k in 0..parts {
                let file = File::open(&path).unwrap();
                let mut lines = Lines::new(file, size * k / parts, size * (k + 1) / parts).unwrap();
                let mut got = String::new();
                lines.read_to_string(&mut got).unwrap();
                assert!(
                    got.is_empty() || got.ends_with('\n'),
                    "{parts}/{k}: {got:?}"
                );
                joined.push_str(&got);
            }
            assert_eq!(joined, text, "{parts} parts");
        }
        assert!(quoted_line_breaks(b"a,\"x\ny\"\n"));
        assert!(!quoted_line_breaks(b"a,\"x,\"\"y\"\"\"\n1,2\n"));
    }

    #[test]
    fn formats_come_from_the_name_or_the_first_bytes() {
        assert_eq!(Format::from_name("a/B.CSV"), Some(Format::Delimited(b',')));
        assert_eq!(Format::from_name("x.tsv"), Some(Format::Delimited(b'\t')));
        assert_eq!(Format::from_name("x.ndjson"), Some(Format::JsonLines));
        assert_eq!(Format::from_name("x.txt"), None);
        assert_eq!(Format::sniff(b"PAR1...."), Format::Parquet);
        assert_eq!(Format::sniff(b"  [{\"a\":1}]"), Format::Json);
        assert_eq!(Format::sniff(b"{\"a\":1}\n{\"a\":2}"), Format::JsonLines);
        assert_eq!(Format::sniff(b"a;b;c\n1;2;3"), Format::Delimited(b';'));
        assert_eq!(Format::sniff(b"a\tb\n1\t2"), Format::Delimited(b'\t'));
    }

    #[test]
    fn repeated_or_blank_header_names_are_made_unique() {
        let s = dedupe(Schema::new(vec![
            Field::new("a", DataType::Utf8, true),
            Field::new("a", DataType::Utf8, true),
            Field::new(" ", DataType::Utf8, true),
        ]));
        let names: Vec<_> = s.fields().iter().map(|f| f.name().clone()).collect();
        assert_eq!(names, ["a", "a_2", "column_3"]);
    }

    #[test]
    fn a_json_array_must_hold_objects() {
        assert!(json_array(b"[1,2]").unwrap_err().contains("item 0"));
        assert!(json_array(b"{\"a\":1}").unwrap_err().contains("one array"));
        let b = json_array(br#"[{"a":1,"b":"x"},{"a":2}]"#).unwrap();
        assert_eq!(b.num_rows(), 2);
        assert_eq!(b.num_columns(), 2);
    }
}
