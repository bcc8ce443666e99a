//! The integration tests of `cairn-db`, one module per area, built as one test binary
//! (one link instead of one per file: CI's disk and time go to linking).

mod common;

mod mysql;
mod postgres;
mod redis;
mod sqlite;
