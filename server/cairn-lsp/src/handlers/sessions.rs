//! `cairn/sessions`: the list of sessions, or one session's transcript.

use std::path::PathBuf;

use cairn_agent::sessions::{SessionError, SessionStore};
use tower_lsp_server::jsonrpc::Result;

use super::{internal_error, invalid_params};
use crate::protocol::{SessionsParams, SessionsResult};

/// `dir` is where the transcripts are kept under the current configuration.
pub(crate) async fn handle(dir: PathBuf, params: Option<SessionsParams>) -> Result<SessionsResult> {
    let params = params.unwrap_or_default();
    let store = SessionStore::new(dir);
    match params.session_id {
        None => {
            let sessions = store.list().map_err(|e| internal_error(e.to_string()))?;
            Ok(SessionsResult::List { sessions })
        }
        Some(id) => match store.load(&id) {
            Ok(records) => Ok(SessionsResult::Transcript {
                session_id: id,
                records,
            }),
            Err(e @ (SessionError::NotFound(_) | SessionError::InvalidId(_))) => {
                Err(invalid_params(format!("sessionId: {e}")))
            }
            Err(e) => Err(internal_error(e.to_string())),
        },
    }
}
