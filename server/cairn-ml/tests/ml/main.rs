//! The integration tests of `cairn-ml`, one module per area, built as one test binary
//! (one link instead of one per file: CI's disk and time go to linking).

mod embed;
mod hub;
mod ocr;
mod provider;
mod search;
mod text;
