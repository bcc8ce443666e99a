//! `run_tests`: the project's tests, run in a sandbox.

use cairn_toolkit::{CallContext, Category, Effect, JsonSchema, Paths, Tool};
use rmcp::model::{CallToolResult, ContentBlock};
use serde::Deserialize;

use super::{Code, outcome, report_result};
use crate::runtimes::{guess_test_command, shell_quote};

/// The `run_tests` tool.
pub struct RunTests;

/// Arguments of `run_tests`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// One argument passed to the test command (a test name or pattern).
    filter: Option<String>,
    /// Ask the user for network access for this run (default: no network).
    #[serde(default)]
    network: bool,
    /// Ask the user to mount the workspace writable (default: read-only at /workspace).
    #[serde(default)]
    workspace_write: bool,
}

impl Tool for RunTests {
    type Host = Code;
    type Args = Args;
    const NAME: &'static str = "run_tests";
    const TITLE: &'static str = "Run tests";
    const DESCRIPTION: &'static str = "Run the project's tests in a sandbox (the command from sandbox.test_command, else guessed: cargo test, npm test, go test, pytest, rake, make test) with the workspace read-only; use it after a change to check it.";
    const CATEGORY: Category = Category::Code;
    const EFFECT: Effect = Effect::Execute;
    const AGENT_ONLY: bool = false;
    const DESTRUCTIVE: bool = false;

    /// Only the names at the workspace root are read (to guess the command); the mount hides
    /// what the user protects (`Workspace::masks`).
    fn paths(_: &Args) -> Paths {
        Paths::metadata()
    }

    async fn call(host: &Code, args: Args, cx: CallContext) -> CallToolResult {
        outcome(run(host, args, &cx).await)
    }
}

async fn run(host: &Code, args: Args, cx: &CallContext) -> Result<CallToolResult, String> {
    let sb = &host.sandbox;
    let ws = host.open_workspace()?;
    let root = ws.resolve(".").map_err(|e| e.to_string())?;
    let (runtime_name, mut command) = match &sb.config().test_command {
        Some(c) => ("bash", c.clone()),
        None => {
            let names: Vec<String> = ws
                .list_dir(&root)
                .map_err(|e| e.to_string())?
                .into_iter()
                .map(|e| e.name)
                .collect();
            guess_test_command(&names).ok_or(
                "no test command: set sandbox.test_command in your config (no Cargo.toml, package.json, go.mod, pyproject.toml, Gemfile or Makefile at the root)",
            )?
        }
    };
    if let Some(f) = &args.filter {
        command.push(' ');
        command.push_str(&shell_quote(f));
    }
    let image = sb
        .image_for(runtime_name)
        .await
        .map_err(|e| e.to_string())?;
    let options = host
        .options(args.network, args.workspace_write, None)
        .await?;
    let run = sb.run_shell(&image, &command, options, &cx.cancel);
    let report = host
        .checkpointed(args.workspace_write, run)
        .await
        .map_err(|e| e.to_string())?;
    let mut result = report_result(&report, sb);
    result
        .content
        .insert(0, ContentBlock::text(format!("$ {command}")));
    Ok(result)
}
