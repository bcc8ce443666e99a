//! `cairn`: the language server (`cairn lsp`) and its terminal companions.
//!
//! Architecture invariant: in `lsp` mode only the LSP transport writes to stdout; logs go to
//! stderr or the configured file. The terminal commands print their results to stdout.

mod acp;
mod bench;
mod chat;
mod compose;
mod conformance;
mod doctor;
mod eval;
mod hooks;
mod local;
mod mcp_cmd;
mod oauth;
mod redaction;
mod rules;
mod secrets;
mod select_cmd;
mod selection;
mod terminal;
mod tools_cmd;
mod vault_cmd;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

#[derive(Parser)]
#[command(
    name = "cairn",
    version,
    about = "An AI agent in the editor, as a language server"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Serve the Language Server Protocol on stdin/stdout (what editors start).
    Lsp {
        /// Accepted for editors that pass it; stdio is the only transport.
        #[arg(long)]
        stdio: bool,
    },
    /// Serve the Agent Client Protocol on stdin/stdout (what ACP clients such as Zed start).
    Acp,
    /// Run one turn in the terminal, streaming the answer.
    Chat {
        /// Workspace folder the tools may use (default: the current directory).
        #[arg(short = 'w', long = "workspace")]
        workspace: Option<PathBuf>,
        /// Continue a session.
        #[arg(long)]
        session: Option<String>,
        /// Let the agent edit files.
        #[arg(long)]
        agent: bool,
        /// Accept what policy would ask; `deny` stays denied.
        #[arg(long)]
        yes: bool,
        /// Print run events as JSON lines instead of text.
        #[arg(long)]
        json: bool,
        /// Instead of a turn: restore the files the session's turns from TURN on changed to
        /// their state before TURN (needs --session); exits non-zero when a file was not restored.
        #[arg(
            long,
            value_name = "TURN",
            requires = "session",
            conflicts_with = "message"
        )]
        rewind: Option<usize>,
        #[arg(required_unless_present = "rewind")]
        message: Option<String>,
    },
    /// List or call tools.
    Tools {
        #[command(subcommand)]
        command: ToolsCommand,
    },
    /// MCP servers: status, import, trust, review.
    Mcp {
        #[command(subcommand)]
        command: McpCommand,
    },
    /// Measurements: `cairn bench mcp` times tool calls through the MCP hub.
    Bench {
        #[command(subcommand)]
        command: bench::BenchCommand,
    },
    /// Show which tools a request would be offered: core tools, stage 1's ranking over the
    /// catalog, the model's filter, and the tokens of the chosen definitions.
    Select {
        /// Workspace folder (default: the current directory).
        #[arg(short = 'w', long = "workspace")]
        workspace: Option<PathBuf>,
        /// Choose as agent mode does (editing tools included).
        #[arg(long)]
        agent: bool,
        /// Skip the model's filter (stage 2).
        #[arg(long)]
        no_filter: bool,
        /// Print the choice as JSON.
        #[arg(long)]
        json: bool,
        query: String,
    },
    /// The credential vault: `set NAME --host H` (value from stdin), `list`, `rm NAME`.
    Vault {
        #[command(subcommand)]
        command: VaultCommand,
    },
    /// The configuration's JSON Schema: `cairn config schema` (`--vscode`: the VS Code
    /// extension's `contributes.configuration`, generated from it).
    Config {
        #[command(subcommand)]
        command: ConfigCommand,
    },
    /// Run the agent task suite against the configured provider and print, per category,
    /// the success rate, tool calls, model requests, tokens and wall time.
    Eval {
        /// The suite's directory (default: `bench/eval` under the current directory).
        #[arg(long)]
        suite: Option<PathBuf>,
        /// Only this category (`file-read`, `debugging`, `data-analysis`, `refactor`,
        /// `feature`); repeatable.
        #[arg(long = "category")]
        categories: Vec<String>,
        /// Only this task id; repeatable.
        #[arg(long = "task")]
        tasks: Vec<String>,
        /// Print one JSON object (rows per category and every task's result).
        #[arg(long)]
        json: bool,
        /// Keep each task's copy and transcript (their paths are in the results).
        #[arg(long)]
        keep: bool,
        /// Seconds one task's turn may take before it is cancelled.
        #[arg(long, default_value_t = 900)]
        timeout: u64,
        /// Run against this OpenAI-compatible server (`http://127.0.0.1:8080/v1`: llama.cpp's
        /// server, vLLM, Ollama) instead of the configured provider.
        #[arg(long, value_name = "URL")]
        provider_url: Option<String>,
        /// The model to ask for (`provider.model`), with `--provider-url` or without.
        #[arg(long, value_name = "NAME")]
        model: Option<String>,
        /// Also write the report as an HTML page: the table, success by category against the
        /// targets, every failed task with its transcript folded.
        #[arg(long, value_name = "FILE")]
        html: Option<PathBuf>,
    },
    /// Check configuration, the model provider, and the session store.
    Doctor {
        #[arg(short = 'w', long = "workspace")]
        workspace: Option<PathBuf>,
    },
}

#[derive(Subcommand)]
enum ConfigCommand {
    /// Print the JSON Schema of the user configuration (`config.toml`).
    Schema {
        /// Print the VS Code settings (`contributes.configuration`) generated from it instead.
        #[arg(long)]
        vscode: bool,
    },
}

#[derive(Subcommand)]
enum VaultCommand {
    /// Store a secret, read from stdin (never from the command line), bound to the hosts it
    /// may be sent to (`api.github.com`, `*.example.com`).
    Set {
        name: String,
        #[arg(long = "host", required = true)]
        hosts: Vec<String>,
    },
    /// Names and hosts of the stored secrets; never values.
    List,
    /// Remove a secret.
    Rm { name: String },
}

#[derive(Subcommand)]
enum McpCommand {
    /// The state of every configured server, and what waits for trust or review.
    Status {
        #[arg(short = 'w', long = "workspace")]
        workspace: Option<PathBuf>,
        #[arg(long)]
        json: bool,
    },
    /// Add the servers of a Claude Desktop, Cursor, Claude Code or VS Code MCP file to your
    /// config (or, with -w, to that workspace's `.cairn/config.toml`).
    Import {
        file: PathBuf,
        #[arg(short = 'w', long = "workspace")]
        workspace: Option<PathBuf>,
    },
    /// Let the MCP servers this workspace declares start, as they are now.
    Trust {
        #[arg(short = 'w', long = "workspace")]
        workspace: Option<PathBuf>,
    },
    /// Tools disabled because they changed or look poisoned; `--approve SERVER TOOL` accepts one.
    Review {
        #[arg(short = 'w', long = "workspace")]
        workspace: Option<PathBuf>,
        #[arg(long, num_args = 2, value_names = ["SERVER", "TOOL"])]
        approve: Option<Vec<String>>,
    },
    /// The client the MCP conformance suite launches: connects to URL through the hub, lists
    /// and calls its tools (`MCP_CONFORMANCE_SCENARIO` names the scenario).
    #[command(hide = true)]
    ConformanceClient { url: String },
}

#[derive(Subcommand)]
enum ToolsCommand {
    /// The tool catalog: each tool's category, effect and policy decision.
    List {
        #[arg(short = 'w', long = "workspace")]
        workspace: Option<PathBuf>,
        #[arg(long)]
        json: bool,
        /// The number of built-in tools per category, next to the catalog's target.
        #[arg(long)]
        by_category: bool,
    },
    /// Call one tool through the same policy and guards as the agent; prints the MCP
    /// `CallToolResult` and exits 1 when it is an error.
    Call {
        name: String,
        /// Arguments as a JSON object.
        #[arg(long, default_value = "{}")]
        args: String,
        #[arg(short = 'w', long = "workspace")]
        workspace: Option<PathBuf>,
        #[arg(long)]
        json: bool,
        #[arg(long)]
        yes: bool,
    },
}

fn init_logging(lsp: bool, env: &compose::Env) {
    let layers = compose::load_layers(env, None).ok();
    let config = layers.and_then(|l| l.resolve().ok()).unwrap_or_default();
    let default = if lsp { "info" } else { "warn" };
    let filter = env
        .get("CAIRN_LOG")
        .map(str::to_string)
        .or(config.log.level.clone())
        .unwrap_or_else(|| default.into());
    let filter = tracing_subscriber::EnvFilter::try_new(&filter)
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(default));
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_ansi(false);
    let file = config.log.file.as_ref().and_then(|p| {
        std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(p)
            .ok()
    });
    // Every line passes the redactor: vault values and credential patterns never reach a log.
    let redactor = secrets::log_redactor(env);
    match file {
        Some(f) => builder
            .with_writer(secrets::RedactingWriter::new(
                std::sync::Mutex::new(f),
                redactor,
            ))
            .init(),
        None => builder
            .with_writer(secrets::RedactingWriter::new(std::io::stderr, redactor))
            .init(),
    }
}

fn workspace_root(dir: Option<PathBuf>) -> anyhow::Result<PathBuf> {
    let dir = match dir {
        Some(d) => d,
        None => std::env::current_dir()?,
    };
    std::fs::canonicalize(&dir).map_err(|e| anyhow::format_err!("workspace {}: {e}", dir.display()))
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let env = compose::Env::from_process();
    init_logging(
        matches!(cli.command, Command::Lsp { .. } | Command::Acp),
        &env,
    );
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            tracing::error!("cannot start the runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    let result = runtime.block_on(async move {
        match cli.command {
            Command::Lsp { .. } => {
                let layers = compose::load_layers(&env, None).unwrap_or_else(|e| {
                    tracing::error!("configuration: {e}");
                    cairn_config::Layers::default()
                });
                let test_faults = env.get("CAIRN_TEST_FAULTS") == Some("1");
                let factory = std::sync::Arc::new(compose::Factory {
                    env,
                    mcp: std::sync::Mutex::default(),
                });
                cairn_lsp::serve(cairn_lsp::ServeOptions {
                    layers,
                    factory,
                    test_faults,
                })
                .await;
                // Python sessions and warm containers end with the server.
                let _ = tokio::time::timeout(
                    std::time::Duration::from_secs(10),
                    compose::shutdown_sandbox(),
                )
                .await;
                Ok(ExitCode::SUCCESS)
            }
            Command::Acp => {
                let workspaces = std::sync::Arc::new(acp::Workspaces::new(env));
                let served = cairn_acp::serve(workspaces.clone()).await;
                workspaces.shutdown().await;
                served?;
                Ok(ExitCode::SUCCESS)
            }
            Command::Chat {
                workspace,
                session,
                agent,
                yes,
                json,
                rewind,
                message,
            } => {
                let root = workspace_root(workspace)?;
                match (rewind, session) {
                    (Some(turn), Some(session)) => chat::rewind(&env, root, &session, turn).await,
                    (_, session) => {
                        let message = message.unwrap_or_default();
                        chat::run(&env, root, session, agent, yes, json, message).await
                    }
                }
            }
            Command::Tools {
                command:
                    ToolsCommand::List {
                        workspace,
                        json,
                        by_category,
                    },
            } => tools_cmd::list(&env, workspace_root(workspace)?, json, by_category).await,
            Command::Select {
                workspace,
                agent,
                no_filter,
                json,
                query,
            } => {
                let request = select_cmd::SelectRequest {
                    root: workspace_root(workspace)?,
                    query,
                    agent_mode: agent,
                    no_filter,
                    json,
                };
                select_cmd::select(&env, request).await
            }
            Command::Mcp { command } => match command {
                McpCommand::Status { workspace, json } => {
                    mcp_cmd::status(&env, workspace_root(workspace)?, json).await
                }
                McpCommand::Import { file, workspace } => mcp_cmd::import(
                    &env,
                    &file,
                    workspace.map(|w| workspace_root(Some(w))).transpose()?,
                ),
                McpCommand::Trust { workspace } => mcp_cmd::trust(&env, workspace_root(workspace)?),
                McpCommand::Review { workspace, approve } => {
                    let approve = approve.and_then(|v| match v.as_slice() {
                        [server, tool] => Some((server.clone(), tool.clone())),
                        _ => None,
                    });
                    mcp_cmd::review(&env, workspace_root(workspace)?, approve).await
                }
                McpCommand::ConformanceClient { url } => conformance::run(&env, url).await,
            },
            Command::Bench { command } => bench::run(&env, command).await,
            Command::Tools {
                command:
                    ToolsCommand::Call {
                        name,
                        args,
                        workspace,
                        json,
                        yes,
                    },
            } => tools_cmd::call(&env, workspace_root(workspace)?, &name, &args, json, yes).await,
            Command::Vault { command } => match command {
                VaultCommand::Set { name, hosts } => vault_cmd::set(&env, &name, hosts),
                VaultCommand::List => vault_cmd::list(&env),
                VaultCommand::Rm { name } => vault_cmd::rm(&env, &name),
            },
            Command::Config {
                command: ConfigCommand::Schema { vscode },
            } => print_schema(vscode),
            Command::Eval {
                suite,
                categories,
                tasks,
                json,
                keep,
                timeout,
                provider_url,
                model,
                html,
            } => {
                let args = eval::EvalArgs {
                    suite,
                    categories,
                    tasks,
                    json,
                    keep,
                    timeout: std::time::Duration::from_secs(timeout),
                    html,
                };
                // The flags are configuration layered over the environment's, as
                // CAIRN_PROVIDER__* and CAIRN_MODEL would set them.
                let mut env = env.clone();
                if let Some(url) = provider_url {
                    env.0.insert("CAIRN_PROVIDER__KIND".into(), "openai".into());
                    env.0.insert("CAIRN_PROVIDER__BASE_URL".into(), url);
                }
                if let Some(model) = model {
                    // CAIRN_MODEL is the variable that wins over provider.model.
                    env.0.insert("CAIRN_MODEL".into(), model);
                }
                eval::run(&env, args).await
            }
            Command::Doctor { workspace } => {
                doctor::run(
                    &env,
                    workspace.map(|w| workspace_root(Some(w))).transpose()?,
                )
                .await
            }
        }
    });
    // Runs may hold tasks that wait on a network or a terminal; the process ends now.
    runtime.shutdown_timeout(std::time::Duration::from_millis(100));
    match result {
        Ok(code) => code,
        Err(e) => {
            eprintln_error(&e);
            ExitCode::FAILURE
        }
    }
}

/// `cairn config schema [--vscode]`: pretty JSON on stdout.
fn print_schema(vscode: bool) -> anyhow::Result<ExitCode> {
    let value = if vscode {
        cairn_config::vscode_configuration()
    } else {
        cairn_config::json_schema()
    };
    use std::io::Write as _;
    let mut stdout = std::io::stdout().lock();
    match writeln!(stdout, "{}", serde_json::to_string_pretty(&value)?) {
        // `| head` closed the pipe: not an error of ours.
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => Err(e.into()),
        _ => Ok(ExitCode::SUCCESS),
    }
}

#[allow(clippy::print_stderr)]
fn eprintln_error(e: &anyhow::Error) {
    eprintln!("cairn: {e:#}");
}
