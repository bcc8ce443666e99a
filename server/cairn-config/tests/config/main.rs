//! The integration tests of `cairn-config`, one module per area, built as one test binary
//! (one link instead of one per file: CI's disk and time go to linking).

mod layers;
mod mcp_import;
mod schema;
mod trust;
