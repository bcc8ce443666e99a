//! The data tools, one type per file, and what they share: how a failure and a result read.

pub(crate) mod chart_bar;
pub(crate) mod chart_histogram;
pub(crate) mod chart_line;
pub(crate) mod chart_scatter;
pub(crate) mod charts;
pub(crate) mod data_aggregate;
pub(crate) mod data_convert;
pub(crate) mod data_correlation;
pub(crate) mod data_describe;
pub(crate) mod data_diff;
pub(crate) mod data_filter;
pub(crate) mod data_inspect;
pub(crate) mod data_join;
pub(crate) mod data_outliers;
pub(crate) mod data_pivot;
pub(crate) mod data_resample;
pub(crate) mod data_sample;
pub(crate) mod data_sql;
pub(crate) mod data_top;
pub(crate) mod data_validate;
pub(crate) mod data_value_counts;

use cairn_toolkit::reply::error;
use rmcp::model::CallToolResult;

use crate::DataError;
use crate::engine::{Rows, Session};

/// A failure as the model reads it.
pub(crate) fn failed(e: &DataError) -> CallToolResult {
    error(e.to_string())
}

/// Rows as a result: `heading`, the reader's notes, the table and what was left out.
pub(crate) fn shown(
    session: &Session,
    rows: &Rows,
    heading: &str,
    limits: &crate::Limits,
    hint: &str,
) -> CallToolResult {
    let mut heading = heading.to_owned();
    for note in &session.notes {
        heading.push_str(&format!("\nNote: {note}."));
    }
    rows.table().result_hinting(&heading, &limits.table, hint)
}

/// `WHERE <expr>` when there is a filter.
pub(crate) fn where_clause(filter: Option<&str>) -> String {
    match filter.map(str::trim) {
        Some(f) if !f.is_empty() => format!(" WHERE {f}"),
        _ => String::new(),
    }
}
