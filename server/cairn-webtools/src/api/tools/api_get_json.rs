//! `api_get_json`: GET a JSON resource and show it pretty-printed, whole or the part at a JSON
//! Pointer.

use std::collections::BTreeMap;

use cairn_toolkit::{CallContext, Category, Effect, JsonSchema, Paths, Tool};
use rmcp::model::CallToolResult;
use serde::Deserialize;
use serde_json::{Map, Value};

use crate::api::request::{self, ApiAuth, Outgoing, header_args, select, status_block, target_url};
use crate::api::{Api, answer};
use cairn_web::Method;

/// The `api_get_json` tool.
pub struct ApiGetJson;

/// Arguments of `api_get_json`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// An http or https URL.
    url: Option<String>,
    /// Instead of url: the API's base URL, joined with path.
    base_url: Option<String>,
    /// With base_url: the path, e.g. /repos/o/r.
    path: Option<String>,
    /// Query parameters (arrays repeat the key).
    #[serde(default)]
    query: Map<String, Value>,
    /// Request headers, sent as written (nothing in them is expanded).
    #[serde(default)]
    headers: BTreeMap<String, String>,
    auth: Option<ApiAuth>,
    /// RFC 6901 JSON Pointer to select (default: the whole document).
    #[serde(default)]
    pointer: String,
    /// The character of the body to start from (default 0); use the value a truncated result names.
    #[serde(default)]
    start_index: usize,
    /// At most this many characters of body (default 20000).
    #[schemars(range(min = 1))]
    max_length: Option<usize>,
}

impl Tool for ApiGetJson {
    type Host = Api;
    type Args = Args;
    const NAME: &'static str = "api_get_json";
    const TITLE: &'static str = "Get JSON";
    const DESCRIPTION: &'static str = "GET a JSON API resource and return it pretty-printed, or only the part at a JSON Pointer (e.g. /data/0/name).";
    const CATEGORY: Category = Category::Api;
    const EFFECT: Effect = Effect::Network;
    const AGENT_ONLY: bool = false;
    /// A GET: it only reads remote state.
    const READ_ONLY: bool = true;

    fn paths(_: &Args) -> Paths {
        Paths::none()
    }

    async fn call(api: &Api, a: Args, cx: CallContext) -> CallToolResult {
        answer(&cx, async {
            let url = target_url(
                a.url.as_deref(),
                a.base_url.as_deref(),
                a.path.as_deref(),
                &a.query,
            )?;
            let mut headers = header_args(a.headers);
            headers
                .entry("Accept")
                .or_insert_with(|| Value::from("application/json"));
            let r = api
                .send(Outgoing {
                    url,
                    headers,
                    auth: a.auth,
                    ..Outgoing::default()
                })
                .await?;
            let mut out = status_block(&Method::GET, &r);
            let doc: Value = serde_json::from_slice(&r.body).map_err(|e| {
                format!(
                    "{out}\nthe body is not JSON ({e}); it starts: {}",
                    String::from_utf8_lossy(&r.body)
                        .chars()
                        .take(300)
                        .collect::<String>()
                )
            })?;
            let chosen = select(&doc, &a.pointer).map_err(|e| format!("{out}\n{e}"))?;
            if !a.pointer.is_empty() {
                out.push_str(&format!("JSON Pointer: {}\n", a.pointer));
            }
            out.push('\n');
            let pretty = serde_json::to_string_pretty(chosen).unwrap_or_default();
            out.push_str(&request::paged(&pretty, a.start_index, a.max_length));
            Ok(out)
        })
        .await
    }
}
