//! End-to-end tests of the real `cairn` binary: over stdio as an editor drives it, and on the
//! command line. The model is a scripted provider on loopback; everything else is real.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stderr)]

mod access;
mod acp;
mod api;
mod attacks;
mod bench;
mod capabilities;
mod catalog;
mod cli;
mod cloud;
mod comms;
mod db;
mod devops;
mod diagnostics;
mod eval;
mod git_escapes;
mod helix;
mod hooks;
mod local_model;
mod lsp_robustness;
mod lsp_runs;
mod mcp;
mod ml;
mod neovim;
mod redaction;
mod rewind;
mod sandbox;
mod secrets;
mod selection;
mod support;
mod turns;
mod vault;
mod web;
