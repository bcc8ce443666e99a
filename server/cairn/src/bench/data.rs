//! `cairn bench data`: a group-by, a join and a filter over a generated sales CSV (about 100 MB at
//! 1M rows) and a customers CSV, answered by cairn's `data_sql` tool, by pandas and by DuckDB's
//! CLI on the same files. Prints best-of-3 wall times, ratios and peak RSS per side; every side's
//! answers are checked against the totals the generator computed (a mismatch exits 1). Figures
//! are printed, never asserted.
//!
//! Each side runs in its own child process per query so its peak RSS is its own: cairn re-runs
//! itself with the hidden `--side cairn`, pandas runs [`PANDAS_SCRIPT`] under `$CAIRN_PYTHON`,
//! DuckDB is the `duckdb` executable next to that interpreter or on `PATH`.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use cairn_agent::tools::{CallContext, ToolHost};
use cairn_data::{Data, data_tools};
use cairn_workspace::Workspace;
use clap::Args;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

/// The arguments of `cairn bench data`.
#[derive(Debug, Args)]
pub struct DataArgs {
    /// Rows of the generated sales CSV (about 100 bytes each).
    #[arg(long, default_value_t = 1_000_000)]
    rows: usize,
    /// Write the CSVs into this directory and keep them (default: a temporary directory).
    #[arg(long)]
    keep: Option<PathBuf>,
    /// Internal: run one side's query in this process and print JSON (`cairn`).
    #[arg(long, hide = true)]
    side: Option<String>,
    /// Internal: the directory holding the generated CSVs, for `--side`.
    #[arg(long, hide = true)]
    dir: Option<PathBuf>,
    /// Internal: the query `--side` runs.
    #[arg(long, hide = true)]
    query: Option<String>,
}

/// Timed runs per side and query; the best is reported.
const RUNS: usize = 3;
/// The filter query's threshold on `amount`, in cents (500.00).
const FILTER_CENTS: u64 = 50_000;
/// Relative tolerance on float totals: sums of a million 2-decimal values differ in the last bits
/// with the order of addition, which each engine chooses.
const TOLERANCE: f64 = 1e-6;

const REGIONS: &[&str] = &["EU", "US", "APAC", "LATAM", "MEA"];
const PRODUCTS: &[&str] = &[
    "anvil", "bolt", "cable", "drill", "easel", "flask", "gauge", "hinge", "ink", "jack",
];
const SEGMENTS: &[&str] = &["consumer", "corporate", "public", "small business"];
const COUNTRIES: &[&str] = &["DE", "FR", "US", "BR", "JP", "IN", "ZA", "GB"];
/// Words of the `note` column, which makes a row about 100 bytes as real exports are.
const WORDS: &[&str] = &[
    "late", "gift", "repeat", "bulk", "rush", "fragile", "return", "promo", "online", "store",
    "phone", "invoice", "paid", "pending", "express", "standard",
];

/// One of the three queries, the same SQL for cairn and DuckDB, the same operation in pandas.
#[derive(Debug, Clone, Copy)]
struct Query {
    name: &'static str,
    /// Leading key columns of the result; the rest are numbers, totalled for the checksum.
    keys: usize,
    /// The SQL over the tables `sales` and `customers`.
    sql: &'static str,
}

const QUERIES: [Query; 3] = [
    Query {
        name: "group-by",
        keys: 2,
        sql: "SELECT region, product, count(*) AS n, sum(amount) AS amount, avg(unit_price) AS avg_price FROM sales GROUP BY region, product ORDER BY region, product",
    },
    Query {
        name: "join",
        keys: 1,
        sql: "SELECT c.segment, sum(s.amount) AS amount FROM sales s JOIN customers c ON s.customer_id = c.customer_id GROUP BY c.segment ORDER BY c.segment",
    },
    Query {
        name: "filter",
        keys: 0,
        sql: "SELECT count(*) AS n, sum(amount) AS amount FROM sales WHERE amount > 500 AND region = 'EU'",
    },
];

/// What a query answered, reduced to a checksum: its row count and the total of each numeric
/// column.
#[derive(Debug, Clone, PartialEq)]
struct Answer {
    rows: usize,
    sums: Vec<f64>,
}

impl Answer {
    /// Whether `other` is the same answer, floats within [`TOLERANCE`].
    fn agrees(&self, other: &Answer) -> bool {
        self.rows == other.rows
            && self.sums.len() == other.sums.len()
            && self
                .sums
                .iter()
                .zip(&other.sums)
                .all(|(a, b)| (a - b).abs() <= TOLERANCE * a.abs().max(b.abs()).max(1.0))
    }

    /// The answer of a table of text cells (cairn's structured rows, DuckDB's CSV), totalling
    /// the columns after the first `keys`.
    fn of_rows<'a>(
        rows: impl IntoIterator<Item = Vec<&'a str>>,
        keys: usize,
    ) -> anyhow::Result<Answer> {
        let mut count = 0;
        let mut sums: Vec<f64> = Vec::new();
        for row in rows {
            let numbers = row.get(keys..).unwrap_or_default();
            if sums.is_empty() {
                sums = vec![0.0; numbers.len()];
            }
            anyhow::ensure!(numbers.len() == sums.len(), "ragged result row {row:?}");
            for (sum, cell) in sums.iter_mut().zip(numbers) {
                // A NULL total (no matching rows) counts as zero, as pandas says it.
                if !cell.is_empty() && *cell != "NULL" {
                    *sum += cell
                        .trim()
                        .parse::<f64>()
                        .map_err(|e| anyhow::format_err!("not a number {cell:?}: {e}"))?;
                }
            }
            count += 1;
        }
        Ok(Answer { rows: count, sums })
    }

    fn to_json(&self) -> Value {
        json!({"rows": self.rows, "sums": self.sums})
    }

    fn from_json(v: &Value) -> anyhow::Result<Answer> {
        let rows = v["rows"]
            .as_u64()
            .ok_or_else(|| anyhow::format_err!("no row count in {v}"))?;
        let sums = v["sums"]
            .as_array()
            .ok_or_else(|| anyhow::format_err!("no sums in {v}"))?
            .iter()
            .map(|s| s.as_f64().unwrap_or(0.0))
            .collect();
        Ok(Answer {
            rows: usize::try_from(rows)?,
            sums,
        })
    }
}

/// The answers the generator knows, one per query in [`QUERIES`] order.
#[derive(Debug)]
struct Generated {
    sales_bytes: u64,
    customers: usize,
    expected: [Answer; 3],
}

/// A small deterministic generator (xorshift64): the same files on every machine and run.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

/// Writes `sales.csv` (`rows` rows) and `customers.csv` into `dir`, and totals the answers.
/// Money is generated in cents so the expected totals are exact.
fn generate(dir: &Path, rows: usize) -> anyhow::Result<Generated> {
    let customers = (rows / 10).clamp(100, 100_000);
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let mut segment_of = Vec::with_capacity(customers + 1);
    segment_of.push(usize::MAX);
    let mut out = std::io::BufWriter::with_capacity(
        1 << 20,
        std::fs::File::create(dir.join("customers.csv"))?,
    );
    writeln!(out, "customer_id,name,segment,country")?;
    for id in 1..=customers {
        let segment = rng.below(SEGMENTS.len());
        segment_of.push(segment);
        let country = COUNTRIES[rng.below(COUNTRIES.len())];
        writeln!(out, "{id},customer {id},{},{country}", SEGMENTS[segment])?;
    }
    out.flush()?;

    // Per (region, product): count, amount cents, unit price cents.
    let mut groups = vec![(0u64, 0u64, 0u64); REGIONS.len() * PRODUCTS.len()];
    let mut segments = [0u64; 4];
    let mut segment_seen = [false; 4];
    let (mut filtered, mut filtered_cents) = (0u64, 0u64);
    let file = std::fs::File::create(dir.join("sales.csv"))?;
    let mut out = std::io::BufWriter::with_capacity(1 << 20, file);
    writeln!(
        out,
        "id,ts,customer_id,region,product,quantity,unit_price,amount,note"
    )?;
    // Some sales name customers that do not exist, so the join drops rows.
    let customer_ids = customers + customers / 10;
    let mut note = String::with_capacity(64);
    for id in 1..=rows {
        let (month, day) = (1 + rng.below(12), 1 + rng.below(28));
        let (hour, minute, second) = (rng.below(24), rng.below(60), rng.below(60));
        let customer = 1 + rng.below(customer_ids);
        let region = rng.below(REGIONS.len());
        let product = rng.below(PRODUCTS.len());
        let quantity = 1 + rng.below(20) as u64;
        let price = 100 + rng.below(49_901) as u64;
        let amount = quantity * price;
        note.clear();
        for w in 0..6 {
            if w > 0 {
                note.push(' ');
            }
            note.push_str(WORDS[rng.below(WORDS.len())]);
        }
        writeln!(
            out,
            "{id},2024-{month:02}-{day:02}T{hour:02}:{minute:02}:{second:02},{customer},{},{},{quantity},{}.{:02},{}.{:02},{note}",
            REGIONS[region],
            PRODUCTS[product],
            price / 100,
            price % 100,
            amount / 100,
            amount % 100,
        )?;
        if let Some(g) = groups.get_mut(region * PRODUCTS.len() + product) {
            g.0 += 1;
            g.1 += amount;
            g.2 += price;
        }
        if let Some(&s) = segment_of.get(customer) {
            segments[s] += amount;
            segment_seen[s] = true;
        }
        if region == 0 && amount > FILTER_CENTS {
            filtered += 1;
            filtered_cents += amount;
        }
    }
    out.flush()?;
    drop(out);

    let cents = |c: u64| c as f64 / 100.0;
    let present: Vec<_> = groups.iter().filter(|g| g.0 > 0).collect();
    let expected = [
        Answer {
            rows: present.len(),
            sums: vec![
                present.iter().map(|g| g.0 as f64).sum(),
                cents(present.iter().map(|g| g.1).sum()),
                present.iter().map(|g| cents(g.2) / g.0 as f64).sum(),
            ],
        },
        Answer {
            rows: segment_seen.iter().filter(|s| **s).count(),
            sums: vec![cents(segments.iter().sum())],
        },
        Answer {
            rows: 1,
            sums: vec![filtered as f64, cents(filtered_cents)],
        },
    ];
    Ok(Generated {
        sales_bytes: std::fs::metadata(dir.join("sales.csv"))?.len(),
        customers,
        expected,
    })
}

/// One side's figures for one query.
#[derive(Debug, Clone)]
struct Measured {
    best: Duration,
    peak_rss_kb: Option<u64>,
    answer: Answer,
}

/// How one side fared on one query.
#[derive(Debug)]
enum Outcome {
    Done(Measured),
    /// The peer is not installed (the reason).
    Missing(String),
}

/// `data_sql` with the query's SQL over the workspace `dir`, through the same `ToolSet` the agent
/// calls (scope checks, streamed reads, a fresh engine session per call).
async fn cairn_once(dir: &Path, query: &Query) -> anyhow::Result<(Duration, Answer)> {
    let workspace =
        Workspace::new(vec![dir.to_path_buf()]).map_err(|e| anyhow::format_err!("{e}"))?;
    let tools = data_tools(Data::new(Some(Arc::new(workspace))));
    let args = json!({
        "tables": {"sales": "sales.csv", "customers": "customers.csv"},
        "sql": query.sql,
    });
    let ctx = CallContext {
        session_id: String::new(),
        run_id: "bench".into(),
        call_id: "bench".into(),
        cancel: CancellationToken::new(),
    };
    let started = Instant::now();
    let result = tools
        .call(
            "data_sql",
            args.as_object().cloned().unwrap_or_default(),
            ctx,
        )
        .await;
    let elapsed = started.elapsed();
    if result.is_error == Some(true) {
        anyhow::bail!(
            "data_sql failed on {}: {}",
            query.name,
            cairn_agent::run::result_text(&result)
        );
    }
    let structured = result
        .structured_content
        .ok_or_else(|| anyhow::format_err!("data_sql gave no structured rows"))?;
    Ok((elapsed, answer_of_structured(&structured, query.keys)?))
}

/// The answer in `data_sql`'s structured content (`rows` of text cells or nulls).
fn answer_of_structured(structured: &Value, keys: usize) -> anyhow::Result<Answer> {
    anyhow::ensure!(
        structured["truncated"] != Value::Bool(true),
        "data_sql left rows out"
    );
    let rows = structured["rows"]
        .as_array()
        .ok_or_else(|| anyhow::format_err!("no rows in {structured}"))?;
    Answer::of_rows(
        rows.iter().map(|row| {
            row.as_array()
                .map(|cells| cells.iter().map(|c| c.as_str().unwrap_or("")).collect())
                .unwrap_or_default()
        }),
        keys,
    )
}

/// The hidden `--side cairn`: best of [`RUNS`] of one query, and this process's peak RSS, as JSON.
#[allow(clippy::print_stdout)]
async fn cairn_side(dir: &Path, name: &str) -> anyhow::Result<ExitCode> {
    let query = QUERIES
        .iter()
        .find(|q| q.name == name)
        .ok_or_else(|| anyhow::format_err!("no query {name}"))?;
    let mut best = Duration::MAX;
    let mut answer = None;
    for _ in 0..RUNS {
        let (elapsed, a) = cairn_once(dir, query).await?;
        best = best.min(elapsed);
        answer = Some(a);
    }
    let answer = answer.ok_or_else(|| anyhow::format_err!("no run"))?;
    println!(
        "{}",
        json!({
            "ms": best.as_secs_f64() * 1000.0,
            "maxrss_kb": own_peak_rss_kb(),
            "answer": answer.to_json(),
        })
    );
    Ok(ExitCode::SUCCESS)
}

pub(crate) fn own_peak_rss_kb() -> Option<u64> {
    vm_hwm_kb(&std::fs::read_to_string("/proc/self/status").ok()?)
}

/// `VmHWM` (the peak resident set) of a `/proc/<pid>/status`, in kB.
fn vm_hwm_kb(status: &str) -> Option<u64> {
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
}

/// Runs `command` to its end, sampling its `VmHWM` every few milliseconds (the high-water mark
/// only grows, so the last sample misses at most the final moments before exit). Returns the
/// wall time, its stdout and the peak RSS seen.
pub(crate) fn run_sampled(mut command: Command) -> anyhow::Result<(Duration, String, Option<u64>)> {
    let started = Instant::now();
    let mut child = command
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()?;
    let status_path = format!("/proc/{}/status", child.id());
    // Read the pipes off-thread so a chatty child never blocks on a full pipe while we poll.
    let stdout = child.stdout.take();
    let stderr = child.stderr.take();
    let out = std::thread::spawn(move || read_all(stdout));
    let err = std::thread::spawn(move || read_all(stderr));
    let mut peak = None;
    let status = loop {
        if let Some(kb) = std::fs::read_to_string(&status_path)
            .ok()
            .and_then(|s| vm_hwm_kb(&s))
        {
            peak = Some(peak.map_or(kb, |p: u64| p.max(kb)));
        }
        if let Some(status) = child.try_wait()? {
            break status;
        }
        std::thread::sleep(Duration::from_millis(2));
    };
    let elapsed = started.elapsed();
    let stdout = out.join().unwrap_or_default();
    let stderr = err.join().unwrap_or_default();
    anyhow::ensure!(status.success(), "{status}: {}", stderr.trim());
    Ok((elapsed, stdout, peak))
}

fn read_all(pipe: Option<impl std::io::Read>) -> String {
    let mut s = String::new();
    if let Some(mut p) = pipe {
        let _ = p.read_to_string(&mut s);
    }
    s
}

/// cairn's side of one query, in a child process of this binary.
fn cairn_child(dir: &Path, query: &Query) -> anyhow::Result<Measured> {
    let mut command = Command::new(std::env::current_exe()?);
    command
        .args([
            "bench", "data", "--side", "cairn", "--query", query.name, "--dir",
        ])
        .arg(dir);
    let (_, stdout, sampled) = run_sampled(command)?;
    let v: Value = serde_json::from_str(stdout.trim())?;
    Ok(Measured {
        best: Duration::from_secs_f64(v["ms"].as_f64().unwrap_or(0.0) / 1000.0),
        peak_rss_kb: v["maxrss_kb"].as_u64().or(sampled),
        answer: Answer::from_json(&v["answer"])?,
    })
}

/// pandas' side: `read_csv` of the columns the query needs plus the same operation, timed inside
/// the script (after `import pandas`), best of [`RUNS`]; its own `ru_maxrss`.
pub const PANDAS_SCRIPT: &str = r#"
import json, resource, sys, time
try:
    import pandas as pd
except ImportError as e:
    print(json.dumps({"missing": "pandas is not installed (" + str(e) + ")"}))
    sys.exit(0)

query, runs, threshold = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])

def group_by():
    df = pd.read_csv("sales.csv", usecols=["region", "product", "amount", "unit_price"])
    g = df.groupby(["region", "product"]).agg(
        n=("amount", "size"), amount=("amount", "sum"), avg_price=("unit_price", "mean"))
    return len(g), [float(g["n"].sum()), float(g["amount"].sum()), float(g["avg_price"].sum())]

def join():
    s = pd.read_csv("sales.csv", usecols=["customer_id", "amount"])
    c = pd.read_csv("customers.csv", usecols=["customer_id", "segment"])
    g = s.merge(c, on="customer_id").groupby("segment")["amount"].sum()
    return len(g), [float(g.sum())]

def filter_():
    df = pd.read_csv("sales.csv", usecols=["region", "amount"])
    f = df[(df["amount"] > threshold) & (df["region"] == "EU")]
    return 1, [float(len(f)), float(f["amount"].sum())]

run = {"group-by": group_by, "join": join, "filter": filter_}[query]
best = None
for _ in range(runs):
    t = time.perf_counter()
    rows, sums = run()
    ms = (time.perf_counter() - t) * 1000
    best = ms if best is None else min(best, ms)
print(json.dumps({
    "ms": best,
    "maxrss_kb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,
    "answer": {"rows": rows, "sums": sums},
}))
"#;

fn pandas_side(python: &str, dir: &Path, query: &Query) -> anyhow::Result<Outcome> {
    let script = dir.join("bench_pandas.py");
    if !script.exists() {
        std::fs::write(&script, PANDAS_SCRIPT)?;
    }
    let mut command = Command::new(python);
    command
        .arg(&script)
        .arg(query.name)
        .arg(RUNS.to_string())
        .arg(format!("{}", FILTER_CENTS as f64 / 100.0))
        .current_dir(dir);
    let (_, stdout, sampled) = match run_sampled(command) {
        Ok(r) => r,
        Err(e) => return Ok(Outcome::Missing(format!("{python} failed: {e}"))),
    };
    let v: Value = serde_json::from_str(stdout.trim())
        .map_err(|e| anyhow::format_err!("pandas printed {stdout:?}: {e}"))?;
    if let Some(why) = v["missing"].as_str() {
        return Ok(Outcome::Missing(why.to_owned()));
    }
    Ok(Outcome::Done(Measured {
        best: Duration::from_secs_f64(v["ms"].as_f64().unwrap_or(0.0) / 1000.0),
        peak_rss_kb: v["maxrss_kb"].as_u64().or(sampled),
        answer: Answer::from_json(&v["answer"])?,
    }))
}

/// The `duckdb` executable. PyPI `duckdb-cli` installs `bin/duckdb` as a Python launcher that
/// starts the real binary in its package as a child, which would add Python's start-up to every
/// timing and hide DuckDB's memory; so the packaged binary is asked of `$CAIRN_PYTHON` first,
/// then `duckdb` next to that interpreter or on `PATH` (a launcher only as the last resort).
fn find_duckdb(python: &str) -> Option<PathBuf> {
    let packaged = Command::new(python)
        .args([
            "-c",
            "import duckdb_cli, os; print(os.path.join(os.path.dirname(duckdb_cli.__file__), 'duckdb'))",
        ])
        .stderr(Stdio::null())
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| PathBuf::from(String::from_utf8_lossy(&o.stdout).trim()));
    let beside = Path::new(python)
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .map(|p| p.join("duckdb"));
    let on_path: Vec<PathBuf> = std::env::var_os("PATH")
        .map(|p| {
            std::env::split_paths(&p)
                .map(|d| d.join("duckdb"))
                .collect()
        })
        .unwrap_or_default();
    let candidates: Vec<PathBuf> = packaged
        .into_iter()
        .chain(beside)
        .chain(on_path)
        .filter(|p| p.is_file())
        .collect();
    candidates
        .iter()
        .find(|p| !is_script(p))
        .or_else(|| candidates.first())
        .cloned()
}

/// Whether `path` starts with `#!` (a launcher script rather than the program).
fn is_script(path: &Path) -> bool {
    let mut head = [0u8; 2];
    std::fs::File::open(path)
        .and_then(|mut f| std::io::Read::read_exact(&mut f, &mut head))
        .is_ok_and(|()| &head == b"#!")
}

/// The SQL for DuckDB: the same query, the tables read by `read_csv_auto`.
fn duckdb_sql(query: &Query) -> String {
    query
        .sql
        .replace("FROM sales", "FROM read_csv_auto('sales.csv') AS sales")
        .replace(
            "JOIN customers",
            "JOIN read_csv_auto('customers.csv') AS customers",
        )
        .replace("AS sales s", "AS s")
        .replace("AS customers c", "AS c")
}

/// DuckDB's CSV output (with a header) as an answer.
fn answer_of_csv(csv: &str, keys: usize) -> anyhow::Result<Answer> {
    Answer::of_rows(
        csv.lines()
            .skip(1)
            .filter(|l| !l.trim().is_empty())
            .map(|l| l.split(',').collect()),
        keys,
    )
}

fn duckdb_side(duckdb: &Path, dir: &Path, query: &Query) -> anyhow::Result<Outcome> {
    let sql = duckdb_sql(query);
    let mut best = Duration::MAX;
    let mut peak = None;
    let mut answer = None;
    for _ in 0..RUNS {
        let mut command = Command::new(duckdb);
        command.args(["-csv", "-c", &sql]).current_dir(dir);
        let (elapsed, stdout, rss) = run_sampled(command)?;
        best = best.min(elapsed);
        peak = peak.max(rss);
        answer = Some(answer_of_csv(&stdout, query.keys)?);
    }
    let answer = answer.ok_or_else(|| anyhow::format_err!("no run"))?;
    Ok(Outcome::Done(Measured {
        best,
        peak_rss_kb: peak,
        answer,
    }))
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

fn mb(kb: Option<u64>) -> String {
    kb.map_or_else(|| "?".to_owned(), |kb| format!("{:.0}", kb as f64 / 1024.0))
}

/// Runs the benchmark (or, with the hidden `--side`, one side of it).
#[allow(clippy::print_stdout)]
pub async fn data(args: DataArgs) -> anyhow::Result<ExitCode> {
    if let Some(side) = args.side.as_deref() {
        anyhow::ensure!(side == "cairn", "unknown side {side}");
        let dir = args
            .dir
            .ok_or_else(|| anyhow::format_err!("--side needs --dir"))?;
        return cairn_side(&dir, args.query.as_deref().unwrap_or("")).await;
    }
    let temp;
    let dir = match &args.keep {
        Some(d) => {
            std::fs::create_dir_all(d)?;
            std::fs::canonicalize(d)?
        }
        None => {
            temp = tempfile::tempdir()?;
            std::fs::canonicalize(temp.path())?
        }
    };
    let started = Instant::now();
    let generated = {
        let dir = dir.clone();
        let rows = args.rows;
        tokio::task::spawn_blocking(move || generate(&dir, rows)).await??
    };
    println!(
        "generated sales.csv ({} rows, {:.1} MB) and customers.csv ({} rows) in {:.1} s under {}",
        args.rows,
        generated.sales_bytes as f64 / 1e6,
        generated.customers,
        started.elapsed().as_secs_f64(),
        dir.display()
    );

    let python = std::env::var("CAIRN_PYTHON").unwrap_or_else(|_| "python3".to_owned());
    let duckdb = find_duckdb(&python);
    match &duckdb {
        Some(bin) if is_script(bin) => println!(
            "duckdb: {} (a launcher script: its start-up is in the times)",
            bin.display()
        ),
        Some(bin) => println!("duckdb: {}", bin.display()),
        None => {}
    }
    let mut results = Vec::new();
    for query in &QUERIES {
        let cairn = {
            let (dir, query) = (dir.clone(), *query);
            tokio::task::spawn_blocking(move || cairn_child(&dir, &query)).await??
        };
        let pandas = {
            let (dir, query, python) = (dir.clone(), *query, python.clone());
            tokio::task::spawn_blocking(move || pandas_side(&python, &dir, &query)).await??
        };
        let duck = match &duckdb {
            Some(bin) => {
                let (dir, query, bin) = (dir.clone(), *query, bin.clone());
                tokio::task::spawn_blocking(move || duckdb_side(&bin, &dir, &query)).await??
            }
            None => Outcome::Missing(
                "no `duckdb` executable next to $CAIRN_PYTHON or on PATH (PyPI `duckdb-cli`)"
                    .to_owned(),
            ),
        };
        results.push((query, cairn, pandas, duck));
    }

    println!();
    println!(
        "best of {RUNS} wall times; cairn: data_sql, a fresh session per call; peak RSS of each side's process"
    );
    println!();
    println!(
        "| query | cairn ms | pandas ms | duckdb ms | cairn / pandas | cairn / duckdb | cairn MB | pandas MB | duckdb MB |"
    );
    println!("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |");
    let mut mismatches = Vec::new();
    let mut missing = Vec::new();
    let (mut beats_pandas, mut near_duckdb, mut compared_pandas, mut compared_duckdb) =
        (true, true, false, false);
    for (i, (query, cairn, pandas, duck)) in results.iter().enumerate() {
        let expected = generated.expected.get(i);
        let mut check = |side: &str, m: &Measured| {
            if let Some(e) = expected
                && !m.answer.agrees(e)
            {
                mismatches.push(format!(
                    "{side} {}: got {:?}, expected {:?}",
                    query.name, m.answer, e
                ));
            }
        };
        check("cairn", cairn);
        let cell = |o: &Outcome| match o {
            Outcome::Done(m) => (format!("{:.0}", ms(m.best)), mb(m.peak_rss_kb)),
            Outcome::Missing(_) => ("missing".to_owned(), String::new()),
        };
        let ratio = |o: &Outcome| match o {
            Outcome::Done(m) => format!("{:.2}", ms(cairn.best) / ms(m.best).max(0.001)),
            Outcome::Missing(_) => String::new(),
        };
        for (side, o) in [("pandas", pandas), ("duckdb", duck)] {
            match o {
                Outcome::Done(m) => check(side, m),
                Outcome::Missing(why) => {
                    if !missing.iter().any(|(s, _)| s == &side) {
                        missing.push((side, why.clone()));
                    }
                }
            }
        }
        if let Outcome::Done(p) = pandas {
            compared_pandas = true;
            beats_pandas &= cairn.best < p.best;
        }
        if let Outcome::Done(d) = duck {
            compared_duckdb = true;
            near_duckdb &= cairn.best <= d.best * 2;
        }
        let (pt, pm) = cell(pandas);
        let (dt, dm) = cell(duck);
        println!(
            "| {} | {:.0} | {pt} | {dt} | {} | {} | {} | {pm} | {dm} |",
            query.name,
            ms(cairn.best),
            ratio(pandas),
            ratio(duck),
            mb(cairn.peak_rss_kb),
        );
    }
    println!();
    for (side, why) in &missing {
        println!("{side} is missing: {why}");
    }
    let verdict = |compared: bool, met: bool| match (compared, met) {
        (false, _) => "not measured",
        (true, true) => "yes",
        (true, false) => "no",
    };
    println!(
        "target (faster than pandas and within 2x of DuckDB on every query): faster than pandas: {}; within 2x of DuckDB: {}",
        verdict(compared_pandas, beats_pandas),
        verdict(compared_duckdb, near_duckdb),
    );
    if !mismatches.is_empty() {
        for m in &mismatches {
            println!("MISMATCH: {m}");
        }
        return Ok(ExitCode::FAILURE);
    }
    println!("answers agree: every side measured matches the generator's totals");
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use super::*;

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn cairn_answers_agree_with_the_generator() {
        let dir = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(dir.path()).unwrap();
        let generated = generate(&root, 2000).unwrap();
        let header = std::fs::read_to_string(root.join("sales.csv")).unwrap();
        assert!(header.starts_with(
            "id,ts,customer_id,region,product,quantity,unit_price,amount,note\n1,2024-"
        ));
        // About 100 bytes a row, as the 100 MB at 1M rows promises.
        let per_row = generated.sales_bytes / 2000;
        assert!((80..=120).contains(&per_row), "{per_row} bytes a row");
        for (query, expected) in QUERIES.iter().zip(&generated.expected) {
            let (_, answer) = cairn_once(&root, query).await.unwrap();
            assert!(
                answer.agrees(expected),
                "{}: {answer:?} vs {expected:?}",
                query.name
            );
        }
        // The join drops the sales of customers that do not exist.
        assert_eq!(generated.expected[1].rows, 4);
        assert!(generated.expected[1].sums[0] < generated.expected[0].sums[1]);
    }

    #[test]
    fn answers_parse_and_compare_with_a_tolerance() {
        let duck = "segment,amount\nconsumer,10.5\ncorporate,2\n";
        let a = answer_of_csv(duck, 1).unwrap();
        assert_eq!(
            a,
            Answer {
                rows: 2,
                sums: vec![12.5]
            }
        );
        assert!(a.agrees(&Answer {
            rows: 2,
            sums: vec![12.5 + 1e-9]
        }));
        assert!(!a.agrees(&Answer {
            rows: 2,
            sums: vec![12.6]
        }));
        assert!(!a.agrees(&Answer {
            rows: 3,
            sums: vec![12.5]
        }));
        let s = json!({"columns": ["n", "amount"], "rows": [["3", null]], "truncated": false});
        assert_eq!(
            answer_of_structured(&s, 0).unwrap(),
            Answer {
                rows: 1,
                sums: vec![3.0, 0.0]
            }
        );
        assert!(answer_of_structured(&json!({"rows": [], "truncated": true}), 0).is_err());
        assert!(answer_of_csv("n\nx\n", 0).is_err());
        assert_eq!(Answer::from_json(&a.to_json()).unwrap(), a);
        assert_eq!(vm_hwm_kb("Name:\tx\nVmHWM:\t  1234 kB\n"), Some(1234));
    }

    #[test]
    fn duckdb_reads_the_same_files() {
        assert_eq!(
            duckdb_sql(&QUERIES[1]),
            "SELECT c.segment, sum(s.amount) AS amount FROM read_csv_auto('sales.csv') AS s JOIN read_csv_auto('customers.csv') AS c ON s.customer_id = c.customer_id GROUP BY c.segment ORDER BY c.segment"
        );
        assert!(
            duckdb_sql(&QUERIES[0]).contains("FROM read_csv_auto('sales.csv') AS sales GROUP BY")
        );
    }
}
