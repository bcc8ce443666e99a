//! `openapi_operations`: list the operations of an OpenAPI 3.x or Swagger 2.0 spec, from a
//! workspace file or a URL.

use cairn_toolkit::{CallContext, Category, Effect, JsonSchema, Paths, Tool};
use rmcp::model::CallToolResult;
use serde::Deserialize;

use crate::api::request::ApiAuth;
use crate::api::{Api, answer, spec_is_url};

/// The `openapi_operations` tool.
pub struct OpenapiOperations;

/// Arguments of `openapi_operations`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// A workspace path or an http(s) URL of the spec.
    spec: String,
    /// Only operations whose id, path or summary contain this.
    filter: Option<String>,
    auth: Option<ApiAuth>,
}

impl Tool for OpenapiOperations {
    type Host = Api;
    type Args = Args;
    const NAME: &'static str = "openapi_operations";
    const TITLE: &'static str = "OpenAPI operations";
    const DESCRIPTION: &'static str = "List the operations of an OpenAPI 3.x or Swagger 2.0 spec (JSON or YAML), from a workspace file or a URL: operationId, method, path, summary and parameters.";
    const CATEGORY: Category = Category::Api;
    const EFFECT: Effect = Effect::Network;
    const AGENT_ONLY: bool = false;
    /// It reads a spec and nothing else.
    const READ_ONLY: bool = true;

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
            Ok(spec.listing(a.filter.as_deref()))
        })
        .await
    }
}
