//! The data-analysis tools (category `data`): questions about CSV, TSV, JSON, JSON Lines,
//! Parquet and Excel files in the workspace, answered by DataFusion, and charts of the answers
//! written as SVG and PNG. Served in-process as the [`ToolSet`] [`data_tools`] builds from
//! [`DATA_TOOLS`].
//!
//! Every file is opened through the workspace scope (never by a path the engine resolves on its
//! own), and streamed: a file of gigabytes is read in batches in bounded memory. SQL may only
//! read (the planner refuses DDL, DML, `COPY` and `SET`; file paths are not tables). Each call
//! has a fresh session with a memory limit, a time limit and the run's cancellation, and shows at
//! most [`Limits::table`] rows with a note on what was left out. Writes (conversions, charts) go
//! through the scope and the user's write permissions, and are reported as edits.

pub mod chart;
mod engine;
mod error;
mod guard;
mod output;
mod source;
mod tools;
mod xlsx;

use std::sync::Arc;
use std::time::Duration;

use cairn_toolkit::{Entry, ToolSet};
use cairn_workspace::Workspace;

pub use error::DataError;

/// What one data call may use and show.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// How rows are shown (rows, bytes, characters per value).
    pub table: cairn_toolkit::table::Limits,
    /// Memory the engine may hold for joins, sorts and aggregations.
    pub memory_bytes: usize,
    /// How long one call may run.
    pub timeout: Duration,
    /// The engine's parallelism.
    pub partitions: usize,
    /// The largest file a conversion writes.
    pub max_output_bytes: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            table: cairn_toolkit::table::Limits::default(),
            memory_bytes: 2 * 1024 * 1024 * 1024,
            timeout: Duration::from_secs(300),
            partitions: std::thread::available_parallelism().map_or(2, |n| n.get().min(8)),
            max_output_bytes: 1024 * 1024 * 1024,
        }
    }
}

/// What the data tools share: the workspace they read and write, and the limits.
pub struct Data {
    workspace: Option<Arc<Workspace>>,
    limits: Limits,
}

impl std::fmt::Debug for Data {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Data")
            .field("limits", &self.limits)
            .finish_non_exhaustive()
    }
}

impl cairn_toolkit::Host for Data {
    fn workspace(&self) -> Option<&Arc<Workspace>> {
        self.workspace.as_ref()
    }
}

impl Data {
    /// The tools' host over `workspace` (they refuse every call without one).
    pub fn new(workspace: Option<Arc<Workspace>>) -> Data {
        Data {
            workspace,
            limits: Limits::default(),
        }
    }

    /// Other limits (tests use small ones).
    pub fn with_limits(mut self, limits: Limits) -> Data {
        self.limits = limits;
        self
    }
}

/// The data-analysis tools, in the order listed.
pub const DATA_TOOLS: &[Entry<Data>] = &[
    Entry::of::<tools::data_inspect::DataInspect>(),
    Entry::of::<tools::data_describe::DataDescribe>(),
    Entry::of::<tools::data_sql::DataSql>(),
    Entry::of::<tools::data_filter::DataFilter>(),
    Entry::of::<tools::data_aggregate::DataAggregate>(),
    Entry::of::<tools::data_join::DataJoin>(),
    Entry::of::<tools::data_pivot::DataPivot>(),
    Entry::of::<tools::data_top::DataTop>(),
    Entry::of::<tools::data_value_counts::DataValueCounts>(),
    Entry::of::<tools::data_correlation::DataCorrelation>(),
    Entry::of::<tools::data_outliers::DataOutliers>(),
    Entry::of::<tools::data_resample::DataResample>(),
    Entry::of::<tools::data_sample::DataSample>(),
    Entry::of::<tools::data_validate::DataValidate>(),
    Entry::of::<tools::data_diff::DataDiff>(),
    Entry::of::<tools::data_convert::DataConvert>(),
    Entry::of::<tools::chart_bar::ChartBar>(),
    Entry::of::<tools::chart_line::ChartLine>(),
    Entry::of::<tools::chart_scatter::ChartScatter>(),
    Entry::of::<tools::chart_histogram::ChartHistogram>(),
];

/// The data-analysis tools over `data`.
pub fn data_tools(data: Data) -> ToolSet<Data> {
    ToolSet::new(data, DATA_TOOLS)
}
