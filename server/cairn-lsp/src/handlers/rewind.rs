//! `cairn/checkpoints` and `cairn/rewind` (and the `cairn.rewind` command): a session's turns
//! with the files each changed, and putting those files back (`cairn-workspace`'s `rewind`,
//! through the editor for open buffers).

use std::sync::Arc;

use cairn_agent::sessions::{SessionError, SessionStore, TurnSummary};
use cairn_workspace::Workspace;
use tower_lsp_server::jsonrpc::Result;

use super::{internal_error, invalid_params};
use crate::protocol::{
    CheckpointTurn, CheckpointsParams, CheckpointsResult, RewindParams, RewindProblem, RewindResult,
};
use crate::state::State;

/// The session's turns, in order; an unknown or invalid id is InvalidParams naming `sessionId`.
fn turns(state: &State, session_id: &str) -> Result<Vec<TurnSummary>> {
    let store = SessionStore::new(state.factory.sessions_dir(&state.config()));
    match store.turns(session_id) {
        Ok(turns) => Ok(turns),
        Err(e @ (SessionError::NotFound(_) | SessionError::InvalidId(_))) => {
            Err(invalid_params(format!("sessionId: {e}")))
        }
        Err(e) => Err(internal_error(e.to_string())),
    }
}

/// The scope the built-in tools write through, building the agent if no run did yet.
fn workspace(state: &State) -> Result<Arc<Workspace>> {
    state.agent().map_err(internal_error)?;
    state
        .factory
        .mcp()
        .and_then(|m| m.workspace)
        .ok_or_else(|| invalid_params("no workspace folder is open, so there is nothing to rewind"))
}

pub(crate) async fn checkpoints(
    state: &State,
    params: CheckpointsParams,
) -> Result<CheckpointsResult> {
    let turns = turns(state, &params.session_id)?;
    let ws = workspace(state)?;
    let session = params.session_id.clone();
    let mut files = cairn_workspace::off_thread(&ws, move |ws| ws.checkpoint_files(&session))
        .await
        .map_err(internal_error)?
        .map_err(|e| internal_error(e.to_string()))?;
    Ok(CheckpointsResult {
        turns: turns
            .into_iter()
            .map(|t| CheckpointTurn {
                files: files.remove(&t.run_id).unwrap_or_default(),
                turn: t.turn,
                run_id: t.run_id,
                message: t.message,
            })
            .collect(),
    })
}

pub(crate) async fn rewind(state: &State, params: RewindParams) -> Result<RewindResult> {
    let store = SessionStore::new(state.factory.sessions_dir(&state.config()));
    let runs = match store.runs_from(&params.session_id, params.turn) {
        Ok(runs) => runs,
        Err(e @ SessionError::NoTurn { .. }) => return Err(invalid_params(e.to_string())),
        Err(e @ (SessionError::NotFound(_) | SessionError::InvalidId(_))) => {
            return Err(invalid_params(format!("sessionId: {e}")));
        }
        Err(e) => return Err(internal_error(e.to_string())),
    };
    let ws = workspace(state)?;
    let report = cairn_workspace::rewind(&ws, &params.session_id, runs)
        .await
        .map_err(internal_error)?;
    let problems = |list: Vec<cairn_workspace::NotRestored>| {
        list.into_iter()
            .map(|p| RewindProblem {
                path: p.path,
                reason: p.reason,
            })
            .collect()
    };
    Ok(RewindResult {
        restored: report.restored,
        conflicts: problems(report.conflicts),
        failed: problems(report.failed),
    })
}
