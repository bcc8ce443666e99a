//! The integration tests of `cairn-local`, one module per area, built as one test binary
//! (one link instead of one per file: CI's disk and time go to linking).

mod bad_gguf;
mod smollm2;
mod templates;
mod tokenizer;
