//! `cairn chat`: one turn in the terminal. The answer streams to stdout; tool activity goes to
//! stderr so the answer can be piped. `cairn chat --rewind TURN --session ID` puts back the files
//! a session's turns changed instead.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use cairn_agent::policy::SessionGrants;
use cairn_agent::sessions::SessionStore;
use cairn_agent::{Mode, RunEvent, RunInput};
use tokio_util::sync::CancellationToken;

use crate::compose::{self, Env};
use crate::terminal::TerminalApprover;

#[allow(clippy::print_stdout, clippy::print_stderr)]
pub async fn run(
    env: &Env,
    root: PathBuf,
    session: Option<String>,
    agent_mode: bool,
    yes: bool,
    json: bool,
    message: String,
) -> anyhow::Result<ExitCode> {
    let (config, mcp) = compose::terminal_setup(env, &root, true).await?;
    crate::local::show_on_terminal();
    let agent = compose::agent(&config, env, &mcp);
    // `/server:prompt key=value …` becomes the prompt's text, as in the editor.
    let message = match mcp.hub.expand_slash(&message).await {
        Ok(message) => message,
        Err(e) => {
            mcp.hub.shutdown().await;
            compose::shutdown_sandbox().await;
            anyhow::bail!("{e}");
        }
    };
    let store = SessionStore::new(compose::sessions_dir(&config, env));
    let session_id = session.unwrap_or_else(|| uuid::Uuid::new_v4().to_string());
    let history = store.messages(&session_id)?;
    let run_id = uuid::Uuid::new_v4().to_string();
    let mode = if agent_mode { Mode::Agent } else { Mode::Chat };

    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<RunEvent>();
    let printer = tokio::spawn(async move {
        let mut out = std::io::stdout();
        let mut failed = false;
        while let Some(event) = rx.recv().await {
            if json {
                if let Ok(line) = serde_json::to_string(&event) {
                    println!("{line}");
                }
                failed |= matches!(event, RunEvent::Error { .. });
                continue;
            }
            match event {
                RunEvent::Text { delta } => {
                    print!("{delta}");
                    let _ = out.flush();
                }
                RunEvent::ToolCall {
                    name, arguments, ..
                } => eprintln!("\n· {name} {arguments}"),
                RunEvent::ToolResult {
                    is_error, content, ..
                } => {
                    let first = content.lines().next().unwrap_or_default();
                    let more = content.lines().count().saturating_sub(1);
                    let tag = if is_error { "error" } else { "ok" };
                    eprintln!(
                        "  {tag}: {first}{}",
                        if more > 0 {
                            format!(" (+{more} lines)")
                        } else {
                            String::new()
                        }
                    );
                }
                RunEvent::Edit {
                    uri,
                    applied,
                    reason,
                    ..
                } => {
                    if applied {
                        eprintln!("  edited {uri}");
                    } else {
                        eprintln!("  edit of {uri} rejected: {}", reason.unwrap_or_default());
                    }
                }
                RunEvent::Approval { .. } => {}
                RunEvent::Done {
                    usage,
                    tool_calls,
                    stopped,
                } => {
                    println!();
                    if stopped == Some(cairn_agent::StopReason::Refused) {
                        eprintln!("cairn: the model refused to answer");
                    }
                    eprintln!(
                        "[{tool_calls} tool calls, {} tokens in, {} out]",
                        usage.input_tokens, usage.output_tokens
                    );
                }
                RunEvent::Error { message } => {
                    println!();
                    eprintln!("cairn: error: {message}");
                    failed = true;
                }
                other => show_aside(&other, ""),
            }
        }
        failed
    });

    let cancel = CancellationToken::new();
    let ctrl_c = cancel.clone();
    tokio::spawn(async move {
        if tokio::signal::ctrl_c().await.is_ok() {
            ctrl_c.cancel();
        }
    });
    let approver = TerminalApprover { yes };
    let outcome = agent
        .run(RunInput {
            session_id: session_id.clone(),
            run_id: run_id.clone(),
            mode,
            history,
            message,
            approver: &approver,
            grants: SessionGrants::default(),
            events: tx,
            cancel,
        })
        .await;
    let failed = printer.await.unwrap_or(true);

    store.save_run(&session_id, &run_id, mode, &outcome)?;
    mcp.hub.shutdown().await;
    compose::shutdown_sandbox().await;
    if !json {
        eprintln!("session {session_id} (continue with --session {session_id})");
    }
    Ok(if failed {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    })
}

/// Events beside the answer, on stderr: the plan, a sub-agent's work (indented under its task),
/// hooks and compaction.
#[allow(clippy::print_stderr)]
fn show_aside(event: &RunEvent, indent: &str) {
    use cairn_agent::events::{HookOutcome, StepState};
    match event {
        RunEvent::Plan { steps, .. } => {
            eprintln!("{indent}plan:");
            for step in steps {
                let mark = match step.state {
                    StepState::Done => "[x]",
                    StepState::InProgress => "[~]",
                    StepState::Pending => "[ ]",
                };
                eprintln!("{indent}  {mark} {}", step.title);
            }
        }
        RunEvent::SubAgent { event, .. } => {
            let inner = format!("{indent}  │ ");
            match event.as_ref() {
                RunEvent::Text { delta } if !delta.trim().is_empty() => {
                    for line in delta.lines().filter(|l| !l.trim().is_empty()) {
                        eprintln!("{inner}{line}");
                    }
                }
                RunEvent::ToolCall {
                    name, arguments, ..
                } => eprintln!("{inner}· {name} {arguments}"),
                RunEvent::ToolResult {
                    is_error, content, ..
                } => eprintln!(
                    "{inner}  {}: {}",
                    if *is_error { "error" } else { "ok" },
                    content.lines().next().unwrap_or_default()
                ),
                RunEvent::Error { message } => eprintln!("{inner}error: {message}"),
                other => show_aside(other, &inner),
            }
        }
        RunEvent::Hook {
            command,
            outcome,
            message,
            ..
        } => match outcome {
            HookOutcome::Allowed if message.is_empty() => {}
            HookOutcome::Failed => {
                eprintln!("{indent}cairn: warning: hook `{command}` failed: {message}")
            }
            HookOutcome::Denied => {
                eprintln!("{indent}  hook `{command}` denied the call: {message}")
            }
            HookOutcome::Asked => {
                eprintln!("{indent}  hook `{command}` asks for approval: {message}")
            }
            HookOutcome::Allowed | HookOutcome::Output => {
                eprintln!("{indent}  hook `{command}`: {message}")
            }
        },
        RunEvent::Compacted {
            turns,
            tokens_before,
            tokens_after,
            ..
        } => eprintln!(
            "{indent}cairn: summarised {turns} older turn{} to fit the context window ({tokens_before} → {tokens_after} tokens)",
            if *turns == 1 { "" } else { "s" }
        ),
        _ => {}
    }
}

/// `cairn chat --rewind TURN --session ID`: restores the files the session's turns from `turn`
/// on changed, through the same scope the tools write through, and prints what it restored and
/// what it could not; fails when a file was not restored.
#[allow(clippy::print_stdout)]
pub async fn rewind(
    env: &Env,
    root: PathBuf,
    session: &str,
    turn: usize,
) -> anyhow::Result<ExitCode> {
    let (config, mcp) = compose::terminal_setup(env, &root, false).await?;
    let store = SessionStore::new(compose::sessions_dir(&config, env));
    let result = async {
        let runs = store.runs_from(session, turn)?;
        let ws = mcp
            .workspace
            .clone()
            .ok_or_else(|| anyhow::anyhow!("no workspace folder, so there is nothing to rewind"))?;
        cairn_workspace::rewind(&ws, session, runs)
            .await
            .map_err(anyhow::Error::msg)
    }
    .await;
    mcp.hub.shutdown().await;
    compose::shutdown_sandbox().await;
    let report = result?;
    println!("{}", report.to_text());
    Ok(if report.complete() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}
