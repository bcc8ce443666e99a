//! The hub as the agent's [`ToolHost`]: a call by public name goes to the server and tool that
//! carry it, if the name still belongs to the tool the caller decided for, within the server's
//! time limits, and is cancelled on the server when the run is. Every failure is an error
//! result naming the server and the tool.

use std::time::Duration;

use cairn_agent::tools::{CallContext, ToolHost, ToolInfo, ToolOrigin};
use futures::future::BoxFuture;
use rmcp::model::{
    CallToolRequest, CallToolRequestParams, CallToolResult, CancelledNotification,
    CancelledNotificationParam, ClientRequest, ContentBlock, ServerResult,
};
use rmcp::service::{PeerRequestOptions, ServiceError};

use super::Hub;
use super::shared::lock;
use super::slot::Kind;
use super::types::{ServerState, describe};
use crate::error::McpError;
use crate::meta::CallMeta;

impl Hub {
    async fn call_inner(
        &self,
        name: &str,
        expected: Option<&ToolOrigin>,
        arguments: serde_json::Map<String, serde_json::Value>,
        ctx: CallContext,
    ) -> Result<CallToolResult, (String, McpError)> {
        let (server, original) = {
            let catalog = self
                .shared
                .catalog
                .read()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            if let Some(collision) = catalog.collisions.get(name) {
                return Err((
                    String::new(),
                    McpError::NameCollision(collision.to_string()),
                ));
            }
            let Some(entry) = catalog
                .by_name
                .get(name)
                .and_then(|i| catalog.entries.get(*i))
            else {
                return Err((String::new(), McpError::UnknownTool(name.to_owned())));
            };
            // The caller decided (policy, approval, grant) for one server's tool; if the name
            // now belongs to another (the configuration changed in between), nothing runs.
            if let Some(expected) = expected
                && (expected.server != entry.server || expected.tool != entry.original)
            {
                return Err((
                    String::new(),
                    McpError::ToolMoved {
                        name: name.to_owned(),
                        decided_for: format!(
                            "tool `{}` of server `{}`",
                            expected.tool, expected.server
                        ),
                    },
                ));
            }
            (entry.server.clone(), entry.original.clone())
        };
        if lock(&self.shared.disabled_tools).contains(name) {
            return Err((server, McpError::ToolDisabled(name.to_owned())));
        }
        let (peer, timeout, max_total, in_process) = {
            let servers = lock(&self.shared.servers);
            let config = lock(&self.shared.config);
            let Some(slot) = servers.get(&server) else {
                return Err((server, McpError::NotRunning("removed".to_owned())));
            };
            let Some(peer) = slot.peer.clone() else {
                return Err((server.clone(), McpError::NotRunning(describe(&slot.state))));
            };
            let secs = match &slot.kind {
                Kind::External(cfg) => cfg.call_timeout_secs.unwrap_or(config.call_timeout_secs),
                Kind::InProcess { .. } => config.call_timeout_secs,
            };
            let timeout = Duration::from_secs(secs.max(1));
            let max_total = Duration::from_secs(config.max_call_timeout_secs).max(timeout);
            let in_process = matches!(slot.kind, Kind::InProcess { .. });
            (peer, timeout, max_total, in_process)
        };
        let mut options = PeerRequestOptions::with_timeout(timeout)
            .reset_timeout_on_progress()
            .with_max_total_timeout(max_total);
        options.meta = None;
        let mut params = CallToolRequestParams::new(original).with_arguments(arguments);
        if in_process {
            // Built-in tools learn which chat session, run and call they serve; external
            // servers never see these ids.
            params.meta = Some(CallMeta::of(&ctx).to_meta());
        }
        let request = ClientRequest::CallToolRequest(CallToolRequest::new(params));
        let fail = |e| (server.clone(), e);
        let handle = peer
            .send_request_with_option(request, options)
            .await
            .map_err(|e| fail(service_error(e, timeout)))?;
        let id = handle.id.clone();
        // rmcp enforces both timeouts; this outer bound only guarantees "never a hang" should a
        // response path ever be lost.
        let guard = max_total + Duration::from_secs(5);
        tokio::select! {
            result = tokio::time::timeout(guard, handle.await_response()) => match result {
                Ok(Ok(ServerResult::CallToolResult(mut r))) => {
                    // Only built-in tools speak to the agent through `_meta` (edits, protected
                    // paths, usage); an external server's claims are dropped.
                    if !in_process && let Some(meta) = r.meta.as_mut() {
                        meta.retain(|key, _| !cairn_agent::tools::is_reserved_meta_key(key));
                    }
                    Ok(r)
                }
                Ok(Ok(_)) => Err(fail(McpError::Protocol(
                    "the server answered tools/call with something other than a tool result"
                        .to_owned(),
                ))),
                Ok(Err(e)) => match service_error(e, timeout) {
                    McpError::Crashed(None) => Err(fail(McpError::Crashed(self.crash_reason(&server).await))),
                    other => Err(fail(other)),
                },
                Err(_) => Err(fail(McpError::CallTimeout(guard))),
            },
            _ = ctx.cancel.cancelled() => {
                let note = CancelledNotification::new(CancelledNotificationParam::new(
                    Some(id),
                    Some("cancelled by the user".to_owned()),
                ));
                let _ = tokio::time::timeout(
                    Duration::from_secs(1),
                    peer.send_notification(note.into()),
                )
                .await;
                Err(fail(McpError::Cancelled))
            }
        }
    }
}

impl Hub {
    /// Why a server's connection just ended, as the supervisor sees it: it notices the end a
    /// moment after the call does, so this waits for it briefly.
    async fn crash_reason(&self, server: &str) -> Option<String> {
        for _ in 0..50 {
            let state = lock(&self.shared.servers)
                .get(server)
                .map(|slot| slot.state.clone());
            match state {
                Some(ServerState::Restarting { reason, .. } | ServerState::Failed { reason }) => {
                    return Some(reason);
                }
                None => return None,
                _ => tokio::time::sleep(Duration::from_millis(10)).await,
            }
        }
        None
    }
}

fn service_error(e: ServiceError, timeout: Duration) -> McpError {
    match e {
        ServiceError::Timeout { timeout: t } => McpError::CallTimeout(t.max(timeout)),
        ServiceError::TransportClosed | ServiceError::TransportSend(_) => McpError::Crashed(None),
        ServiceError::McpError(data) => McpError::Rpc(data.message.to_string()),
        ServiceError::Cancelled { .. } => McpError::Cancelled,
        other => McpError::Protocol(other.to_string()),
    }
}

fn error_result(text: String) -> CallToolResult {
    CallToolResult::error(vec![ContentBlock::text(text)])
}

impl ToolHost for Hub {
    fn list(&self) -> Vec<ToolInfo> {
        let disabled = lock(&self.shared.disabled_tools).clone();
        let catalog = self
            .shared
            .catalog
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        catalog
            .entries
            .iter()
            .filter(|e| !disabled.contains(e.info.tool.name.as_ref()))
            .map(|e| e.info.clone())
            .collect()
    }

    fn call(
        &self,
        name: &str,
        arguments: serde_json::Map<String, serde_json::Value>,
        ctx: CallContext,
    ) -> BoxFuture<'_, CallToolResult> {
        self.call_as(name, None, arguments, ctx)
    }

    fn call_tool(
        &self,
        info: &ToolInfo,
        arguments: serde_json::Map<String, serde_json::Value>,
        ctx: CallContext,
    ) -> BoxFuture<'_, CallToolResult> {
        self.call_as(info.tool.name.as_ref(), info.origin.clone(), arguments, ctx)
    }

    fn unavailable(&self, name: &str) -> Option<String> {
        self.shared
            .catalog
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .collisions
            .get(name)
            .map(|c| McpError::NameCollision(c.to_string()).to_string())
    }
}

impl Hub {
    fn call_as(
        &self,
        name: &str,
        expected: Option<ToolOrigin>,
        arguments: serde_json::Map<String, serde_json::Value>,
        ctx: CallContext,
    ) -> BoxFuture<'_, CallToolResult> {
        let name = name.to_owned();
        Box::pin(async move {
            match self
                .call_inner(&name, expected.as_ref(), arguments, ctx)
                .await
            {
                Ok(result) => result,
                Err((server, e)) => {
                    let text = if server.is_empty() {
                        format!("{e}")
                    } else {
                        format!("MCP server `{server}`: tool `{name}`: {e}")
                    };
                    error_result(text)
                }
            }
        })
    }
}
