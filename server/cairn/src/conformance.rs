//! `cairn mcp conformance-client URL`: the client entry point that the official MCP conformance
//! suite (npm `@modelcontextprotocol/conformance`, client mode) launches with a server URL.
//!
//! It goes through cairn's hub exactly as the agent does: one `[mcp.servers.conformance]` entry
//! over streamable HTTP, the hub's supervision and catalog, and `ToolHost::call`. Whatever the
//! scenario (`MCP_CONFORMANCE_SCENARIO`), it does the one thing every client scenario checks:
//! connect, list the tools, call each listed tool with arguments that fit its schema, and close.
//! The suite's servers check the rest (the handshake, SSE reconnection, elicitation answers).
//! Nobody is at the terminal, so elicitations are accepted with the schema's defaults (SEP-1034),
//! sampling is refused and the root list is empty.
//!
//! OAuth goes through the hub's own flow too. The browser is headless: the authorization URL is
//! fetched without following redirects and the `Location` delivered to cairn's loopback
//! listener, which is what the suite's authorization servers expect. What a real user would
//! configure comes from the suite's `MCP_CONFORMANCE_CONTEXT` (a pre-registered client id and
//! secret, a private key for `private_key_jwt`, or an identity provider's token endpoint and ID
//! token for cross-app access), and the Client ID Metadata Document URL is
//! the one the suite's `auth/basic-cimd` expects. Tokens stay in memory and are never printed.

use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use cairn_agent::tools::{CallContext, ToolHost};
use cairn_config::{McpConfig, McpOAuthConfig, McpServerConfig, McpTransport, OAuthGrant};
use cairn_mcp::{
    ClientDelegate, Elicited, Hub, HubOptions, OAuthOptions, SamplingRequest, ServerState,
};
use futures::future::BoxFuture;
use serde_json::{Map, Value, json};
use tokio_util::sync::CancellationToken;

use crate::compose::Env;

/// The hub's name for the server under test; its tools are `conformance__TOOL`.
const SERVER: &str = "conformance";

/// The client id metadata document URL the suite's `auth/basic-cimd` checks for.
const CLIENT_METADATA_URL: &str = "https://conformance-test.local/client-metadata.json";

/// The OAuth settings a user would write for the scenario, from the suite's context.
fn oauth_settings(scenario: &str, context: Option<&str>) -> McpOAuthConfig {
    let context: Value = context
        .and_then(|c| serde_json::from_str(c).ok())
        .unwrap_or(Value::Null);
    let text = |k: &str| context.get(k).and_then(Value::as_str).map(str::to_string);
    let grant = if scenario.starts_with("auth/client-credentials") {
        OAuthGrant::ClientCredentials
    } else if scenario.starts_with("auth/cross-app-access") {
        OAuthGrant::IdentityAssertion
    } else {
        OAuthGrant::AuthorizationCode
    };
    McpOAuthConfig {
        client_id: text("client_id"),
        client_secret: text("client_secret"),
        client_metadata_url: Some(CLIENT_METADATA_URL.to_string()),
        grant,
        private_key: text("private_key_pem"),
        idp_token_endpoint: text("idp_token_endpoint"),
        idp_client_id: text("idp_client_id"),
        id_token: text("idp_id_token"),
        ..McpOAuthConfig::default()
    }
}

/// `cairn mcp conformance-client URL`. Exit status 0 when every step worked; otherwise the
/// error goes to stderr (through `main`) and the status is 1.
pub async fn run(env: &Env, url: String) -> anyhow::Result<ExitCode> {
    let scenario = env
        .get("MCP_CONFORMANCE_SCENARIO")
        .unwrap_or("unnamed")
        .to_string();
    let mut servers = std::collections::BTreeMap::new();
    servers.insert(
        SERVER.to_string(),
        McpServerConfig {
            url: Some(url.clone()),
            transport: Some(McpTransport::Http),
            oauth: Some(oauth_settings(
                &scenario,
                env.get("MCP_CONFORMANCE_CONTEXT"),
            )),
            ..McpServerConfig::default()
        },
    );
    let config = McpConfig {
        servers,
        // The suite gives a client 30 s per scenario; a server that is not up after 10 s will
        // not come up, and the suite's verdict is worth more than ours.
        handshake_timeout_secs: 10,
        call_timeout_secs: 20,
        // One attempt: a retried handshake would show up as a second client in the suite's log.
        max_restarts: 0,
        ..McpConfig::default()
    };
    let options = HubOptions {
        oauth: OAuthOptions {
            client_name: "cairn conformance client".to_string(),
            callback_timeout: Duration::from_secs(15),
            ..OAuthOptions::default()
        },
        ..HubOptions::default()
    };
    let hub = Hub::new(config, options);
    hub.set_delegate(Arc::new(Unattended));
    let result = exercise(&hub, &scenario).await;
    hub.shutdown().await;
    result.map(|()| ExitCode::SUCCESS)
}

/// Connect, list, call every tool; the first failure ends the scenario.
async fn exercise(hub: &Hub, scenario: &str) -> anyhow::Result<()> {
    hub.settled(Duration::from_secs(15)).await;
    let state = hub
        .status()
        .into_iter()
        .find(|s| s.name == SERVER)
        .map(|s| s.state);
    match state {
        Some(ServerState::Running { .. }) => {}
        Some(ServerState::Starting) => {
            anyhow::bail!("scenario {scenario}: the server did not finish connecting in time")
        }
        Some(ServerState::Restarting { reason, .. } | ServerState::Failed { reason }) => {
            anyhow::bail!("scenario {scenario}: cannot connect: {reason}")
        }
        Some(ServerState::Disabled) | None => {
            anyhow::bail!("scenario {scenario}: the hub did not start the server")
        }
    }
    // rmcp opens the standalone GET stream of a streamable-HTTP session on its own, right after
    // `initialize`. The sse-retry scenario's server takes any GET as the reconnection it waits
    // for, so a GET that arrives after our `tools/call` (it does when the machine is busy, as
    // when the suite starts every scenario at once) is mistaken for an early reconnect. Giving
    // the session a moment first keeps the scenario measuring what it means to.
    tokio::time::sleep(Duration::from_millis(500)).await;
    let prefix = format!("{SERVER}__");
    let tools: Vec<_> = hub
        .list()
        .into_iter()
        .filter(|t| t.tool.name.starts_with(&prefix))
        .collect();
    for info in tools {
        let name = info.tool.name.to_string();
        let arguments = arguments_for(&info.tool.input_schema);
        let ctx = CallContext {
            session_id: String::new(),
            run_id: "conformance".into(),
            call_id: name.clone(),
            cancel: CancellationToken::new(),
        };
        let result = hub.call(&name, arguments, ctx).await;
        if result.is_error == Some(true) {
            let text: Vec<String> = result
                .content
                .iter()
                .filter_map(|c| c.as_text().map(|t| t.text.clone()))
                .collect();
            anyhow::bail!(
                "scenario {scenario}: tool `{name}` answered an error: {}",
                text.join(" ")
            );
        }
    }
    Ok(())
}

/// Arguments that satisfy a tool's input schema: every required property, with a value of its
/// type (its default or first enum value when it has one). The suite's tools check types, not
/// values.
fn arguments_for(schema: &Map<String, Value>) -> Map<String, Value> {
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let properties = schema.get("properties").and_then(Value::as_object);
    let mut out = Map::new();
    for name in required {
        let property = properties
            .and_then(|p| p.get(name))
            .cloned()
            .unwrap_or(Value::Null);
        out.insert(name.to_string(), sample(&property));
    }
    out
}

fn sample(schema: &Value) -> Value {
    if let Some(value) = schema.get("default").or_else(|| schema.get("const")) {
        return value.clone();
    }
    if let Some(first) = schema
        .get("enum")
        .and_then(Value::as_array)
        .and_then(|e| e.first())
    {
        return first.clone();
    }
    // `"type": ["string", "null"]` takes its first non-null type.
    let ty = match schema.get("type") {
        Some(Value::String(t)) => t.as_str(),
        Some(Value::Array(types)) => types
            .iter()
            .filter_map(Value::as_str)
            .find(|t| *t != "null")
            .unwrap_or("null"),
        _ => "string",
    };
    match ty {
        "number" | "integer" => json!(1),
        "boolean" => json!(true),
        "array" => json!([]),
        "object" => Value::Object(schema.as_object().map(arguments_for).unwrap_or_default()),
        "null" => Value::Null,
        _ => json!("cairn"),
    }
}

/// The delegate of a client with no user: what a form would hold if the user pressed "accept"
/// without typing anything.
struct Unattended;

impl ClientDelegate for Unattended {
    fn roots(&self) -> Vec<(String, String)> {
        Vec::new()
    }

    fn sample<'a>(
        &'a self,
        _server: &'a str,
        _request: SamplingRequest,
    ) -> BoxFuture<'a, Result<(String, String), String>> {
        Box::pin(async { Err("the conformance client has no model to sample".to_string()) })
    }

    fn elicit<'a>(
        &'a self,
        _server: &'a str,
        _message: String,
        schema: Value,
    ) -> BoxFuture<'a, Elicited> {
        Box::pin(async move { Elicited::Accept(cairn_mcp::schema_defaults(&schema)) })
    }

    fn open_authorization<'a>(
        &'a self,
        _server: &'a str,
        url: &'a str,
    ) -> Option<BoxFuture<'a, Result<(), String>>> {
        Some(Box::pin(cairn_mcp::oauth::headless_authorize(url)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(schema: Value, expected: Value) {
        let schema = schema.as_object().cloned().unwrap_or_default();
        assert_eq!(Value::Object(arguments_for(&schema)), expected);
    }

    #[test]
    fn arguments_fit_the_schema() {
        check(
            json!({"type": "object", "properties": {
                "a": {"type": "number"}, "b": {"type": "number"}}, "required": ["a", "b"]}),
            json!({"a": 1, "b": 1}),
        );
        check(
            json!({"type": "object", "properties": {
                "mode": {"type": "string", "enum": ["fast", "slow"]},
                "n": {"type": "integer", "default": 7},
                "tag": {"type": ["null", "string"]},
                "opt": {"type": "string"},
                "inner": {"type": "object", "properties": {"x": {"type": "boolean"}},
                          "required": ["x"]}},
              "required": ["mode", "n", "tag", "inner"]}),
            json!({"mode": "fast", "n": 7, "tag": "cairn", "inner": {"x": true}}),
        );
        check(json!({"type": "object"}), json!({}));
    }
}
