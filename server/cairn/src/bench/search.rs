//! `cairn bench search`: the built-in `grep`, `glob` and `tree` tools over a generated tree of
//! many files, next to ripgrep (`rg`) on the same tree, with the ratio. Figures are printed,
//! never asserted.

use std::path::Path;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Instant;

use cairn_agent::tools::{CallContext, ToolHost};
use cairn_tools::file_tools;
use cairn_workspace::Workspace;
use tokio_util::sync::CancellationToken;

/// Lines of a generated file: enough words to make searching real work.
const WORDS: &[&str] = &[
    "alpha", "beta", "gamma", "delta", "tree", "cairn", "stone", "path", "river", "summit",
];

/// Writes `files` files in 100-file directories; every 200th file holds the needle once.
fn generate(root: &Path, files: usize) -> std::io::Result<()> {
    let mut seed: u64 = 0x9e3779b97f4a7c15;
    for i in 0..files {
        let dir = root.join(format!("d{:04}", i / 100));
        if i % 100 == 0 {
            std::fs::create_dir_all(&dir)?;
        }
        let mut text = String::with_capacity(1200);
        for line in 0..30 {
            for _ in 0..6 {
                seed ^= seed << 13;
                seed ^= seed >> 7;
                seed ^= seed << 17;
                text.push_str(WORDS[(seed % WORDS.len() as u64) as usize]);
                text.push(' ');
            }
            if i % 200 == 0 && line == 15 {
                text.push_str("needle_7f3a");
            }
            text.push('\n');
        }
        let ext = if i % 3 == 0 { "rs" } else { "txt" };
        std::fs::write(dir.join(format!("f{i}.{ext}")), text)?;
    }
    Ok(())
}

fn time_rg(args: &[&str], root: &Path) -> Option<(f64, usize)> {
    let start = Instant::now();
    let out = std::process::Command::new("rg")
        .args(args)
        .current_dir(root)
        .output()
        .ok()?;
    let ms = start.elapsed().as_secs_f64() * 1000.0;
    Some((ms, String::from_utf8_lossy(&out.stdout).lines().count()))
}

async fn time_tool(
    host: &impl ToolHost,
    name: &str,
    args: serde_json::Value,
) -> Option<(f64, usize)> {
    if !host.list().iter().any(|t| t.tool.name == name) {
        return None;
    }
    let ctx = CallContext {
        session_id: String::new(),
        run_id: "bench".into(),
        call_id: "bench".into(),
        cancel: CancellationToken::new(),
    };
    let start = Instant::now();
    let result = host
        .call(name, args.as_object().cloned().unwrap_or_default(), ctx)
        .await;
    let ms = start.elapsed().as_secs_f64() * 1000.0;
    let text = cairn_agent::run::result_text(&result);
    Some((ms, text.lines().count()))
}

/// Runs the benchmark over a fresh tree of `files` files.
#[allow(clippy::print_stdout)]
pub async fn search(files: usize) -> anyhow::Result<ExitCode> {
    if std::process::Command::new("rg")
        .arg("--version")
        .output()
        .is_err()
    {
        anyhow::bail!("ripgrep (`rg`) is not installed: `sudo apt-get install ripgrep`");
    }
    let dir = tempfile::tempdir()?;
    let root = std::fs::canonicalize(dir.path())?;
    let started = Instant::now();
    generate(&root, files)?;
    println!(
        "generated {files} files in {:.1} s under a temporary directory\n",
        started.elapsed().as_secs_f64()
    );
    let host = file_tools(Arc::new(
        Workspace::new(vec![root.clone()]).map_err(|e| anyhow::format_err!("{e}"))?,
    ));
    let rows = [
        (
            "grep `needle_7f3a`",
            time_tool(
                &host,
                "grep",
                serde_json::json!({"pattern": "needle_7f3a", "max_results": 1000}),
            )
            .await,
            time_rg(&["-n", "needle_7f3a", "."], &root),
        ),
        (
            "glob `**/*.rs`",
            time_tool(&host, "glob", serde_json::json!({"pattern": "**/*.rs"})).await,
            time_rg(&["--files", "-g", "*.rs", "."], &root),
        ),
        (
            "tree (depth 2)",
            time_tool(&host, "tree", serde_json::json!({"depth": 2})).await,
            time_rg(&["--files", "--max-depth", "2", "."], &root),
        ),
    ];
    println!("| operation | cairn ms | lines | rg ms | lines | cairn / rg |");
    println!("| --- | ---: | ---: | ---: | ---: | ---: |");
    for (what, cairn, rg) in rows {
        match (cairn, rg) {
            (Some((c, cl)), Some((r, rl))) => {
                println!(
                    "| {what} | {c:.1} | {cl} | {r:.1} | {rl} | {:.2} |",
                    c / r.max(0.001)
                );
            }
            (None, Some((r, rl))) => println!("| {what} | (no such tool) | | {r:.1} | {rl} | |"),
            (_, None) => println!("| {what} | | | (rg failed) | | |"),
        }
    }
    println!("\n(cairn's line counts include its notes; its outputs are capped, rg's are not)");
    Ok(ExitCode::SUCCESS)
}
