//! `scripted-model`: the scripted model server as a process, for manual runs and for tests
//! that start cairn outside Rust.
//!
//! Usage: `scripted-model --format openai|anthropic --script FILE.json [--port N]`.
//! Prints the base URL as one line on stdout, then serves until killed; logs go to stderr.

use std::io::Write;

use cairn_test_support::{Format, Reply, ScriptedModel};

const USAGE: &str = "usage: scripted-model --format openai|anthropic --script FILE.json [--port N]";

struct Args {
    format: Format,
    script: String,
    port: u16,
}

fn parse_args() -> Result<Args, String> {
    let mut format = None;
    let mut script = None;
    let mut port = 0;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        let mut value = || {
            args.next()
                .ok_or_else(|| format!("{arg} needs a value\n{USAGE}"))
        };
        match arg.as_str() {
            "--format" => {
                format = Some(match value()?.as_str() {
                    "openai" => Format::OpenAi,
                    "anthropic" => Format::Anthropic,
                    other => return Err(format!("unknown format `{other}`\n{USAGE}")),
                });
            }
            "--script" => script = Some(value()?),
            "--port" => {
                let raw = value()?;
                port = raw
                    .parse()
                    .map_err(|_| format!("invalid port `{raw}`\n{USAGE}"))?;
            }
            "-h" | "--help" => return Err(USAGE.to_owned()),
            other => return Err(format!("unknown argument `{other}`\n{USAGE}")),
        }
    }
    let format = format.ok_or_else(|| format!("--format is required\n{USAGE}"))?;
    let script = script.ok_or_else(|| format!("--script is required\n{USAGE}"))?;
    Ok(Args {
        format,
        script,
        port,
    })
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> std::process::ExitCode {
    match run().await {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("scripted-model: {message}");
            std::process::ExitCode::FAILURE
        }
    }
}

async fn run() -> Result<(), String> {
    let args = parse_args()?;
    let text = std::fs::read_to_string(&args.script)
        .map_err(|e| format!("cannot read {}: {e}", args.script))?;
    let replies: Vec<Reply> =
        serde_json::from_str(&text).map_err(|e| format!("invalid script {}: {e}", args.script))?;
    let options = cairn_test_support::Options {
        port: args.port,
        log_requests: true,
    };
    let model = ScriptedModel::start_with(args.format, vec![(String::new(), replies)], options)
        .await
        .map_err(|e| format!("cannot listen: {e}"))?;
    let mut stdout = std::io::stdout().lock();
    writeln!(stdout, "{}", model.base_url())
        .and_then(|()| stdout.flush())
        .map_err(|e| format!("cannot write to stdout: {e}"))?;
    drop(stdout);
    // Serve until killed; Ctrl-C ends it cleanly when run by hand.
    let _ = tokio::signal::ctrl_c().await;
    Ok(())
}
