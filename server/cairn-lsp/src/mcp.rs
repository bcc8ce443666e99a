//! MCP servers as the editor sees them: `cairn/mcpStatus` notifications whenever a server's
//! state or the catalog changes, and `$/progress` while servers start.

use std::sync::Arc;
use std::time::Duration;

use cairn_mcp::ServerState;
use serde_json::{Value, json};
use tower_lsp_server::ls_types::ProgressToken;

use tower_lsp_server::Client;

use crate::factory::{AgentFactory, McpHandle};
use crate::protocol::{self, ElicitRequest, McpStatusNotification};
use crate::state::State;

/// The status of every server, what waits for trust, what could not start, and the tools
/// waiting for review.
pub(crate) fn status_json(handle: &McpHandle) -> Value {
    json!({
        "servers": handle.hub.status(),
        "waitingForTrust": handle.waiting_for_trust,
        "problems": handle
            .problems
            .iter()
            .map(|(server, message)| json!({ "server": server, "message": message }))
            .collect::<Vec<_>>(),
        "reviews": handle.reviewer.pending(),
    })
}

/// Sends `cairn/mcpStatus` on every change, and `$/progress` while servers start. Runs for the
/// life of the server.
pub(crate) fn watch(client: Client, factory: Arc<dyn AgentFactory>) {
    let Some(handle) = factory.mcp() else {
        return;
    };
    let mut events = handle.hub.subscribe();
    tokio::spawn(async move {
        let token = ProgressToken::String(format!("cairn-mcp-{}", uuid::Uuid::new_v4().simple()));
        let mut progress = None;
        loop {
            let Some(handle) = factory.mcp() else {
                return;
            };
            let statuses = handle.hub.status();
            let starting = statuses
                .iter()
                .filter(|s| matches!(s.state, ServerState::Starting))
                .count();
            match (&progress, starting) {
                (None, n) if n > 0 => {
                    if client
                        .create_work_done_progress(token.clone())
                        .await
                        .is_ok()
                    {
                        let title = "cairn: starting MCP servers";
                        let message = format!("{n} of {} starting", statuses.len());
                        progress = Some(
                            client
                                .progress(token.clone(), title)
                                .with_message(message)
                                .begin()
                                .await,
                        );
                    }
                }
                (Some(p), n) if n > 0 => {
                    p.report(format!("{n} of {} starting", statuses.len()))
                        .await
                }
                (Some(_), _) => {
                    if let Some(p) = progress.take() {
                        p.finish().await;
                    }
                }
                (None, _) => {}
            }
            client
                .send_notification::<McpStatusNotification>(crate::state::redact_value(
                    factory.as_ref(),
                    status_json(&handle),
                ))
                .await;
            // Several changes in a row make one notification.
            match events.recv().await {
                Err(tokio::sync::broadcast::error::RecvError::Closed) => return,
                _ => tokio::time::sleep(Duration::from_millis(50)).await,
            }
            while events.try_recv().is_ok() {}
        }
    });
}

/// Answers MCP servers' requests through the editor.
pub(crate) struct EditorDelegate {
    pub state: std::sync::Weak<State>,
}

fn choose(answer: Option<tower_lsp_server::ls_types::MessageActionItem>) -> Option<String> {
    answer.map(|a| a.title)
}

impl cairn_mcp::ClientDelegate for EditorDelegate {
    /// OAuth sign-in: the editor opens the authorization page in the user's browser
    /// (`window/showDocument` with `external`), after a message saying what it is for; an editor
    /// that cannot open it gets the URL in a message instead.
    fn open_authorization<'a>(
        &'a self,
        server: &'a str,
        url: &'a str,
    ) -> Option<futures::future::BoxFuture<'a, Result<(), String>>> {
        use tower_lsp_server::ls_types::{MessageType, ShowDocumentParams, Uri};
        Some(Box::pin(async move {
            let state = self.state.upgrade().ok_or("cairn is shutting down")?;
            let uri = <Uri as std::str::FromStr>::from_str(url)
                .map_err(|_| "the authorization URL is not a valid URI".to_string())?;
            state
                .client
                .show_message(
                    MessageType::INFO,
                    format!(
                        "cairn: MCP server `{server}` needs you to sign in; your browser opens \
                         its authorization page, which returns to cairn on 127.0.0.1"
                    ),
                )
                .await;
            let shown = state
                .client
                .show_document(ShowDocumentParams {
                    uri,
                    external: Some(true),
                    take_focus: Some(true),
                    selection: None,
                })
                .await;
            if !matches!(shown, Ok(true)) {
                state
                    .client
                    .show_message(
                        MessageType::WARNING,
                        format!(
                            "cairn: open this URL in a browser on this machine to sign in to MCP \
                             server `{server}`: {url}"
                        ),
                    )
                    .await;
            }
            Ok(())
        }))
    }

    fn roots(&self) -> Vec<(String, String)> {
        let Some(state) = self.state.upgrade() else {
            return Vec::new();
        };
        state
            .roots()
            .into_iter()
            .filter_map(|p| {
                let name = p
                    .file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_default();
                tower_lsp_server::ls_types::Uri::from_file_path(&p)
                    .map(|u| (u.as_str().to_string(), name))
            })
            .collect()
    }

    fn sample<'a>(
        &'a self,
        server: &'a str,
        request: cairn_mcp::SamplingRequest,
    ) -> futures::future::BoxFuture<'a, Result<(String, String), String>> {
        Box::pin(async move {
            let state = self.state.upgrade().ok_or("cairn is shutting down")?;
            // The user sees what the server wants to send to their model, and decides.
            let shown: String = request
                .messages
                .iter()
                .map(|(r, t)| format!("{r}: {t}\n"))
                .collect();
            let mut shown = shown;
            if shown.len() > 1500 {
                let mut end = 1500;
                while !shown.is_char_boundary(end) {
                    end -= 1;
                }
                shown.truncate(end);
                shown.push('…');
            }
            let message = state.redact(format!(
                "cairn: MCP server `{server}` asks to use your model with:\n{shown}"
            ));
            let actions =
                ["Allow", "Deny"].map(|t| tower_lsp_server::ls_types::MessageActionItem {
                    title: t.into(),
                    properties: Default::default(),
                });
            let answer = state
                .client
                .show_message_request(
                    tower_lsp_server::ls_types::MessageType::WARNING,
                    message,
                    Some(actions.to_vec()),
                )
                .await
                .ok()
                .flatten();
            if choose(answer).as_deref() != Some("Allow") {
                return Err("the user declined the sampling request".into());
            }
            let agent = state.agent()?;
            let messages = request
                .messages
                .into_iter()
                .map(|(role, text)| match role.as_str() {
                    "assistant" => cairn_agent::model::Message::Assistant {
                        text,
                        tool_calls: Vec::new(),
                    },
                    _ => cairn_agent::model::Message::User {
                        text,
                        images: Vec::new(),
                    },
                })
                .collect();
            let model_request = cairn_agent::model::ModelRequest {
                system: request.system.unwrap_or_default(),
                messages,
                tools: Vec::new(),
            };
            let mut stream = agent
                .model
                .stream(model_request)
                .await
                .map_err(|e| e.to_string())?;
            let mut text = String::new();
            use futures::StreamExt;
            while let Some(event) = stream.next().await {
                if let cairn_agent::model::ModelEvent::TextDelta(d) =
                    event.map_err(|e| e.to_string())?
                {
                    text.push_str(&d);
                }
            }
            Ok((agent.model.describe(), text))
        })
    }

    fn elicit<'a>(
        &'a self,
        server: &'a str,
        message: String,
        schema: Value,
    ) -> futures::future::BoxFuture<'a, cairn_mcp::Elicited> {
        Box::pin(async move {
            use cairn_mcp::Elicited;
            let Some(state) = self.state.upgrade() else {
                return Elicited::Cancel;
            };
            let form = state
                .extensions
                .lock()
                .map(|e| e.elicitation)
                .unwrap_or(false);
            if form {
                let params = protocol::ElicitParams {
                    server: server.to_string(),
                    message,
                    requested_schema: schema,
                };
                return match state.client.send_request::<ElicitRequest>(params).await {
                    Ok(r) if r.action == "accept" => {
                        Elicited::Accept(r.content.unwrap_or_else(|| json!({})))
                    }
                    Ok(r) if r.action == "decline" => Elicited::Decline,
                    _ => Elicited::Cancel,
                };
            }
            // Without a form the user can accept the schema's defaults, if they cover every
            // required field, or decline.
            let defaults = cairn_mcp::schema_defaults(&schema);
            let required: Vec<String> = schema
                .get("required")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(|v| v.as_str().map(str::to_string))
                .collect();
            let covered = required.iter().all(|r| defaults.get(r).is_some());
            let mut titles = vec!["Decline", "Cancel"];
            if covered {
                titles.insert(0, "Accept");
            }
            let shown = if covered {
                format!("\nAccepting sends: {defaults}")
            } else {
                String::new()
            };
            let text = state.redact(format!(
                "cairn: MCP server `{server}` asks: {message}{shown}"
            ));
            let actions: Vec<_> = titles
                .iter()
                .map(|t| tower_lsp_server::ls_types::MessageActionItem {
                    title: (*t).into(),
                    properties: Default::default(),
                })
                .collect();
            let answer = state
                .client
                .show_message_request(
                    tower_lsp_server::ls_types::MessageType::INFO,
                    text,
                    Some(actions),
                )
                .await
                .ok()
                .flatten();
            match choose(answer).as_deref() {
                Some("Accept") => Elicited::Accept(defaults),
                Some("Decline") => Elicited::Decline,
                _ => Elicited::Cancel,
            }
        })
    }
}
