//! `cairn/cancel`: cancels one run in flight.

use tower_lsp_server::jsonrpc::Result;

use crate::protocol::{CancelParams, CancelResult};
use crate::state::Runs;

pub(crate) async fn handle(runs: &Runs, params: CancelParams) -> Result<CancelResult> {
    let found = runs
        .lock()
        .ok()
        .and_then(|runs| runs.get(&params.run_id).map(|r| r.cancel.clone()));
    if let Some(token) = &found {
        token.cancel();
    }
    Ok(CancelResult {
        cancelled: found.is_some(),
    })
}
