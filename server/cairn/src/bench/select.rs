//! `cairn bench select`: tool selection over a benchmark catalog (and optional distractor
//! catalogs) with the local embedder, BM25 and their fusion. Figures are printed, never asserted;
//! the work is in `cairn_select::bench`.

use std::path::PathBuf;
use std::process::ExitCode;

use cairn_select::bench::{self, BenchConfig, MatchBy, Split};
use cairn_select::cache::EmbeddingCache;
use cairn_select::rank::{Fusion, Strategy};

use super::pipeline::{Input, Pipeline};
use clap::{Args, ValueEnum};

/// The arguments of `cairn bench select`.
#[derive(Debug, Args)]
pub struct SelectArgs {
    /// A catalog (JSON Lines); the first is scored, each further one adds distractors.
    /// `builtin` is cairn's own built-in catalog, as `cairn tools list` shows it (ids are the
    /// tool names, as in `bench/cairn/queries.jsonl`).
    #[arg(long = "catalog", required = true)]
    catalogs: Vec<PathBuf>,
    /// Labelled queries (JSON Lines: qid, query, relevant).
    #[arg(long, required_unless_present = "steps")]
    queries: Option<PathBuf>,
    /// The k of recall@k, complete@k and the top-k token counts (default 5,10,20); with
    /// `--filter` or `--steps`, each k is one run of the pipeline with `selection.top_k = k`
    /// (default: the configured top_k).
    #[arg(long = "k", value_delimiter = ',')]
    ks: Vec<usize>,
    /// Run the whole two-stage selection as the agent does (core tools, stage 1, the model's
    /// filter through the configured provider, tools kept) and report recall after each stage,
    /// the filter's tokens and latency and the offered tokens.
    #[arg(long)]
    filter: bool,
    /// Run selection as the agent does (core tools, stage 1, tools kept), with the filter only
    /// when `--filter` is given: candidates' recall and the filter request's tokens per k.
    #[arg(long)]
    pipeline: bool,
    /// Replay multi-step tasks (JSON Lines: tid, task, steps of {say, tools}) step by step, with
    /// the conversation so far, as the agent loop selects; per-step recall and the share of
    /// tasks complete at every step. With `--filter`, stage 2 runs at each step.
    #[arg(long, value_name = "TASKS", conflicts_with = "queries")]
    steps: Option<PathBuf>,
    /// What counts as finding a relevant tool: its id, or any tool with its name (BFCL).
    #[arg(long = "match", value_enum, default_value_t = MatchArg::Id)]
    match_by: MatchArg,
    /// Which ranking to measure.
    #[arg(long, value_enum, default_value_t = StrategyArg::All)]
    strategy: StrategyArg,
    /// Print the report as JSON.
    #[arg(long)]
    json: bool,
    /// Use only the first N queries (for quick runs).
    #[arg(long)]
    limit: Option<usize>,
    /// Use N queries spread evenly over the file (every len/N-th; applied after --limit).
    /// Query files are grouped by tool, so a sample says more than a prefix.
    #[arg(long, value_name = "N")]
    sample: Option<usize>,
    /// Embed the whole catalog, without reading or writing the embedding cache.
    #[arg(long)]
    no_cache: bool,
    /// Only write the texts that would be embedded (every tool's retrieval text, then every
    /// query) to FILE as JSON Lines, for `scripts/compare-embedder`, and exit.
    #[arg(long, value_name = "FILE")]
    dump_texts: Option<PathBuf>,
    /// Keep only one half of the queries, by a stable hash of their qid (before --limit and
    /// --sample): `tune` to choose weights on, `test` to report them on.
    #[arg(long, value_enum)]
    split: Option<SplitArg>,
    /// Measure every fusion candidate (`cairn_select::rank::Fusion::candidates`: z-score sum,
    /// max and adaptive, RRF) over the same vectors instead of the strategies, one row each.
    #[arg(long)]
    tune: bool,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
enum MatchArg {
    Id,
    Name,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
enum StrategyArg {
    Dense,
    Lexical,
    /// The default fusion: standardised dense (request and its clauses) plus standardised BM25,
    /// weighted by how much its best stands out.
    Hybrid,
    /// Equal-weight reciprocal rank fusion (k = 60), the first hybrid, for comparison.
    Rrf,
    All,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
enum SplitArg {
    Tune,
    Test,
}

/// Runs the benchmark and prints the report.
#[allow(clippy::print_stdout)]
pub async fn select(env: &crate::compose::Env, mut args: SelectArgs) -> anyhow::Result<ExitCode> {
    // Kept until the run ends: `builtin` is written there.
    let scratch = tempfile::tempdir()?;
    let mut builtin = Vec::new();
    for catalog in &mut args.catalogs {
        builtin.push(catalog.as_os_str() == "builtin");
        if catalog.as_os_str() == "builtin" {
            *catalog = builtin_catalog(env, scratch.path()).await?;
        }
    }
    let match_by = match args.match_by {
        MatchArg::Id => MatchBy::Id,
        MatchArg::Name => MatchBy::Name,
    };
    if args.filter || args.pipeline || args.steps.is_some() {
        anyhow::ensure!(
            args.split.is_none() && !args.tune,
            "--split and --tune measure stage 1's ranking alone; they do not go with --pipeline, --filter or --steps"
        );
        let input = match (args.steps, args.queries) {
            (Some(tasks), _) => Input::Tasks(tasks),
            (None, Some(queries)) => Input::Queries(queries),
            (None, None) => anyhow::bail!("--queries or --steps is needed"),
        };
        return super::pipeline::run(
            env,
            Pipeline {
                catalogs: args.catalogs,
                builtin,
                input,
                match_by,
                ks: args.ks,
                filter: args.filter,
                limit: args.limit,
                sample: args.sample,
                json: args.json,
            },
        )
        .await;
    }
    let Some(queries) = args.queries else {
        anyhow::bail!("--queries is needed");
    };
    if args.ks.is_empty() {
        args.ks = vec![5, 10, 20];
    }
    let strategies = match args.strategy {
        StrategyArg::Dense => vec![Strategy::Dense],
        StrategyArg::Lexical => vec![Strategy::Lexical],
        StrategyArg::Hybrid => vec![Strategy::Hybrid],
        StrategyArg::Rrf => vec![Strategy::Rrf],
        StrategyArg::All => Strategy::ALL.to_vec(),
    };
    let (strategies, fusions) = if args.tune {
        (Vec::new(), Fusion::candidates())
    } else {
        (strategies, Vec::new())
    };
    let config = BenchConfig {
        catalogs: args.catalogs,
        queries,
        ks: args.ks,
        match_by,
        strategies,
        limit: args.limit,
        sample: args.sample,
        cache_dir: if args.no_cache {
            None
        } else {
            EmbeddingCache::default_dir()
        },
        split: args.split.map(|s| match s {
            SplitArg::Tune => Split::Tune,
            SplitArg::Test => Split::Test,
        }),
        fusions,
    };
    if let Some(out) = args.dump_texts {
        let (tools, queries) = bench::dump_texts(&config, &out)?;
        eprintln!(
            "wrote {tools} tool texts and {queries} queries to {}",
            out.display()
        );
        return Ok(ExitCode::SUCCESS);
    }
    // Embedding the catalog is seconds to minutes of CPU work: keep it off the async workers.
    let report = tokio::task::spawn_blocking(move || bench::run(&config)).await??;
    for skipped in &report.skipped_duplicates {
        eprintln!(
            "{}:{}: skipped a second distractor tool with id `{}` (the first is kept)",
            skipped.file, skipped.line, skipped.id
        );
    }
    if args.json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        print!("{}", bench::markdown(&report));
    }
    Ok(ExitCode::SUCCESS)
}

/// cairn's built-in tools as a benchmark catalog (`{"id", "server", "name", "description",
/// "inputSchema"}` per line, the id being the tool's name), written under `dir`: the tools a
/// terminal command over an empty workspace lists, without external servers.
async fn builtin_catalog(
    env: &crate::compose::Env,
    dir: &std::path::Path,
) -> anyhow::Result<PathBuf> {
    use std::io::Write;
    let root = dir.join("workspace");
    std::fs::create_dir_all(&root)?;
    let (_, mcp) = crate::compose::terminal_setup(env, &root, false).await?;
    let tools = crate::compose::tool_host(&mcp.hub).list();
    mcp.hub.shutdown().await;
    let path = dir.join("builtin.jsonl");
    let mut out = std::io::BufWriter::new(std::fs::File::create(&path)?);
    // The user's own MCP servers (`mcp:NAME`) are not cairn's catalog.
    let builtin: Vec<_> = tools
        .iter()
        .filter(|t| !t.category.starts_with("mcp:"))
        .collect();
    for t in &builtin {
        let line = serde_json::json!({
            "id": t.tool.name,
            "server": t.category,
            "name": t.tool.name,
            "description": t.tool.description.as_deref().unwrap_or_default(),
            "inputSchema": serde_json::Value::Object((*t.tool.input_schema).clone()),
        });
        writeln!(out, "{line}")?;
    }
    out.flush()?;
    eprintln!("builtin: {} tools", builtin.len());
    Ok(path)
}
