//! `api_json_rpc`: call a JSON-RPC 2.0 method over HTTP and return its result or error object.

use std::collections::BTreeMap;

use cairn_toolkit::{CallContext, Category, Effect, JsonSchema, Paths, Tool};
use rmcp::model::CallToolResult;
use serde::Deserialize;
use serde_json::{Map, Value, json};

use crate::api::request::{ApiAuth, Outgoing, body_of, header_args, status_block};
use crate::api::{Api, answer};
use cairn_web::Method;

/// The `api_json_rpc` tool.
pub struct ApiJsonRpc;

/// Arguments of `api_json_rpc`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// An http or https URL.
    url: String,
    /// The JSON-RPC method.
    method: String,
    /// Positional (array) or named (object) parameters.
    params: Option<Value>,
    /// The request id (default 1).
    id: Option<Value>,
    /// Request headers, sent as written (nothing in them is expanded).
    #[serde(default)]
    headers: BTreeMap<String, String>,
    auth: Option<ApiAuth>,
}

impl Tool for ApiJsonRpc {
    type Host = Api;
    type Args = Args;
    const NAME: &'static str = "api_json_rpc";
    const TITLE: &'static str = "JSON-RPC call";
    const DESCRIPTION: &'static str = "Call a JSON-RPC 2.0 method over HTTP and return its result, or its error object (code, message, data).";
    const CATEGORY: Category = Category::Api;
    const EFFECT: Effect = Effect::Network;
    const AGENT_ONLY: bool = false;
    /// Any method: it may change or delete remote state.
    const DESTRUCTIVE: bool = true;

    fn paths(_: &Args) -> Paths {
        Paths::none()
    }

    async fn call(api: &Api, a: Args, cx: CallContext) -> CallToolResult {
        answer(&cx, async {
            let mut call = Map::new();
            call.insert("jsonrpc".into(), json!("2.0"));
            call.insert("method".into(), Value::from(a.method));
            if let Some(p) = a.params {
                if !p.is_array() && !p.is_object() {
                    return Err("params must be an array or an object (JSON-RPC 2.0)".into());
                }
                call.insert("params".into(), p);
            }
            call.insert("id".into(), a.id.unwrap_or(json!(1)));
            let r = api
                .send(Outgoing {
                    method: Some("POST".into()),
                    url: a.url,
                    headers: header_args(a.headers),
                    body: body_of(Some(&Value::Object(call)), None, None)?,
                    auth: a.auth,
                })
                .await?;
            let head = status_block(&Method::POST, &r);
            let doc: Value = serde_json::from_slice(&r.body).map_err(|_| {
                format!(
                    "{head}\nthe answer is not JSON-RPC:\n{}",
                    String::from_utf8_lossy(&r.body)
                        .chars()
                        .take(2000)
                        .collect::<String>()
                )
            })?;
            if let Some(error) = doc.get("error").filter(|e| !e.is_null()) {
                return Err(format!(
                    "{head}\nJSON-RPC error:\n{}",
                    serde_json::to_string_pretty(error).unwrap_or_default()
                ));
            }
            match doc.get("result") {
                Some(result) => Ok(format!(
                    "{head}\nResult:\n{}",
                    serde_json::to_string_pretty(result).unwrap_or_default()
                )),
                None => Err(format!(
                    "{head}\nthe answer has neither result nor error:\n{}",
                    serde_json::to_string_pretty(&doc).unwrap_or_default()
                )),
            }
        })
        .await
    }
}
