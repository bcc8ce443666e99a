//! `api_request`: any REST call (method, URL, query, headers, a JSON or text body, auth by vault
//! secret name), answered with the status, useful headers and the paged body.

use std::collections::BTreeMap;

use cairn_toolkit::{CallContext, Category, Effect, JsonSchema, Paths, Tool};
use rmcp::model::CallToolResult;
use serde::Deserialize;
use serde_json::{Map, Value};

use crate::api::request::{ApiAuth, Outgoing, body_of, header_args, target_url};
use crate::api::{Api, answer};

/// The `api_request` tool.
pub struct ApiRequest;

/// Arguments of `api_request`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// Default GET.
    #[schemars(extend("enum" = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]))]
    method: Option<String>,
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
    /// A JSON body (sets Content-Type: application/json).
    json: Option<Value>,
    /// A text body instead of json.
    body: Option<String>,
    /// The body's content type, when not JSON or plain text.
    content_type: Option<String>,
    auth: Option<ApiAuth>,
    /// The character of the body to start from (default 0); use the value a truncated result names.
    #[serde(default)]
    start_index: usize,
    /// At most this many characters of body (default 20000).
    #[schemars(range(min = 1))]
    max_length: Option<usize>,
}

impl Tool for ApiRequest {
    type Host = Api;
    type Args = Args;
    const NAME: &'static str = "api_request";
    const TITLE: &'static str = "API request";
    const DESCRIPTION: &'static str = "Call a REST API: any method, URL (or base_url + path), query, headers, a JSON or text body, and auth by vault secret name. Returns the status, useful headers and the body (JSON pretty-printed), in parts for long bodies.";
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
            let url = target_url(
                a.url.as_deref(),
                a.base_url.as_deref(),
                a.path.as_deref(),
                &a.query,
            )?;
            let out = Outgoing {
                method: a.method,
                url,
                headers: header_args(a.headers),
                body: body_of(
                    a.json.as_ref(),
                    a.body.as_deref(),
                    a.content_type.as_deref(),
                )?,
                auth: a.auth,
            };
            api.run(out, a.start_index, a.max_length).await
        })
        .await
    }
}
