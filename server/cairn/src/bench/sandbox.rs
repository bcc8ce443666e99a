//! `cairn bench sandbox`: how long `print(1)` takes in a Python sandbox, cold (a container made
//! for the run) and warm (taken from the pool), next to plain `docker run --rm` of the same
//! image; and a run that sees a 10,000-file workspace, mounted on the local engine and sent as an
//! archive (on the local engine too, and on `--engine` when given), with what shipping it costs.
//! Figures are printed, never asserted.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::{Duration, Instant};

use cairn_config::{EngineConfig, SandboxConfig, WorkspaceDelivery};
use cairn_sandbox::runtimes::runtime;
use cairn_sandbox::{Ending, RunOptions, Sandbox};
use cairn_workspace::Workspace;
use tokio_util::sync::CancellationToken;

use crate::compose::{self, Env};

/// What `cairn bench sandbox` was asked.
pub struct Args {
    pub runs: usize,
    pub image: Option<String>,
    /// A second engine to measure next to the configured one (`tcp://host:port`, `ssh://...`).
    pub engine: Option<String>,
    /// Its TLS files: `ca.pem`, `cert.pem`, `key.pem` (as `docker --tlsverify` takes them).
    pub tls_dir: Option<PathBuf>,
    /// Files in the generated workspace.
    pub files: usize,
}

/// One row of the table.
struct Row {
    engine: String,
    how: String,
    times: Vec<Duration>,
}

#[allow(clippy::print_stdout)]
pub async fn sandbox(env: &Env, args: Args) -> anyhow::Result<ExitCode> {
    let layers = compose::load_layers(env, None)?;
    let mut config = layers.resolve()?.sandbox;
    if let Some(image) = &args.image {
        config.images.insert("python".into(), image.clone());
    }
    let image = config.images.get("python").cloned().unwrap_or_default();
    let runs = args.runs.max(2);
    let ws_runs = runs.clamp(2, 10);
    let first = config
        .engine_list()
        .into_iter()
        .next()
        .ok_or_else(|| anyhow::format_err!("no engine is configured"))?;
    let mut engines = vec![first];
    if let Some(address) = &args.engine {
        let tls = args.tls_dir.as_ref();
        engines.push(EngineConfig {
            name: Some(address.clone()),
            engine: address.clone(),
            tls_ca: tls.map(|d| d.join("ca.pem")),
            tls_cert: tls.map(|d| d.join("cert.pem")),
            tls_key: tls.map(|d| d.join("key.pem")),
            ssh_key: None,
        });
    }
    let dir = workspace_tree(args.files)?;
    let ws = Arc::new(Workspace::new(vec![dir.path().to_path_buf()])?);

    let mut rows = Vec::new();
    let mut notes = Vec::new();
    for engine in &engines {
        let name = engine.name.clone().unwrap_or_else(|| engine.engine.clone());
        let on = |c: &SandboxConfig| SandboxConfig {
            engine: None,
            engines: vec![engine.clone()],
            ..c.clone()
        };
        let row = |how: &str, times| Row {
            engine: name.clone(),
            how: how.to_owned(),
            times,
        };
        let cold = Sandbox::new(SandboxConfig {
            pool_size: 0,
            ..on(&config)
        });
        cold.image_for("python").await.map_err(anyhow::Error::msg)?;
        let local = cold.engine().await.map_err(anyhow::Error::msg)?.is_local();
        rows.push(row(
            "cold print(1) (new container)",
            timed(&cold, runs, None).await?,
        ));

        // Warm: a pool of one, refilled in the background between runs (as it is between a
        // user's calls); each run waits until the pool has its container again, untimed.
        let warm = Sandbox::new(SandboxConfig {
            pool_size: 1,
            ..on(&config)
        });
        let mut times = Vec::with_capacity(runs);
        for _ in 0..runs {
            warm.warm("python", None)
                .await
                .map_err(anyhow::Error::msg)?;
            times.extend(timed(&warm, 1, None).await?);
        }
        warm.shutdown().await;
        rows.push(row("warm print(1) (from the pool)", times));

        // A cold run that sees the workspace: mounted where the engine can (this machine),
        // and sent as an archive, which is how any remote engine gets it.
        let deliveries: &[WorkspaceDelivery] = if local {
            &[WorkspaceDelivery::Mount, WorkspaceDelivery::Archive]
        } else {
            &[WorkspaceDelivery::Archive]
        };
        for delivery in deliveries {
            let sb = Sandbox::new(SandboxConfig {
                pool_size: 0,
                workspace: *delivery,
                ..on(&config)
            });
            let mount = sb
                .workspace_mount(&ws, false)
                .await
                .map_err(anyhow::Error::msg)?;
            let how = match delivery {
                WorkspaceDelivery::Mount => format!("cold, {} files mounted", args.files),
                _ => format!("cold, {} files sent as an archive", args.files),
            };
            rows.push(row(&how, timed(&sb, ws_runs, Some(mount)).await?));
        }

        rows.push(row(
            "docker run --rm (CLI)",
            docker_cli(engine, &image, runs).await?,
        ));
    }

    // What shipping the workspace costs on this side: reading and packing it.
    let root = ws.resolve(".")?;
    let mut pack_times = Vec::with_capacity(ws_runs);
    let mut bytes = 0;
    for _ in 0..ws_runs {
        let started = Instant::now();
        let packed = ws.pack(
            &root,
            &cairn_workspace::Masks::default(),
            cairn_workspace::archive::PackMode::ReadOnly,
            u64::MAX,
        )?;
        pack_times.push(started.elapsed());
        bytes = packed.tar.len();
    }
    let (pack_p50, _, _) = stats(&mut pack_times);
    notes.push(format!(
        "packing the {}-file workspace: p50 {pack_p50:.1} ms, archive {:.1} MiB",
        args.files,
        bytes as f64 / (1024.0 * 1024.0)
    ));
    notes.push(
        "incremental shipping (only what changed since the session's last run) is not \
         implemented: every run sends the whole archive, so the archive row is also the \
         incremental case's cost today"
            .to_owned(),
    );

    println!(
        "sandbox runs of print(1), {runs} runs each ({ws_runs} with the workspace), image {image}"
    );
    println!();
    println!("| engine | how | p50 ms | p99 ms | mean ms |");
    println!("| --- | --- | ---: | ---: | ---: |");
    for mut r in rows {
        let (p50, p99, mean) = stats(&mut r.times);
        println!(
            "| {} | {} | {p50:.1} | {p99:.1} | {mean:.1} |",
            r.engine, r.how
        );
    }
    println!();
    for note in notes {
        println!("{note}");
    }
    Ok(ExitCode::SUCCESS)
}

/// `runs` cold or pooled runs of `print(1)` on `sb`, reading the workspace when given.
async fn timed(
    sb: &Sandbox,
    runs: usize,
    workspace: Option<cairn_sandbox::WorkspaceMount>,
) -> anyhow::Result<Vec<Duration>> {
    let python = runtime("python").ok_or_else(|| anyhow::format_err!("no python runtime"))?;
    let code = if workspace.is_some() {
        "import os\nprint(min(1, sum(len(f) for _, _, f in os.walk('/workspace'))))"
    } else {
        "print(1)"
    };
    let cancel = CancellationToken::new();
    let mut times = Vec::with_capacity(runs);
    for _ in 0..runs {
        let options = RunOptions {
            workspace: workspace.clone(),
            ..RunOptions::default()
        };
        let started = Instant::now();
        let report = sb
            .run_code(python, code, options, &cancel)
            .await
            .map_err(anyhow::Error::msg)?;
        times.push(started.elapsed());
        check(&report)?;
    }
    Ok(times)
}

/// The same image started by the docker command line on `engine`, with the same limits.
async fn docker_cli(
    engine: &EngineConfig,
    image: &str,
    runs: usize,
) -> anyhow::Result<Vec<Duration>> {
    let mut prefix: Vec<String> = vec!["-H".into(), engine.engine.clone()];
    if let (Some(ca), Some(cert), Some(key)) = (&engine.tls_ca, &engine.tls_cert, &engine.tls_key) {
        prefix.push("--tlsverify".into());
        for (flag, path) in [("--tlscacert", ca), ("--tlscert", cert), ("--tlskey", key)] {
            prefix.push(flag.into());
            prefix.push(path.display().to_string());
        }
    }
    let mut times = Vec::with_capacity(runs);
    for _ in 0..runs {
        let started = Instant::now();
        let out = tokio::process::Command::new("docker")
            .args(&prefix)
            .args([
                "run",
                "--rm",
                "--network",
                "none",
                "--cpus",
                "2",
                "--memory",
                "4g",
                "--memory-swap",
                "4g",
                "--pids-limit",
                "256",
                "--read-only",
                "--tmpfs",
                "/tmp",
                "--cap-drop",
                "ALL",
                "--security-opt",
                "no-new-privileges",
                "--user",
                "65534:65534",
                "--init",
                image,
                "python3",
                "-c",
                "print(1)",
            ])
            .output()
            .await?;
        times.push(started.elapsed());
        anyhow::ensure!(
            out.status.success() && out.stdout == b"1\n",
            "docker run failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    Ok(times)
}

/// A workspace of `files` small source files in directories of 100, readable by anyone (a root
/// cairn runs its sandboxes as `nobody` over a tree root owns).
fn workspace_tree(files: usize) -> anyhow::Result<tempfile::TempDir> {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::Builder::new()
        .prefix("cairn-bench-ws")
        .tempdir()?;
    let open = |p: &Path, mode| std::fs::set_permissions(p, std::fs::Permissions::from_mode(mode));
    open(dir.path(), 0o755)?;
    for i in 0..files {
        let sub = dir.path().join(format!("pkg{:03}", i / 100));
        if i % 100 == 0 {
            std::fs::create_dir(&sub)?;
            open(&sub, 0o755)?;
        }
        let file = sub.join(format!("mod{i}.py"));
        std::fs::write(
            &file,
            format!("def f{i}(x):\n    return x + {i}\n").repeat(4),
        )?;
        open(&file, 0o644)?;
    }
    Ok(dir)
}

fn check(report: &cairn_sandbox::RunReport) -> anyhow::Result<()> {
    anyhow::ensure!(
        report.ending == Ending::Exited(0) && report.stdout == "1\n",
        "the sandbox run failed: {report:?}"
    );
    Ok(())
}

fn stats(times: &mut [Duration]) -> (f64, f64, f64) {
    times.sort();
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    let at = |q: f64| {
        let i = ((times.len() as f64 - 1.0) * q).round() as usize;
        times.get(i).copied().map_or(0.0, ms)
    };
    let mean = times.iter().copied().map(ms).sum::<f64>() / times.len().max(1) as f64;
    (at(0.5), at(0.99), mean)
}
