//! `textDocument/codeAction`: the selection commands, `Send` in a chat document, and the answers
//! to a waiting approval (how Helix users answer one).

use std::sync::Mutex;

use serde_json::{Value, json};
use tower_lsp_server::jsonrpc::Result;
use tower_lsp_server::ls_types::{
    CodeAction, CodeActionOrCommand, CodeActionParams, CodeActionResponse, Command,
};

use crate::chatdoc;
use crate::editor::{PendingApprovals, canonical_path};
use crate::protocol::commands;

pub(crate) fn handle(
    approvals: &Mutex<PendingApprovals>,
    params: CodeActionParams,
) -> Result<Option<CodeActionResponse>> {
    let uri = params.text_document.uri;
    let range = params.range;
    let arg = json!({ "uri": uri, "range": range });
    let mut actions = Vec::new();
    let command = |title: &str, name: &str, args: Value| {
        CodeActionOrCommand::CodeAction(CodeAction {
            title: title.into(),
            command: Some(Command {
                title: title.into(),
                command: name.into(),
                arguments: Some(vec![args]),
            }),
            ..Default::default()
        })
    };
    // A waiting approval comes first: in Helix this is how the user answers it.
    let waiting = approvals.lock().ok().and_then(|p| {
        p.waiting
            .first()
            .map(|w| (w.approval_id.clone(), w.tool.clone()))
    });
    if let Some((approval_id, tool)) = waiting {
        for (title, decision) in [
            (format!("cairn: Allow once `{tool}`"), "allowOnce"),
            (
                format!("cairn: Allow `{tool}` for this session"),
                "allowSession",
            ),
            (format!("cairn: Deny `{tool}`"), "deny"),
        ] {
            let args = json!({ "approvalId": approval_id, "decision": decision });
            actions.push(command(&title, commands::APPROVE, args));
        }
    }
    if canonical_path(&uri).is_some_and(|p| chatdoc::is_chat_document(&p)) {
        actions.push(command("Send", commands::SEND, json!({ "uri": uri })));
    }
    actions.push(command("Ask cairn", commands::ASK, arg.clone()));
    actions.push(command("Explain", commands::EXPLAIN, arg.clone()));
    actions.push(command("Fix", commands::FIX, arg));
    Ok(Some(actions))
}
