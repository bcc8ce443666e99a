//! `cairn bench local`: the local provider's prompt processing and generation speed, load time
//! and peak memory, next to llama.cpp (PyPI `llama-cpp-python`, run by
//! `scripts/llama-cpp-bench.py`) on the same GGUF file in the same run.
//!
//! Each side runs in a process of its own, so each peak resident set is that engine's alone:
//! cairn runs itself with the hidden `--side cairn`, which prints one JSON object.

use std::path::PathBuf;
use std::process::{Command, ExitCode};
use std::time::Instant;

use serde_json::{Value, json};

use crate::compose::Env;

#[derive(clap::Args)]
pub struct LocalArgs {
    /// The model: `owner/repo:file.gguf[@revision]` or a path to a `.gguf` file (default:
    /// SmolLM2-135M-Instruct Q4_1, as `scripts/local-model` lays it).
    #[arg(long)]
    model: Option<String>,
    /// Prompt tokens processed from an empty cache.
    #[arg(long, default_value_t = 512)]
    prompt_tokens: usize,
    /// Tokens generated after them, one at a time.
    #[arg(long, default_value_t = 128)]
    gen_tokens: usize,
    /// Runs per side; the median is reported.
    #[arg(long, default_value_t = 3)]
    runs: usize,
    /// A Python that imports `llama_cpp` (`scripts/llama-cpp-peer` prints one); default
    /// `$CAIRN_LLAMA_PYTHON`. Without one the peer is left out, and said so.
    #[arg(long)]
    peer: Option<String>,
    /// One JSON object instead of the table.
    #[arg(long)]
    json: bool,
    #[arg(long, hide = true)]
    side: Option<String>,
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v.get(v.len() / 2).copied().unwrap_or(0.0)
}

fn rss_kb(field: &str) -> Option<u64> {
    std::fs::read_to_string("/proc/self/status")
        .ok()?
        .lines()
        .find_map(|l| l.strip_prefix(field))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
}

/// The cairn side, in this process: load, then `runs` runs of prompt and generation.
#[allow(clippy::print_stdout)]
fn cairn_side(args: &LocalArgs, source: cairn_local::ModelSource) -> anyhow::Result<ExitCode> {
    let base = rss_kb("VmRSS:");
    let mut settings = cairn_local::LocalSettings::new(source);
    settings.context = Some((args.prompt_tokens + args.gen_tokens + 16).max(512));
    let model = cairn_local::LocalModel::new(settings, None);
    let started = Instant::now();
    let info = model.load_blocking()?;
    let load_s = started.elapsed().as_secs_f64();
    let mut pp = Vec::new();
    let mut tg = Vec::new();
    for _ in 0..args.runs.max(1) {
        let t = model.bench_blocking(args.prompt_tokens, args.gen_tokens)?;
        pp.push(t.prompt_tokens as f64 / t.prompt_seconds.max(1e-9));
        tg.push(t.gen_tokens as f64 / t.gen_seconds.max(1e-9));
    }
    println!(
        "{}",
        json!({
            "engine": "cairn",
            "version": env!("CARGO_PKG_VERSION"),
            "threads": info.threads,
            "engine_detail": cairn_local::ENGINE,
            "model": info.name,
            "quantisation": info.quantisation,
            "path": info.path,
            "load_s": load_s,
            "pp_tok_s": median(pp),
            "tg_tok_s": median(tg),
            "peak_rss_mib": rss_kb("VmHWM:").map(|k| k / 1024),
            "base_rss_mib": base.map(|k| k / 1024),
        })
    );
    Ok(ExitCode::SUCCESS)
}

/// The GGUF file a model name resolves to (the cache, or a download when online).
fn resolve(source: &cairn_local::ModelSource) -> anyhow::Result<PathBuf> {
    Ok(match source {
        cairn_local::ModelSource::Path(p) => p.clone(),
        cairn_local::ModelSource::Hub {
            repo,
            file,
            revision,
        } => cairn_select::hub::ModelFiles::from_env(
            repo.clone(),
            revision.clone(),
            "run `scripts/local-model` for the default benchmark model",
            None,
        )
        .get(file)?,
    })
}

fn run_json(mut command: Command) -> anyhow::Result<Value> {
    command.stdin(std::process::Stdio::null());
    let (_, stdout, _) = crate::bench_data::run_sampled(command)?;
    let line = stdout
        .lines()
        .rev()
        .find(|l| l.trim_start().starts_with('{'))
        .ok_or_else(|| anyhow::anyhow!("no JSON in the output: {stdout}"))?;
    Ok(serde_json::from_str(line)?)
}

#[allow(clippy::print_stdout, clippy::print_stderr)]
pub async fn local(env: &Env, args: LocalArgs) -> anyhow::Result<ExitCode> {
    let model = args
        .model
        .clone()
        .unwrap_or_else(|| cairn_local::SMOLLM2.to_owned());
    let source = cairn_local::ModelSource::parse(&model)?;
    if args.side.as_deref() == Some("cairn") {
        return tokio::task::block_in_place(|| cairn_side(&args, source));
    }
    let path = resolve(&source)?;
    let mut own = Command::new(std::env::current_exe()?);
    own.args([
        "bench",
        "local",
        "--side",
        "cairn",
        "--model",
        path.to_str().unwrap_or_default(),
        "--prompt-tokens",
        &args.prompt_tokens.to_string(),
        "--gen-tokens",
        &args.gen_tokens.to_string(),
        "--runs",
        &args.runs.to_string(),
    ]);
    let cairn = run_json(own)?;
    let peer_python = args
        .peer
        .clone()
        .or_else(|| env.get("CAIRN_LLAMA_PYTHON").map(str::to_owned));
    let script = std::env::current_dir()?.join("scripts/llama-cpp-bench.py");
    let peer = match &peer_python {
        Some(python) if script.exists() => {
            let mut c = Command::new(python);
            c.arg(&script)
                .arg(&path)
                .args(["--prompt-tokens", &args.prompt_tokens.to_string()])
                .args(["--gen-tokens", &args.gen_tokens.to_string()])
                .args(["--runs", &args.runs.to_string()])
                .args(["--threads", &cairn_local::default_threads().to_string()]);
            Some(run_json(c).map_err(|e| anyhow::anyhow!("llama.cpp side: {e}"))?)
        }
        Some(_) => {
            eprintln!(
                "bench local: {} is missing (run from the repository root); llama.cpp left out",
                script.display()
            );
            None
        }
        None => {
            eprintln!(
                "bench local: no llama.cpp peer (set --peer or CAIRN_LLAMA_PYTHON to the Python `scripts/llama-cpp-peer` prints); llama.cpp left out"
            );
            None
        }
    };
    if args.json {
        println!("{}", json!({"cairn": cairn, "llama.cpp": peer}));
        return Ok(ExitCode::SUCCESS);
    }
    let f = |v: &Value, k: &str| v[k].as_f64().unwrap_or(f64::NAN);
    println!(
        "model: {} ({}), {} prompt tokens, {} generated, median of {} runs, {} threads",
        path.display(),
        cairn["quantisation"].as_str().unwrap_or_default(),
        args.prompt_tokens,
        args.gen_tokens,
        args.runs,
        cairn["threads"]
    );
    println!("| engine | load s | prompt tok/s | generation tok/s | peak RSS MiB |");
    println!("| --- | ---: | ---: | ---: | ---: |");
    for (name, side) in [
        ("cairn (llama.cpp via llama-cpp-2)", Some(&cairn)),
        ("llama.cpp", peer.as_ref()),
    ] {
        if let Some(side) = side {
            println!(
                "| {name} {} | {:.2} | {:.1} | {:.1} | {} |",
                side["version"].as_str().unwrap_or_default(),
                f(side, "load_s"),
                f(side, "pp_tok_s"),
                f(side, "tg_tok_s"),
                side["peak_rss_mib"]
            );
        }
    }
    if let Some(peer) = &peer {
        println!(
            "cairn / llama.cpp: prompt {:.2}x, generation {:.2}x (targets: at least 0.80x each)",
            f(&cairn, "pp_tok_s") / f(peer, "pp_tok_s"),
            f(&cairn, "tg_tok_s") / f(peer, "tg_tok_s"),
        );
    }
    Ok(ExitCode::SUCCESS)
}
