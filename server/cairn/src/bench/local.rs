//! `cairn bench local`: the local provider's prompt processing and generation speed, load time
//! and peak memory, next to llama.cpp (PyPI `llama-cpp-python`, run by
//! `scripts/llama-cpp-bench.py`) on the same GGUF files in the same run.
//!
//! `--model` may be repeated; CI measures SmolLM2-135M-Instruct in the Q4_1 file
//! `scripts/local-model` lays and in a Q4_K_M file `scripts/quantize-model` makes from it. Each
//! file gets a table of its own, then one line per target of cairn against llama.cpp on that file:
//! generation and prompt tokens per second at least 0.8x, the model's share of peak memory (peak
//! minus the process's resident set before the load) at most 1.3x, load time at most 2x. The
//! targets are reported, never enforced: a missed one leaves the exit status alone (performance
//! belongs in benchmarks, not assertions), while a side that fails or reports no figures fails
//! the command.
//!
//! Both sides measure alike: each run loads the model afresh, evaluates `--prompt-tokens` tokens
//! from an empty cache, then generates `--gen-tokens` tokens greedily after a short prompt, in a
//! context of the same size and on the same number of threads; the medians are reported. Each
//! side runs in processes of its own, so each peak resident set is that engine's alone: every run
//! of cairn's side is one run of this binary with the hidden `--side cairn`, which prints one JSON
//! object (so a model being freed never overlaps the next load), and llama.cpp's runs share one
//! Python process. The file is read once before either side, so both load it from the page cache.

use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};
use std::time::Instant;

use serde_json::{Value, json};

use crate::compose::Env;

/// Tokens of the short prompt generation starts from; `scripts/llama-cpp-bench.py`'s
/// `GEN_PROMPT` is this long in SmolLM2's tokenizer.
const GEN_PROMPT_TOKENS: usize = 13;

#[derive(clap::Args)]
pub struct LocalArgs {
    /// The model: `owner/repo:file.gguf[@revision]` or a path to a `.gguf` file; repeat it to
    /// measure several, each in a table of its own (default: SmolLM2-135M-Instruct Q4_1, as
    /// `scripts/local-model` lays it).
    #[arg(long)]
    model: Vec<String>,
    /// Prompt tokens processed from an empty cache.
    #[arg(long, default_value_t = 512)]
    prompt_tokens: usize,
    /// Tokens generated after a short prompt, one at a time.
    #[arg(long, default_value_t = 128)]
    gen_tokens: usize,
    /// Runs per side and file, each loading the model afresh; the median is reported.
    #[arg(long, default_value_t = 3)]
    runs: usize,
    /// A Python that imports `llama_cpp` (`scripts/llama-cpp-peer` prints one); default
    /// `$CAIRN_LLAMA_PYTHON`. Without one the peer is left out, and said so.
    #[arg(long)]
    peer: Option<String>,
    /// One JSON array (an object per file) instead of the tables.
    #[arg(long)]
    json: bool,
    #[arg(long, hide = true)]
    side: Option<String>,
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v.get(v.len() / 2).copied().unwrap_or(f64::NAN)
}

fn rss_kb(field: &str) -> Option<u64> {
    std::fs::read_to_string("/proc/self/status")
        .ok()?
        .lines()
        .find_map(|l| l.strip_prefix(field))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
}

fn mib(kb: u64) -> f64 {
    (kb as f64 / 1024.0 * 10.0).round() / 10.0
}

/// The context both sides run in: room for the longer phase, rounded up to 256 tokens, at least
/// 512 (`scripts/llama-cpp-bench.py` computes the same). cairn's engine keeps one position free
/// after a prompt, hence the one more.
fn context(prompt_tokens: usize, gen_tokens: usize) -> usize {
    let needed = (prompt_tokens + 1).max(gen_tokens + 64);
    (needed.div_ceil(256) * 256).max(512)
}

/// One run of the cairn side, in this process: load, prompt, generation; one JSON object.
#[allow(clippy::print_stdout)]
fn cairn_side(args: &LocalArgs, source: cairn_local::ModelSource) -> anyhow::Result<ExitCode> {
    let base = rss_kb("VmRSS:");
    let mut settings = cairn_local::LocalSettings::new(source);
    settings.context = Some(context(args.prompt_tokens, args.gen_tokens));
    let model = cairn_local::LocalModel::new(settings, None);
    let started = Instant::now();
    let info = model.load_blocking()?;
    let load_s = started.elapsed().as_secs_f64();
    // The prompt from an empty cache, nothing generated; then generation after a short prompt.
    let prompt = model.bench_blocking(args.prompt_tokens, 0)?;
    let generation = model.bench_blocking(GEN_PROMPT_TOKENS, args.gen_tokens)?;
    println!(
        "{}",
        json!({
            "engine": "cairn",
            "engine_detail": cairn_local::ENGINE,
            "version": env!("CARGO_PKG_VERSION"),
            "threads": info.threads,
            "model": info.name,
            "quantisation": info.quantisation,
            "path": info.path,
            "context": info.context,
            "prompt_tokens": prompt.prompt_tokens,
            "gen_tokens": generation.gen_tokens,
            "load_s": load_s,
            "pp_tok_s": prompt.prompt_tokens as f64 / prompt.prompt_seconds.max(1e-9),
            "tg_tok_s": generation.gen_tokens as f64 / generation.gen_seconds.max(1e-9),
            "peak_rss_mib": rss_kb("VmHWM:").map(mib),
            "base_rss_mib": base.map(mib),
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
    let (_, stdout, _) = super::data::run_sampled(command)?;
    let line = stdout
        .lines()
        .rev()
        .find(|l| l.trim_start().starts_with('{'))
        .ok_or_else(|| anyhow::anyhow!("no JSON in the output: {stdout}"))?;
    Ok(serde_json::from_str(line)?)
}

/// The figures a side must report; a side without them is wrong, and fails the command.
struct Figures {
    load_s: f64,
    pp: f64,
    tg: f64,
    peak: f64,
    base: f64,
}

impl Figures {
    fn of(side: &Value) -> anyhow::Result<Self> {
        let number = |key: &str| {
            side[key]
                .as_f64()
                .filter(|v| v.is_finite() && *v >= 0.0)
                .ok_or_else(|| anyhow::anyhow!("no figure `{key}` in {side}"))
        };
        let figures = Self {
            load_s: number("load_s")?,
            pp: number("pp_tok_s")?,
            tg: number("tg_tok_s")?,
            peak: number("peak_rss_mib")?,
            base: number("base_rss_mib")?,
        };
        anyhow::ensure!(
            figures.pp > 0.0 && figures.tg > 0.0,
            "no tokens processed or generated: {side}"
        );
        Ok(figures)
    }

    /// The model's share of the peak: what the process held beyond its size before the load.
    fn share(&self) -> f64 {
        self.peak - self.base
    }
}

/// The cairn side on `path`: `runs` runs, each a process of its own; the medians, and the peak of
/// the run that peaked highest (with that run's base).
fn cairn_runs(args: &LocalArgs, path: &Path) -> anyhow::Result<Value> {
    let mut runs = Vec::new();
    for _ in 0..args.runs.max(1) {
        let mut own = Command::new(std::env::current_exe()?);
        own.args(["bench", "local", "--side", "cairn", "--model"])
            .arg(path)
            .args(["--prompt-tokens", &args.prompt_tokens.to_string()])
            .args(["--gen-tokens", &args.gen_tokens.to_string()]);
        let run = run_json(own)?;
        Figures::of(&run)?;
        runs.push(run);
    }
    let field = |key: &str| median(runs.iter().filter_map(|r| r[key].as_f64()).collect());
    let highest = runs
        .iter()
        .max_by(|a, b| {
            let peak = |r: &Value| r["peak_rss_mib"].as_f64().unwrap_or(0.0);
            peak(a).total_cmp(&peak(b))
        })
        .cloned()
        .unwrap_or(Value::Null);
    let mut side = runs.first().cloned().unwrap_or(Value::Null);
    side["runs"] = json!(runs.len());
    side["load_s"] = json!(field("load_s"));
    side["pp_tok_s"] = json!(field("pp_tok_s"));
    side["tg_tok_s"] = json!(field("tg_tok_s"));
    side["peak_rss_mib"] = highest["peak_rss_mib"].clone();
    side["base_rss_mib"] = highest["base_rss_mib"].clone();
    Ok(side)
}

/// Reads `path` once, so that both sides load it from the page cache.
fn warm(path: &Path) -> anyhow::Result<()> {
    let mut file =
        std::fs::File::open(path).map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?;
    std::io::copy(&mut file, &mut std::io::sink())?;
    Ok(())
}

/// A target: cairn's figure over llama.cpp's, at least or at most `bound`.
struct Target {
    name: &'static str,
    /// Its key in `--json`'s ratios.
    key: &'static str,
    at_least: bool,
    bound: f64,
}

const TARGETS: [Target; 4] = [
    Target {
        name: "generation",
        key: "generation",
        at_least: true,
        bound: 0.8,
    },
    Target {
        name: "prompt",
        key: "prompt",
        at_least: true,
        bound: 0.8,
    },
    Target {
        name: "peak RSS",
        key: "peak_rss_share",
        at_least: false,
        bound: 1.3,
    },
    Target {
        name: "load time",
        key: "load_time",
        at_least: false,
        bound: 2.0,
    },
];

/// cairn over llama.cpp for each target, in the order of [`TARGETS`]; the memory ratio compares
/// the model's shares (peak minus base), the raw peaks' ratio is reported next to it.
fn ratios(cairn: &Figures, peer: &Figures) -> [f64; 4] {
    let ratio = |a: f64, b: f64| if b > 0.0 { a / b } else { f64::NAN };
    [
        ratio(cairn.tg, peer.tg),
        ratio(cairn.pp, peer.pp),
        ratio(cairn.share(), peer.share()),
        ratio(cairn.load_s, peer.load_s),
    ]
}

fn verdict(target: &Target, value: f64) -> Option<bool> {
    let met = if target.at_least {
        value >= target.bound
    } else {
        value <= target.bound
    };
    value.is_finite().then_some(met)
}

/// The engine's name for the table: `cairn (…)` from the side's `engine_detail`, its own
/// parentheses turned into "via" (`llama.cpp (llama-cpp-2, …)` reads `llama.cpp via llama-cpp-2, …`).
fn cairn_label(side: &Value) -> String {
    match side["engine_detail"].as_str() {
        Some(detail) => {
            let detail = detail
                .split_once(" (")
                .and_then(|(head, rest)| Some(format!("{head} via {}", rest.strip_suffix(')')?)))
                .unwrap_or_else(|| detail.to_owned());
            format!("cairn ({detail})")
        }
        None => "cairn".to_owned(),
    }
}

/// One file's figures and the targets, as a table and lines; returns how many targets were met
/// and checked.
#[allow(clippy::print_stdout)]
fn print_file(
    args: &LocalArgs,
    path: &Path,
    cairn: &Value,
    peer: Option<&Value>,
    ours: &Figures,
    theirs: Option<&Figures>,
) -> (usize, usize) {
    println!();
    println!(
        "model: {} ({}), {} prompt tokens, {} generated, context {}, median of {} runs, {} threads",
        path.display(),
        cairn["quantisation"].as_str().unwrap_or_default(),
        args.prompt_tokens,
        args.gen_tokens,
        cairn["context"],
        args.runs.max(1),
        cairn["threads"]
    );
    println!(
        "| engine | version | load s | prompt tok/s | generation tok/s | peak RSS MiB | base RSS MiB | model's share MiB |"
    );
    println!("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |");
    let rows = [
        (cairn_label(cairn), Some((cairn, ours))),
        ("llama.cpp (llama-cpp-python)".to_owned(), peer.zip(theirs)),
    ];
    for (name, side) in rows {
        if let Some((side, f)) = side {
            println!(
                "| {name} | {} | {:.2} | {:.1} | {:.1} | {:.1} | {:.1} | {:.1} |",
                side["version"].as_str().unwrap_or_default(),
                f.load_s,
                f.pp,
                f.tg,
                f.peak,
                f.base,
                f.share()
            );
        }
    }
    let Some(theirs) = theirs else {
        println!("no llama.cpp figures: targets not checked");
        return (0, 0);
    };
    let name = path.file_name().map_or_else(
        || path.display().to_string(),
        |n| n.to_string_lossy().into_owned(),
    );
    println!("cairn / llama.cpp on {name}:");
    let (mut met, mut checked) = (0, 0);
    for (target, value) in TARGETS.iter().zip(ratios(ours, theirs)) {
        let verdict = match verdict(target, value) {
            Some(true) => "met",
            Some(false) => "missed",
            None => "not computable",
        };
        checked += 1;
        met += usize::from(verdict == "met");
        let what = if target.name == "peak RSS" {
            "peak RSS (the model's share compared: peak minus base)"
        } else {
            target.name
        };
        let mut line = format!(
            "- {what} {value:.2}x (target {} {:.2}x: {verdict})",
            if target.at_least { ">=" } else { "<=" },
            target.bound
        );
        if target.name == "peak RSS" {
            line.push_str(&format!(
                "; raw peaks {:.1} / {:.1} MiB = {:.2}x, not compared",
                ours.peak,
                theirs.peak,
                ours.peak / theirs.peak
            ));
        }
        println!("{line}");
    }
    (met, checked)
}

fn ratios_json(ours: &Figures, theirs: &Figures) -> Value {
    let mut out = serde_json::Map::new();
    for (target, value) in TARGETS.iter().zip(ratios(ours, theirs)) {
        out.insert(
            target.key.to_owned(),
            json!({
                "ratio": value.is_finite().then_some(value),
                "target": format!("{} {:.2}", if target.at_least { ">=" } else { "<=" }, target.bound),
                "met": verdict(target, value),
            }),
        );
    }
    out.insert(
        "peak_rss_raw".to_owned(),
        json!({"ratio": (theirs.peak > 0.0).then(|| ours.peak / theirs.peak), "compared": false}),
    );
    Value::Object(out)
}

#[allow(clippy::print_stdout, clippy::print_stderr)]
pub async fn local(env: &Env, args: LocalArgs) -> anyhow::Result<ExitCode> {
    let models = if args.model.is_empty() {
        vec![cairn_local::SMOLLM2.to_owned()]
    } else {
        args.model.clone()
    };
    if args.side.as_deref() == Some("cairn") {
        anyhow::ensure!(models.len() == 1, "--side cairn takes one --model");
        let source = cairn_local::ModelSource::parse(&models[0])?;
        return tokio::task::block_in_place(|| cairn_side(&args, source));
    }
    let peer_python = args
        .peer
        .clone()
        .or_else(|| env.get("CAIRN_LLAMA_PYTHON").map(str::to_owned));
    let script = std::env::current_dir()?.join("scripts/llama-cpp-bench.py");
    match &peer_python {
        Some(_) => anyhow::ensure!(
            script.exists(),
            "{} is missing (run from the repository root)",
            script.display()
        ),
        None => eprintln!(
            "bench local: no llama.cpp peer (set --peer or CAIRN_LLAMA_PYTHON to the Python `scripts/llama-cpp-peer` prints); llama.cpp left out"
        ),
    }
    let mut results = Vec::new();
    let (mut met, mut checked) = (0, 0);
    for model in &models {
        let source = cairn_local::ModelSource::parse(model)?;
        let path = resolve(&source)?;
        warm(&path)?;
        eprintln!(
            "bench local: {}: cairn, {} runs",
            path.display(),
            args.runs.max(1)
        );
        let cairn = tokio::task::block_in_place(|| cairn_runs(&args, &path))
            .map_err(|e| anyhow::anyhow!("{}: cairn side: {e}", path.display()))?;
        let ours = Figures::of(&cairn)
            .map_err(|e| anyhow::anyhow!("{}: cairn side: {e}", path.display()))?;
        let peer = match &peer_python {
            Some(python) => {
                eprintln!(
                    "bench local: {}: llama.cpp, {} runs",
                    path.display(),
                    args.runs.max(1)
                );
                let threads = cairn["threads"]
                    .as_u64()
                    .map_or_else(cairn_local::default_threads, |t| t as usize);
                let mut c = Command::new(python);
                c.arg(&script)
                    .arg(&path)
                    .args(["--prompt-tokens", &args.prompt_tokens.to_string()])
                    .args(["--gen-tokens", &args.gen_tokens.to_string()])
                    .args(["--runs", &args.runs.max(1).to_string()])
                    .args(["--threads", &threads.to_string()]);
                let side = tokio::task::block_in_place(|| run_json(c))
                    .map_err(|e| anyhow::anyhow!("{}: llama.cpp side: {e}", path.display()))?;
                let theirs = Figures::of(&side)
                    .map_err(|e| anyhow::anyhow!("{}: llama.cpp side: {e}", path.display()))?;
                Some((side, theirs))
            }
            None => None,
        };
        let (peer, theirs) = match peer {
            Some((side, theirs)) => (Some(side), Some(theirs)),
            None => (None, None),
        };
        results.push(json!({
            "model": model,
            "path": path,
            "cairn": cairn,
            "llama.cpp": peer,
            "ratios": theirs.as_ref().map(|t| ratios_json(&ours, t)),
        }));
        // Each file's table as soon as it is measured, so a later failure keeps the earlier ones.
        if !args.json {
            let (m, c) = print_file(&args, &path, &cairn, peer.as_ref(), &ours, theirs.as_ref());
            met += m;
            checked += c;
        }
    }
    if args.json {
        println!("{}", Value::Array(results));
    } else if checked > 0 {
        println!();
        println!(
            "targets met: {met} of {checked} (figures only: a missed target does not fail the benchmark)"
        );
    }
    Ok(ExitCode::SUCCESS)
}
