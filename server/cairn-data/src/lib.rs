//! The data-analysis tools.
pub use datafusion;
