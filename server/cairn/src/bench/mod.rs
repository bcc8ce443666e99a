//! `cairn bench ...`: the measurements, one module each, kept apart from the product's code.
//! Each prints its figures next to the peer or target it is compared with and never judges them:
//! a slow machine is not an error.
//!
//! - [`mcp`]: one trivial tool call through the hub, next to the official Python SDK;
//! - [`search`]: the file tools' search over a generated workspace, next to ripgrep;
//! - [`semantic`]: `semantic_search` indexing and queries;
//! - [`sandbox`]: sandbox runs on one or two engines;
//! - [`select`] (and [`pipeline`], its `--filter` and `--steps` modes): tool selection;
//! - [`data`]: the data tools next to pandas and DuckDB;
//! - [`local`]: the local model next to llama.cpp.

mod data;
mod local;
mod mcp;
mod pipeline;
mod sandbox;
mod search;
mod select;
mod semantic;

use std::process::ExitCode;

use clap::Subcommand;

use crate::compose::Env;

#[derive(Subcommand)]
pub enum BenchCommand {
    /// Latency of server-everything's `echo` through cairn's hub over stdio and streamable
    /// HTTP, next to the official Python SDK; needs `mcp-server-everything` on PATH and the
    /// Python SDK (`CAIRN_PYTHON`, default `python3`).
    Mcp {
        /// Calls to time per client and transport.
        #[arg(long, default_value_t = 1000)]
        calls: usize,
    },
    /// The built-in `grep`, `glob` and `tree` over a generated tree, next to ripgrep (`rg`).
    Search {
        /// Files in the generated tree.
        #[arg(long, default_value_t = 100_000)]
        files: usize,
    },
    /// Time to run `print(1)` in a Python sandbox, cold (a new container) and warm (from the
    /// pool), next to plain `docker run --rm` of the same image, and a run that sees a
    /// generated workspace, mounted and sent as an archive; on the configured engine and on
    /// `--engine` when given. Needs a Docker engine.
    Sandbox {
        /// Runs per way of starting (at most 10 of those with the workspace).
        #[arg(long, default_value_t = 50)]
        runs: usize,
        /// The image (default: `sandbox.images.python` of the configuration).
        #[arg(long)]
        image: Option<String>,
        /// A second engine to measure next to the configured one: `tcp://host:2376` (with
        /// `--tls-dir`) or `ssh://user@host`. Its workspace runs get the workspace as an archive.
        #[arg(long)]
        engine: Option<String>,
        /// The second engine's TLS files: `ca.pem`, `cert.pem`, `key.pem`.
        #[arg(long)]
        tls_dir: Option<std::path::PathBuf>,
        /// Files in the generated workspace.
        #[arg(long, default_value_t = 10_000)]
        files: usize,
    },
    /// `semantic_search` over a generated workspace: indexing time, query p50 and p95, index
    /// size on disk, and the re-index time after one file changes, next to their targets; needs
    /// the embedding model (`scripts/embedding-model`).
    Semantic {
        /// Files in the generated workspace.
        #[arg(long, default_value_t = 10_000)]
        files: usize,
        /// Queries to time.
        #[arg(long, default_value_t = 50)]
        queries: usize,
    },
    /// Tool selection on a benchmark catalog (`../shared/bench/tools` format): recall@k,
    /// complete@k, nDCG@10, tokens of the selected definitions and time per query, for dense,
    /// lexical (BM25) and hybrid ranking; needs the embedding model (`scripts/embedding-model`).
    Select(select::SelectArgs),
    /// A group-by, a join and a filter over a generated CSV (about 100 MB at 1M rows) through
    /// the data tools, next to pandas (`CAIRN_PYTHON`, default `python3`) and DuckDB's CLI
    /// (PyPI `duckdb-cli` of that interpreter, or `duckdb` on PATH): times, ratios and peak RSS.
    Data(data::DataArgs),
    /// The local provider's prompt and generation tokens per second, load time and peak memory,
    /// next to llama.cpp (PyPI `llama-cpp-python`) on the same GGUF file.
    Local(local::LocalArgs),
}

/// Runs the measurement `command` asks for.
pub async fn run(env: &Env, command: BenchCommand) -> anyhow::Result<ExitCode> {
    match command {
        BenchCommand::Mcp { calls } => mcp::mcp(env, calls).await,
        BenchCommand::Search { files } => search::search(files).await,
        BenchCommand::Semantic { files, queries } => semantic::semantic(files, queries).await,
        BenchCommand::Sandbox {
            runs,
            image,
            engine,
            tls_dir,
            files,
        } => {
            let args = sandbox::Args {
                runs,
                image,
                engine,
                tls_dir,
                files,
            };
            sandbox::sandbox(env, args).await
        }
        BenchCommand::Select(args) => select::select(env, args).await,
        BenchCommand::Data(args) => data::data(args).await,
        BenchCommand::Local(args) => local::local(env, args).await,
    }
}
