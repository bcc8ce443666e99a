//! `workspace/executeCommand`: the `cairn.` commands, for clients that cannot send custom
//! requests (Helix) and for code actions.

use std::sync::{Arc, Mutex};

use cairn_agent::policy::ApprovalAnswer;
use serde_json::{Value, json};
use tower_lsp_server::jsonrpc::Result;
use tower_lsp_server::ls_types::{ExecuteCommandParams, MessageType, Range, Uri};

use super::invalid_params;
use crate::editor::PendingApprovals;
use crate::protocol::{CancelParams, ChatParams, RewindParams, commands};
use crate::runs;
use crate::state::State;

/// `{uri, range}` arguments of the selection commands.
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct SelectionArgs {
    uri: Uri,
    #[serde(default)]
    range: Option<Range>,
}

#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct ApproveToolArgs {
    server: String,
    tool: String,
}

#[derive(serde::Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct ApproveArgs {
    approval_id: String,
    decision: ApprovalAnswer,
}

#[derive(serde::Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct CancelArgs {
    #[serde(default)]
    run_id: Option<String>,
}

fn parse_args<T: serde::de::DeserializeOwned>(command: &str, args: &[Value]) -> Result<T> {
    let first = args.first().cloned().unwrap_or(Value::Null);
    serde_json::from_value(first).map_err(|e| invalid_params(format!("{command}: {e}")))
}

/// Runs the command; a failure is also shown with `window/showMessage` to clients that only
/// log it.
pub(crate) async fn handle(
    state: &Arc<State>,
    params: ExecuteCommandParams,
) -> Result<Option<Value>> {
    let command = params.command.clone();
    let result = run(state, params).await;
    if let Err(e) = &result
        && state
            .hides_command_errors
            .load(std::sync::atomic::Ordering::Relaxed)
    {
        let message = state.redact(format!("cairn: {command}: {}", e.message));
        state.client.show_message(MessageType::ERROR, message).await;
    }
    result
}

/// Answers a waiting approval; an unknown or already answered id is an error.
fn answer_approval(
    approvals: &Mutex<PendingApprovals>,
    approval_id: Option<&str>,
    decision: ApprovalAnswer,
) -> Result<bool> {
    let answered = approvals
        .lock()
        .map(|mut p| p.answer(approval_id, decision))
        .unwrap_or(false);
    if answered {
        Ok(true)
    } else {
        Err(invalid_params("no approval is waiting for that answer"))
    }
}

async fn run(state: &Arc<State>, params: ExecuteCommandParams) -> Result<Option<Value>> {
    let args = &params.arguments;
    let result = match params.command.as_str() {
        commands::CHAT => {
            let chat: ChatParams = parse_args(commands::CHAT, args)?;
            serde_json::to_value(super::chat::handle(state, chat).await?).ok()
        }
        commands::SEND => {
            let a: SelectionArgs = parse_args(commands::SEND, args)?;
            serde_json::to_value(runs::send_chat_document(state, a.uri).await?).ok()
        }
        commands::ASK | commands::EXPLAIN | commands::FIX => {
            let a: SelectionArgs = parse_args(&params.command, args)?;
            let started = runs::selection_command(state, &params.command, a.uri, a.range).await?;
            started.and_then(|r| serde_json::to_value(r).ok())
        }
        commands::CANCEL => {
            let a: CancelArgs = if args.is_empty() {
                CancelArgs { run_id: None }
            } else {
                parse_args(commands::CANCEL, args)?
            };
            match a.run_id {
                Some(run_id) => serde_json::to_value(
                    super::cancel::handle(&state.runs, CancelParams { run_id }).await?,
                )
                .ok(),
                None => {
                    state.cancel_all();
                    Some(json!({ "cancelled": true }))
                }
            }
        }
        commands::COMPACT => {
            let session_id: String = parse_args(commands::COMPACT, args)?;
            let result =
                super::compact::handle(state, crate::protocol::CompactParams { session_id })
                    .await?;
            let said = match &result {
                crate::protocol::CompactResult {
                    compacted: true,
                    turns: Some(turns),
                    tokens_before: Some(before),
                    tokens_after: Some(after),
                    ..
                } => format!(
                    "cairn: summarised {turns} older turn{}: {before} → {after} tokens",
                    if *turns == 1 { "" } else { "s" }
                ),
                r => format!(
                    "cairn: nothing compacted: {}",
                    r.reason.as_deref().unwrap_or("no reason given")
                ),
            };
            state.client.show_message(MessageType::INFO, said).await;
            serde_json::to_value(result).ok()
        }
        commands::REWIND => {
            let session_id: String =
                serde_json::from_value(args.first().cloned().unwrap_or_default())
                    .map_err(|e| invalid_params(format!("cairn.rewind: sessionId: {e}")))?;
            let turn: usize = serde_json::from_value(args.get(1).cloned().unwrap_or_default())
                .map_err(|e| invalid_params(format!("cairn.rewind: turn: {e}")))?;
            let params = RewindParams { session_id, turn };
            serde_json::to_value(super::rewind::rewind(state, params).await?).ok()
        }
        commands::MCP_STATUS => state
            .factory
            .mcp()
            .map(|h| state.redact_value(crate::mcp::status_json(&h))),
        commands::TRUST_WORKSPACE => {
            let Some(root) = state.roots().into_iter().next() else {
                return Err(invalid_params("no workspace folder to trust"));
            };
            let layers = state.layers.lock().map(|l| l.clone()).unwrap_or_default();
            let trusted = state
                .factory
                .trust_workspace(&state.config(), &layers, &root)
                .map_err(invalid_params)?;
            // Rebuilding applies the trust: the servers start.
            if let Ok(mut a) = state.agent.lock() {
                *a = None;
            }
            let _ = state.agent();
            Some(json!({ "trusted": trusted }))
        }
        commands::APPROVE_TOOL => {
            let a: ApproveToolArgs = parse_args(commands::APPROVE_TOOL, args)?;
            let handle = state
                .factory
                .mcp()
                .ok_or_else(|| invalid_params("no MCP hub is running"))?;
            handle
                .reviewer
                .approve(&a.server, &a.tool)
                .map_err(invalid_params)?;
            Some(json!({ "approved": true }))
        }
        commands::APPROVE => {
            let a: ApproveArgs = parse_args(commands::APPROVE, args)?;
            let answered = answer_approval(&state.approvals, Some(&a.approval_id), a.decision)?;
            Some(json!({ "answered": answered }))
        }
        commands::ALLOW_ONCE | commands::ALLOW_SESSION | commands::DENY => {
            let decision = match params.command.as_str() {
                commands::ALLOW_ONCE => ApprovalAnswer::AllowOnce,
                commands::ALLOW_SESSION => ApprovalAnswer::AllowSession,
                _ => ApprovalAnswer::Deny,
            };
            let answered = answer_approval(&state.approvals, None, decision)?;
            Some(json!({ "answered": answered }))
        }
        other => return Err(invalid_params(format!("unknown command `{other}`"))),
    };
    Ok(result)
}
