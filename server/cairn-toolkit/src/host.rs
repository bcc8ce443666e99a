//! The [`Host`] trait: the state a tool set's tools share.

use std::sync::Arc;

use cairn_workspace::Workspace;
use futures::future::BoxFuture;
use rmcp::model::CallToolResult;

/// The state a set's tools share.
pub trait Host: Send + Sync + 'static {
    /// The workspace the paths tools declare are checked against; `None` for a set with no
    /// workspace, where a call that declares paths is refused.
    fn workspace(&self) -> Option<&Arc<Workspace>>;

    /// Runs `call`, a call of one of the set's tools that changes things
    /// ([`Effect::Write`](cairn_agent::tools::Effect::Write)), and may add to its result: the
    /// file tools add the editor's diagnostics of the files it edited. By default the call as it
    /// is.
    fn around_write<'a>(
        &'a self,
        call: BoxFuture<'a, CallToolResult>,
    ) -> BoxFuture<'a, CallToolResult> {
        call
    }
}
