//! The client side of every connection (rmcp's `ClientHandler`): how cairn introduces itself,
//! and its answers to the server's requests: roots, sampling and elicitation (through the
//! delegate), and a refresh of the tool list when the server says it changed.

use std::sync::{Arc, Weak};
use std::time::Duration;

use rmcp::model::{ClientCapabilities, Implementation, InitializeRequestParams};
use rmcp::service::NotificationContext;
use rmcp::{ClientHandler, RoleClient};

use super::catalog::accept_tools;
use super::shared::{Shared, emit_state, lock, rebuild_catalog, with_slot};
use super::types::{ServerState, TransportKind};

/// The client side of every connection: it identifies cairn and refreshes the tool list when
/// the server says it changed.
#[derive(Clone)]
pub(super) struct HubClient {
    pub(super) shared: Weak<Shared>,
    pub(super) server: String,
    pub(super) generation: u64,
}

impl HubClient {
    fn delegate(&self) -> Option<Arc<dyn crate::delegate::ClientDelegate>> {
        let shared = self.shared.upgrade()?;

        shared.delegate.read().ok()?.clone()
    }
}

// Roots and sampling are deprecated by SEP-2577 (a later protocol revision); servers of the
// versions in use today still rely on them.
#[allow(deprecated)]
impl ClientHandler for HubClient {
    fn get_info(&self) -> InitializeRequestParams {
        // Offered always: without a delegate the answers are an empty root list, a refused
        // sampling request and a declined elicitation, which servers handle.
        let capabilities = ClientCapabilities::builder()
            .enable_roots()
            .enable_roots_list_changed()
            .enable_sampling()
            .enable_elicitation()
            .build();
        // The newest revision (2026-07-28) drops the initialize handshake; servers of today
        // speak the last one that has it.
        InitializeRequestParams::new(
            capabilities,
            Implementation::new("cairn", env!("CARGO_PKG_VERSION")),
        )
        .with_protocol_version(rmcp::model::ProtocolVersion::LATEST_WITH_INITIALIZE)
    }

    async fn list_roots(
        &self,
        _context: rmcp::service::RequestContext<RoleClient>,
    ) -> Result<rmcp::model::ListRootsResult, rmcp::ErrorData> {
        let roots = self
            .delegate()
            .map(|d| d.roots())
            .unwrap_or_default()
            .into_iter()
            .map(|(uri, name)| {
                let mut root = rmcp::model::Root::new(uri);
                root.name = Some(name);
                root
            })
            .collect();
        Ok(rmcp::model::ListRootsResult::new(roots))
    }

    async fn create_message(
        &self,
        params: rmcp::model::CreateMessageRequestParams,
        _context: rmcp::service::RequestContext<RoleClient>,
    ) -> Result<rmcp::model::CreateMessageResult, rmcp::ErrorData> {
        let Some(delegate) = self.delegate() else {
            return Err(rmcp::ErrorData::invalid_request(
                "cairn has no user to ask for sampling here",
                None,
            ));
        };
        let messages = params
            .messages
            .iter()
            .map(|m| {
                let role = match m.role {
                    rmcp::model::Role::User => "user",
                    rmcp::model::Role::Assistant => "assistant",
                };
                let text: Vec<String> = m
                    .content
                    .clone()
                    .into_vec()
                    .iter()
                    .map(|c| {
                        c.as_text().map_or_else(
                            || "[non-text content omitted]".to_string(),
                            |t| t.text.clone(),
                        )
                    })
                    .collect();
                (role.to_string(), text.join("\n"))
            })
            .collect();
        let request = crate::delegate::SamplingRequest {
            system: params.system_prompt.clone(),
            messages,
            max_tokens: params.max_tokens,
        };
        match delegate.sample(&self.server, request).await {
            Ok((model, text)) => {
                let mut result = rmcp::model::CreateMessageResult::new(
                    rmcp::model::SamplingMessage::assistant_text(text),
                    model,
                );
                result.stop_reason = Some("endTurn".to_string());
                Ok(result)
            }
            Err(why) => Err(rmcp::ErrorData::invalid_request(why, None)),
        }
    }

    async fn create_elicitation(
        &self,
        request: rmcp::model::ElicitRequestParams,
        _context: rmcp::service::RequestContext<RoleClient>,
    ) -> Result<rmcp::model::ElicitResult, rmcp::ErrorData> {
        use rmcp::model::{ElicitResult, ElicitationAction};
        let value = serde_json::to_value(&request).unwrap_or_default();
        let message = value
            .get("message")
            .and_then(|m| m.as_str())
            .unwrap_or_default()
            .to_string();
        let schema = value.get("requestedSchema").cloned().unwrap_or_default();
        let answer = match self.delegate() {
            Some(d) => d.elicit(&self.server, message, schema).await,
            None => crate::delegate::Elicited::Decline,
        };
        let (action, content) = match answer {
            crate::delegate::Elicited::Accept(content) => {
                (ElicitationAction::Accept, Some(content))
            }
            crate::delegate::Elicited::Decline => (ElicitationAction::Decline, None),
            crate::delegate::Elicited::Cancel => (ElicitationAction::Cancel, None),
        };
        let mut result = ElicitResult::new(action);
        result.content = content;
        Ok(result)
    }

    fn on_tool_list_changed(
        &self,
        context: NotificationContext<RoleClient>,
    ) -> impl Future<Output = ()> + Send + '_ {
        let this = self.clone();
        // The refresh is a request on the same connection; it runs as its own task so the
        // connection's loop, which delivers this notification, stays free to read the answer.
        tokio::spawn(async move {
            let Some(shared) = this.shared.upgrade() else {
                return;
            };
            let timeout = Duration::from_secs(lock(&shared.config).handshake_timeout_secs.max(1));
            match tokio::time::timeout(timeout, context.peer.list_all_tools()).await {
                Ok(Ok(tools)) => {
                    let tools = accept_tools(&this.server, tools);
                    let count = tools.len();
                    let mut transport = TransportKind::Stdio;
                    let mut running = false;
                    let owned = with_slot(&shared, &this.server, this.generation, |slot| {
                        if slot.peer.is_some() {
                            slot.tools = tools;
                            slot.state = ServerState::Running { tools: count };
                            transport = slot.transport;
                            running = true;
                        }
                    });
                    if owned && running {
                        rebuild_catalog(&shared);
                        emit_state(
                            &shared,
                            &this.server,
                            transport,
                            ServerState::Running { tools: count },
                        );
                    }
                }
                Ok(Err(e)) => {
                    tracing::warn!(server = %this.server, "refreshing tools failed: {e}")
                }
                Err(_) => tracing::warn!(server = %this.server, "refreshing tools timed out"),
            }
        });
        std::future::ready(())
    }
}
