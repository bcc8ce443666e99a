//! `cairn/chat`: validates, answers with the run and session ids, and leaves the run to a task.

use std::sync::Arc;

use tower_lsp_server::jsonrpc::Result;

use crate::protocol::{ChatParams, ChatResult};
use crate::runs::{self, Origin};
use crate::state::State;

pub(crate) async fn handle(state: &Arc<State>, params: ChatParams) -> Result<ChatResult> {
    runs::start(state, params, Origin::Client).await
}
