//! The integration tests of `cairn-select`, one module per area, built as one test binary
//! (one link instead of one per file: CI's disk and time go to linking).

mod embed_reference;
mod rank_dense;
mod selector;
