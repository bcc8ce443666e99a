//! The integration tests of `cairn-cloud`, one module per area, built as one test binary
//! (one link instead of one per file: CI's disk and time go to linking).

mod common;

mod aws;
mod emulators;
mod queues;
mod secrets;
mod storage;
mod tables;
