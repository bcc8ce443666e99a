//! The integration tests of `cairn-mcp`, one module per area, built as one test binary
//! (one link instead of one per file: CI's disk and time go to linking).

mod in_process;
mod names;
mod oauth;
mod peers;
mod stdio;
mod tool_server;
