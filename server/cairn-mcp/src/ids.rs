//! Drops responses to requests cairn never sent.
//!
//! A confused or hostile server may answer ids nobody asked about; rmcp treats such an answer
//! during `initialize` as a failed handshake. Unknown-id responses are logged and skipped here,
//! so the real answer that follows is read.

use std::collections::HashSet;

use rmcp::RoleClient;
use rmcp::model::{JsonRpcMessage, RequestId};
use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;

/// Wraps a client transport.
pub(crate) struct KnownIds<T> {
    inner: T,
    pending: HashSet<RequestId>,
}

impl<T> KnownIds<T> {
    pub(crate) fn new(inner: T) -> Self {
        Self {
            inner,
            pending: HashSet::new(),
        }
    }
}

impl<T: Transport<RoleClient>> Transport<RoleClient> for KnownIds<T> {
    type Error = T::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleClient>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        if let JsonRpcMessage::Request(request) = &item {
            self.pending.insert(request.id.clone());
        }
        self.inner.send(item)
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleClient>> {
        loop {
            let message = self.inner.receive().await?;
            let id = match &message {
                JsonRpcMessage::Response(r) => Some(&r.id),
                JsonRpcMessage::Error(e) => e.id.as_ref(),
                _ => None,
            };
            match id {
                Some(id) if !self.pending.remove(id) => {
                    tracing::warn!(?id, "skipped a response to a request cairn never sent");
                }
                _ => return Some(message),
            }
        }
    }

    fn close(&mut self) -> impl Future<Output = Result<(), Self::Error>> + Send {
        self.inner.close()
    }
}
