//! `cairn/compact` (and the `cairn.compact` command): summarise a session's turns now, as the
//! message `/compact` does, and answer with what it came to.
//!
//! Unlike a chat run it answers when the summary is done: the editors show the figures. It
//! holds its handler slot only for the one model request, which never waits on the user (the
//! summary offers no tools), so it cannot block the server the way a run waiting on an
//! approval would.

use std::sync::Arc;

use cairn_agent::policy::{ApprovalAnswer, ApprovalRequest, Approver, SessionGrants};
use cairn_agent::sessions::{SessionError, SessionStore};
use cairn_agent::{Mode, RunInput};
use futures::future::BoxFuture;
use tokio_util::sync::CancellationToken;
use tower_lsp_server::jsonrpc::Result;

use super::{internal_error, invalid_params};
use crate::protocol::{CompactParams, CompactResult};
use crate::state::State;

/// A compaction calls no tool; were one asked about, the answer would be no.
struct NoTools;

impl Approver for NoTools {
    fn ask<'a>(&'a self, _: &'a ApprovalRequest) -> BoxFuture<'a, ApprovalAnswer> {
        Box::pin(async { ApprovalAnswer::Deny })
    }
}

pub(crate) async fn handle(state: &Arc<State>, params: CompactParams) -> Result<CompactResult> {
    let store = SessionStore::new(state.factory.sessions_dir(&state.config()));
    let history = match store.load(&params.session_id) {
        Ok(_) => store
            .messages(&params.session_id)
            .map_err(|e| internal_error(e.to_string()))?,
        Err(e @ (SessionError::NotFound(_) | SessionError::InvalidId(_))) => {
            return Err(invalid_params(format!("sessionId: {e}")));
        }
        Err(e) => return Err(internal_error(e.to_string())),
    };
    if history.is_empty() {
        return Ok(CompactResult {
            reason: Some("this session has no turns yet".into()),
            ..CompactResult::default()
        });
    }
    let agent = state.agent().map_err(internal_error)?;
    // The events (`compacted`, `done`) are the answer here; nobody else listens.
    let (events, _) = tokio::sync::mpsc::unbounded_channel();
    let run_id = uuid::Uuid::new_v4().to_string();
    let outcome = agent
        .run(RunInput {
            session_id: params.session_id.clone(),
            run_id: run_id.clone(),
            mode: Mode::Chat,
            history,
            message: cairn_agent::run::COMPACT_COMMAND.into(),
            approver: &NoTools,
            grants: SessionGrants::default(),
            events,
            cancel: CancellationToken::new(),
        })
        .await;
    if let Err(e) = &outcome.result {
        return Ok(CompactResult {
            reason: Some(state.redact(e.clone())),
            ..CompactResult::default()
        });
    }
    let Some(c) = outcome.compaction.clone() else {
        return Ok(CompactResult {
            reason: Some("there was nothing to summarise".into()),
            ..CompactResult::default()
        });
    };
    store
        .save_run(&params.session_id, &run_id, Mode::Chat, &outcome)
        .map_err(|e| internal_error(e.to_string()))?;
    Ok(CompactResult {
        compacted: true,
        turns: Some(c.turns),
        tokens_before: Some(c.tokens_before),
        tokens_after: Some(c.tokens_after),
        reason: None,
    })
}
