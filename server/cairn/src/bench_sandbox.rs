//! `cairn bench sandbox`: how long `print(1)` takes in a Python sandbox, cold (a container made
//! for the run) and warm (taken from the pool), next to plain `docker run --rm` of the same
//! image. Figures are printed, never asserted.

use std::process::ExitCode;
use std::time::{Duration, Instant};

use cairn_sandbox::runtimes::runtime;
use cairn_sandbox::{Ending, RunOptions, Sandbox};
use tokio_util::sync::CancellationToken;

use crate::compose::{self, Env};

#[allow(clippy::print_stdout)]
pub async fn sandbox(env: &Env, runs: usize, image: Option<String>) -> anyhow::Result<ExitCode> {
    let layers = compose::load_layers(env, None)?;
    let mut config = layers.resolve()?.sandbox;
    if let Some(image) = image {
        config.images.insert("python".into(), image);
    }
    let image = config.images.get("python").cloned().unwrap_or_default();
    let python = runtime("python").ok_or_else(|| anyhow::format_err!("no python runtime"))?;
    let runs = runs.max(2);
    let cancel = CancellationToken::new();

    // Cold: no pool, every run creates, starts and removes its container.
    let cold = Sandbox::new(cairn_config::SandboxConfig {
        pool_size: 0,
        ..config.clone()
    });
    cold.image_for("python").await.map_err(anyhow::Error::msg)?;
    let mut cold_times = Vec::with_capacity(runs);
    for _ in 0..runs {
        let started = Instant::now();
        let report = cold
            .run_code(python, "print(1)", RunOptions::default(), &cancel)
            .await
            .map_err(anyhow::Error::msg)?;
        cold_times.push(started.elapsed());
        check(&report)?;
    }

    // Warm: a pool of one, refilled in the background between runs (as it is between a user's
    // calls); each run waits until the pool has its container again, outside the timing.
    let warm = Sandbox::new(cairn_config::SandboxConfig {
        pool_size: 1,
        ..config.clone()
    });
    let mut warm_times = Vec::with_capacity(runs);
    for _ in 0..runs {
        warm.warm("python", None)
            .await
            .map_err(anyhow::Error::msg)?;
        let started = Instant::now();
        let report = warm
            .run_code(python, "print(1)", RunOptions::default(), &cancel)
            .await
            .map_err(anyhow::Error::msg)?;
        warm_times.push(started.elapsed());
        check(&report)?;
    }
    warm.shutdown().await;

    // The same image started by the docker command line, with the same limits.
    let mut docker_times = Vec::with_capacity(runs);
    for _ in 0..runs {
        let started = Instant::now();
        let out = tokio::process::Command::new("docker")
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
                &image,
                "python3",
                "-c",
                "print(1)",
            ])
            .output()
            .await?;
        docker_times.push(started.elapsed());
        anyhow::ensure!(
            out.status.success() && out.stdout == b"1\n",
            "docker run failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }

    println!("sandbox start and run of print(1), {runs} runs each, image {image}");
    println!();
    println!("| how | p50 ms | p99 ms | mean ms |");
    println!("| --- | ---: | ---: | ---: |");
    for (name, times) in [
        ("cairn, cold (new container)", &mut cold_times),
        ("cairn, warm (from the pool)", &mut warm_times),
        ("docker run --rm (CLI)", &mut docker_times),
    ] {
        let (p50, p99, mean) = stats(times);
        println!("| {name} | {p50:.1} | {p99:.1} | {mean:.1} |");
    }
    Ok(ExitCode::SUCCESS)
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
