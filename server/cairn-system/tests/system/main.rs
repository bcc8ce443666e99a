//! The integration tests of `cairn-system`, one module per area, built as one test binary
//! (one link instead of one per file: CI's disk and time go to linking).

mod host;
mod util;
