//! Resources and prompts of the running servers, and one tool that lets the model read a
//! resource.
//!
//! Resources can be attached to a chat as context by the editor, or read by the model through
//! `read_resource`; prompts become slash commands. A server that offers neither is skipped.

use std::time::Duration;

use cairn_agent::tools::{CallContext, Effect, ToolHost, ToolInfo};
use futures::future::BoxFuture;
use rmcp::model::{
    CallToolResult, ContentBlock, GetPromptRequestParams, ReadResourceRequestParams, Tool,
};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::hub::Hub;

/// How long one listing or read may take.
const TIMEOUT: Duration = Duration::from_secs(10);
/// Resource text given to the model or a chat, at most.
const MAX_TEXT: usize = 256 * 1024;

/// A resource a server offers.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ServerResource {
    pub server: String,
    pub uri: String,
    pub name: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    /// A URI template (`uriTemplate` of resources/templates/list) rather than a resource.
    pub template: bool,
}

/// A prompt a server offers; the editor shows it as `/server:name`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ServerPrompt {
    pub server: String,
    pub name: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    pub arguments: Vec<Value>,
}

fn text_field(v: &Value, key: &str) -> Option<String> {
    v.get(key).and_then(Value::as_str).map(str::to_string)
}

impl Hub {
    /// Resources and resource templates of every running external server.
    pub async fn resources(&self) -> Vec<ServerResource> {
        let mut out = Vec::new();
        for (server, peer) in self.external_peers() {
            if let Ok(Ok(list)) = tokio::time::timeout(TIMEOUT, peer.list_all_resources()).await {
                for r in list {
                    let v = serde_json::to_value(&r).unwrap_or_default();
                    out.push(ServerResource {
                        server: server.clone(),
                        uri: text_field(&v, "uri").unwrap_or_default(),
                        name: text_field(&v, "name").unwrap_or_default(),
                        description: text_field(&v, "description"),
                        mime_type: text_field(&v, "mimeType"),
                        template: false,
                    });
                }
            }
            if let Ok(Ok(list)) =
                tokio::time::timeout(TIMEOUT, peer.list_all_resource_templates()).await
            {
                for t in list {
                    let v = serde_json::to_value(&t).unwrap_or_default();
                    out.push(ServerResource {
                        server: server.clone(),
                        uri: text_field(&v, "uriTemplate").unwrap_or_default(),
                        name: text_field(&v, "name").unwrap_or_default(),
                        description: text_field(&v, "description"),
                        mime_type: text_field(&v, "mimeType"),
                        template: true,
                    });
                }
            }
        }
        out
    }

    /// The text of a resource (binary parts are named, not included), capped.
    pub async fn read_resource(&self, server: &str, uri: &str) -> Result<String, String> {
        let peer = self
            .external_peers()
            .into_iter()
            .find(|(name, _)| name == server)
            .map(|(_, p)| p)
            .ok_or_else(|| format!("MCP server `{server}` is not running"))?;
        let result = tokio::time::timeout(
            TIMEOUT,
            peer.read_resource(ReadResourceRequestParams::new(uri)),
        )
        .await
        .map_err(|_| format!("MCP server `{server}` did not answer resources/read in time"))?
        .map_err(|e| format!("MCP server `{server}`: {e}"))?;
        let v = serde_json::to_value(&result).unwrap_or_default();
        let mut text = String::new();
        for part in v
            .get("contents")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            match (text_field(part, "text"), part.get("blob")) {
                (Some(t), _) => text.push_str(&t),
                (None, Some(_)) => {
                    let mime = text_field(part, "mimeType").unwrap_or_else(|| "binary".into());
                    text.push_str(&format!("[{mime} content omitted]"));
                }
                _ => {}
            }
            text.push('\n');
        }
        if text.len() > MAX_TEXT {
            let mut end = MAX_TEXT;
            while !text.is_char_boundary(end) {
                end -= 1;
            }
            text.truncate(end);
            text.push_str("\n[resource cut]");
        }
        Ok(text)
    }

    /// Prompts of every running external server.
    pub async fn prompts(&self) -> Vec<ServerPrompt> {
        let mut out = Vec::new();
        for (server, peer) in self.external_peers() {
            if let Ok(Ok(list)) = tokio::time::timeout(TIMEOUT, peer.list_all_prompts()).await {
                for p in list {
                    let v = serde_json::to_value(&p).unwrap_or_default();
                    out.push(ServerPrompt {
                        server: server.clone(),
                        name: text_field(&v, "name").unwrap_or_default(),
                        description: text_field(&v, "description"),
                        arguments: v
                            .get("arguments")
                            .and_then(Value::as_array)
                            .cloned()
                            .unwrap_or_default(),
                    });
                }
            }
        }
        out
    }

    /// A prompt's messages as text, for the chat: `user:`/`assistant:` lines when it has both.
    pub async fn prompt_text(
        &self,
        server: &str,
        name: &str,
        arguments: serde_json::Map<String, Value>,
    ) -> Result<String, String> {
        let peer = self
            .external_peers()
            .into_iter()
            .find(|(n, _)| n == server)
            .map(|(_, p)| p)
            .ok_or_else(|| format!("MCP server `{server}` is not running"))?;
        let mut params = GetPromptRequestParams::new(name);
        params.arguments = Some(arguments);
        let result = tokio::time::timeout(TIMEOUT, peer.get_prompt(params))
            .await
            .map_err(|_| format!("MCP server `{server}` did not answer prompts/get in time"))?
            .map_err(|e| format!("MCP server `{server}`: {e}"))?;
        let v = serde_json::to_value(&result).unwrap_or_default();
        let messages: Vec<(String, String)> = v
            .get("messages")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .map(|m| {
                let role = text_field(m, "role").unwrap_or_else(|| "user".into());
                let content = &m["content"];
                let text = text_field(content, "text")
                    .or_else(|| content.get("resource").and_then(|r| text_field(r, "text")))
                    .unwrap_or_else(|| "[non-text content omitted]".into());
                (role, text)
            })
            .collect();
        if messages.iter().all(|(role, _)| role == "user") {
            return Ok(messages
                .into_iter()
                .map(|(_, t)| t)
                .collect::<Vec<_>>()
                .join("\n\n"));
        }
        Ok(messages
            .into_iter()
            .map(|(r, t)| format!("{r}: {t}"))
            .collect::<Vec<_>>()
            .join("\n\n"))
    }
}

/// The model's one tool for resources.
pub struct ResourceTool {
    pub hub: Hub,
}

/// Its name.
pub const READ_RESOURCE: &str = "read_resource";

impl ToolHost for ResourceTool {
    fn list(&self) -> Vec<ToolInfo> {
        let schema = json!({
            "type": "object",
            "properties": {
                "server": {"type": "string", "description": "The MCP server that offers the resource"},
                "uri": {"type": "string", "description": "The resource URI; leave it out to list the server's resources"}
            },
            "required": ["server"],
            "additionalProperties": false
        });
        let tool = Tool::new(
            READ_RESOURCE,
            "Read a resource (a document, record or file) that an MCP server offers, by server and URI; without a URI it lists the server's resources.",
            schema.as_object().cloned().unwrap_or_default(),
        );
        vec![ToolInfo {
            tool,
            effect: Effect::Read,
            category: "mcp".into(),
            agent_only: false,
            origin: None,
        }]
    }

    fn call(
        &self,
        name: &str,
        arguments: serde_json::Map<String, Value>,
        _ctx: CallContext,
    ) -> BoxFuture<'_, CallToolResult> {
        let name = name.to_string();
        Box::pin(async move {
            if name != READ_RESOURCE {
                return CallToolResult::error(vec![ContentBlock::text(format!(
                    "unknown tool `{name}`"
                ))]);
            }
            let server = arguments
                .get("server")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string();
            if server.is_empty() {
                return CallToolResult::error(vec![ContentBlock::text("`server` is required")]);
            }
            if let Some(extra) = arguments.keys().find(|k| *k != "server" && *k != "uri") {
                return CallToolResult::error(vec![ContentBlock::text(format!(
                    "unknown argument `{extra}`"
                ))]);
            }
            match arguments.get("uri").and_then(Value::as_str) {
                Some(uri) => match self.hub.read_resource(&server, uri).await {
                    Ok(text) => CallToolResult::success(vec![ContentBlock::text(text)]),
                    Err(e) => CallToolResult::error(vec![ContentBlock::text(e)]),
                },
                None => {
                    let listed: Vec<String> = self
                        .hub
                        .resources()
                        .await
                        .into_iter()
                        .filter(|r| r.server == server)
                        .map(|r| {
                            format!(
                                "{}{} — {}",
                                r.uri,
                                if r.template { " (template)" } else { "" },
                                r.name
                            )
                        })
                        .collect();
                    if listed.is_empty() {
                        CallToolResult::success(vec![ContentBlock::text(format!(
                            "`{server}` offers no resources"
                        ))])
                    } else {
                        CallToolResult::success(vec![ContentBlock::text(listed.join("\n"))])
                    }
                }
            }
        })
    }
}
