//! The integration tests of `cairn-comms`, one module per area, built as one test binary
//! (one link instead of one per file: CI's disk and time go to linking).

mod chat_support;
mod recorder;

mod calendar;
mod email;
mod matrix;
mod notify;
mod slack;
