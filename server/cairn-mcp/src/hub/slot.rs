//! One server's slot: what the server is (external, or built-in and served in-process) and
//! where its connection stands (state, peer, tools, the supervisor that owns it).

use std::sync::Arc;

use cairn_config::McpServerConfig;
use futures::future::BoxFuture;
use rmcp::RoleClient;
use rmcp::model::Tool;
use rmcp::service::Peer;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use super::types::{ServerState, ToolMeta, TransportKind};

/// Serves a built-in server over one end of an in-memory pipe.
pub(super) type ServeFn =
    Arc<dyn Fn(tokio::io::DuplexStream) -> BoxFuture<'static, ()> + Send + Sync>;
/// What a built-in server says about one of its tools.
pub(super) type MetaFn = Arc<dyn Fn(&Tool) -> ToolMeta + Send + Sync>;

/// What a server is: an entry of the configuration, or a built-in served in this process.
#[derive(Clone)]
pub(super) enum Kind {
    External(Box<McpServerConfig>),
    InProcess { serve: ServeFn, meta: MetaFn },
}

/// One server's place in the hub, owned by the supervisor of its `generation`.
pub(super) struct Slot {
    pub(super) kind: Kind,
    pub(super) transport: TransportKind,
    pub(super) state: ServerState,
    pub(super) peer: Option<Peer<RoleClient>>,
    pub(super) tools: Vec<Tool>,
    /// Identifies the supervisor that owns the slot; a replaced supervisor's late writes are
    /// ignored.
    pub(super) generation: u64,
    pub(super) stop: CancellationToken,
    pub(super) task: Option<JoinHandle<()>>,
}
