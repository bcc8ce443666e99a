//! The one path every data tool takes to the engine: a fresh DataFusion session per call with
//! the named files registered as tables, a memory limit, SQL that may only read (no DDL, no
//! DML, no `COPY`, no `SET`, no file paths as tables), a time limit, the run's cancellation, and
//! rows fetched only up to what will be shown.

use std::sync::Arc;
use std::time::Duration;

use cairn_toolkit::table::{Cell, Table};
use cairn_workspace::Workspace;
use datafusion::arrow::array::{Array, RecordBatch};
use datafusion::arrow::datatypes::{DataType, SchemaRef};
use datafusion::arrow::util::display::{ArrayFormatter, FormatOptions};
use datafusion::execution::runtime_env::RuntimeEnvBuilder;
use datafusion::prelude::{DataFrame, SQLOptions, SessionConfig, SessionContext};
use futures::StreamExt;
use tokio_util::sync::CancellationToken;

use crate::source::{self, Format};
use crate::{Data, DataError};

/// One table a call registers: its name in SQL, the file, and the sheet of a workbook.
#[derive(Debug, Clone)]
pub(crate) struct TableRef {
    pub name: String,
    pub file: String,
    pub sheet: Option<String>,
}

impl TableRef {
    pub(crate) fn new(name: &str, file: &str, sheet: Option<&str>) -> TableRef {
        TableRef {
            name: name.to_owned(),
            file: file.to_owned(),
            sheet: sheet.map(str::to_owned),
        }
    }
}

/// Whether a consumer of batches wants more.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Flow {
    More,
    Stop,
}

/// Aborts the engine's task when the consumer is done with it (or gone).
struct AbortOnDrop(tokio::task::JoinHandle<()>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// A session with its tables registered, and what opening them taught.
pub(crate) struct Session {
    pub ctx: SessionContext,
    /// Each table's format, in the order registered.
    pub formats: Vec<(String, Format)>,
    /// Notes from the readers (a sheet chosen, merged cells filled).
    pub notes: Vec<String>,
    cancel: CancellationToken,
    timeout: Duration,
}

/// Rows fetched from a query: at most the cap, and whether there were more.
pub(crate) struct Rows {
    pub schema: SchemaRef,
    pub batches: Vec<RecordBatch>,
    pub more: bool,
}

impl Rows {
    pub(crate) fn len(&self) -> usize {
        self.batches.iter().map(RecordBatch::num_rows).sum()
    }

    /// The rows as the tool kit's table (values as text, floats to 6 decimals).
    pub(crate) fn table(&self) -> Table {
        let columns = self
            .schema
            .fields()
            .iter()
            .map(|f| f.name().clone())
            .collect();
        let mut rows = Vec::with_capacity(self.len());
        for batch in &self.batches {
            let cells: Vec<Vec<Cell>> = batch.columns().iter().map(cells_of).collect();
            for r in 0..batch.num_rows() {
                rows.push(cells.iter().map(|c| c[r].clone()).collect());
            }
        }
        Table {
            columns,
            rows,
            more: self.more,
        }
    }

    /// One column's values as f64 (None for NULL or a value that is not a number).
    pub(crate) fn numbers(&self, column: usize) -> Vec<Option<f64>> {
        let mut out = Vec::with_capacity(self.len());
        for batch in &self.batches {
            let Some(array) = batch.columns().get(column) else {
                continue;
            };
            let as_f64 = datafusion::arrow::compute::cast(array, &DataType::Float64).ok();
            match as_f64.as_ref().and_then(|a| {
                a.as_any()
                    .downcast_ref::<datafusion::arrow::array::Float64Array>()
            }) {
                Some(a) => out.extend(a.iter()),
                None => out.extend(std::iter::repeat_n(None, batch.num_rows())),
            }
        }
        out
    }

    /// One date or time column's values as milliseconds since the Unix epoch.
    pub(crate) fn millis(&self, column: usize) -> Vec<Option<i64>> {
        let mut out = Vec::with_capacity(self.len());
        for batch in &self.batches {
            let Some(array) = batch.columns().get(column) else {
                continue;
            };
            let ms = datafusion::arrow::compute::cast(
                array,
                &DataType::Timestamp(datafusion::arrow::datatypes::TimeUnit::Millisecond, None),
            )
            .and_then(|a| datafusion::arrow::compute::cast(&a, &DataType::Int64))
            .ok();
            match ms.as_ref().and_then(|a| {
                a.as_any()
                    .downcast_ref::<datafusion::arrow::array::Int64Array>()
            }) {
                Some(a) => out.extend(a.iter()),
                None => out.extend(std::iter::repeat_n(None, batch.num_rows())),
            }
        }
        out
    }

    /// One column's values as text (None for NULL).
    pub(crate) fn texts(&self, column: usize) -> Vec<Option<String>> {
        let mut out = Vec::with_capacity(self.len());
        for batch in &self.batches {
            if let Some(array) = batch.columns().get(column) {
                out.extend(cells_of(array).into_iter().map(|c| match c {
                    Cell::Text(t) => Some(t),
                    Cell::Bytes(n) => Some(format!("<{n} bytes>")),
                    Cell::Null => None,
                }));
            }
        }
        out
    }
}

/// A column's values as table cells.
fn cells_of(array: &Arc<dyn Array>) -> Vec<Cell> {
    let n = array.len();
    let float = |v: f64| -> String {
        if v.is_finite() && v.abs() < 1e15 {
            let s = format!("{v:.6}");
            let s = s.trim_end_matches('0').trim_end_matches('.');
            if s == "-0" {
                "0".to_owned()
            } else {
                s.to_owned()
            }
        } else {
            v.to_string()
        }
    };
    match array.data_type() {
        DataType::Float64 | DataType::Float32 | DataType::Float16 => {
            let cast = datafusion::arrow::compute::cast(array, &DataType::Float64).ok();
            if let Some(a) = cast.as_ref().and_then(|a| {
                a.as_any()
                    .downcast_ref::<datafusion::arrow::array::Float64Array>()
            }) {
                return a
                    .iter()
                    .map(|v| v.map_or(Cell::Null, |v| Cell::Text(float(v))))
                    .collect();
            }
        }
        DataType::Binary | DataType::LargeBinary | DataType::BinaryView => {
            let cast = datafusion::arrow::compute::cast(array, &DataType::LargeBinary).ok();
            if let Some(a) = cast.as_ref().and_then(|a| {
                a.as_any()
                    .downcast_ref::<datafusion::arrow::array::LargeBinaryArray>()
            }) {
                return a
                    .iter()
                    .map(|v| v.map_or(Cell::Null, |b| Cell::Bytes(b.len())))
                    .collect();
            }
        }
        _ => {}
    }
    let options = FormatOptions::default();
    // Logical nulls: a NULL literal's column has no validity buffer, every value is null.
    let nulls = array.logical_nulls();
    match ArrayFormatter::try_new(array.as_ref(), &options) {
        Ok(f) => (0..n)
            .map(|i| {
                if nulls.as_ref().is_some_and(|b| b.is_null(i)) {
                    Cell::Null
                } else {
                    Cell::Text(f.value(i).to_string())
                }
            })
            .collect(),
        Err(_) => vec![Cell::Text("<unprintable>".to_owned()); n],
    }
}

/// SQL may only read: the statements that define, change or configure are refused by the
/// engine's planner, and paths are never tables (URL tables stay off).
fn read_only() -> SQLOptions {
    SQLOptions::new()
        .with_allow_ddl(false)
        .with_allow_dml(false)
        .with_allow_statements(false)
}

/// A SQL identifier, quoted (a column named `order` or `unit price` works).
pub(crate) fn ident(name: &str) -> String {
    format!("\"{}\"", name.replace('"', "\"\""))
}

/// A SQL string literal.
pub(crate) fn literal(text: &str) -> String {
    format!("'{}'", text.replace('\'', "''"))
}

/// A table name made from a file name (`sales-2024.csv` → `sales_2024`).
pub(crate) fn table_name(file: &str) -> String {
    let stem = file
        .rsplit('/')
        .next()
        .unwrap_or(file)
        .split('.')
        .next()
        .unwrap_or("t");
    let mut name: String = stem
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_lowercase()
            } else {
                '_'
            }
        })
        .collect();
    if name.is_empty() || name.starts_with(|c: char| c.is_ascii_digit()) {
        name.insert(0, 't');
    }
    name
}

impl Data {
    pub(crate) fn ws(&self) -> Result<&Arc<Workspace>, DataError> {
        self.workspace.as_ref().ok_or(DataError::NoWorkspace)
    }

    /// A session with `tables` registered.
    pub(crate) async fn session(
        &self,
        tables: &[TableRef],
        cancel: &CancellationToken,
    ) -> Result<Session, DataError> {
        let ws = self.ws()?.clone();
        let runtime = RuntimeEnvBuilder::new()
            .with_memory_limit(self.limits.memory_bytes, 1.0)
            .build_arc()
            .map_err(DataError::from)?;
        let config = SessionConfig::new()
            .with_target_partitions(self.limits.partitions)
            .with_information_schema(false);
        let ctx = SessionContext::new_with_config_rt(config, runtime);
        let mut formats = Vec::new();
        let mut notes = Vec::new();
        for t in tables {
            let (ws2, t2, parallel) = (ws.clone(), t.clone(), self.limits.partitions);
            let opened = tokio::task::spawn_blocking(move || {
                source::open(&ws2, &t2.file, t2.sheet.as_deref(), parallel)
            })
            .await
            .map_err(|e| DataError::Query(format!("internal error: {e}")))??;
            ctx.register_table(t.name.as_str(), opened.provider)
                .map_err(DataError::from)?;
            formats.push((t.name.clone(), opened.format));
            notes.extend(opened.notes);
        }
        Ok(Session {
            ctx,
            formats,
            notes,
            cancel: cancel.clone(),
            timeout: self.limits.timeout,
        })
    }
}

impl Data {
    /// A session over one file (a workbook's `sheet`), registered as table `t`: what most
    /// tools query.
    pub(crate) async fn one(
        &self,
        file: &str,
        sheet: Option<&str>,
        cancel: &CancellationToken,
    ) -> Result<Session, DataError> {
        self.session(&[TableRef::new("t", file, sheet)], cancel)
            .await
    }
}

impl Session {
    /// The plan of `sql` (read-only), not yet run.
    pub(crate) async fn plan(&self, sql: &str) -> Result<DataFrame, DataError> {
        let planned = self.ctx.sql_with_options(sql, read_only()).await;
        planned.map_err(|e| {
            let message = e.to_string();
            if message.contains("not supported") && !message.contains("Unsupported SQL type") {
                DataError::Refused(format!(
                    "the data tools only read: {}; use data_convert to write a file",
                    DataError::from(e)
                ))
            } else {
                DataError::from(e)
            }
        })
    }

    /// Runs `sql` and fetches at most `max_rows` rows.
    pub(crate) async fn rows(&self, sql: &str, max_rows: usize) -> Result<Rows, DataError> {
        let df = self.plan(sql).await?;
        self.fetch(df, max_rows).await
    }

    /// Runs a planned frame and fetches at most `max_rows` rows.
    pub(crate) async fn fetch(&self, df: DataFrame, max_rows: usize) -> Result<Rows, DataError> {
        let schema: SchemaRef = Arc::new(df.schema().as_arrow().clone());
        let mut batches = Vec::new();
        let mut count = 0usize;
        let mut more = false;
        self.each_batch(df, |batch| {
            if more {
                return Ok(Flow::Stop);
            }
            if count + batch.num_rows() > max_rows {
                let keep = max_rows - count;
                if keep > 0 {
                    batches.push(batch.slice(0, keep));
                }
                count = max_rows;
                more = true;
                return Ok(Flow::Stop);
            }
            count += batch.num_rows();
            if batch.num_rows() > 0 {
                batches.push(batch.clone());
            }
            Ok(Flow::More)
        })
        .await?;
        Ok(Rows {
            schema,
            batches,
            more,
        })
    }

    /// Runs every batch of `df` through `each` until it says stop, within the time limit and
    /// the run's cancellation. The engine runs in its own task, so a CPU-bound plan cannot keep
    /// the limit from firing; when the limit fires or `each` stops, that task is aborted.
    pub(crate) async fn each_batch(
        &self,
        df: DataFrame,
        mut each: impl FnMut(&RecordBatch) -> Result<Flow, DataError> + Send,
    ) -> Result<(), DataError> {
        let (tx, mut rx) = tokio::sync::mpsc::channel(2);
        let producer = tokio::spawn(async move {
            let mut stream = match df.execute_stream().await {
                Ok(s) => s,
                Err(e) => {
                    let _ = tx.send(Err(DataError::from(e))).await;
                    return;
                }
            };
            while let Some(batch) = stream.next().await {
                let failed = batch.is_err();
                if tx.send(batch.map_err(DataError::from)).await.is_err() || failed {
                    return;
                }
            }
        });
        let _abort = AbortOnDrop(producer);
        let deadline = tokio::time::Instant::now() + self.timeout;
        loop {
            tokio::select! {
                next = rx.recv() => match next {
                    None => return Ok(()),
                    Some(batch) => {
                        if each(&batch?)? == Flow::Stop {
                            return Ok(());
                        }
                    }
                },
                () = tokio::time::sleep_until(deadline) => {
                    return Err(DataError::TimedOut(self.timeout.as_secs()));
                }
                () = self.cancel.cancelled() => return Err(DataError::Cancelled),
            }
        }
    }

    /// The column names and types of a registered table.
    pub(crate) async fn columns(&self, table: &str) -> Result<Vec<(String, DataType)>, DataError> {
        let provider = self
            .ctx
            .table_provider(table)
            .await
            .map_err(DataError::from)?;
        Ok(provider
            .schema()
            .fields()
            .iter()
            .map(|f| (f.name().clone(), f.data_type().clone()))
            .collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_quoted_and_derived_from_files() {
        assert_eq!(ident("unit \"price\""), "\"unit \"\"price\"\"\"");
        assert_eq!(literal("O'Brien"), "'O''Brien'");
        assert_eq!(table_name("data/Sales-2024.csv"), "sales_2024");
        assert_eq!(table_name("2024.csv"), "t2024");
    }
}
