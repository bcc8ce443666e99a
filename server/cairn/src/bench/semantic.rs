//! `cairn bench semantic`: `semantic_search` over a generated workspace (deterministic synthetic
//! Rust functions and Markdown notes): the time to index it, the query time (p50 and p95), the
//! index's size on disk, and the time to bring the index up to date after one file changes,
//! each next to its target. Every figure is a real tool call through the tool set (the
//! freshness check included). Figures are printed, never asserted.

use std::path::Path;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Instant;

use cairn_agent::tools::{CallContext, ToolHost};
use cairn_ml::{Ml, ml_tools};
use cairn_select::embed::ModelSpec;
use cairn_workspace::Workspace;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

const VERBS: &[&str] = &[
    "upload", "parse", "retry", "cache", "validate", "render", "encrypt", "compress", "schedule",
    "index", "merge", "resize", "notify", "export", "import", "sign",
];
const NOUNS: &[&str] = &[
    "invoice",
    "image",
    "session",
    "token",
    "report",
    "packet",
    "user",
    "order",
    "archive",
    "ledger",
    "thumbnail",
    "config",
    "message",
    "backup",
    "chart",
    "queue",
];

/// Queries asked in turn: words and paraphrases, some matching the generated names.
const QUERIES: &[&str] = &[
    "where do we retry failed uploads?",
    "how are thumbnails resized",
    "encrypt the session token",
    "which function validates an order",
    "compress the backup archive",
    "send a notification to the user",
    "parse the configuration file",
    "export the ledger as a report",
    "schedule the message queue",
    "render a chart of invoices",
];

/// A tiny xorshift generator: the same tree on every run.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> usize {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 >> 11) as usize
    }

    fn pick<'a>(&mut self, from: &[&'a str]) -> &'a str {
        from[self.next() % from.len()]
    }
}

/// One generated file: a few Rust functions, or a Markdown note, about 20 lines.
fn file_text(rng: &mut Rng, i: usize) -> (String, String) {
    if i % 4 == 3 {
        let (v, n) = (rng.pick(VERBS), rng.pick(NOUNS));
        let mut text = format!("# How we {v} the {n}\n\n");
        for _ in 0..6 {
            let (v2, n2) = (rng.pick(VERBS), rng.pick(NOUNS));
            text.push_str(&format!(
                "Before we {v} a {n}, the service must {v2} its {n2}; a failure is logged and reported.\n"
            ));
        }
        (format!("docs/d{:03}/note{i}.md", i / 100), text)
    } else {
        let mut text = String::from("use crate::prelude::*;\n\n");
        for f in 0..3 {
            let (v, n, n2) = (rng.pick(VERBS), rng.pick(NOUNS), rng.pick(NOUNS));
            text.push_str(&format!(
                "/// Takes the {n} and will {v} it, using the {n2}.\npub fn {v}_{n}_{f}(input: &{N}, extra: &{N2}) -> Result<(), Error> {{\n    let value = input.{n2}()?;\n    extra.{v}(value)?;\n    Ok(())\n}}\n\n",
                N = capital(n),
                N2 = capital(n2),
            ));
        }
        (format!("src/m{:03}/file{i}.rs", i / 100), text)
    }
}

fn capital(s: &str) -> String {
    let mut c = s.chars();
    c.next()
        .map(|f| f.to_uppercase().chain(c).collect())
        .unwrap_or_default()
}

fn generate(root: &Path, files: usize) -> std::io::Result<()> {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    for i in 0..files {
        let (rel, text) = file_text(&mut rng, i);
        let path = root.join(rel);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)?;
        }
        std::fs::write(path, text)?;
    }
    Ok(())
}

/// One `semantic_search` call: milliseconds, and the structured content.
async fn ask(host: &impl ToolHost, query: &str) -> anyhow::Result<(f64, Value)> {
    let ctx = CallContext {
        session_id: String::new(),
        run_id: "bench".into(),
        call_id: "bench".into(),
        cancel: CancellationToken::new(),
    };
    let args = json!({"query": query, "limit": 5});
    let start = Instant::now();
    let result = host
        .call(
            "semantic_search",
            args.as_object().cloned().unwrap_or_default(),
            ctx,
        )
        .await;
    let ms = start.elapsed().as_secs_f64() * 1000.0;
    if result.is_error == Some(true) {
        anyhow::bail!("{}", cairn_agent::run::result_text(&result));
    }
    Ok((ms, result.structured_content.unwrap_or_default()))
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let i = ((sorted.len() - 1) as f64 * p).round() as usize;
    sorted[i.min(sorted.len() - 1)]
}

fn dir_size(dir: &Path) -> u64 {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return 0;
    };
    entries
        .flatten()
        .map(|e| match e.metadata() {
            Ok(m) if m.is_dir() => dir_size(&e.path()),
            Ok(m) => m.len(),
            Err(_) => 0,
        })
        .sum()
}

/// Runs the benchmark over a fresh tree of `files` files, timing `queries` queries.
#[allow(clippy::print_stdout)]
pub async fn semantic(files: usize, queries: usize) -> anyhow::Result<ExitCode> {
    anyhow::ensure!(files > 0, "--files must be at least 1");
    anyhow::ensure!(queries > 0, "--queries must be at least 1");
    let dir = tempfile::tempdir()?;
    let cache = tempfile::tempdir()?;
    let root = std::fs::canonicalize(dir.path())?;
    let started = Instant::now();
    generate(&root, files)?;
    println!(
        "generated {files} files in {:.1} s under a temporary directory\n",
        started.elapsed().as_secs_f64()
    );
    let ws = Workspace::new(vec![root.clone()]).map_err(|e| anyhow::format_err!("{e}"))?;
    let host = ml_tools(
        Ml::new(Some(Arc::new(ws)), ModelSpec::default())
            .with_index_dir(cache.path().to_path_buf()),
    );

    // Indexing: queries until nothing is pending (each embeds a bounded number of files).
    let started = Instant::now();
    let mut rounds = 0;
    let last = loop {
        let (_, s) = ask(&host, QUERIES[0]).await?;
        rounds += 1;
        let pending = s["index"]["refresh"]["pending"].as_u64().unwrap_or(0);
        if pending == 0 || rounds > 1000 {
            break s;
        }
    };
    let index_s = started.elapsed().as_secs_f64();
    let chunks = last["index"]["chunks"].as_u64().unwrap_or(0);
    let indexed = last["index"]["files"].as_u64().unwrap_or(0);

    let mut times = Vec::with_capacity(queries);
    for i in 0..queries {
        let (ms, _) = ask(&host, QUERIES[i % QUERIES.len()]).await?;
        times.push(ms);
    }
    times.sort_by(f64::total_cmp);
    let size = dir_size(cache.path());

    // One file changes: the next query re-embeds it (and only it).
    let (rel, _) = file_text(&mut Rng(7), 0);
    let changed = root.join(&rel);
    if let Some(parent) = changed.parent() {
        std::fs::create_dir_all(parent)?;
    }
    std::fs::write(
        &changed,
        "/// Retries a failed upload with a growing delay.\npub fn upload_again() {}\n",
    )?;
    let (reindex_ms, s) = ask(&host, QUERIES[0]).await?;
    let embedded = s["index"]["refresh"]["embedded_files"]
        .as_u64()
        .unwrap_or(0);

    println!("| measure | value | target |");
    println!("| --- | ---: | --- |");
    println!(
        "| indexing ({indexed} files, {chunks} windows, {rounds} queries) | {index_s:.1} s | |"
    );
    println!(
        "| query p50 ({queries} queries) | {:.1} ms | < 50 ms |",
        percentile(&times, 0.5)
    );
    println!("| query p95 | {:.1} ms | |", percentile(&times, 0.95));
    println!(
        "| index size on disk | {:.1} MB | |",
        size as f64 / 1_000_000.0
    );
    println!(
        "| re-index after one file changed ({embedded} file embedded, query included) | {reindex_ms:.1} ms | < 1000 ms |"
    );
    println!(
        "\n(each query walks the workspace and compares sizes and times first, so its time includes the freshness check)"
    );
    Ok(ExitCode::SUCCESS)
}
