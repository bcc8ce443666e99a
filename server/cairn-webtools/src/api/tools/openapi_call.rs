//! `openapi_call`: call one operation of an OpenAPI spec by its operationId, the URL, parameters
//! and body built from the spec.

use std::collections::BTreeMap;

use cairn_toolkit::{CallContext, Category, Effect, JsonSchema, Paths, Tool};
use rmcp::model::CallToolResult;
use serde::Deserialize;
use serde_json::{Map, Value};

use crate::api::request::{ApiAuth, header_args};
use crate::api::{Api, answer, build_call, spec_is_url};

/// The `openapi_call` tool.
pub struct OpenapiCall;

/// Arguments of `openapi_call`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// A workspace path or an http(s) URL of the spec.
    spec: String,
    /// The operationId of the operation to call (openapi_operations lists them).
    operation_id: String,
    /// Parameters by name (path, query, header, cookie).
    #[serde(default)]
    params: Map<String, Value>,
    /// The request body (JSON, or an object of form fields).
    body: Option<Value>,
    /// The server to call instead of the spec's.
    base_url: Option<String>,
    /// Request headers, sent as written (nothing in them is expanded).
    #[serde(default)]
    headers: BTreeMap<String, String>,
    auth: Option<ApiAuth>,
    /// The character of the body to start from (default 0); use the value a truncated result names.
    #[serde(default)]
    start_index: usize,
    /// At most this many characters of body (default 20000).
    #[schemars(range(min = 1))]
    max_length: Option<usize>,
}

impl Tool for OpenapiCall {
    type Host = Api;
    type Args = Args;
    const NAME: &'static str = "openapi_call";
    const TITLE: &'static str = "OpenAPI call";
    const DESCRIPTION: &'static str = "Call one operation of an OpenAPI spec by operationId: path, query and header parameters by name (required ones checked) and a body; the URL comes from the spec's servers or base_url.";
    const CATEGORY: Category = Category::Api;
    const EFFECT: Effect = Effect::Network;
    const AGENT_ONLY: bool = false;
    /// Any operation: it may change or delete remote state.
    const DESTRUCTIVE: bool = true;

    /// A spec path is read from the workspace; a URL touches no workspace file.
    fn paths(args: &Args) -> Paths {
        if spec_is_url(&args.spec) {
            Paths::none()
        } else {
            Paths::read(&args.spec)
        }
    }

    async fn call(api: &Api, a: Args, cx: CallContext) -> CallToolResult {
        answer(&cx, async {
            let spec = api.load_spec(&a.spec, a.auth.as_ref()).await?;
            let op = spec.operation(&a.operation_id)?;
            let base = spec.base(a.base_url.as_deref())?;
            let built = build_call(op, &base, &a.params, a.body.as_ref())?;
            api.run_built(
                built,
                header_args(a.headers),
                a.auth,
                a.start_index,
                a.max_length,
            )
            .await
        })
        .await
    }
}
