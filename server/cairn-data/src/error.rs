//! What a data tool reports when it cannot answer: each variant says what was refused or what
//! failed, in words the model can act on.

use cairn_workspace::ScopeError;

/// A data tool's failure.
#[derive(Debug, thiserror::Error)]
pub enum DataError {
    /// The data tools read workspace files; there is no folder open.
    #[error("the data tools read files in the workspace; open a folder first")]
    NoWorkspace,
    /// The workspace scope refused the path, or it could not be read.
    #[error(transparent)]
    Scope(#[from] ScopeError),
    /// The file is not in a format the tools read, or its content does not match it.
    #[error("{path}: {reason}")]
    Format { path: String, reason: String },
    /// The file nests JSON deeper than the readers go: refused before any parser saw it, since
    /// parsing it could exhaust the stack.
    #[error(
        "{path}: line {line} nests JSON more than {limit} levels deep; the data tools refuse deeper nesting (flatten the data first)"
    )]
    TooDeep {
        path: String,
        line: u64,
        limit: usize,
    },
    /// A line of a CSV, TSV or JSON Lines file is longer than the readers hold in memory.
    #[error(
        "{path}: line {line} is longer than {limit_mib} MiB, the longest line the data tools read; split it into records or convert the file to Parquet"
    )]
    LineTooLong {
        path: String,
        line: u64,
        limit_mib: usize,
    },
    /// The query or an argument was wrong (names the column, the syntax error, the line).
    #[error("{0}")]
    Query(String),
    /// The engine refused: a statement that is not a read, or the memory limit.
    #[error("refused: {0}")]
    Refused(String),
    /// The call ran past its time limit and was stopped.
    #[error("stopped after {0} s (the data tools' time limit); filter, aggregate or sample first")]
    TimedOut(u64),
    /// The run was cancelled.
    #[error("cancelled")]
    Cancelled,
    /// A file could not be written.
    #[error("{0}")]
    Write(String),
}

impl From<datafusion::error::DataFusionError> for DataError {
    fn from(e: datafusion::error::DataFusionError) -> Self {
        use datafusion::error::DataFusionError as E;
        match e.find_root() {
            E::ResourcesExhausted(what) => DataError::Refused(format!(
                "the query needs more memory than the data tools may use ({what}); aggregate, filter or sample first"
            )),
            E::External(inner) => match inner.downcast_ref::<DataError>() {
                Some(DataError::Format { path, reason }) => DataError::Format {
                    path: path.clone(),
                    reason: reason.clone(),
                },
                Some(DataError::TooDeep { path, line, limit }) => DataError::TooDeep {
                    path: path.clone(),
                    line: *line,
                    limit: *limit,
                },
                Some(DataError::LineTooLong {
                    path,
                    line,
                    limit_mib,
                }) => DataError::LineTooLong {
                    path: path.clone(),
                    line: *line,
                    limit_mib: *limit_mib,
                },
                _ => DataError::Query(clean(&inner.to_string())),
            },
            E::ArrowError(inner, _) => DataError::Query(clean(&inner.to_string())),
            other => DataError::Query(clean(&other.to_string())),
        }
    }
}

/// An engine message without the layers of context DataFusion wraps it in.
fn clean(message: &str) -> String {
    let mut m = message.trim();
    for prefix in [
        "Error during planning: ",
        "Schema error: ",
        "SQL error: ",
        "Arrow error: ",
        "External error: ",
        "Parser error: ",
        "Execution error: ",
        "This feature is not implemented: ",
    ] {
        while let Some(rest) = m.strip_prefix(prefix) {
            m = rest;
        }
    }
    m.to_owned()
}
