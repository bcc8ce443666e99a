//! The data-analysis tools.
pub use datafusion;
pub mod chart;
